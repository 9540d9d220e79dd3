"""Pre-flight: before a model is loaded, check that the run can mean something.

A wrong ``MEDHORIZON_VIDEO_ROOT`` or a missing video does not crash an
evaluation: every affected item would be sent to the model without frames,
hours of GPU time for a number that means nothing. So before any model call:

1. the data load and validate (every problem named, as ``score`` does);
2. the video root exists;
3. every referenced video is present, inside the root, indexable (its packet
   index is read, no frame decoded) and agrees with the data
   (:mod:`medhorizon_tasks.core.video.metadata`: duration, or the latest time the
   data refer to) -- in parallel, with a progress bar, each result cached by
   file identity (path, size, modification time) so a second run is instant.

:func:`preflight` returns a :class:`PreflightReport`; its :meth:`~PreflightReport.message`
lists every failing video (with the items that use it) and the fix. A run
stops on a failing report unless ``MEDHORIZON_ALLOW_VIDEO_ERRORS=1``, in which
case the affected items are counted wrong as video errors, as before.
``medhorizon-tasks check`` runs the same checks by hand.
"""

from __future__ import annotations

import os
import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import DataError, MedHorizonError, VideoError

__all__ = ["ALLOW_VIDEO_ERRORS_ENV", "Source", "SOURCES", "VideoRef", "VideoProblem", "PreflightReport",
           "video_refs", "check_videos", "preflight", "allow_video_errors", "VideoCheckCache", "stop_unless_ready",
           "is_main_process"]

ALLOW_VIDEO_ERRORS_ENV = "MEDHORIZON_ALLOW_VIDEO_ERRORS"


def allow_video_errors() -> bool:
    """Whether the user asked to run despite failing videos (their items are then counted wrong)."""
    return os.environ.get(ALLOW_VIDEO_ERRORS_ENV, "").strip().lower() in ("1", "true", "yes", "on")


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


@dataclass
class PreflightReport:
    benchmark: str
    data: Path
    video_root: Path | None
    n_items: int
    n_videos: int
    problems: list[VideoProblem] = field(default_factory=list)
    fatal: str | None = None  # the data or the video root are unusable: nothing else was checked

    @property
    def ok(self) -> bool:
        return self.fatal is None and not self.problems

    @property
    def n_items_affected(self) -> int:
        return len({u for p in self.problems for u in p.uids})

    def to_json(self) -> dict:
        return {"benchmark": self.benchmark, "data": str(self.data),
                "video_root": None if self.video_root is None else str(self.video_root),
                "items": self.n_items, "videos": self.n_videos, "ok": self.ok, "fatal": self.fatal,
                "problems": [{"video_path": p.video_path, "items": list(p.uids), "reason": p.reason}
                             for p in self.problems]}

    def message(self, limit: int = 20) -> str:
        """One message: what fails and how to fix it."""
        src = SOURCES[self.benchmark]
        if self.fatal:
            return f"{self.benchmark} pre-flight failed: {self.fatal}"
        if self.ok:
            return (f"{self.benchmark} pre-flight: {self.n_items} items, {self.n_videos} videos under "
                    f"{self.video_root}: all present, readable and matching the data")
        lines = [f"{self.benchmark} pre-flight: {len(self.problems)} of {self.n_videos} videos cannot be used "
                 f"({self.n_items_affected} of {self.n_items} items; video root {self.video_root}):"]
        for p in self.problems[:limit]:
            lines.append(f"  - {p.video_path} ({_items(p.uids)}): {p.reason}")
        if len(self.problems) > limit:
            lines.append(f"  ... and {len(self.problems) - limit} more (`medhorizon-tasks check --benchmark "
                         f"{self.benchmark} --json` lists all)")
        missing = sum(1 for p in self.problems if "not found" in p.reason)
        if missing == self.n_videos:
            lines.append(f"No video was found: is {src.root_env}={self.video_root} the folder that the data's "
                         "video_path values are relative to?")
        lines.append(f"Fix: reconstruct or re-link the videos (see the dataset card), or point {src.root_env} at "
                     f"the right folder. To run anyway and count these items wrong as video errors, set "
                     f"{ALLOW_VIDEO_ERRORS_ENV}=1.")
        return "\n".join(lines)


def _items(uids: tuple[str, ...], limit: int = 5) -> str:
    shown = ", ".join(uids[:limit])
    more = f", ... {len(uids)} in all" if len(uids) > limit else ""
    return f"item{'s' if len(uids) > 1 else ''} {shown}{more}"


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
        from ..benchmarks.medhorizon.release import load_release

        items = load_release(data)
        return len(items), _group((it.video_path, it.uid, it.duration_s, None) for it in items)
    if benchmark == "sureon":
        from ..benchmarks.sureon.items import load_items

        items = load_items(data)
        return len(items), _group((it.video_path, it.uid, None, it.end_s) for it in items)
    if benchmark == "surghi":
        from ..benchmarks.surghi.frames import read_frame_rows

        rows = read_frame_rows(data, role="items")
        return len(rows), _group((r.video_path, r.uid, None, r.timestamp_s) for r in rows)
    raise MedHorizonError(f"unknown benchmark {benchmark!r} (expected one of {', '.join(SOURCES)})")


def default_root(benchmark: str, data: Path) -> Path:
    env = os.environ.get(SOURCES[benchmark].root_env)
    if env:
        return Path(env).expanduser()
    return data if data.is_dir() else data.parent


# ------------------------------------------------------------------ checking videos

class VideoCheckCache:
    """What indexing a file found, keyed by its identity (absolute path, size, mtime): a file that did
    not change is not read again. Stored as one JSON file; a damaged cache is simply rebuilt."""

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
        try:
            st = path.stat()
        except OSError:
            return None
        return f"{path.resolve()}|{st.st_size}|{st.st_mtime_ns}"

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
    from ..core.video.decode import index_video
    from ..core.video.metadata import file_duration

    key = VideoCheckCache.identity(path) if cache is not None else None
    if key is not None:
        hit = cache.get(key)
        if hit is not None:
            return hit
    try:
        index = index_video(path)
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


def preflight(benchmark: str, data: str | os.PathLike | None = None, video_root: str | os.PathLike | None = None,
              *, videos: bool = True, progress: bool = True, workers: int = 4,
              cache: VideoCheckCache | None = None) -> PreflightReport:
    """Check a benchmark's data (default: its environment variable) and, with ``videos``, every video."""
    src = SOURCES.get(benchmark)
    if src is None:
        raise MedHorizonError(f"unknown benchmark {benchmark!r} (expected one of {', '.join(SOURCES)})")
    if data is None:
        data = os.environ.get(src.data_env)
        if not data:
            return PreflightReport(benchmark, Path(""), None, 0, 0,
                                   fatal=f"{src.data_env} is not set: set it to {src.what}")
    data = Path(data).expanduser()
    try:
        n_items, refs = video_refs(benchmark, data)
    except DataError as exc:
        where = f"{src.data_env}={data}" if os.environ.get(src.data_env) == str(data) else str(data)
        return PreflightReport(benchmark, data, None, 0, 0, fatal=f"the data ({where}) cannot be used: {exc}")
    root = Path(video_root).expanduser() if video_root is not None else default_root(benchmark, data)
    report = PreflightReport(benchmark, data, root, n_items, len(refs))
    if not videos:
        return report
    if not root.is_dir():
        report.fatal = (f"the video root {root} does not exist or is not a folder: set {src.root_env} to the folder "
                        "that the data's video_path values are relative to")
        return report
    report.problems = check_videos(root, refs, workers=workers, progress=progress,
                                   cache=cache if cache is not None else VideoCheckCache())
    return report


# ------------------------------------------------------------------ a framework's start

def is_main_process() -> bool:
    """Whether this is the process that speaks for a (possibly multi-process) run: every rank runs the
    same checks and reaches the same verdict, only one prints it."""
    for var in ("RANK", "LOCAL_RANK"):
        if os.environ.get(var, "0").strip() not in ("0", ""):
            return False
    return True


def stop_unless_ready(needed: dict[str, bool], *, prog: str = "medhorizon-tasks") -> None:
    """The pre-flight of each benchmark in ``needed`` (``{benchmark: needs videos}``) before a framework loads
    a model: ``SystemExit(2)`` with its message when one fails, unless only videos fail and
    ``MEDHORIZON_ALLOW_VIDEO_ERRORS=1`` (then the failures are listed and the run goes on). The lmms-eval
    start-up hook and the VLMEvalKit launcher both call this, so both stop with the same words."""
    import sys

    main = is_main_process()

    def say(text: str) -> None:
        if main:
            print(text, file=sys.stderr)

    for bench, videos in needed.items():
        try:
            report = preflight(bench, videos=videos, progress=main and sys.stderr.isatty())
        except Exception as exc:  # noqa: BLE001 - a bug in a check must stop the run with its reason
            say(f"[{prog}] {bench} pre-flight could not run ({type(exc).__name__}: {exc})")
            raise SystemExit(2) from None
        if report.ok:
            say(f"[{prog}] {report.message()}")
        elif report.fatal is None and allow_video_errors():
            say(f"[{prog}] " + report.message().replace(
                "Fix:", f"Continuing ({ALLOW_VIDEO_ERRORS_ENV} is set); fix:", 1))
        else:
            say(f"{prog}: {report.message()}")
            raise SystemExit(2)
