"""The ``medhorizon-tasks`` command.

Sub-commands: ``score``, ``demo``, ``synthetic``, ``task-path``. Errors in the
user's input are printed as one clear message (exit status 2), never as a
traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .errors import MedHorizonError

EXIT_USAGE = 2


def _cmd_task_path(args) -> int:
    from .adapters.lmms_eval.runner import task_path

    print(task_path())
    return 0


def _cmd_synthetic(args) -> int:
    from .data.synthetic import build_synthetic

    bench = build_synthetic(args.out, seed=args.seed, force=args.force, progress=not args.quiet)
    print(f"data:   {bench.data_path}")
    print(f"videos: {bench.video_root}")
    return 0


def _load_items(benchmark: str, data: str | None):
    if benchmark != "medhorizon":
        raise MedHorizonError(f"unknown benchmark {benchmark!r} (available: medhorizon)")
    from .benchmarks.medhorizon.release import load_release

    return load_release(data)


def _cmd_score(args) -> int:
    from .benchmarks.medhorizon import scoring
    from .jsonl import write_jsonl

    items = _load_items(args.benchmark, args.data)
    predictions = scoring.read_predictions(args.predictions, [it.uid for it in items])
    records = scoring.score_predictions(items, predictions, mode=args.mode)
    rep = scoring.report(records)
    if args.records:
        write_jsonl(args.records, records)
    if args.json:
        print(json.dumps(rep, indent=2, ensure_ascii=False))
    else:
        print(scoring.format_table([(args.label or Path(args.predictions).stem, args.input or "?", rep)]))
    return 0


def _cmd_demo(args) -> int:
    from .demo import run_demo

    return run_demo(out_dir=args.out, limit=args.limit)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="medhorizon-tasks", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("score", help="score a predictions file against a benchmark")
    s.add_argument("--benchmark", required=True, choices=["medhorizon"])
    s.add_argument("--data", help="release JSONL or local dataset folder (default: $MEDHORIZON_DATA)")
    s.add_argument("--predictions", required=True,
                   help='JSONL of {"uid", "prediction"|"pred"|"answer"} or an lmms-eval --log_samples file')
    s.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    s.add_argument("--records", help="also write the per-item records (JSONL) here")
    s.add_argument("--mode", help="mode recorded in the per-item records (default: from the file)")
    s.add_argument("--label", help="row label in the table (default: the file name)")
    s.add_argument("--input", help='"Input" column of the table, e.g. "1 FPS" or "64"')
    s.set_defaults(func=_cmd_score)

    d = sub.add_parser("demo", help="build the synthetic benchmark and run lmms-eval with the probe models")
    d.add_argument("--out", default="medhorizon_demo", help="output folder (default: ./medhorizon_demo)")
    d.add_argument("--limit", type=int, default=None, help="lmms-eval --limit (items per task), for a quick look")
    d.set_defaults(func=_cmd_demo)

    y = sub.add_parser("synthetic", help="(re)generate the embedded synthetic benchmark")
    y.add_argument("--out", default=None, help="folder (default: $MEDHORIZON_SYNTHETIC_DIR or the user cache)")
    y.add_argument("--seed", type=int, default=0)
    y.add_argument("--force", action="store_true", help="regenerate even if cached")
    y.add_argument("--quiet", action="store_true")
    y.set_defaults(func=_cmd_synthetic)

    t = sub.add_parser("task-path", help="print the folder to pass to lmms-eval as --include_path")
    t.set_defaults(func=_cmd_task_path)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except MedHorizonError as exc:
        print(f"medhorizon-tasks {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
