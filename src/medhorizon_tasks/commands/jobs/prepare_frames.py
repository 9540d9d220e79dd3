"""``medhorizon-tasks prepare-frames``: decode a benchmark's frame plans into the frame cache ahead of a run.

Work is split by video (all plans of one video in one place, so its packet
index and change signal are computed once): ``--shard i/n`` keeps the videos
whose position in the sorted list is ``i`` modulo ``n``, so ``n`` machines on a
shared file system fill one cache between them; under ``accelerate launch``
the shard defaults to the process index. ``--workers N`` decodes N videos at
once on this machine. A broken video, or a plan the cache cannot store (a full
disk, a read-only cache), is reported per item and the rest go on; either fails the run.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor, as_completed

from tqdm import tqdm

from ...benchmarks.medhorizon.protocol import FrameSetting, load_frames
from ...core.errors import DataError, VideoError
from ...core.video.frame_cache import CacheWriteError, FrameCache

_PLAN = re.compile(r"^(cap|frames|frame_change|hybrid)(\d+)$|^oracle$")


def parse_plans(spec: str) -> list[FrameSetting]:
    """``cap64,frames32,oracle,frame_change32,hybrid64`` -> frame settings (1 FPS grid)."""
    out = []
    for part in [p.strip() for p in spec.split(",") if p.strip()]:
        m = _PLAN.match(part)
        if not m:
            raise DataError(f"--plans: {part!r} is not one of capN, framesN, frame_changeN, hybridN, oracle")
        kind, n = m.group(1), int(m.group(2) or 0)
        if part == "oracle":
            out.append(FrameSetting(mode="oracle"))
        elif kind == "cap":
            out.append(FrameSetting(cap=n))
        elif kind == "frames":
            out.append(FrameSetting(frames=n))
        else:
            out.append(FrameSetting(frames=n, strategy=kind))
    if not out:
        raise DataError("--plans is empty")
    return out


def parse_shard(spec: str | None) -> tuple[int, int]:
    """``"i/n"``; by default accelerate's process index (``RANK`` / ``WORLD_SIZE``), else ``0/1``."""
    if spec is None:
        return int(os.environ.get("RANK", 0)), int(os.environ.get("WORLD_SIZE", 1))
    m = re.fullmatch(r"(\d+)/(\d+)", spec.strip())
    if not m or not 0 <= int(m.group(1)) < int(m.group(2)):
        raise DataError(f"--shard must look like i/n with 0 <= i < n, got {spec!r}")
    return int(m.group(1)), int(m.group(2))


def _video_job(items, settings, video_root, cache_root) -> list[tuple[str, str, str | None]]:
    # strict: a plan decoded but not stored (full disk, read-only cache) is a failed plan here, since the
    # cache entry is all this command produces.
    cache = FrameCache(cache_root, strict=True)
    done = []
    for item in items:
        for setting in settings:
            try:
                load_frames(item, setting, video_root, cache=cache)
                done.append((item.uid, setting.mode, None))
            except (VideoError, CacheWriteError) as exc:
                done.append((item.uid, setting.mode, str(exc)))
    return done


def prepare_frames(items, settings: list[FrameSetting], video_root: str | os.PathLike, *,
                   cache: FrameCache, workers: int = 1, shard: tuple[int, int] = (0, 1),
                   progress: bool = True) -> dict:
    by_video: dict[str, list] = defaultdict(list)
    for it in items:
        by_video[it.video_path].append(it)
    i, n = shard
    mine = [v for k, v in enumerate(sorted(by_video)) if k % n == i]
    errors: dict[str, str] = {}
    units = sum(len(by_video[v]) for v in mine) * len(settings)
    bar = tqdm(total=units, unit="plan", desc=f"prepare-frames shard {i}/{n}", disable=not progress)
    jobs = [(by_video[v], settings, str(video_root), str(cache.root)) for v in mine]
    if workers <= 1:
        results = (_video_job(*job) for job in jobs)
        for done in results:
            _tally(done, errors, bar)
    else:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for fut in as_completed([pool.submit(_video_job, *job) for job in jobs]):
                _tally(fut.result(), errors, bar)
    bar.close()
    return {"shard": f"{i}/{n}", "videos": len(mine), "plans": units, "errors": errors, "cache": cache.info()}


def _tally(done, errors, bar) -> None:
    for uid, _mode, err in done:
        if err:
            errors.setdefault(uid, err)
        bar.update(1)

