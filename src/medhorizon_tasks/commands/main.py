"""The ``medhorizon-tasks`` command.

Sub-commands: ``score``, ``compare``, ``blind-audit``, ``demo``, ``diagnose``, ``sweep``, ``stats``, ``plot``,
``prepare-frames``, ``cache``, ``synthetic``, ``check``, ``run``, ``vlmeval``, ``task-path``, ``leaderboard``, ``build-dataset``,
``videos``, ``surghi``, ``protocol``, ``select``, ``doctor``; each module of this package adds its command(s)
(``add_parser``, the handler beside it), and :func:`build_parser` assembles them. Errors in the
user's input are printed as one clear message (exit status 2), never as a
traceback.
"""


from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable

from ..core.errors import MedHorizonError
from ..core.version import __version__
from .common import EXIT_USAGE
from .data_args import resolve as resolve_data
from .help import DefaultsHelpFormatter, finish_help
from .launch import passthrough_args

DESCRIPTION = ("Evaluate multimodal models on long medical and surgical video with the published protocols of "
               "MedHorizon, Sureon and SurgHiBench: pre-flight your data and videos (check), run lmms-eval or "
               "VLMEvalKit with an honest exit status (run, vlmeval), score predictions with confidence intervals (score, compare), run the "
               "papers' diagnostics (diagnose, sweep, stats, plot) and build leaderboards (leaderboard).")



# Every command, the module whose ``add_parser`` adds it, and its line in the top-level ``--help``, in the order
# of that help. Only the chosen command's module is imported to run it (``medhorizon-tasks --help`` imports
# none): the other commands are listed by these lines alone. tests/test_cli.py checks each line against the
# one the module gives its command, and that every command a module adds is here.
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("score", "score", "score a predictions file against a benchmark"),
    ("compare", "compare", "paired McNemar tests, Holm-corrected, between every pair of runs"),
    ("blind-audit", "compare", "per-item consistency S of a blind guesser over several runs"),
    ("demo", "demo", "build the synthetic benchmark and run lmms-eval with the probe models"),
    ("diagnose", "diagnose", "run one of the paper's diagnostics for a model (resumable)"),
    ("sweep", "diagnose", "frame-budget sweep 4..512 (= diagnose budgets); resumes where it stopped"),
    ("stats", "stats", "evidence-sparsity statistics of a release (paper appendix 6.4)"),
    ("select", "select", "query-aware frame selection (AKS, WFS-SB, ViLAMP) as a resumable pre-pass; evidence "
     "recall"),
    ("plot", "plot", "plots (PNG, with 95%% CIs) from any results file the package writes"),
    ("prepare-frames", "prepare_frames", "decode frame plans into the frame cache ahead of a run"),
    ("cache", "prepare_frames", "frame cache (or packet index store) size report, or clear it (only the files it "
     "wrote)"),
    ("synthetic", "synthetic", "(re)generate the embedded synthetic benchmark"),
    ("check", "check", "pre-flight a benchmark's data and videos (what every run checks before loading a model)"),
    ("run", "launch", "run the real lmms-eval CLI with your arguments, then exit non-zero with the reason when the "
     "evaluation failed (see `medhorizon-tasks run --help`)"),
    ("vlmeval", "launch", "run VLMEvalKit's own run.py with this package's datasets and probe models, then exit "
     "non-zero with the reason when the evaluation failed (see `medhorizon-tasks vlmeval --help`)"),
    ("task-path", "launch", "print the folder to pass to lmms-eval as --include_path"),
    ("leaderboard", "leaderboard", "make, validate and build leaderboard submissions"),
    ("build-dataset", "build_dataset", "validate a release and write (and optionally upload) its Hugging Face "
     "dataset"),
    ("videos", "videos", "check or rebuild the video root from the upstream downloads"),
    ("surghi", "surghi", "SurgHiBench: zero-shot runs of dual encoders (zeroshot) and frame rows from the upstream "
     "annotations (import)"),
    ("protocol", "protocol", "the lmms-eval command that runs a model under the paper's setting"),
    ("doctor", "doctor", "the frameworks this package is installed into, their versions against the supported "
     "range, what each sees of this package, and the optional parts present"),
)


def build_parser(commands: Iterable[str] | None = None) -> argparse.ArgumentParser:
    """The ``medhorizon-tasks`` parser. ``commands``: the commands whose modules are imported to add their full
    parsers (default: every one, e.g. for the CLI reference); the others are listed by name and help line only,
    which is all the top-level ``--help`` shows."""
    import importlib

    modules = {module for name, module, _ in COMMANDS if commands is None or name in commands}
    p = argparse.ArgumentParser(prog="medhorizon-tasks", description=DESCRIPTION,
                                formatter_class=DefaultsHelpFormatter)
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, module, help in COMMANDS:
        if name in sub.choices:  # added with an earlier command of its module
            continue
        if module in modules:  # its first command: the module adds them all
            importlib.import_module(f"{__package__}.{module}").add_parser(sub)
        else:
            sub.add_parser(name, help=help, add_help=False)
    finish_help(p)
    return p


def _command_of(argv: list[str]) -> set[str]:
    """The command ``argv`` runs (empty when it names none: ``--help``, ``--version``, a typo)."""
    return {argv[0]} if argv and not argv[0].startswith("-") else set()


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
        args = build_parser(_command_of(argv)).parse_args(argv)
    try:
        resolve_data(args)  # --data OWNER/NAME (the Hub) and --synthetic, as paths
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
