"""The work behind ``demo``, ``diagnose`` / ``sweep`` and ``prepare-frames``: whole runs of lmms-eval, PyAV
and the scorers, kept out of the command modules so that building the parser imports none of it (each
command's handler imports its job when it runs)."""
