"""``medhorizon-tasks check``: pre-flight a benchmark's data and videos, as every run does before loading a
model."""

from __future__ import annotations

import argparse
import json

from .common import EXIT_USAGE
from .data_args import add_synthetic_argument

__all__ = ["add_parser"]


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``check`` to the main parser's sub-parsers."""
    ck = sub.add_parser("check", help="pre-flight a benchmark's data and videos (what every run checks before "
                        "loading a model)", description="Check that a benchmark's data load and validate, that the "
                        "video root exists and that every referenced video is present, readable and matches the "
                        "data (duration, times). Exit 0 when everything is usable, 1 when some videos are not, 2 "
                        "when the data or the video root are unusable.")
    ck.add_argument("--benchmark", default="medhorizon", choices=["medhorizon", "sureon", "surghi"])
    ck.add_argument("--data", help="the data file or folder, or a Hub dataset id (default: $MEDHORIZON_DATA, "
                    "$SUREON_DATA or $SURGHI_DATA)")
    add_synthetic_argument(ck)
    ck.add_argument("--video-root", help="folder the data's video_path values are relative to (default: "
                    "$MEDHORIZON_VIDEO_ROOT / $SUREON_VIDEO_ROOT / $SURGHI_VIDEO_ROOT, else the data's folder)")
    ck.add_argument("--no-videos", action="store_true", help="check the data only")
    ck.add_argument("--workers", type=int, default=4, help="videos indexed at once (default 4)")
    ck.add_argument("--json", action="store_true")
    ck.add_argument("--quiet", action="store_true", help="no progress bar")
    ck.set_defaults(func=_cmd_check)
    return ck


def _cmd_check(args) -> int:
    from ..runs.preflight import preflight

    report = preflight(args.benchmark, args.data, args.video_root, videos=not args.no_videos,
                       progress=not args.quiet and not args.json, workers=args.workers)
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        print(report.message())
    if report.fatal:
        return EXIT_USAGE
    return 0 if report.ok else 1
