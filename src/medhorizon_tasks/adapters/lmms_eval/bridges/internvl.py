"""``medhorizon_internvl3`` / ``medhorizon_internvl3_5``: the planned frames as InternVL's video input.

InternVL's video format (its model card and lmms-eval's own ``modality=video``
path) is one ``FrameN: <image>`` line per frame before the question, each
frame cut into at most ``frame_tiles`` 448 px tiles (model arg, default 1:
InternVL's video setting; 256 visual tokens per frame). lmms-eval's wrapper
in its default ``modality=image`` gives the same frames as N bare ``<image>``
tags instead. The format carries no times; the task's prompt states them
(when the order is chronological). A task that fixes its own layout (Sureon:
each frame right after its timestamp, ``PlannedFrames.interleaved``) gets
that layout, one ``<image>`` per frame where the layout places it.

Everything else -- loading, ``model.chat``, the generation settings -- is
the wrapper's. Requests without planned frames go to it unchanged.
"""

from __future__ import annotations

import torch
from lmms_eval.models.simple.internvl3 import DEFAULT_GEN_KWARGS, build_transform, dynamic_preprocess
from lmms_eval.models.simple.internvl3 import InternVL3 as _InternVL3
from lmms_eval.models.simple.internvl3_5 import InternVL3_5 as _InternVL3_5

from ....core.video.planned_frames import PlannedFrames
from ....core.video.size import InternVLTiles
from .base import PlannedFramesBridge, model_device

__all__ = ["InternVL3", "InternVL3_5", "frame_prefix"]

TILE_SIZE = 448  # InternVL3 / 3.5 vision input (config force_image_size)


def frame_prefix(n: int) -> str:
    """InternVL's video prompt head: ``Frame1: <image>\\nFrame2: <image>\\n...``."""
    return "".join(f"Frame{i + 1}: <image>\n" for i in range(n))


class _InternVLBridge(PlannedFramesBridge):
    def _set_tiles(self, frame_tiles) -> None:
        self.frame_tiles = int(frame_tiles)
        if self.frame_tiles < 1:
            raise ValueError(f"frame_tiles must be at least 1, got {frame_tiles}")
        size = getattr(getattr(self, "config", None), "force_image_size", None) or TILE_SIZE
        self.frame_size_rule = InternVLTiles(int(size), self.frame_tiles)  # decoded at the tile grid's size

    def _pixel_values(self, frames: PlannedFrames) -> tuple[torch.Tensor, list[int]]:
        size = getattr(self.config, "force_image_size", None) or TILE_SIZE
        transform = build_transform(input_size=size)
        per_frame = []
        for image in frames:
            tiles = dynamic_preprocess(image.convert("RGB"), image_size=size, use_thumbnail=True,
                                       max_num=self.frame_tiles)
            per_frame.append(torch.stack([transform(t) for t in tiles]))
        return torch.cat(per_frame), [len(t) for t in per_frame]

    def generate_from_frames(self, context: str, frames: PlannedFrames, gen_kwargs: dict) -> str:
        # the wrapper's generation settings: its defaults, and only the keys model.chat accepts
        settings = {**DEFAULT_GEN_KWARGS, **{k: v for k, v in gen_kwargs.items() if k in DEFAULT_GEN_KWARGS}}
        pixel_values, num_patches_list = self._pixel_values(frames)
        pixel_values = pixel_values.to(torch.bfloat16).to(model_device(self))
        if frames.interleaved is not None:  # the benchmark's own layout (Sureon, Fig. 17): each frame where it says
            question = "\n".join("<image>" if isinstance(p, int) else p.replace("<image>", "") for p in frames.interleaved)
        else:
            question = frame_prefix(len(frames)) + context.replace("<image>", "")
        response, _ = self.model.chat(self.tokenizer, pixel_values, question, settings,
                                      num_patches_list=num_patches_list, history=None, return_history=True)
        return response


class InternVL3(_InternVLBridge, _InternVL3):
    """lmms-eval's ``internvl3`` wrapper; planned frames become ``FrameN: <image>`` video input."""

    def __init__(self, frame_tiles: int = 1, **kwargs) -> None:
        super().__init__(**kwargs)
        self._set_tiles(frame_tiles)


class InternVL3_5(_InternVLBridge, _InternVL3_5):
    """lmms-eval's ``internvl3_5`` wrapper; planned frames become ``FrameN: <image>`` video input."""

    def __init__(self, frame_tiles: int = 1, **kwargs) -> None:
        super().__init__(**kwargs)
        self._set_tiles(frame_tiles)
