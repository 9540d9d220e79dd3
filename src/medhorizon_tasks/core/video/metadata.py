"""One policy for a video file that disagrees with the data's metadata.

The data describe each video (MedHorizon: ``num_frames``, ``fps``,
``duration_seconds``; Sureon: the clip's ``start_s`` / ``end_s``; SurgHiBench:
each frame's ``timestamp_s``). The file a user reconstructed may differ: a
re-encode at another frame rate, a cut or concatenated file, a truncated
download. The rule, applied by every benchmark before any frame is planned:

* **Measure the file.** Frame plans are built on the file's own packet index
  (its real frame times), never on the data's frame count or rate.
* **Map through time.** Anything the data gives in frames (MedHorizon's
  evidence windows) is turned into seconds with the data's own ``fps`` and
  looked up in the file by time, so a file at 25 fps whose data says 10 fps
  still shows the evidence at 10-12 s as the frames at 10-12 s.
* **Refuse beyond a stated tolerance.** When the file's duration differs from
  the data's by more than ``max(DURATION_TOLERANCE_S, DURATION_TOLERANCE_FRACTION
  x duration)`` (2 s or 1 %, whichever is larger), or a time the data refers to
  lies outside the file, the item is a video error naming both numbers: it is
  not shown frames from a different video, and it is counted wrong and listed
  in the report. Within the tolerance the prompt states the file's duration.
* **Display rotation** is applied by the decoder (:mod:`medhorizon_tasks.core.video.decode`),
  so the frames look as a player shows them.
"""

from __future__ import annotations

from ..errors import VideoError

__all__ = ["DURATION_TOLERANCE_S", "DURATION_TOLERANCE_FRACTION", "duration_tolerance", "file_duration",
           "check_duration", "check_time_inside"]

DURATION_TOLERANCE_S = 2.0
DURATION_TOLERANCE_FRACTION = 0.01


def duration_tolerance(duration_s: float) -> float:
    """How far (seconds) a file's duration may be from the data's before the item is refused."""
    return max(DURATION_TOLERANCE_S, DURATION_TOLERANCE_FRACTION * float(duration_s))


def file_duration(index) -> float:
    """The file's duration in seconds, measured from its frame times (as the planner sees it)."""
    return float(index.meta().duration_s)


def check_duration(index, claimed_s: float, *, path=None, uid: str | None = None) -> float:
    """The file's duration, or a VideoError when it is off the data's ``duration_seconds``
    by more than :func:`duration_tolerance`."""
    actual = file_duration(index)
    if abs(actual - float(claimed_s)) > duration_tolerance(claimed_s):
        shorter = "shorter (truncated?)" if actual < claimed_s else "longer"
        raise VideoError(f"video file does not match the data: the file is {actual:.1f} s long, the data says "
                         f"{float(claimed_s):.1f} s ({shorter}; tolerance +/-{duration_tolerance(claimed_s):.1f} s)",
                         path=None if path is None else str(path), uid=uid)
    return actual


def check_time_inside(index, t_s: float, what: str, *, path=None, uid: str | None = None) -> float:
    """The file's duration, or a VideoError when the time ``t_s`` the data refers to (``what``, e.g.
    "the clip's end_s") lies beyond the file's end by more than the tolerance."""
    actual = file_duration(index)
    if float(t_s) > actual + duration_tolerance(actual):
        raise VideoError(f"video file does not match the data: {what} is {float(t_s):.1f} s but the file is "
                         f"only {actual:.1f} s long", path=None if path is None else str(path), uid=uid)
    return actual
