"""What the bridges need to know about planned frames: which times to show and how large a frame may be.

Framework-free (numpy only), so every rule here is testable without a model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ....core.video.planned_frames import PlannedFrames

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


# qwen-vl-utils 0.0.14 (the reference video path of Qwen2.5-VL and Qwen3-VL), in vision tokens of
# factor x factor pixels (factor = patch size x spatial merge: 28 for Qwen2.5-VL, 32 for Qwen3-VL).
QWEN_VIDEO_MIN_TOKENS = 128           # VIDEO_MIN_TOKEN_NUM
QWEN_VIDEO_MAX_TOKENS = 768           # VIDEO_MAX_TOKEN_NUM
QWEN_VIDEO_TOTAL_TOKENS = 128000 * 0.9  # MODEL_SEQ_LEN * 0.9


class QwenPixelBudget:
    """Per-frame pixel budget of a Qwen video, the rule of qwen-vl-utils' ``fetch_video``.

    Each frame is resized (aspect kept, sides multiples of ``factor``) to at
    least ``min_pixels`` and at most ``min(max_pixels, total_pixels / n * 2)``
    pixels (but never below ``1.05 * min_pixels``), where n is the number of
    frames: a long video gets smaller frames, so its token count stays within
    ``total_pixels``. Defaults (None) are qwen-vl-utils': 128 and 768 tokens per
    frame, 115,200 tokens per video, i.e. Qwen2.5-VL 100,352 / 602,112 /
    90,316,800 pixels and Qwen3-VL 131,072 / 786,432 / 117,964,800 pixels.
    """

    def __init__(self, factor: int, min_pixels: int | None = None, max_pixels: int | None = None,
                 total_pixels: int | None = None):
        self.factor = int(factor)
        unit = self.factor * self.factor
        self.min_pixels = int(min_pixels) if min_pixels else QWEN_VIDEO_MIN_TOKENS * unit
        self.max_pixels = int(max_pixels) if max_pixels else QWEN_VIDEO_MAX_TOKENS * unit
        self.total_pixels = int(total_pixels) if total_pixels else int(QWEN_VIDEO_TOTAL_TOKENS * unit)
        if self.max_pixels < self.min_pixels:
            raise ValueError(f"frame_max_pixels ({self.max_pixels}) is below frame_min_pixels ({self.min_pixels})")

    def frame_size(self, height: int, width: int, n_frames: int) -> tuple[int, int]:
        """(height, width) of every frame of an ``n_frames`` video whose frames are ``height`` x ``width``."""
        ceiling = max(min(self.max_pixels, self.total_pixels / max(n_frames, 1) * 2), int(self.min_pixels * 1.05))
        return smart_resize(height, width, self.factor, self.min_pixels, ceiling)

    def describe(self) -> str:
        return (f"{self.min_pixels}..{self.max_pixels} px per frame, {self.total_pixels} px per video "
                f"(factor {self.factor})")


def smart_resize(height: int, width: int, factor: int, min_pixels: float, max_pixels: float) -> tuple[int, int]:
    """Qwen's ``smart_resize`` (qwen-vl-utils): sides rounded to multiples of ``factor``, aspect ratio kept,
    area within [min_pixels, max_pixels]. Kept here so the budget rule is testable without qwen-vl-utils."""
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar
