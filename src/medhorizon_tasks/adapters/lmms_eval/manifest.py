"""The ``lmms_eval.models`` entry point: this package's model names, and its start-up hook.

lmms-eval imports this while its model registry starts, in every process that
imports ``lmms_eval.models``, so it stays light: class paths are strings (a
model's module is imported only when that model is requested), and
:func:`~.startup.install` does its work only for an lmms-eval CLI run.
"""

from __future__ import annotations

from lmms_eval.models.registry_v2 import ModelManifest

_BASE = "medhorizon_tasks.adapters.lmms_eval"


def manifests() -> list[ModelManifest]:
    from . import startup

    startup.install()
    return [
        ModelManifest("medhorizon_random", simple_class_path=f"{_BASE}.models.RandomProbe"),
        ModelManifest("medhorizon_needle", simple_class_path=f"{_BASE}.models.NeedleProbe"),
        ModelManifest("medhorizon_resume", simple_class_path=f"{_BASE}.resumable.ResumableModel"),
        ModelManifest("medhorizon_attention", simple_class_path=f"{_BASE}.attention_probe.AttentionProbe"),
    ]
