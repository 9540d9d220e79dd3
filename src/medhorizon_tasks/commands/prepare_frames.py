"""``medhorizon-tasks prepare-frames`` and ``cache``: fill the frame cache ahead of a run (the decoding
itself: :mod:`.jobs.prepare_frames`), report its size or clear it (or the packet index store's)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..core.settings import env_text
from ..core.text import plural, with_item
from .common import EXIT_USAGE

__all__ = ["add_parser"]


def add_parser(sub) -> None:
    """Add ``prepare-frames`` and ``cache`` to the main parser's sub-parsers."""
    pf = sub.add_parser("prepare-frames", help="decode frame plans into the frame cache ahead of a run")
    src = pf.add_mutually_exclusive_group()
    src.add_argument("--synthetic", action="store_true", help="the embedded synthetic benchmark")
    src.add_argument("--data", help="release JSONL or dataset folder (default: $MEDHORIZON_DATA)")
    pf.add_argument("--video-root", help="default: $MEDHORIZON_VIDEO_ROOT, else the data's folder")
    pf.add_argument("--plans", default="cap64", help="comma list of capN, framesN, frame_changeN, hybridN, oracle "
                    "(default cap64)")
    pf.add_argument("--workers", type=int, default=1, help="videos decoded at once")
    pf.add_argument("--shard", help="i/n: this machine's share of the videos (default: accelerate's process "
                    "index, else 0/1)")
    pf.add_argument("--cache", help="cache folder (default: $MEDHORIZON_FRAME_CACHE or ~/.cache/medhorizon_tasks/frames)")
    pf.add_argument("--quiet", action="store_true")
    pf.set_defaults(func=_cmd_prepare)

    ca = sub.add_parser("cache", help="frame cache (or packet index store) size report, or clear it (only the files "
                                      "it wrote)")
    ca.add_argument("action", choices=["info", "clear"])
    ca.add_argument("--index", action="store_true", help="the videos' packet indices instead of the frame cache "
                    "(default folder: $MEDHORIZON_INDEX_CACHE or ~/.cache/medhorizon_tasks/index)")
    ca.add_argument("--cache", help="cache folder (default: $MEDHORIZON_FRAME_CACHE or ~/.cache/medhorizon_tasks/frames)")
    ca.add_argument("--json", action="store_true")
    ca.set_defaults(func=_cmd_cache)


def _cmd_prepare(args) -> int:
    from ..benchmarks.medhorizon.release import DATA_ENV, load_release
    from ..core.paths import default_video_root
    from ..core.video.frame_cache import FrameCache
    from .jobs.prepare_frames import parse_plans, parse_shard, prepare_frames

    settings = parse_plans(args.plans)
    shard = parse_shard(args.shard)
    if args.synthetic:
        from ..data.synthetic.medhorizon import build_synthetic

        bench = build_synthetic(progress=True)
        items, root = load_release(bench.data_path), bench.video_root
    else:
        data = args.data or env_text(DATA_ENV)
        items = load_release(data)
        root = Path(args.video_root) if args.video_root else default_video_root(data)
    summary = prepare_frames(items, settings, root, cache=FrameCache(args.cache), workers=args.workers,
                             shard=shard, progress=not args.quiet)
    for uid, err in sorted(summary["errors"].items()):
        print(f"error: {with_item(uid, err)}", file=sys.stderr)
    c = summary["cache"]
    print(f"shard {summary['shard']}: {plural(summary['videos'], 'video')}, {plural(summary['plans'], 'plan')}, "
          f"{plural(len(summary['errors']), 'item')} with errors (video, or the cache could not be written); "
          f"cache {c['root']}: {plural(c['entries'], 'entry')}, {c['bytes'] / 1e9:.2f} GB")
    return 1 if summary["errors"] else 0


def _cmd_cache(args) -> int:
    from ..core.video.frame_cache import FrameCache
    from ..core.video.index_store import IndexStore

    cache = IndexStore(args.cache) if args.index else FrameCache(args.cache)
    if args.action == "clear":
        return _clear(cache, args.index)
    else:
        info = cache.info()
        print(json.dumps(info, default=str) if args.json else
              f"{info['root']}: {plural(info['entries'], 'entry')}, {info['bytes'] / 1e9:.3f} GB")
    return 0


def _clear(cache, index: bool) -> int:
    """``cache clear``: only what the cache (or the index store) wrote goes; a folder that holds none of it is
    refused (exit 2)."""
    from ..core.video.frame_cache import MARK

    if not cache.root.is_dir():
        print(f"{cache.root}: no such folder, nothing to remove")
        return 0
    done = cache.clear()
    where, who = ("in its folder", "the store") if index else ("in its shard folders", "the cache")
    kept = f"; {plural(done['kept'], 'other file')} {where} left alone (not written by {who})" if done["kept"] else ""
    if not done["marked"] and not done["files"]:
        what = "a packet index store (no index files)" if index else f"a frame cache (no {MARK}, no cache entries)"
        print(f"medhorizon-tasks cache: error: {cache.root} is not {what}: nothing removed{kept}", file=sys.stderr)
        return EXIT_USAGE
    print(f"removed {plural(done['entries'], 'entry')} ({plural(done['files'], 'file')}) from {cache.root}{kept}")
    return 0
