"""A cheap per-video picture-change signal for differential frame-change sampling (paper RQ4).

:func:`change_signal` makes one low-resolution pass over a video and returns a
:class:`~medhorizon_tasks.core.sampling.ChangeSignal`: at each sampled point, the
mean absolute grey-level difference (0..255) between a tiny greyscale copy of
the picture and the previous sampled one. :class:`~medhorizon_tasks.core.sampling.FrameChange`
and :class:`~medhorizon_tasks.core.sampling.Hybrid` turn it into a frame plan.

How (two paths; the signal's ``method`` says which one ran):

* ``keyframes`` (normal): decode keyframes only
  (``codec_context.skip_frame = "NONKEY"``), which the project's decoding
  notes measured at ~6 s for 2 h of video against ~18 s for a full decode.
  Encoders place keyframes on a regular GOP and usually at scene cuts too, so
  keyframe-to-keyframe differences find the abrupt changes; the time
  resolution is the GOP length (typically 0.5-10 s).
* ``step`` (fallback): when the video has fewer than one keyframe per
  ``min_keyframe_interval_s`` seconds on average (or fewer than two), e.g. a
  long-GOP recording with a single keyframe, keyframes say nothing about the
  picture. Then frames are sampled every ``fallback_step_s`` seconds: for
  each step the stream is sought (to the keyframe before it) only when that
  keyframe lies beyond the frames already decoded; otherwise decoding simply
  continues forward. Seeking blindly for every step would re-decode each long
  GOP from its keyframe once per step (quadratic in the GOP length); this way
  every frame is decoded at most once, so the cost is at most one full decode.

Memory is constant in the video's length: only the previous small image and
the list of (time, score) pairs are held.

Times are seconds from the first frame (the stream's start time), the timeline
of :class:`~medhorizon_tasks.core.sampling.VideoMeta`, so the signal lines up with
the 1 FPS candidate grid.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from ..errors import VideoError
from ..sampling import ChangeSignal
from .decode import open_video

__all__ = ["change_signal", "small_size"]


def small_size(width: int, height: int, side: int) -> tuple[int, int]:
    """(width, height) scaled so the longer side is ``side`` pixels (aspect kept, each at least 1)."""
    if width <= 0 or height <= 0:
        raise ValueError(f"bad frame size {width}x{height}")
    scale = side / max(width, height)
    return max(1, int(round(width * scale))), max(1, int(round(height * scale)))


class _Scorer:
    """Turns frames into (time, score) points, holding only the previous small image."""

    def __init__(self, side: int, t0: float):
        self.side, self.t0 = side, t0
        self.size: tuple[int, int] | None = None
        self.prev: np.ndarray | None = None
        self.times: list[float] = []
        self.scores: list[float] = []

    def add(self, frame) -> bool:
        """Score ``frame``; False (and ignored) when it has no time or is not after the last point."""
        if frame.time is None:
            return False
        t = float(frame.time) - self.t0
        if self.times and t <= self.times[-1]:
            return False
        if self.size is None:
            self.size = small_size(frame.width, frame.height, self.side)
        w, h = self.size
        img = frame.reformat(width=w, height=h, format="gray").to_ndarray()
        img = np.asarray(img[:h, :w], dtype=np.int16)  # drop any line padding
        score = 0.0 if self.prev is None else float(np.abs(img - self.prev).mean())
        self.prev = img
        self.times.append(round(t, 6))
        self.scores.append(score)
        return True


def _start_time(stream) -> float:
    if stream.start_time is not None and stream.time_base is not None:
        return float(stream.start_time * stream.time_base)
    return 0.0


def _duration(container, stream, last_time: float | None) -> float | None:
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return container.duration / 1_000_000
    return last_time


def _keyframe_pass(container, stream, side: int, t0: float) -> _Scorer:
    stream.codec_context.skip_frame = "NONKEY"
    scorer = _Scorer(side, t0)
    for frame in container.decode(stream):
        scorer.add(frame)
    return scorer


def _step_pass(container, stream, side: int, t0: float, step: float, key_times: list[float],
               duration: float) -> _Scorer:
    stream.codec_context.skip_frame = "DEFAULT"
    scorer = _Scorer(side, t0)
    keys = np.asarray(sorted(key_times), dtype=np.float64)
    decoded_to = -math.inf  # time of the last frame decoded
    frames = None
    n_steps = int(math.floor(max(duration, 0.0) / step)) + 1
    for k in range(n_steps):
        target = k * step
        if target <= decoded_to:
            continue  # an earlier frame already covered this step (gap in the video)
        j = int(np.searchsorted(keys, target + 1e-9, side="right")) - 1
        key_before = keys[j] if j >= 0 else 0.0
        if frames is None or key_before > decoded_to:
            container.seek(int(round((target + t0) / stream.time_base)), stream=stream,
                           backward=True, any_frame=False)
            frames = container.decode(stream)
        got = False
        for frame in frames:
            if frame.time is None:
                continue
            decoded_to = float(frame.time) - t0
            if decoded_to >= target - 1e-6:
                got = scorer.add(frame)
                break
        if not got:
            break  # end of stream
    return scorer


def change_signal(path: str | os.PathLike, *, side: int = 32, uid: str | None = None,
                  min_keyframe_interval_s: float = 30.0, fallback_step_s: float = 2.0) -> ChangeSignal:
    """The picture-change signal of the video at ``path`` (see the module notes).

    ``side``: longer side, in pixels, of the greyscale copy that is compared.
    ``min_keyframe_interval_s``: keyframes sparser than this on average (or
    fewer than two keyframes) switch to the ``fallback_step_s`` sampling path.
    ``uid`` names the item in errors: a missing or unreadable file raises
    :class:`~medhorizon_tasks.core.errors.VideoError` naming the uid and the path.
    """
    import av

    if side < 1:
        raise ValueError(f"side must be a positive number of pixels, got {side!r}")
    if not fallback_step_s > 0:
        raise ValueError(f"fallback_step_s must be positive, got {fallback_step_s!r}")
    path = Path(path)
    container = open_video(path, uid)
    try:
        stream = container.streams.video[0]
        stream.thread_type = "AUTO"  # must be set before the decoder opens
        t0 = _start_time(stream)
        try:
            scorer = _keyframe_pass(container, stream, side, t0)
            duration = _duration(container, stream, scorer.times[-1] if scorer.times else None) or 0.0
            n_keys = len(scorer.times)
            if n_keys < 2 or n_keys < duration / min_keyframe_interval_s:
                key_times = list(scorer.times)
                scorer = _step_pass(container, stream, side, t0, float(fallback_step_s), key_times, duration)
                method = f"step(step={fallback_step_s:g}s,side={side};{n_keys} keyframes in {duration:.0f}s)"
            else:
                method = f"keyframes(side={side})"
        except av.error.FFmpegError as exc:
            raise VideoError(f"video is unreadable or truncated while computing its change signal "
                             f"({type(exc).__name__}: {exc})", path=str(path), uid=uid) from None
    finally:
        container.close()
    if not scorer.times:
        raise VideoError("no frame could be decoded for the change signal", path=str(path), uid=uid)
    return ChangeSignal(tuple(scorer.times), tuple(scorer.scores), method=method)
