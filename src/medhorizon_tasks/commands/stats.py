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
    st.add_argument("--recall", action="store_true",
                    help="also the evidence recall of uniform plans at 4..512 frames (the frames<N> tasks' plans), from "
                         "the evidence windows alone; with --selection, of the selections of a `select` run")
    st.add_argument("--selection", metavar="DIR", help="a `select --out` folder: its selections' recall beside uniform")
    st.set_defaults(func=_cmd_stats)
    return st


def _cmd_stats(args) -> int:
    from ..benchmarks.medhorizon.sparsity import format_sparsity, sparsity_report

    items = load_items("medhorizon", args.data)
    rep = sparsity_report(items)
    if args.recall or args.selection:
        rep["evidence_recall"] = _recall(items, args.selection)
    print(report_json(rep) if args.json else format_sparsity(rep))
    if not args.json and "evidence_recall" in rep:
        from ..benchmarks.medhorizon.evidence_recall import format_curve

        print("\nEvidence recall (share of localizable items with a shown frame inside an evidence window; uniform: "
              "the medhorizon_frames<N> tasks' plans, the same as `select`'s selection-uniform-<N>):")
        print(format_curve(rep["evidence_recall"]))
        for label, curve in rep["evidence_recall"].items():
            for r in curve:
                if r.get("n_missing"):
                    print(f"{label}, {r['budget']} frames: {r['n_missing']} localizable item(s) have no frames (the "
                          "selection pre-pass could not read their video) and are counted as misses")
    return 0


def _recall(items, selection: str | None) -> dict:
    """``{plan: recall_curve}``: uniform at the diagnostic budgets, and each selector of ``selection``."""
    from pathlib import Path

    from ..benchmarks.medhorizon.diagnostics import BUDGETS
    from ..benchmarks.medhorizon.evidence_recall import recall_curve, uniform_timestamps
    from ..benchmarks.medhorizon.selection import selection_shown
    from ..core.errors import MedHorizonError
    from ..core.sampling import Uniform

    curves = {"uniform": recall_curve(items, {n: uniform_timestamps(items, Uniform(n)) for n in BUDGETS})}
    if selection:
        files = sorted(Path(selection).expanduser().glob("selection-*-*.jsonl"))
        if not files:
            raise MedHorizonError(f"--selection {selection}: no selection-<selector>-<budget>.jsonl files (the "
                                  "folder of a `medhorizon-tasks select --out` run)")
        shown: dict[str, dict[int, dict]] = {}
        for f in files:
            name, _, budget = f.stem[len("selection-"):].rpartition("-")
            # checked as a model run checks it: the rows' own selector and budget, every item covered
            shown.setdefault(f"{name} (selected)", {})[int(budget)] = selection_shown(f, items)
        curves.update({k: recall_curve(items, v) for k, v in sorted(shown.items())})
    return curves
