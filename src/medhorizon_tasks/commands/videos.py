"""``medhorizon-tasks videos check|link --video-root DIR [--data D] [--from [SOURCE=]PATH ...]``.

Find, place and check every video the data use (:mod:`.data.reconstruct`); exit 0 when all are usable,
1 otherwise. Errors are raised as MedHorizonError, which the main command prints as one message (exit
status 2).
"""

from __future__ import annotations

import argparse

from ..core.errors import MedHorizonError
from ..core.settings import env_text
from .common import BENCHMARKS, pairs
from .data_args import add_synthetic_argument
from .help import old_spellings

__all__ = ["add_parser"]

_DATA_ENV = {"medhorizon": "MEDHORIZON_DATA", "sureon": "SUREON_DATA", "surghi": "SURGHI_DATA"}


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``videos`` and its sub-commands to the main parser's sub-parsers."""
    p = sub.add_parser("videos", help="check or rebuild the video root from the upstream downloads",
                       description="Find every video the data point to in your copy of its upstream source, place "
                                   "it where video_path says (link), and check it as every run's pre-flight does, "
                                   "plus a decode and the frame count and rate. Exit 0 when every video is usable, "
                                   "1 when some are not (each named, with how to get it), 2 on unusable arguments.")
    vsub = p.add_subparsers(dest="videos_command", required=True)

    def common(x):
        x.add_argument("--video-root", help="the video root (the folder video_path is relative to; required "
                       "unless --synthetic)")
        old_spellings(x, "--video-root", "--root")
        x.add_argument("--data", help="the data, or a Hub dataset id (default: $MEDHORIZON_DATA, $SUREON_DATA or "
                       "$SURGHI_DATA)")
        add_synthetic_argument(x)
        x.add_argument("--benchmark", default="medhorizon", choices=BENCHMARKS)
        x.add_argument("--from", dest="sources", action="append", metavar="[SOURCE=]PATH",
                       help="a download folder of one source (e.g. REAL-Colon=/data/realcolon), or a folder holding "
                            "several; repeat for each")
        x.add_argument("--no-decode", action="store_true", help="skip decoding the first, middle and last frames")
        x.add_argument("--checksum", action="store_true", help="compute each video's SHA-256 (in the JSON report)")
        x.add_argument("--checksums", metavar="FILE",
                       help="SHA-256 list to verify against (sha256sum or shasum --tag output; paths relative to the "
                            "root, absolute, relative to the list's folder, or ending in the video_path); the "
                            "summary says how many videos were verified; a list that names none is an error")
        x.add_argument("--workers", type=int, default=4, help="videos checked at once (default 4)")
        x.add_argument("--check-cache", help="check cache file (default ~/.cache/medhorizon_tasks/video_checks.json)")
        old_spellings(x, "--check-cache", "--cache")
        x.add_argument("--json", action="store_true", help="print the report as JSON")
        x.add_argument("--out", metavar="FILE", help="also write the JSON report to FILE")
        old_spellings(x, "--out", "--report")
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
    ln.add_argument("--force", action="store_true",
                    help="replace present videos that fail the check by their upstream copy (not when the upstream "
                         "copy holds the same bytes: then it is the damaged one)")
    return p


def _cmd_videos(args) -> int:
    from ..benchmarks.videos import VideoCheckCache
    from ..core.safeio import atomic_write_text
    from ..core.text import report_json
    from ..data.reconstruct import read_checksums, reconstruct

    data = args.data or env_text(_DATA_ENV[args.benchmark])
    if not data:
        raise MedHorizonError(f"no data: pass --data or set {_DATA_ENV[args.benchmark]}")
    if not args.video_root:
        raise MedHorizonError("--video-root is required (the folder video_path is relative to), or --synthetic")
    write = args.videos_command == "link"
    mode = "copy" if getattr(args, "copy", False) else getattr(args, "mode", "auto")
    report = reconstruct(
        args.benchmark, data, args.video_root, pairs(args.sources, None, "--from"), write=write, mode=mode,
        extract=getattr(args, "extract", False), force=getattr(args, "force", False), decode=not args.no_decode,
        checksums=read_checksums(args.checksums) if args.checksums else None, compute_checksums=args.checksum,
        workers=args.workers, progress=not args.quiet,
        cache=VideoCheckCache(args.check_cache) if args.check_cache else None)
    as_json = report_json(report.to_json())
    if args.out:
        atomic_write_text(args.out, as_json + "\n")
    print(as_json if args.json else report.message())
    return 0 if report.ok else 1
