"""Before lmms-eval starts: are the run's task names, model name and model args ones it will take?

One function (:func:`request_problem`) answers for ``medhorizon-tasks run``,
``diagnose`` and ``sweep`` (in this process, before lmms-eval is started: it
imports nothing of lmms-eval) and for the start-up hook of an ``lmms-eval``
run (:mod:`.startup`), so each says the same one line and exits with status 2.
The names come from :mod:`.installed`, the args' rules from :mod:`.model_args`.
"""

from __future__ import annotations

from .installed import unknown_model_problem, unknown_task_problem
from .model_args import ModelArgsError, model_args_problem, parse_model_args
from .versions import model_problem

__all__ = ["request_problem"]


def request_problem(model: str | None, model_args: str | None, tasks: str | None,
                    include_paths: list[str] | tuple[str, ...] = ()) -> str | None:
    """The first problem of a run of ``model`` with ``model_args`` on ``tasks`` (comma-separated), as one line;
    None when lmms-eval would find every name and this package's model takes every arg."""
    if model:
        problem = unknown_model_problem(model) or model_problem(model)  # a name, then what the version lacks
        if problem:
            return problem
    if tasks:
        problem = unknown_task_problem(tasks, include_paths)
        if problem:
            return problem
    if model:
        try:
            return model_args_problem(model, parse_model_args(model_args or ""))
        except ModelArgsError as exc:
            return str(exc)
    return None

