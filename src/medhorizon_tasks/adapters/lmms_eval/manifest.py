"""The ``lmms_eval.models`` entry point: this package's model names, and its start-up hook.

lmms-eval imports this while its model registry starts, in every process that
imports ``lmms_eval.models``, so it stays light: class paths are strings (a
model's module is imported only when that model is requested), lmms-eval's
``ModelManifest`` is imported only when lmms-eval asks (the names are
:data:`.ours.PROBES`, which :mod:`.installed` reads without lmms-eval), and
:func:`~.startup.install` does its work only for an lmms-eval CLI run.
"""

from __future__ import annotations

from .ours import PROBES

__all__ = ["PROBES", "manifests"]


def manifests():
    from lmms_eval.models.registry_v2 import ModelManifest

    from . import startup

    startup.install()
    return [ModelManifest(name, simple_class_path=path) for name, path in PROBES.items()]
