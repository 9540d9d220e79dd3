"""``medhorizon-tasks stats``: evidence-sparsity statistics of a release (paper appendix 6.4)."""

from __future__ import annotations

import argparse

from ..core.text import report_json
from .common import load_items
from .data_args import add_synthetic_argument

__all__ = ["add_parser"]


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``stats`` to the main parser's sub-parsers."""
    st = sub.add_parser("stats", help="evidence-sparsity statistics of a release (paper appendix 6.4)")
    st.add_argument("--data", help="release JSONL, dataset folder or Hub dataset id (default: $MEDHORIZON_DATA)")
    add_synthetic_argument(st)
    st.set_defaults(benchmark="medhorizon")  # the benchmark whose synthetic data --synthetic names
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=_cmd_stats)
    return st


def _cmd_stats(args) -> int:
    from ..benchmarks.medhorizon.sparsity import format_sparsity, sparsity_report

    rep = sparsity_report(load_items("medhorizon", args.data))
    print(report_json(rep) if args.json else format_sparsity(rep))
    return 0
