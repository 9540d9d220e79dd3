"""``medhorizon-tasks build-dataset --data [BENCHMARK=]FILE ... --out DIR [--push REPO] [--dry-run]``.

Validate and write the Hugging Face layout (:mod:`.data.release_build`); ``--push`` uploads it (a dry run
without a token). Errors are raised as MedHorizonError, which the main command prints as one message (exit
status 2).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..core.errors import MedHorizonError
from .common import BENCHMARKS, pairs
from .data_args import add_synthetic_argument
from .help import old_spellings

__all__ = ["add_parser"]


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``build-dataset`` to the main parser's sub-parsers."""
    p = sub.add_parser(
        "build-dataset", help="validate a release and write (and optionally upload) its Hugging Face dataset",
        description="Validate the annotations with the package's readers and write the Hugging Face layout: "
                    "the dataset card, one typed parquet per config (medhorizon, sureon, surghi), the JSONL the "
                    "package reads, and version.json (the hashes `leaderboard version` prints). --push REPO "
                    "uploads it with huggingface_hub in one commit; without a token, or with --dry-run, only the "
                    "plan (every path, size and SHA-256) is printed and nothing leaves the machine.")
    p.add_argument("--data", action="append", metavar="[BENCHMARK=]FILE",
                   help="the annotations: the MedHorizon release (JSONL/JSON/dataset folder), or sureon=ITEMS.jsonl, "
                        "surghi=ROWS.jsonl (repeat for several)")
    old_spellings(p, "--data", "--src")
    add_synthetic_argument(p)
    p.add_argument("--out", required=True, help="folder to write (new, empty, or an earlier build)")
    p.add_argument("--hierarchy", help="surghi: hierarchy JSON for datasets the package does not ship (default: "
                                       "hierarchies.json beside the rows); written as surghi/hierarchies.json")
    p.add_argument("--card", help="dataset card template (default: the package's hf_dataset_card/README.md)")
    p.add_argument("--push", metavar="REPO", help="upload to this Hugging Face dataset repository (owner/name)")
    p.add_argument("--dry-run", action="store_true", help="print what would be uploaded; upload nothing")
    p.add_argument("--private", action="store_true", help="create the repository private (when it is new)")
    p.add_argument("--commit-message", help="default: the data versions")
    p.add_argument("--json", action="store_true", help="print the upload plan / result as JSON")
    p.set_defaults(func=_cmd_build_dataset)
    return p


def _cmd_build_dataset(args) -> int:
    from ..core.text import report_json
    from ..data import release_build as rb

    srcs = pairs(args.data, BENCHMARKS, "--data")
    sources: dict[str, str] = {}
    for key, paths in srcs.items():
        bench = key or "medhorizon"
        if len(paths) > 1 or bench in sources:
            raise MedHorizonError(f"--data given twice for {bench}")
        sources[bench] = paths[0]
    out = Path(args.out)
    if sources:
        res = rb.build_dataset(sources, out, hierarchy=args.hierarchy, card=args.card)
        for bench, version in res.versions.items():
            print(f"{bench}: {res.rows[bench]} rows, data version {version}", file=sys.stderr)
        print(f"wrote {out} ({len(res.files)} files)", file=sys.stderr)
    elif not args.push and not (args.dry_run or args.json):
        raise MedHorizonError("nothing to do: give --data (or --synthetic) to build, --push REPO to upload a built folder, or "
                              "--dry-run to list what a push of it would upload")
    if args.push:
        result = rb.push(out, args.push, private=args.private, message=args.commit_message, dry_run=args.dry_run)
        if args.json:
            print(report_json(result))
        elif result["dry_run"]:
            print(rb.format_plan(args.push, result["files"], result["message"], result["reason"]))
        else:
            print(f"uploaded {len(result['files'])} files to {args.push}: {result['commit']}")
    elif args.dry_run or args.json:
        plan = rb.upload_plan(out)
        if args.json:
            print(report_json({"files": plan}))
        else:
            print(rb.format_plan("(no --push)", plan, "", "--dry-run"))
    return 0
