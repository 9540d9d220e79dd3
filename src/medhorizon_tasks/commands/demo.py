"""``medhorizon-tasks demo``: build the synthetic benchmark and run lmms-eval with the probe models
(the run itself: :mod:`.jobs.demo`)."""

from __future__ import annotations

import argparse

__all__ = ["add_parser"]


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``demo`` to the main parser's sub-parsers."""
    d = sub.add_parser("demo", help="build the synthetic benchmark and run lmms-eval with the probe models")
    d.add_argument("--out", default="medhorizon_demo", help="output folder (default: ./medhorizon_demo)")
    d.add_argument("--limit", type=int, default=None, help="lmms-eval --limit (items per task, at least 1), for a quick look")
    d.set_defaults(func=_cmd_demo)
    return d


def _cmd_demo(args) -> int:
    from ..core.errors import MedHorizonError
    from ..runs.launch import limit_problem
    from .jobs.demo import run_demo

    problem = limit_problem(args.limit)  # before the benchmark is built: 0 would run every item
    if problem:
        raise MedHorizonError(problem)

    return run_demo(out_dir=args.out, limit=args.limit)
