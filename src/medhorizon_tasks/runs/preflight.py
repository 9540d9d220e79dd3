"""Pre-flight: before a model is loaded, check that the run can mean something.

A wrong ``MEDHORIZON_VIDEO_ROOT`` or a missing video does not crash an
evaluation: every affected item would be sent to the model without frames,
hours of GPU time for a number that means nothing. So before any model call:

1. the data load and validate (every problem named, as ``score`` does); a
   MedHorizon release is compared with the paper's published counts
   (:mod:`medhorizon_tasks.benchmarks.medhorizon.release_check`): each
   difference is a warning in the report's message, never a stop;
2. the video root exists;
3. every referenced video is present, inside the root, indexable (its packet
   index is read, no frame decoded) and agrees with the data
   (:mod:`medhorizon_tasks.benchmarks.videos`: duration, or the latest time the
   data refer to) -- in parallel, with a progress bar, each result cached by
   the file's identity (a digest of all of its bytes, remembered while the
   file is unchanged), so a second run of unchanged files costs a ``stat``
   each and a file rewritten anywhere is checked again.

:func:`preflight` returns a :class:`PreflightReport`; its :meth:`~PreflightReport.message`
lists every failing video (with the items that use it) and the fix. A run
stops on a failing report unless ``MEDHORIZON_ALLOW_VIDEO_ERRORS=1``, in which
case the affected items are counted wrong as video errors, as before.
``medhorizon-tasks check`` runs the same checks by hand.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..benchmarks.medhorizon.release import load_release
from ..benchmarks.medhorizon.release_check import ReleaseCheck, check_release
from ..benchmarks.videos import (
    SOURCES,
    Source,
    VideoCheckCache,
    VideoProblem,
    VideoRef,
    check_videos,
    default_root,
    video_refs,
)
from ..core.errors import DataError, MedHorizonError
from ..core.settings import env_flag, env_text

__all__ = ["ALLOW_VIDEO_ERRORS_ENV", "Source", "SOURCES", "VideoRef", "VideoProblem", "PreflightReport",
           "video_refs", "check_videos", "preflight", "allow_video_errors", "VideoCheckCache", "stop_unless_ready",
           "stop_unless_blur_ready",
           "is_main_process"]

ALLOW_VIDEO_ERRORS_ENV = "MEDHORIZON_ALLOW_VIDEO_ERRORS"


def allow_video_errors() -> bool:
    """Whether the user asked to run despite failing videos (their items are then counted wrong)."""
    return env_flag(ALLOW_VIDEO_ERRORS_ENV)


@dataclass
class PreflightReport:
    benchmark: str
    data: Path
    video_root: Path | None
    n_items: int
    n_videos: int
    problems: list[VideoProblem] = field(default_factory=list)
    fatal: str | None = None  # the data or the video root are unusable: nothing else was checked
    release: ReleaseCheck | None = None  # MedHorizon: the release against the published counts
    videos_checked: bool = True  # False: the data only (``check --no-videos``)

    @property
    def ok(self) -> bool:
        return self.fatal is None and not self.problems

    @property
    def n_items_affected(self) -> int:
        return len({u for p in self.problems for u in p.uids})

    def to_json(self) -> dict:
        return {"benchmark": self.benchmark, "data": str(self.data),
                "video_root": None if self.video_root is None else str(self.video_root),
                "items": self.n_items, "videos": self.n_videos, "videos_checked": self.videos_checked,
                "ok": self.ok, "fatal": self.fatal,
                "problems": [{"video_path": p.video_path, "items": list(p.uids), "reason": p.reason}
                             for p in self.problems],
                **({"release": self.release.to_json()} if self.release is not None else {})}

    @property
    def warnings(self) -> list[str]:
        """What the user should know though nothing fails: a release that is not the published one."""
        return self.release.warnings() if self.release is not None else []

    def message(self, limit: int = 20) -> str:
        """One message: what fails and how to fix it (and, after it, the warnings)."""
        return "\n".join([self._failures(limit), *self.warnings])

    def _failures(self, limit: int) -> str:
        src = SOURCES[self.benchmark]
        if self.fatal:
            return f"{self.benchmark} pre-flight failed: {self.fatal}"
        if self.ok and not self.videos_checked:
            return (f"{self.benchmark} pre-flight: {self.n_items} items load and validate; their {self.n_videos} "
                    f"videos under {self.video_root} were not checked")
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


def preflight(benchmark: str, data: str | os.PathLike | None = None, video_root: str | os.PathLike | None = None,
              *, videos: bool = True, progress: bool = True, workers: int = 4,
              cache: VideoCheckCache | None = None) -> PreflightReport:
    """Check a benchmark's data (default: its environment variable) and, with ``videos``, every video."""
    src = SOURCES.get(benchmark)
    if src is None:
        raise MedHorizonError(f"unknown benchmark {benchmark!r} (expected one of {', '.join(SOURCES)})")
    if data is None:
        data = env_text(src.data_env)
        if not data:
            return PreflightReport(benchmark, Path(""), None, 0, 0,
                                   fatal=f"{src.data_env} is not set: set it to {src.what}")
    data = Path(data).expanduser()
    try:
        n_items, refs = video_refs(benchmark, data)
    except DataError as exc:
        where = f"{src.data_env}={data}" if env_text(src.data_env) == str(data) else str(data)
        return PreflightReport(benchmark, data, None, 0, 0, fatal=f"the data ({where}) cannot be used: {exc}")
    root = Path(video_root).expanduser() if video_root is not None else default_root(benchmark, data)
    report = PreflightReport(benchmark, data, root, n_items, len(refs))
    if benchmark == "medhorizon":
        report.release = check_release(load_release(data))  # loaded once: the loader keeps a file's items
    if not videos:
        report.videos_checked = False
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
        if (env_text(var) or "0") != "0":
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


def stop_unless_blur_ready(blur_settings: list, *, prog: str = "medhorizon-tasks") -> None:
    """Sureon's visual runs blur their frames: before a model is loaded, ``SystemExit(2)`` naming the missing
    detector package and the fix when one of ``blur_settings`` (each run's ``blur`` task kwarg / preset value,
    None when it gives none) asks for the blurring pass and it cannot run here; or when a value is not a yes/no."""
    import sys

    from ..benchmarks.sureon.protocol import blur_problem

    for setting in blur_settings:
        try:
            problem = blur_problem(setting)
        except MedHorizonError as exc:
            problem = str(exc)
        if problem:
            if is_main_process():
                print(f"{prog}: {problem}", file=sys.stderr)
            raise SystemExit(2)


def preflight_or_refuse(benchmark: str, data, video_root, *, main: bool = True, progress: bool = True):
    """The pre-flight of a command that decodes the videos itself (``select``, ``surghi zeroshot``): a failing
    report is the command's error, unless only videos fail and ``MEDHORIZON_ALLOW_VIDEO_ERRORS`` is set; then
    the main process says it continues. Returns the report."""
    import sys

    report = preflight(benchmark, data, video_root, progress=main and progress and sys.stderr.isatty())
    if not report.ok:
        if report.fatal or not allow_video_errors():
            raise MedHorizonError(report.message())
        if main:
            print(report.message().replace("Fix:", "Continuing (MEDHORIZON_ALLOW_VIDEO_ERRORS is set); fix:", 1),
                  file=sys.stderr)
    return report

