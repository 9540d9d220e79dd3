"""The package version, in core so that core modules (the journal's run identity) need nothing above core."""

__version__ = "0.1.0"
