"""The ``medhorizon-tasks`` command: one small module per command (its ``add_parser`` and handler);
:mod:`.main` assembles them."""
