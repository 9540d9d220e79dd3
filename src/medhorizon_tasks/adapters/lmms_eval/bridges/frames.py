"""What the bridges need to know about planned frames: which times to show and how large a frame may be.

Framework-free (numpy only), so every rule here is testable without a model.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ....core.video.planned_frames import PlannedFrames
from ....core.video.size import QwenVideo, smart_resize  # noqa: F401  (smart_resize: the bridges' name for it)

__all__ = ["planned_frames", "shown_times", "qwen2_5_second_per_grid", "pad_to_even", "frames_array",
           "QwenPixelBudget", "interleaved_content", "interleaved_images"]


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


def interleaved_content(frames: PlannedFrames, image_part=lambda image: {"type": "image"},
                        suffix: str | None = None) -> list[dict] | None:
    """The benchmark's own layout of text and frames (``frames.interleaved``: Sureon's Fig. 17, each frame right
    after its timestamp line) as chat-message parts, in order: ``{"type": "text", "text": t}`` for a text part,
    ``image_part(frame)`` for a frame. Chat templates concatenate the parts, so a text part carries the line break
    that separates it from its neighbours (the layout's parts joined by newlines, as the one-text prompt and the
    InternVL bridge have them). ``suffix`` (a wrapper's reasoning prompt) ends the last text part, as the wrappers
    end their context with it. None when the benchmark fixes no layout: the bridge's own then."""
    layout = frames.interleaved
    if layout is None:
        return None
    content = []
    for i, p in enumerate(layout):
        if isinstance(p, int):
            content.append(image_part(frames[p]))
            continue
        text = p.replace("<image>", "")
        if i > 0 and isinstance(layout[i - 1], int):
            text = "\n" + text
        content.append({"type": "text", "text": text + ("\n" if i < len(layout) - 1 else "")})
    if suffix:
        if content and content[-1].get("type") == "text":
            content[-1] = {"type": "text", "text": content[-1]["text"].rstrip() + suffix}
        else:
            content.append({"type": "text", "text": suffix})
    return content


def interleaved_images(frames: PlannedFrames) -> list:
    """The frames in the order :func:`interleaved_content` places them (RGB), for the processor's ``images``."""
    return [frames[p].convert("RGB") for p in frames.interleaved if isinstance(p, int)]


# The Qwen video budget lives in core (the decoder is asked for its size): re-exported for the bridges.
QwenPixelBudget = QwenVideo
