"""The videos a benchmark's data refer to, and checking them without decoding.

:func:`video_refs` groups any benchmark's items by the video they use (with
what the data say about it: the whole video's duration, or the latest time an
item refers to); :func:`check_videos` checks that each is present, inside the
video root, indexable (its packet index is read, no frame decoded) and agrees
with the data (:mod:`medhorizon_tasks.core.video.metadata`) -- in parallel,
with a progress bar, each result cached by the file's identity
(:mod:`medhorizon_tasks.core.file_identity`: a digest of all of its bytes, so a
file rewritten anywhere -- random bytes of the same size with its mtime kept,
``cp -p``, ``rsync -a`` -- is checked again; the first check of a file reads it
whole once, a later one of the unchanged file costs a ``stat``). The pre-flight of every run (:mod:`medhorizon_tasks.runs.preflight`)
and the reconstruction of a video root (:mod:`medhorizon_tasks.data.reconstruct`)
both use them.
"""

from __future__ import annotations

import os
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import DataError, MedHorizonError, VideoError
from ..core.file_identity import file_identity
from ..core.settings import env_text

__all__ = ["Source", "SOURCES", "VideoRef", "VideoProblem", "video_refs", "default_root", "VideoCheckCache",
           "check_videos", "video_identities"]


@dataclass(frozen=True)
class Source:
    """Where a benchmark's data and videos are configured."""

    benchmark: str
    data_env: str
    root_env: str
    what: str  # how the data file is called in messages


SOURCES = {
    "medhorizon": Source("medhorizon", "MEDHORIZON_DATA", "MEDHORIZON_VIDEO_ROOT",
                         "the MedHorizon release (JSONL, JSON or a dataset folder)"),
    "sureon": Source("sureon", "SUREON_DATA", "SUREON_VIDEO_ROOT", "the Sureon items (JSONL)"),
    "surghi": Source("surghi", "SURGHI_DATA", "SURGHI_VIDEO_ROOT", "the SurgHiBench task items (JSONL or CSV)"),
}


@dataclass(frozen=True)
class VideoRef:
    """One video the data point to, and what the data say about it."""

    video_path: str                  # relative to the video root
    uids: tuple[str, ...]            # the items that use it
    duration_s: float | None = None  # the data's duration of the whole video (MedHorizon)
    latest_s: float | None = None    # the latest time the data refer to (Sureon end_s, SurgHiBench timestamp_s)


@dataclass(frozen=True)
class VideoProblem:
    video_path: str
    uids: tuple[str, ...]
    reason: str


# ------------------------------------------------------------------ data -> video references

def _group(entries: Iterable[tuple[str, str, float | None, float | None]]) -> list[VideoRef]:
    uids: dict[str, list[str]] = defaultdict(list)
    duration: dict[str, float | None] = {}
    latest: dict[str, float | None] = {}
    for path, uid, dur, late in entries:
        uids[path].append(uid)
        duration.setdefault(path, dur)
        if late is not None:
            latest[path] = max(late, latest.get(path) or late)
    return [VideoRef(p, tuple(u), duration.get(p), latest.get(p)) for p, u in sorted(uids.items())]


def video_refs(benchmark: str, data: str | os.PathLike) -> tuple[int, list[VideoRef]]:
    """``(number of items, the videos they use)``; DataError naming every problem of the data."""
    data = Path(data).expanduser()
    if benchmark == "medhorizon":
        from .medhorizon.release import load_release

        items = load_release(data)
        return len(items), _group((it.video_path, it.uid, it.duration_s, None) for it in items)
    if benchmark == "sureon":
        from .sureon.items import load_items

        items = load_items(data)
        return len(items), _group((it.video_path, it.uid, None, it.end_s) for it in items)
    if benchmark == "surghi":
        from .surghi.frames import read_frame_rows

        rows = read_frame_rows(data, role="items")
        return len(rows), _group((r.video_path, r.uid, None, r.timestamp_s) for r in rows)
    raise MedHorizonError(f"unknown benchmark {benchmark!r} (expected one of {', '.join(SOURCES)})")


def default_root(benchmark: str, data: Path) -> Path:
    env = env_text(SOURCES[benchmark].root_env)
    if env:
        return Path(env).expanduser()
    return data if data.is_dir() else data.parent


# ------------------------------------------------------------------ checking videos

class VideoCheckCache:
    """What indexing a file found, keyed by its content identity
    (:func:`~medhorizon_tasks.core.file_identity.file_identity`): a file whose bytes did not change is not
    indexed again, wherever it lies; one whose bytes changed anywhere is. Stored as one JSON file; a damaged
    cache is simply rebuilt."""

    def __init__(self, path: str | os.PathLike | None = None):
        if path is None:
            base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
            path = Path(base) / "medhorizon_tasks" / "video_checks.json"
        self.path = Path(path)
        self._lock = threading.Lock()
        self._entries: dict[str, dict] | None = None
        self._dirty = False

    @staticmethod
    def identity(path: Path) -> str | None:
        """The key of ``path``'s results: its content identity; None when it cannot be read."""
        try:
            return file_identity(path)
        except OSError:
            return None

    def _load(self) -> dict[str, dict]:
        if self._entries is None:
            from ..core.safeio import read_json

            try:
                value = read_json(self.path) if self.path.exists() else {}
            except DataError:
                value = {}
            self._entries = value if isinstance(value, dict) else {}
        return self._entries

    def get(self, key: str) -> dict | None:
        with self._lock:
            entry = self._load().get(key)
            return entry if isinstance(entry, dict) else None

    def put(self, key: str, entry: dict) -> None:
        with self._lock:
            self._load()[key] = entry
            self._dirty = True

    def save(self) -> None:
        from ..core.safeio import atomic_write_json

        with self._lock:
            if not self._dirty:
                return
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_json(self.path, self._entries, indent=None)
            except (OSError, MedHorizonError):
                pass  # a cache that cannot be written only costs time on the next run
            self._dirty = False


def _measure(path: Path, cache: VideoCheckCache | None) -> dict:
    """``{"duration_s", "num_frames"}`` or ``{"error"}`` for a file, through the cache."""
    from ..core.video.index_store import stored_index
    from ..core.video.metadata import file_duration

    key = VideoCheckCache.identity(path) if cache is not None else None
    if key is not None:
        hit = cache.get(key)
        if hit is not None:
            return hit
    try:
        index = stored_index(path)  # kept on disk: the run's decodes reuse it
        entry = {"duration_s": file_duration(index), "num_frames": index.num_frames}
    except VideoError as exc:
        entry = {"error": str(exc).split(" (video:")[0]}
    if key is not None:
        cache.put(key, entry)
    return entry


def _check_one(root: Path, ref: VideoRef, cache: VideoCheckCache | None) -> VideoProblem | None:
    from ..core.paths import resolve_video_path
    from ..core.video.metadata import duration_tolerance

    try:
        path = resolve_video_path(root, ref.video_path)
    except VideoError as exc:
        return VideoProblem(ref.video_path, ref.uids, str(exc))
    if not path.exists():
        return VideoProblem(ref.video_path, ref.uids, f"video file not found: {path}")
    if not path.is_file():
        return VideoProblem(ref.video_path, ref.uids, f"not a regular file: {path}")
    found = _measure(path, cache)
    if "error" in found:
        return VideoProblem(ref.video_path, ref.uids, found["error"])
    actual = float(found["duration_s"])
    if ref.duration_s is not None and abs(actual - ref.duration_s) > duration_tolerance(ref.duration_s):
        return VideoProblem(ref.video_path, ref.uids, f"the file is {actual:.1f} s long, the data says "
                            f"{ref.duration_s:.1f} s (tolerance +/-{duration_tolerance(ref.duration_s):.1f} s)")
    if ref.latest_s is not None and ref.latest_s > actual + duration_tolerance(actual):
        return VideoProblem(ref.video_path, ref.uids, f"the data refer to {ref.latest_s:.1f} s but the file is "
                            f"only {actual:.1f} s long")
    return None


def check_videos(root: str | os.PathLike, refs: list[VideoRef], *, workers: int = 4, progress: bool = True,
                 cache: VideoCheckCache | None = None, desc: str = "pre-flight: videos",
                 on_result: Callable[[VideoRef, VideoProblem | None], None] | None = None) -> list[VideoProblem]:
    """Every problem of the referenced videos (see the module doc), in the order of ``refs``.

    Indexing reads packets without decoding and PyAV releases the GIL while it
    reads, so a few threads keep the disk and both cores busy.
    """
    from tqdm import tqdm

    root = Path(root)
    results: list[VideoProblem | None] = [None] * len(refs)
    with tqdm(total=len(refs), desc=desc, unit="video", disable=not progress, leave=False) as bar:
        def run(i: int) -> None:
            results[i] = _check_one(root, refs[i], cache)
            if on_result is not None:
                on_result(refs[i], results[i])
            bar.update(1)

        if workers <= 1 or len(refs) <= 1:
            for i in range(len(refs)):
                run(i)
        else:
            with ThreadPoolExecutor(max_workers=min(workers, len(refs)), thread_name_prefix="preflight") as pool:
                list(pool.map(run, range(len(refs))))
    if cache is not None:
        cache.save()
    return [p for p in results if p is not None]


def video_identities(root: str | os.PathLike, refs: list[VideoRef], *, progress: bool = True,
                     desc: str = "videos: identities") -> dict[str, str | None]:
    """``video_path -> its file identity`` (:func:`~medhorizon_tasks.core.file_identity.file_identity`) for
    every referenced video; None for one that is missing, unreadable or outside the root. What a set of
    outputs made from these videos was made from: any change of a video's bytes, a video put in place, or
    another root holding other files gives another mapping. A stat per video the pre-flight already read."""
    from tqdm import tqdm

    from ..core.paths import resolve_video_path

    out: dict[str, str | None] = {}
    for ref in tqdm(refs, desc=desc, unit="video", disable=not progress, leave=False):
        try:
            out[ref.video_path] = file_identity(resolve_video_path(root, ref.video_path))
        except (OSError, VideoError, RuntimeError):  # RuntimeError: a symlink loop (Path.resolve, Python < 3.13)
            out[ref.video_path] = None
    return out
