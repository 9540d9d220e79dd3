"""``medhorizon-tasks diagnose`` / ``sweep``: one of the paper's diagnostics for a model, resumable
(the run itself: :mod:`.jobs.diagnose`)."""

from __future__ import annotations

from pathlib import Path

from ..benchmarks.medhorizon.diagnostics import BUDGETS
from .help import old_switch

__all__ = ["add_parser"]


def add_parser(sub) -> None:
    """Add ``diagnose`` and ``sweep`` (= ``diagnose budgets``) to the main parser's sub-parsers."""
    g = sub.add_parser("diagnose", help="run one of the paper's diagnostics for a model (resumable)")
    g.add_argument("kind", choices=["budgets", "evidence", "order", "sampling", "attention"],
                   help="budgets: 4..512 uniform frames (RQ1); evidence: random/text/uniform/oracle (RQ2); "
                        "order: original/reverse/block/local shuffle at 256 frames (RQ3); sampling: uniform/"
                        "frame-change/hybrid at 32 and 64 frames (RQ4); attention: query-to-frame attention, "
                        "frame and patch redundancy (Fig. 9; medhorizon_qwen2_5_vl / medhorizon_qwen3_vl)")
    _add_run_args(g)
    g.add_argument("--frames", type=int, default=128, choices=BUDGETS,
                   help="attention only: uniform frames per item (default 128, the paper's)")
    g.add_argument("--layers", default="all",
                   help="attention only: text decoder layers measured, averaged: all (default), last, or "
                        "indices such as 0,12,-1")
    g.set_defaults(func=_cmd_diagnose)

    w = sub.add_parser("sweep", help="frame-budget sweep 4..512 (= diagnose budgets); resumes where it stopped")
    _add_run_args(w)
    w.set_defaults(func=_cmd_diagnose, kind="budgets")


def _add_run_args(x):
    x.add_argument("--model", required=True, help="lmms-eval model name (e.g. qwen2_5_vl, medhorizon_needle)")
    x.add_argument("--model_args", default="", help="lmms-eval --model_args for that model")
    where = x.add_mutually_exclusive_group()
    where.add_argument("--synthetic", action="store_true", help="run on the embedded synthetic benchmark")
    where.add_argument("--data", help="release JSONL or dataset folder (default: $MEDHORIZON_DATA)")
    x.add_argument("--out", default="medhorizon_diagnostics", help="output folder; rerun with the same one to resume")
    x.add_argument("--limit", type=int, default=None, help="lmms-eval --limit (items per task, at least 1; omit it for every item)")
    x.add_argument("--num_processes", type=int, default=1, help="processes (accelerate launch)")
    x.add_argument("--quiet", action="store_true", help="do not echo lmms-eval's output (it is always written to "
                   "the run's log under --out)")
    old_switch(x, "--quiet", "--verbose", note="lmms-eval's output is shown unless --quiet is given")


def _cmd_diagnose(args) -> int:
    if args.kind == "attention":
        return _cmd_attention(args)
    from .jobs.diagnose import format_rows, run_diagnostic

    rows = run_diagnostic(args.kind, args.model, model_args=args.model_args or "", synthetic=args.synthetic,
                          data=args.data, out=args.out, limit=args.limit, num_processes=args.num_processes,
                          echo=not args.quiet)
    print(format_rows(rows))
    print(f"\nwrote {Path(args.out) / (args.kind + '.csv')}, .json and .png")
    return 0


def _cmd_attention(args) -> int:
    from .jobs.attention import format_attention, run_attention

    result = run_attention(args.model, model_args=args.model_args or "", synthetic=args.synthetic, data=args.data,
                           out=args.out, frames=args.frames, layers=args.layers, limit=args.limit,
                           num_processes=args.num_processes, echo=not args.quiet)
    print(format_attention(result))
    print(f"\nwrote {Path(args.out) / 'attention.json'}, .csv and .png")
    return 0
