"""This package as lmms-eval sees it, read without importing lmms-eval: its model names and its task folder.

:mod:`.manifest` registers :data:`PROBES` (and :mod:`.bridges.manifest` the
bridges) through lmms-eval's ``lmms_eval.models`` entry point; the start-up
hook adds :func:`task_path` to lmms-eval's task search path when
:func:`.versions.auto_task_folder` says so. :mod:`.installed` reads the same facts to
know, before lmms-eval starts, which names a run will find.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["PROBES", "task_path", "NO_AUTO_TASKS_ENV"]

_BASE = "medhorizon_tasks.adapters.lmms_eval"

#: model name -> class path: the pipeline probes and the wrappers (the bridges: :mod:`.bridges.manifest`)
PROBES = {
    "medhorizon_random": f"{_BASE}.models.RandomProbe",
    "medhorizon_needle": f"{_BASE}.models.NeedleProbe",
    "medhorizon_resume": f"{_BASE}.resumable.ResumableModel",
    "medhorizon_attention": f"{_BASE}.attention_probe.AttentionProbe",
}

NO_AUTO_TASKS_ENV = "MEDHORIZON_NO_AUTO_TASKS"


def task_path() -> Path:
    """The folder of this package's task YAMLs (lmms-eval's ``--include_path``)."""
    from importlib.resources import files

    return Path(str(files("medhorizon_tasks.task_yaml")))
