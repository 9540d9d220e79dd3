"""``medhorizon_longva``: the planned frames as ONE LongVA video, through the wrapper's own video path
(:mod:`.keyed_video`). Needs LongVA's ``longva`` package. Frame size is the model's image processor's."""

from __future__ import annotations

from lmms_eval.models.simple.longva import LongVA as _LongVA

from .keyed_video import FramesLoadVideo

__all__ = ["LongVA"]


class LongVA(FramesLoadVideo, _LongVA):
    """lmms-eval's ``longva`` wrapper; planned frames become one video tensor."""

    answers_without_visuals = False

    def __init__(self, video_decode_backend: str = "decord", **kwargs) -> None:
        # the wrapper's default is pyav, whose reader is a module function: decord goes through load_video
        super().__init__(video_decode_backend=video_decode_backend, **kwargs)
        self._init_keys()
