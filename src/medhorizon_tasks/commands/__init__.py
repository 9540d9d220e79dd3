"""The ``medhorizon-tasks`` command: one small module per command (its ``add_parser`` and handler);
:mod:`.main` assembles them. The long-running work behind ``demo``, ``diagnose`` and ``prepare-frames`` is in
:mod:`.jobs`, imported only when such a command runs."""
