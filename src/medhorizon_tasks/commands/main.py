"""The ``medhorizon-tasks`` command.

Sub-commands: ``score``, ``compare``, ``blind-audit``, ``demo``, ``diagnose``, ``sweep``, ``stats``, ``plot``,
``prepare-frames``, ``cache``, ``synthetic``, ``check``, ``run``, ``vlmeval``, ``task-path``, ``leaderboard``, ``build-dataset``,
``videos``, ``surghi``, ``protocol``, ``select``; each module of this package adds its command(s)
(``add_parser``, the handler beside it), and :func:`build_parser` assembles them. Errors in the
user's input are printed as one clear message (exit status 2), never as a
traceback.
"""


from __future__ import annotations

import argparse
import os
import sys

from ..core.errors import MedHorizonError
from .common import EXIT_USAGE
from .launch import passthrough_args

DESCRIPTION = ("Evaluate multimodal models on long medical and surgical video with the published protocols of "
               "MedHorizon, Sureon and SurgHiBench: pre-flight your data and videos (check), run lmms-eval or "
               "VLMEvalKit with an honest exit status (run, vlmeval), score predictions with confidence intervals (score, compare), run the "
               "papers' diagnostics (diagnose, sweep, stats, plot) and build leaderboards (leaderboard).")



def build_parser() -> argparse.ArgumentParser:
    # Imported here, not at the top: `run` and `vlmeval` never build the parser. Each module adds its
    # command(s); the order is that of `--help`.
    from . import (
        build_dataset,
        check,
        compare,
        demo,
        diagnose,
        launch,
        leaderboard,
        plot,
        prepare_frames,
        protocol,
        score,
        select,
        stats,
        surghi,
        synthetic,
        videos,
    )

    p = argparse.ArgumentParser(prog="medhorizon-tasks", description=DESCRIPTION)
    sub = p.add_subparsers(dest="command", required=True)
    for command in (score, compare, demo, diagnose, stats, select, plot, prepare_frames, synthetic, check,
                    launch, leaderboard, build_dataset, videos, surghi, protocol):
        command.add_parser(sub)
    return p


EXIT_SIGPIPE = 128 + 13  # what a shell reports for a process ended by SIGPIPE


def _stdout_gone() -> int:
    """The reader of stdout went away (``| head``): stop quietly, as a process killed by SIGPIPE would."""
    # Point stdout at /dev/null: the interpreter flushes it once more at exit and would fail again, loudly.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout (e.g. captured by a test): nothing left to flush
        pass
    return EXIT_SIGPIPE


def _fail(command: str, message: str, status: int) -> int:
    try:
        print(f"medhorizon-tasks {command}: error: {message}", file=sys.stderr)
    except BrokenPipeError:  # stderr is a closed pipe too: the status is all that is left to say it
        pass
    return status


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = passthrough_args(argv)  # `run` / `vlmeval`: every argument is the framework's
    if args is None:
        args = build_parser().parse_args(argv)
    try:
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe must show up here, not in the interpreter's final flush
        return status
    except BrokenPipeError:
        return _stdout_gone()
    except MedHorizonError as exc:
        return _fail(args.command, str(exc), EXIT_USAGE)
    except OSError as exc:  # the environment (disk full, permissions) in code that does not use safeio
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        return _fail(args.command, f"{exc.strerror or exc}{where}", EXIT_USAGE)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
