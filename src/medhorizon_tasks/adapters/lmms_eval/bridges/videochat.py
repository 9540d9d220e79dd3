"""``medhorizon_videochat_flash``: the planned frames through VideoChat-Flash's own ``chat``, with their times.

VideoChat-Flash's remote code answers with ``model.chat(video_path, tokenizer,
question, max_num_frames=..., media_dict=..., generation_config=...)``, which
calls its module's ``load_video(video_path, max_num_frames=..., media_dict=...)``
for ``(frames, time_msg)`` (frames an (n, h, w, 3) uint8 array), then
preprocesses the frames, prompts ``<image>\\n{time_msg} {question}`` in its
``qwen_2`` template and generates with ``modalities=["video"]``. lmms-eval's
``videochat_flash`` wrapper passes only a file path (its own sampling) and
refuses frames. Here ``chat`` itself runs, with its module's ``load_video``
answering, for that one call, the planned frames and a time message in the
model's training form ("The video lasts for D seconds, and n frames are
uniformly sampled at t1, t2, ... seconds.", VideoChat-Flash's
``llava/train/train.py``) with the frames' shown times
(:func:`~.frames.shown_times`; perturbed orders: evenly spaced). Its video
encoder takes frames in groups of ``mm_local_num_frames`` (config, 4): a plan
whose length is not a multiple repeats its last frame (and time) to the next
multiple, as Qwen's processors do for their two-frame patches. The remote code
targets transformers 4.x (it subclasses Qwen2 internals of the 4.4x series).
Requests without planned frames go to the wrapper unchanged.
"""

from __future__ import annotations

import sys

import numpy as np
from lmms_eval.models.simple.videochat_flash import VideoChat_Flash as _VideoChatFlash

from ....core.errors import MedHorizonError
from ....core.video.planned_frames import PlannedFrames
from .base import PlannedFramesBridge
from .frames import frames_array, shown_times

__all__ = ["VideoChatFlash", "time_message", "local_groups"]

PLANNED_PATH = "<medhorizon planned frames>"  # what chat() is told the video is (its loader never opens it)


def local_groups(frames: np.ndarray, times: list[float], local: int) -> tuple[np.ndarray, list[float]]:
    """Frames (and times) padded with the last one to a multiple of ``local``."""
    missing = (-len(frames)) % max(int(local), 1)
    if not missing:
        return frames, list(times)
    return np.concatenate([frames, np.repeat(frames[-1:], missing, axis=0)]), [*times, *[times[-1]] * missing]


def time_message(duration_s: float, times: list[float]) -> str:
    sec = ", ".join(str(round(t, 1)) for t in times)
    return f"\nThe video lasts for {duration_s:.2f} seconds, and {len(times)} frames are uniformly sampled at {sec} seconds. "


class VideoChatFlash(PlannedFramesBridge, _VideoChatFlash):
    """lmms-eval's ``videochat_flash`` wrapper; planned frames reach the model's own ``chat`` (module docstring)."""

    def generate_from_frames(self, context: str, frames: PlannedFrames, gen_kwargs: dict) -> str:
        module = sys.modules.get(type(self.model).__module__)
        original = getattr(module, "load_video", None)
        if original is None:
            raise MedHorizonError(f"medhorizon_videochat_flash: {type(self.model).__module__} has no load_video; is "
                                  "this VideoChat-Flash's remote code?")
        times = shown_times(frames)
        video, times = local_groups(frames_array(frames), times,
                                    getattr(self.model.config, "mm_local_num_frames", 4))
        duration = frames.duration_s if frames.duration_s is not None else max(times)
        message = time_message(duration, times)

        def planned_loader(video_path, max_num_frames=None, media_dict=None, **kwargs):
            return video, message

        settings = {"max_new_tokens": 1024, "temperature": 0, "do_sample": False, "top_p": None, "num_beams": 1}
        settings.update({k: v for k, v in gen_kwargs.items() if k in settings})
        module.load_video = planned_loader
        try:
            answer = self.model.chat(PLANNED_PATH, self.tokenizer, context, chat_history=None, return_history=False,
                                     max_num_frames=len(video), media_dict=None, generation_config=settings)
        finally:
            module.load_video = original
        return str(answer).strip()

    def generate_until_multi_round(self, requests) -> list:
        # abstract in lmms-eval's base class and missing from its videochat_flash wrapper, which therefore cannot
        # be instantiated at all in lmms-eval 0.7.3; no task of this package is multi-round
        raise NotImplementedError("medhorizon_videochat_flash: multi-round generation is not supported")
