"""Sureon's evaluation protocol: clip frames and the prompt, in a visual and a blind mode.

Visual: up to 8 frames uniformly over the clip, at least 4
(:class:`~medhorizon_tasks.sampling.Clip`), decoded by this library and handed
to the model in order, their absolute timestamps written into the prompt.
Blind: the identical text without the frame line and without frames, so the
multimodal gain S_v − S_wv compares like with like.
"""

from __future__ import annotations

import os

import numpy as np

from ...sampling import Clip, FramePlan, plan_frames
from ...video import decode_plan
from ..medhorizon.protocol import DEFAULT_MAX_SIDE, video_file, video_index
from .items import LETTERS, SureonItem

MODES = ("visual", "blind")


def plan_for(item: SureonItem, index) -> FramePlan:
    return plan_frames(index.meta(), Clip(item.start_s, item.end_s))


def load_frames(item: SureonItem, video_root: str | os.PathLike,
                max_side: int | None = DEFAULT_MAX_SIDE) -> tuple[FramePlan, np.ndarray]:
    """The clip's frames; VideoError (naming item and path) for a missing, unreadable or truncated video."""
    path = video_file(item, video_root)
    index = video_index(path, item.uid)
    plan = plan_for(item, index)
    return plan, decode_plan(path, plan, max_side=max_side, uid=item.uid, index=index)


def _instruction(item: SureonItem) -> list[str]:
    if item.kind == "mcq":
        lines = ["Options:", *(f"{L}. {o}" for L, o in zip(LETTERS, item.options))]
        return [*lines, f"Answer with only the letter ({', '.join(LETTERS[:len(item.options)])}) of the correct option."]
    if item.kind == "to":
        return [f"Events: {'; '.join(item.events)}.",
                "Give the three events in the order they occur, as: first > second > third."]
    return ["Describe the sequence of surgical actions in this clip, in order."]


def build_prompt(item: SureonItem, plan: FramePlan | None = None) -> str:
    """The prompt; blind mode (``plan=None``) is the same text without the frame line."""
    lines = [f"This is a clip from {item.start_s:.1f} s to {item.end_s:.1f} s of a surgical video."]
    if plan is not None:
        stamps = ", ".join(f"frame {k + 1} at {t:.1f} s" for k, t in enumerate(plan.timestamps))
        lines.append(f"You are given {len(plan)} frames in chronological order: {stamps}.")
    lines += ["", f"Question: {item.question}", *_instruction(item)]
    return "\n".join(lines)
