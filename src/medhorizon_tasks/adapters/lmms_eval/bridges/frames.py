"""What the bridges need to know about planned frames: which times to show and how large a frame may be.

Framework-free (numpy only), so every rule here is testable without a model.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ....core.video.planned_frames import PlannedFrames
from ....core.video.size import QwenVideo, smart_resize  # noqa: F401  (smart_resize: the bridges' name for it)

__all__ = ["planned_frames", "shown_times", "qwen2_5_second_per_grid", "pad_to_even", "frames_array",
           "QwenPixelBudget"]


def planned_frames(visuals) -> PlannedFrames | None:
    """The planned frames when ``visuals`` is a non-empty frame plan, else None (the wrapper's own business:
    another task's visuals, a text-mode item, or an item whose video failed)."""
    return visuals if isinstance(visuals, PlannedFrames) and len(visuals) else None


def shown_times(frames: PlannedFrames) -> list[float]:
    """The time of each frame as the model is told it, in presentation order.

    Chronological frames: their real times. Frames whose order was perturbed on
    purpose (the frame-order diagnostic): evenly spaced times over the same
    span, in presentation order, so a model whose input format requires times
    still gets them, and they reveal nothing about the true order.
    """
    times = [float(t) for t in frames.timestamps]
    if frames.chronological or len(times) < 2:
        return times
    first, last = min(times), max(times)
    step = (last - first) / (len(times) - 1)
    return [first + i * step for i in range(len(times))]


def qwen2_5_second_per_grid(times: Sequence[float], temporal_patch_size: int = 2) -> float:
    """Qwen2.5-VL's ``second_per_grid_ts`` for frames at ``times``: seconds between two temporal patches,
    ``temporal_patch_size * span / (n - 1)`` with span = last - first time.

    Qwen2.5-VL places temporal patch k at ``k * second_per_grid_ts * tokens_per_second`` (absolute time
    encoding); one value per video, so a plan whose spacing varies (oracle windows, frame-change
    sampling) gets its mean spacing. One frame, or frames at one instant, have no spacing: 1 FPS.
    """
    n = len(times)
    span = (max(times) - min(times)) if n else 0.0
    if n < 2 or span <= 0:
        return float(temporal_patch_size)
    return temporal_patch_size * span / (n - 1)


def pad_to_even(items: list, times: list[float]) -> tuple[list, list[float]]:
    """Repeat the last frame (and its time) once when the count is odd, as Qwen's processors do to fill the
    last two-frame temporal patch (and as one frame needs to become a video at all)."""
    if len(items) % 2:
        return [*items, items[-1]], [*times, times[-1]]
    return list(items), list(times)


def frames_array(frames: Sequence) -> np.ndarray:
    """PIL frames -> uint8 array (n, height, width, 3); all frames of one plan share one size."""
    return np.stack([np.asarray(im.convert("RGB"), dtype=np.uint8) for im in frames])


# The Qwen video budget lives in core (the decoder is asked for its size): re-exported for the bridges.
QwenPixelBudget = QwenVideo
