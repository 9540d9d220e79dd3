"""``medhorizon-tasks build-dataset``, ``videos {check, link}`` and ``surghi import``.

Each ``add_*_parser(subparsers)`` adds one command to the main parser (see
``cli.build_parser``); errors are raised as MedHorizonError, which the main
command prints as one message (exit status 2).

* ``build-dataset --src [BENCHMARK=]FILE ... --out DIR [--push REPO] [--dry-run]``: validate and write the
  Hugging Face layout (:mod:`.data.release_build`); ``--push`` uploads it (a dry run without a token).
* ``videos check|link --root DIR [--data D] [--from [SOURCE=]PATH ...]``: find, place and check every video
  the data use (:mod:`.data.reconstruct`); exit 0 when all are usable, 1 otherwise.
* ``surghi import --source multibypass140|grasp --labels DIR --out rows.jsonl``: frame rows and derived
  hierarchies from the upstream annotations (:mod:`.benchmarks.surghi.upstream`).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ..core.errors import MedHorizonError

__all__ = ["add_build_dataset_parser", "add_videos_parser", "add_surghi_parser", "add_parsers"]

_BENCHMARKS = ("medhorizon", "sureon", "surghi")
_DATA_ENV = {"medhorizon": "MEDHORIZON_DATA", "sureon": "SUREON_DATA", "surghi": "SURGHI_DATA"}


def _pairs(values: list[str] | None, known: tuple[str, ...] | None, what: str) -> dict[str | None, list[str]]:
    """``[KEY=]VALUE`` arguments -> ``{key or None: [values]}``; with ``known``, KEY must be one of them."""
    out: dict[str | None, list[str]] = {}
    for v in values or []:
        key, sep, rest = v.partition("=")
        if sep and (known is None or key in known) and rest:
            out.setdefault(key, []).append(rest)
        elif sep and known is None:
            raise MedHorizonError(f"{what} {v!r}: expected SOURCE=PATH")
        else:
            out.setdefault(None, []).append(v)
    return out


# ------------------------------------------------------------------ build-dataset

def _cmd_build_dataset(args) -> int:
    from ..data import release_build as rb
    from ..core.text import report_json

    srcs = _pairs(args.src, _BENCHMARKS, "--src")
    sources: dict[str, str] = {}
    for key, paths in srcs.items():
        bench = key or "medhorizon"
        if len(paths) > 1 or bench in sources:
            raise MedHorizonError(f"--src given twice for {bench}")
        sources[bench] = paths[0]
    out = Path(args.out)
    if sources:
        res = rb.build_dataset(sources, out, hierarchy=args.hierarchy, card=args.card)
        for bench, version in res.versions.items():
            print(f"{bench}: {res.rows[bench]} rows, data version {version}", file=sys.stderr)
        print(f"wrote {out} ({len(res.files)} files)", file=sys.stderr)
    elif not args.push:
        raise MedHorizonError("nothing to do: give --src to build and/or --push REPO to upload a built folder")
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


def add_build_dataset_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "build-dataset", help="validate a release and write (and optionally upload) its Hugging Face dataset",
        description="Validate the annotations with the package's readers and write the Hugging Face layout: "
                    "the dataset card, one typed parquet per config (medhorizon, sureon, surghi), the JSONL the "
                    "package reads, and version.json (the hashes `leaderboard version` prints). --push REPO "
                    "uploads it with huggingface_hub in one commit; without a token, or with --dry-run, only the "
                    "plan (every path, size and SHA-256) is printed and nothing leaves the machine.")
    p.add_argument("--src", action="append", metavar="[BENCHMARK=]FILE",
                   help="the annotations: the MedHorizon release (JSONL/JSON/dataset folder), or sureon=ITEMS.jsonl, "
                        "surghi=ROWS.jsonl (repeat for several)")
    p.add_argument("--out", required=True, help="folder to write (new, empty, or an earlier build)")
    p.add_argument("--hierarchy", help="surghi: hierarchy JSON for datasets the package does not ship")
    p.add_argument("--card", help="dataset card template (default: the package's hf_dataset_card/README.md)")
    p.add_argument("--push", metavar="REPO", help="upload to this Hugging Face dataset repository (owner/name)")
    p.add_argument("--dry-run", action="store_true", help="print what would be uploaded; upload nothing")
    p.add_argument("--private", action="store_true", help="create the repository private (when it is new)")
    p.add_argument("--commit-message", help="default: the data versions")
    p.add_argument("--json", action="store_true", help="print the upload plan / result as JSON")
    p.set_defaults(func=_cmd_build_dataset)
    return p


# ------------------------------------------------------------------ videos

def _cmd_videos(args) -> int:
    from ..data.reconstruct import read_checksums, reconstruct
    from ..runs.preflight import VideoCheckCache
    from ..core.safeio import atomic_write_text
    from ..core.text import report_json

    data = args.data or os.environ.get(_DATA_ENV[args.benchmark])
    if not data:
        raise MedHorizonError(f"no data: pass --data or set {_DATA_ENV[args.benchmark]}")
    write = args.videos_command == "link"
    mode = "copy" if getattr(args, "copy", False) else getattr(args, "mode", "auto")
    report = reconstruct(
        args.benchmark, data, args.root, _pairs(args.sources, None, "--from"), write=write, mode=mode,
        extract=getattr(args, "extract", False), force=getattr(args, "force", False), decode=not args.no_decode,
        checksums=read_checksums(args.checksums) if args.checksums else None, compute_checksums=args.checksum,
        workers=args.workers, progress=not args.quiet,
        cache=VideoCheckCache(args.cache) if args.cache else None)
    as_json = report_json(report.to_json())
    if args.report:
        atomic_write_text(args.report, as_json + "\n")
    print(as_json if args.json else report.message())
    return 0 if report.ok else 1


def add_videos_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("videos", help="check or rebuild the video root from the upstream downloads",
                       description="Find every video the data point to in your copy of its upstream source, place "
                                   "it where video_path says (link), and check it as every run's pre-flight does, "
                                   "plus a decode and the frame count and rate. Exit 0 when every video is usable, "
                                   "1 when some are not (each named, with how to get it), 2 on unusable arguments.")
    vsub = p.add_subparsers(dest="videos_command", required=True)

    def common(x):
        x.add_argument("--root", required=True, help="the video root (the folder video_path is relative to)")
        x.add_argument("--data", help="the data (default: $MEDHORIZON_DATA, $SUREON_DATA or $SURGHI_DATA)")
        x.add_argument("--benchmark", default="medhorizon", choices=_BENCHMARKS)
        x.add_argument("--from", dest="sources", action="append", metavar="[SOURCE=]PATH",
                       help="a download folder of one source (e.g. REAL-Colon=/data/realcolon), or a folder holding "
                            "several; repeat for each")
        x.add_argument("--no-decode", action="store_true", help="skip decoding the first, middle and last frames")
        x.add_argument("--checksum", action="store_true", help="compute each video's SHA-256 (in the JSON report)")
        x.add_argument("--checksums", metavar="FILE", help="sha256sum-style list (HEX  video_path) to verify against")
        x.add_argument("--workers", type=int, default=4, help="videos checked at once (default 4)")
        x.add_argument("--cache", help="check cache file (default ~/.cache/medhorizon_tasks/video_checks.json)")
        x.add_argument("--json", action="store_true", help="print the report as JSON")
        x.add_argument("--report", metavar="FILE", help="also write the JSON report to FILE")
        x.add_argument("--quiet", action="store_true", help="no progress bars")
        x.set_defaults(func=_cmd_videos)

    c = vsub.add_parser("check", help="check the video root; with --from, say where missing videos are upstream "
                                      "(writes nothing)")
    common(c)
    ln = vsub.add_parser("link", help="place missing videos from the downloads (links; frames assembled "
                                      "losslessly), then check")
    common(ln)
    ln.add_argument("--mode", choices=("auto", "hardlink", "symlink"), default="auto",
                    help="auto: a relative symlink when the download lies inside the root, else a hard link")
    ln.add_argument("--copy", action="store_true", help="copy instead of linking (e.g. across filesystems)")
    ln.add_argument("--extract", action="store_true", help="extract videos found only inside zip archives")
    ln.add_argument("--force", action="store_true", help="replace present videos that fail the check")
    return p


# ------------------------------------------------------------------ surghi import

def _cmd_surghi_import(args) -> int:
    from ..benchmarks.surghi import upstream
    from ..core.safeio import atomic_write_json, atomic_write_jsonl
    from ..core.text import report_json

    kwargs: dict = {}
    if args.video_template:
        kwargs["video_template"] = args.video_template
    if args.source == "grasp":
        kwargs.update(split=args.split or "test", frames_fps=args.frames_fps)
    else:
        kwargs.update(split=args.split, keep_other=args.keep_other)
    result = upstream.import_source(args.source, args.labels, **kwargs)
    out = Path(args.out)
    hierarchy_out = Path(args.hierarchy_out) if args.hierarchy_out else out.with_name(out.stem + ".hierarchy.json")
    atomic_write_jsonl(out, upstream.rows_as_records(result.rows))
    atomic_write_json(hierarchy_out, {ds: h.to_json() for ds, h in sorted(result.hierarchies.items())})
    print(report_json(result.summary()) if args.json else result.message())
    print(f"wrote {out} ({len(result.rows)} rows) and {hierarchy_out} (derived hierarchies; pass it to "
          f"`score --hierarchy` to score on them instead of the shipped ones)", file=sys.stderr)
    return 0


def add_surghi_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("surghi", help="SurgHiBench data tools (import from the upstream annotations)")
    ssub = p.add_subparsers(dest="surghi_command", required=True)
    i = ssub.add_parser("import", help="frame rows (1 FPS) and derived hierarchies from MultiBypass140 / GraSP labels",
                        description="Turn a source's own annotation files into the rows that `score --benchmark "
                                    "surghi` and the lmms-eval task read, one per second of the real video, and "
                                    "derive each dataset's phase-step hierarchy from them (tree-likeness reported).")
    i.add_argument("--source", required=True, choices=("multibypass140", "grasp"))
    i.add_argument("--labels", required=True, help="multibypass140: the repository's labels/ folder (per-video JSON "
                                                   "and split pickles); grasp: the annotations/ folder")
    i.add_argument("--out", required=True, help="rows JSONL to write")
    i.add_argument("--hierarchy-out", help="derived hierarchies JSON (default: OUT with .hierarchy.json)")
    i.add_argument("--split", help="grasp: test (default), train or all; multibypass140: only videos of the split "
                                   "pickles under a folder of this name (default: every labelled video)")
    i.add_argument("--frames-fps", type=float, default=30.0, help="grasp: rate of the frame numbering (default 30)")
    i.add_argument("--keep-other", action="store_true", help="multibypass140: keep other_intervention seconds")
    i.add_argument("--video-template", help="video_path of each row (default multibypass/{video}.mp4, "
                                            "grasp/{video}.mp4)")
    i.add_argument("--json", action="store_true", help="print the summary as JSON")
    i.set_defaults(func=_cmd_surghi_import)
    return p


def add_parsers(sub) -> None:
    """All three commands (what ``cli.build_parser`` calls)."""
    add_build_dataset_parser(sub)
    add_videos_parser(sub)
    add_surghi_parser(sub)
