"""``medhorizon-tasks run``, ``vlmeval`` and ``task-path``: the real lmms-eval or VLMEvalKit CLI with an honest
exit status, and the folder lmms-eval needs as ``--include_path``.

Every argument after ``run`` / ``vlmeval`` belongs to the framework, options included, so the main command
takes them without parsing (:func:`passthrough_args`); their sub-parsers exist for the top-level ``--help``.
"""

from __future__ import annotations

import argparse

__all__ = ["add_parser", "passthrough_args"]


def add_parser(sub) -> None:
    """Add ``run``, ``vlmeval`` and ``task-path`` to the main parser's sub-parsers."""
    rn = sub.add_parser("run", add_help=False, help="run the real lmms-eval CLI with your arguments, then exit "
                        "non-zero with the reason when the evaluation failed (see `medhorizon-tasks run --help`)")
    rn.add_argument("lmms_eval_args", nargs=argparse.REMAINDER)
    rn.set_defaults(func=_cmd_run)

    vl = sub.add_parser("vlmeval", add_help=False, help="run VLMEvalKit's own run.py with this package's datasets "
                        "and probe models, then exit non-zero with the reason when the evaluation failed (see "
                        "`medhorizon-tasks vlmeval --help`)")
    vl.add_argument("vlmeval_args", nargs=argparse.REMAINDER)
    vl.set_defaults(func=_cmd_vlmeval)

    t = sub.add_parser("task-path", help="print the folder to pass to lmms-eval as --include_path")
    t.set_defaults(func=_cmd_task_path)


def passthrough_args(argv: list[str]) -> argparse.Namespace | None:
    """The parsed arguments of ``run`` / ``vlmeval`` (everything after the command, untouched); None for any
    other command."""
    if argv[:1] == ["run"]:  # everything after `run` belongs to lmms-eval, options included
        return argparse.Namespace(command="run", func=_cmd_run, lmms_eval_args=argv[1:])
    if argv[:1] == ["vlmeval"]:  # everything after `vlmeval` belongs to VLMEvalKit, options included
        return argparse.Namespace(command="vlmeval", func=_cmd_vlmeval, vlmeval_args=argv[1:])
    return None


def _cmd_run(args) -> int:
    from ..adapters.lmms_eval.runner import run_cli

    return run_cli(args.lmms_eval_args)


def _cmd_vlmeval(args) -> int:
    from ..adapters.vlmeval.launch import run_cli

    return run_cli(args.vlmeval_args)


def _cmd_task_path(args) -> int:
    from ..adapters.lmms_eval.runner import task_path

    print(task_path())
    return 0
