"""The planned frames through a LLaVA-NeXT-style wrapper's own video path (LLaVA-OneVision, LLaVA-Video, LongVA).

These lmms-eval wrappers already have a complete video path: a visual that is
a path is decoded by the wrapper's ``load_video`` method, preprocessed as one
video tensor of n frames, announced by one ``<image>`` token and generated
with ``modalities=video``. Given a frame list instead, they treat it as N
images (OneVision, LongVA) or crash (LLaVA-Video).

So a bridge hands the wrapper a key instead of a path, and answers the
wrapper's ``load_video`` call for that key with the planned frames: the
prompt, conversation template, stopping criteria and generation stay
lmms-eval's own code. Videos always go through ``load_video``, so
``video_decode_backend`` must be ``decord`` (the wrappers' default).
Requests without planned frames keep their visuals and go through the same
code unchanged.

An item whose video failed has an empty plan; its answer is not scored (the
task records a video error). LLaVA-Video's and LongVA's wrappers cannot
answer a request without visuals (IndexError, which would stop the run), so
for them such an item gets one blank frame instead (``answers_without_visuals``).
"""

from __future__ import annotations

import dataclasses
import itertools

from PIL import Image

from ....core.video.planned_frames import PlannedFrames
from ..model_args import CheckedModelArgs
from .frames import frames_array, planned_frames

__all__ = ["KeyedVideoBridge", "FramesLoadVideo", "KEY_PREFIX", "frame_time_text"]

KEY_PREFIX = "medhorizon-planned-frames:"  # no file or folder any wrapper could find


def frame_time_text(times) -> str:
    """LLaVA-Video's list of frame times: ``0.00s,6.00s,...``."""
    return ",".join(f"{t:.2f}s" for t in times)


class KeyedVideoBridge(CheckedModelArgs):
    """Mixin placed before the wrapper in a bridge's bases; the bridge's ``__init__`` calls
    :meth:`_init_keys` after the wrapper's."""

    _counter = itertools.count()
    answers_without_visuals = True  # False: the wrapper fails on a request without visuals

    def _init_keys(self) -> None:
        if getattr(self, "video_decode_backend", "decord") != "decord":
            raise ValueError(f"{type(self).__name__}: video_decode_backend must be 'decord' (the planned frames "
                             f"reach the model through load_video), got {self.video_decode_backend!r}")
        self._planned: dict[str, PlannedFrames] = {}

    def generate_until(self, requests) -> list:
        return super().generate_until([self._keyed(r) for r in requests])

    def _keyed(self, request):
        """The request, its ``doc_to_visual`` returning ``[key]`` for planned frames (called once, by the
        wrapper, when it reaches the request: a plan is held only until it is answered)."""
        args = request.args
        doc_to_visual = args[2]
        if doc_to_visual is None:
            return request

        def visuals(doc):
            found = doc_to_visual(doc)
            frames = planned_frames(found)
            if frames is None and isinstance(found, PlannedFrames) and not self.answers_without_visuals:
                frames = _blank(found)
            if frames is None:
                return found
            key = f"{KEY_PREFIX}{next(self._counter)}"
            self._planned[key] = frames
            return [key]

        return dataclasses.replace(request, arguments=(args[0], args[1], visuals, *args[3:]))

    def _take(self, video_path) -> PlannedFrames | None:
        """The planned frames behind a key (``load_video`` gets the key itself or the one-element list)."""
        if isinstance(video_path, (list, tuple)) and len(video_path) == 1:
            video_path = video_path[0]
        return self._planned.pop(video_path, None) if isinstance(video_path, str) else None


def _blank(failed: PlannedFrames) -> PlannedFrames:
    """One black frame standing in for a plan whose video failed (the answer is not scored)."""
    return PlannedFrames([Image.new("RGB", (32, 32))], timestamps=[0.0], duration_s=failed.duration_s or 1.0,
                         error=failed.error)


class FramesLoadVideo(KeyedVideoBridge):
    """For wrappers whose ``load_video(path, max_frames_num)`` returns uint8 frames (n, h, w, 3)."""

    def load_video(self, video_path, max_frames_num):
        frames = self._take(video_path)
        if frames is None:
            return super().load_video(video_path, max_frames_num)
        return frames_array(frames)  # every planned frame: max_frames_num is for video files
