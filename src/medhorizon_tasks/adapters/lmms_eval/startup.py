"""What this package does as lmms-eval starts, before any task is built or model loaded.

lmms-eval 0.7.3 has no entry point for tasks, but it imports the
``lmms_eval.models`` entry points (this package registers its models there)
before its CLI builds a ``TaskManager`` and before it loads a model. The
entry point's callable therefore calls :func:`install`, which

1. adds this package's task folder to lmms-eval's default task search path,
   so ``lmms-eval --tasks medhorizon`` works without ``--include_path``
   (``--include_path`` keeps working; ``MEDHORIZON_NO_AUTO_TASKS=1`` opts out).
   It wraps ``TaskManager.initialize_tasks`` -- the one method that receives
   the search paths -- and only for the supported lmms-eval versions
   (:mod:`.versions`); any other version gets a warning and the old behaviour.
   An lmms-eval whose ``TaskConfig`` lacks a field the task YAMLs set
   (``reasoning_tags``: 0.6) gets it dropped for this package's tasks
   (:func:`.versions.drop_unknown_task_fields`), said in one line at start;
2. when the process is the lmms-eval CLI evaluating a task of this package,
   refuses a decode setting it cannot take (:func:`medhorizon_tasks.core.video.share.check_settings`) and
   a built-in wrapper known to mishandle a list of frames, naming the
   bridge to use (:mod:`.bridges.guard`; ``MEDHORIZON_ALLOW_FRAME_LIST=1`` opts
   out), stops a Sureon visual run whose blurring pass cannot run (its
   detectors are not installed), then runs the pre-flight (:mod:`medhorizon_tasks.runs.preflight`): data that do
   not load, a missing video root or failing videos stop the run with one
   message and exit status 2 before the model is loaded, unless
   ``MEDHORIZON_ALLOW_VIDEO_ERRORS=1`` (then failing videos are only listed
   and their items are counted wrong).

Nothing here may raise an ``Exception``: lmms-eval catches it and silently
drops every plugin's models. A run is stopped with ``SystemExit``.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .ours import NO_AUTO_TASKS_ENV

BENCHMARK_PREFIXES = ("medhorizon", "sureon", "surghi")
TEXT_ONLY_TASKS = frozenset({"medhorizon_text", "sureon_blind"})

_installed = False


def install() -> None:
    """Idempotent; see the module doc."""
    global _installed
    if _installed:
        return
    _installed = True
    dropped: list[str] = []
    try:
        from .versions import drop_unknown_task_fields

        dropped = drop_unknown_task_fields()
    except Exception as exc:  # noqa: BLE001 - never break lmms-eval's start-up; say what happened
        _warn(f"could not fit this package's tasks to lmms-eval {lmms_eval_version()} ({exc}); "
              "`medhorizon-tasks doctor` says what differs")
    try:
        _add_task_folder()
    except Exception as exc:  # noqa: BLE001 - never break lmms-eval's start-up; say what happened
        _warn(f"could not add the medhorizon task folder to lmms-eval's search path ({exc}); "
              "pass --include_path \"$(medhorizon-tasks task-path)\"")
    args = cli_arguments(sys.argv)
    if args is not None:
        _say_broken_install()
        if dropped and _names_ours(args.tasks):
            _say_features()
        check_cli_run(args)


def _say_broken_install() -> None:
    """One line when lmms-eval's own task templates are missing (it then fails on every task, not ours alone)."""
    from ...runs.preflight import is_main_process
    from .versions import templates_problem

    try:
        problem = templates_problem()
    except Exception:  # noqa: BLE001 - a check, never a reason to break lmms-eval's start-up
        return
    if problem and is_main_process():
        _warn(problem)


def _say_features() -> None:
    """One line per feature the installed lmms-eval cannot give, from the main process only."""
    from ...runs.preflight import is_main_process
    from .versions import feature_lines

    if is_main_process():
        for line in feature_lines():
            _warn(line)


def _names_ours(tasks: str) -> bool:
    return any(t.strip().startswith(BENCHMARK_PREFIXES) for t in tasks.split(","))


def _warn(message: str) -> None:
    print(f"[medhorizon-tasks] {message}", file=sys.stderr)


def lmms_eval_version() -> str:
    from .versions import installed_version

    return installed_version() or "(not installed)"


def _add_task_folder() -> None:
    from ...core.settings import env_flag

    if env_flag(NO_AUTO_TASKS_ENV):
        return
    from .versions import SUPPORTED, in_range

    found = lmms_eval_version()
    if not in_range(found):
        _warn(f"lmms-eval {found} is outside the supported range {SUPPORTED}: its tasks are not added "
              "automatically; pass --include_path \"$(medhorizon-tasks task-path)\"; `medhorizon-tasks doctor` "
              "says what else differs")
        return
    from lmms_eval.tasks import TaskManager

    from .ours import task_path

    original = TaskManager.initialize_tasks
    if getattr(original, "_medhorizon_task_folder", False):
        return
    ours = str(task_path())

    def initialize_tasks(self, include_path=None, include_defaults=True):
        paths = [] if include_path is None else [include_path] if isinstance(include_path, str) else list(include_path)
        if not any(os.path.realpath(p) == os.path.realpath(ours) for p in paths):
            paths.append(ours)
        return original(self, include_path=paths, include_defaults=include_defaults)

    initialize_tasks._medhorizon_task_folder = True
    initialize_tasks.__wrapped__ = original
    TaskManager.initialize_tasks = initialize_tasks


# ------------------------------------------------------------------ the CLI run

def cli_arguments(argv: list[str]) -> argparse.Namespace | None:
    """``--tasks`` / ``--model`` / ``--model_args`` when ``argv`` is the lmms-eval CLI's, else None."""
    if not argv:
        return None
    prog = Path(argv[0])
    if not (prog.name in ("lmms-eval", "lmms_eval") or (prog.name == "__main__.py" and prog.parent.name == "lmms_eval")):
        return None
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--tasks", default=None)
    parser.add_argument("--model", default="")
    parser.add_argument("--model_args", default="")
    parser.add_argument("--include_path", default=None)
    args, _ = parser.parse_known_args(argv[1:])
    return args if args.tasks else None


def benchmarks_needed(tasks: str) -> dict[str, bool]:
    """``{benchmark: needs videos}`` for the release tasks of this package named in ``--tasks``
    (the synthetic ones need no user data)."""
    needed: dict[str, bool] = {}
    for name in (t.strip() for t in tasks.split(",")):
        if not name or "synthetic" in name or name.startswith("list") or os.sep in name:
            continue
        bench = next((b for b in BENCHMARK_PREFIXES if name.startswith(b)), None)
        if bench is not None:
            needed[bench] = needed.get(bench, False) or name not in TEXT_ONLY_TASKS
    return needed


def check_cli_run(args: argparse.Namespace) -> None:
    """The names and this package's model args (:func:`~.request_check.request_problem`: so a typo is never read
    as a release task), the settings the run cannot take, the guard against wrappers that mishandle a frame list,
    then the pre-flight for the benchmarks ``--tasks`` names; ``SystemExit(2)`` with the message on failure."""
    from ...core.settings import SettingError
    from ...core.video.share import check_settings
    from ...runs.preflight import allow_video_errors, is_main_process, stop_unless_blur_ready, stop_unless_ready
    from .bridges.guard import frame_list_problem
    from .request_check import request_problem

    include = getattr(args, "include_path", None)
    problem = request_problem(args.model, args.model_args, args.tasks, [include] if include else [])
    try:  # a setting the run cannot take stops it now (decode settings: not at its first decode, on a worker)
        check_settings()
        allow_video_errors()
        problem = problem or frame_list_problem(args.model, args.tasks, args.model_args)
    except SettingError as exc:
        if is_main_process():
            print(f"medhorizon-tasks: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    if problem:
        if is_main_process():
            print(f"medhorizon-tasks: {problem}", file=sys.stderr)
        raise SystemExit(2)
    stop_unless_blur_ready(sureon_blur_settings(args.tasks))
    stop_unless_ready(benchmarks_needed(args.tasks))


def sureon_blur_settings(tasks: str) -> list:
    """The ``blur`` setting of each Sureon visual task in ``--tasks`` (False for ``*_noblur``, else None: the
    environment or the default decides), synthetic ones included."""
    names = [t.strip() for t in tasks.split(",")]
    return [False if name.endswith("_noblur") else None for name in names
            if name.startswith("sureon") and "_visual" in name]
