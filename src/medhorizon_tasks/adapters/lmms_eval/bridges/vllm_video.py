"""``medhorizon_openai`` with ``frames_as=video``: the planned frames as ONE video to a vLLM server, at their times.

A vLLM server (``vllm serve``) takes a ``video_url`` whose data URL is a
sequence of JPEG frames, ``data:video/jpeg;base64,<f1>,<f2>,...``, and reads
per-request ``media_io_kwargs`` for it (vLLM's ``VideoMediaIO.load_base64``,
``vllm/multimodal/media/video.py``):

* ``num_frames``: how many of the sent frames it keeps. Its default is 32 and
  it keeps the FIRST 32 silently; ``-1`` keeps them all, so it is always sent;
* ``fps`` and ``frames_indices``: the video metadata the model's processor
  reads times from (time of frame k = ``frames_indices[k] / fps``). The frames'
  planned times go as millisecond indices at ``fps`` 1000, so Qwen3-VL's
  ``<t seconds>`` labels, Gemma 4's and Molmo2's timestamps are the plan's;
* ``total_num_frames`` (>= the frames sent) and ``duration``.

``mm_processor_kwargs`` ``{"do_sample_frames": false}`` stops the model's
processor from sampling the frames again. With a pixel budget
(``frame_min_pixels``, ``frame_max_pixels``, ``video_total_pixels``, and
``pixel_factor``: 32 for Qwen3-VL, 28 for Qwen2.5-VL), the frames are sized on
the client by qwen-vl-utils' video rule (:class:`~.frames.QwenPixelBudget`) and
``do_resize: false`` tells the server's processor to keep that size; without
one, they go at the size the task decoded them (its pixel budget) and the server's processor sizes them.
Frames whose order was perturbed on purpose get evenly spaced times
(:func:`~.frames.shown_times`). Framework-free apart from PIL.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

from ....core.video.planned_frames import PlannedFrames
from .frames import QwenPixelBudget, shown_times

__all__ = ["FRAMES_AS", "MS_FPS", "VideoRequest", "frame_sequence_url", "media_io_kwargs"]

FRAMES_AS = ("images", "video")
MS_FPS = 1000  # frames_indices in milliseconds: index / fps is the frame's time in seconds
BUDGET_ARGS = ("frame_min_pixels", "frame_max_pixels", "video_total_pixels", "pixel_factor")


def frame_sequence_url(images: Sequence, quality: int = 90) -> str:
    """``data:video/jpeg;base64,<f1>,<f2>,...``: each frame a base64 JPEG (base64 has no comma)."""
    parts = []
    for image in images:
        buffer = io.BytesIO()
        image.convert("RGB").save(buffer, format="JPEG", quality=int(quality))
        parts.append(base64.b64encode(buffer.getvalue()).decode("ascii"))
    return "data:video/jpeg;base64," + ",".join(parts)


def media_io_kwargs(times: Sequence[float], duration_s: float | None = None) -> dict:
    """vLLM's per-request video kwargs for frames at ``times`` (seconds): all frames kept, millisecond indices."""
    indices = [int(round(float(t) * MS_FPS)) for t in times]
    total = max(max(indices, default=0) + 1, len(indices))
    video = {"num_frames": -1, "fps": MS_FPS, "frames_indices": indices, "total_num_frames": total}
    if duration_s is not None and duration_s >= 0:
        video["duration"] = float(duration_s)
    return {"video": video}


class VideoRequest:
    """How one bridge sends planned frames as a video: the client's pixel budget (or none) and the JPEG quality."""

    def __init__(self, quality: int = 90, frame_min_pixels: int | None = None, frame_max_pixels: int | None = None,
                 video_total_pixels: int | None = None, pixel_factor: int | None = None):
        self.quality = int(quality)
        sized = any(v is not None for v in (frame_min_pixels, frame_max_pixels, video_total_pixels, pixel_factor))
        self.budget = QwenPixelBudget(int(pixel_factor or 32), frame_min_pixels, frame_max_pixels,
                                      video_total_pixels) if sized else None

    def sized(self, frames: PlannedFrames) -> list:
        """The frames at the budget's size (all frames of a plan share one size), or as decoded."""
        images = list(frames)
        if self.budget is None or not images:
            return images
        width, height = images[0].size
        h, w = self.budget.frame_size(height, width, len(images))
        return [im if im.size == (w, h) else im.convert("RGB").resize((w, h), resample=3) for im in images]  # bicubic

    def content_part(self, frames: PlannedFrames) -> dict:
        return {"type": "video_url", "video_url": {"url": frame_sequence_url(self.sized(frames), self.quality)}}

    def fields(self, frames: PlannedFrames) -> dict:
        """The request's extra fields: ``media_io_kwargs`` and ``mm_processor_kwargs``."""
        processor = {"do_sample_frames": False}
        if self.budget is not None:
            processor["do_resize"] = False  # the client's budget, not a second resize on the server
        return {"media_io_kwargs": media_io_kwargs(shown_times(frames), frames.duration_s),
                "mm_processor_kwargs": processor}
