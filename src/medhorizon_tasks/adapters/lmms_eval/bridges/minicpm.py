"""``medhorizon_minicpm_v``: the planned frames through MiniCPM-V 2.6's documented video interface.

MiniCPM-V 2.6's model card answers about a video with its remote code's
``model.chat(image=None, msgs=[{"role": "user", "content": frames + [question]}],
tokenizer=..., use_image_id=False, max_slice_nums=2)``: the frames as a list of
PIL images before the question, no image ids, at most ``max_slice_nums``
slices a frame ("use 1 if cuda OOM and video resolution > 448*448"). The model
takes no frame times. lmms-eval's ``minicpm_v`` wrapper (written for the first
MiniCPM-V) asserts a single image and reads three return values from ``chat``;
2.6 returns the answer text. Model args beyond the wrapper's:
``max_slice_nums`` (2, the model card's video setting). Generation: greedy
unless the task samples (``sampling`` = the task's ``do_sample``; the task's
``max_new_tokens`` and ``num_beams``). The remote code targets transformers
4.40 (the model card's requirements). Requests without planned frames go to the
wrapper unchanged.
"""

from __future__ import annotations

from lmms_eval.models.simple.minicpm_v import MiniCPM_V as _MiniCPM_V

from ....core.video.planned_frames import PlannedFrames
from .base import PlannedFramesBridge

__all__ = ["MiniCPM_V"]

VIDEO_MAX_SLICE_NUMS = 2  # MiniCPM-V 2.6 model card, video example: params["max_slice_nums"] = 2


class MiniCPM_V(PlannedFramesBridge, _MiniCPM_V):
    """lmms-eval's ``minicpm_v`` wrapper; planned frames go to ``chat`` as the model card's video message."""

    def __init__(self, pretrained: str = "openbmb/MiniCPM-V-2_6", max_slice_nums: int = VIDEO_MAX_SLICE_NUMS,
                 **kwargs) -> None:
        super().__init__(pretrained=pretrained, **kwargs)
        self.max_slice_nums = int(max_slice_nums)
        if self.max_slice_nums < 1:
            raise ValueError(f"max_slice_nums must be >= 1, got {max_slice_nums!r}")

    def generate_from_frames(self, context: str, frames: PlannedFrames, gen_kwargs: dict) -> str:
        msgs = [{"role": "user", "content": [im.convert("RGB") for im in frames] + [context.replace("<image>", "")]}]
        answer = self.model.chat(image=None, msgs=msgs, tokenizer=self.tokenizer, use_image_id=False,
                                 max_slice_nums=self.max_slice_nums, sampling=bool(gen_kwargs.get("do_sample")),
                                 max_new_tokens=int(gen_kwargs.get("max_new_tokens", 1024)),
                                 num_beams=int(gen_kwargs.get("num_beams", 1)))
        if isinstance(answer, tuple):  # earlier MiniCPM-V versions return (answer, context, ...)
            answer = answer[0]
        return str(answer)
