"""``medhorizon_llava_onevision`` and ``medhorizon_llava_vid``: the planned frames as ONE LLaVA video.

Through the wrappers' own video path (:mod:`.keyed_video`). Both wrappers need
LLaVA-NeXT's ``llava`` package. LLaVA-Video also gets its time instruction
(``add_time_instruction``, on by default here, as in LLaVA-Video's own
inference code): "The video lasts for D seconds, and n frames are uniformly
sampled from it. These frames are located at t1s,t2s,...", with the planned
times (evenly spaced ones for a perturbed order, :func:`~.frames.shown_times`)
and D the video's duration. Frame size is the model's (its image processor,
384 px for SigLIP).
"""

from __future__ import annotations

from lmms_eval.models.simple.llava_onevision import Llava_OneVision as _Llava_OneVision
from lmms_eval.models.simple.llava_vid import LlavaVid as _LlavaVid

from .frames import frames_array, shown_times
from .keyed_video import FramesLoadVideo, KeyedVideoBridge, frame_time_text

__all__ = ["Llava_OneVision", "LlavaVid"]


class Llava_OneVision(FramesLoadVideo, _Llava_OneVision):
    """lmms-eval's ``llava_onevision`` wrapper; planned frames become one video tensor."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self._init_keys()


class LlavaVid(KeyedVideoBridge, _LlavaVid):
    """lmms-eval's ``llava_vid`` wrapper; planned frames become one video with LLaVA-Video's time instruction."""

    answers_without_visuals = False

    def __init__(self, add_time_instruction: bool = True, **kwargs) -> None:
        super().__init__(add_time_instruction=add_time_instruction, **kwargs)
        self._init_keys()

    def load_video(self, video_path, max_frames_num, fps, force_sample=False):
        """(frames, frame times text, video duration in seconds), as the wrapper's own ``load_video``."""
        frames = self._take(video_path)
        if frames is None:
            return super().load_video(video_path, max_frames_num, fps, force_sample=force_sample)
        times = shown_times(frames)
        duration = frames.duration_s if frames.duration_s else max(times)
        return frames_array(frames), frame_time_text(times), float(duration)
