"""Sureon's evaluation protocol: clip frames and the prompt, in a visual and a blind mode.

Visual: up to 8 frames uniformly over the clip, at least 4
(:class:`~medhorizon_tasks.core.sampling.Clip`), decoded by this library and handed
to the model in order, their absolute timestamps written into the prompt.
Blind: the identical text without the frame line and without frames, so the
multimodal gain S_v − S_wv compares like with like.
"""

from __future__ import annotations

import os

import numpy as np

from ...core.errors import VideoError
from ...core.sampling import Clip, FramePlan, plan_frames
from ...core.video.decode import decode_plan
from ...core.video.metadata import check_time_inside
from ...core.video.prepared import DEFAULT_MAX_SIDE, PreparedVideo, video_file, video_index
from .items import LETTERS, SureonItem

MODES = ("visual", "blind")


def setting_key(mode: str = "visual", max_side: int | None = DEFAULT_MAX_SIDE) -> dict:
    """Everything that decides which frames are decoded (the identity of a video outcome)."""
    return {"benchmark": "sureon", "mode": mode, "max_side": max_side, "clip": "min4-max8-fps1"}


def plan_for(item: SureonItem, index) -> FramePlan:
    return plan_frames(index.meta(), Clip(item.start_s, item.end_s))


def prepare(item: SureonItem, video_root: str | os.PathLike) -> PreparedVideo:
    """Resolve and index the item's video, check the clip lies inside the file, plan its frames;
    VideoError naming the item and path otherwise."""
    path = video_file(item, video_root)
    index = video_index(path, item.uid)
    duration = check_time_inside(index, item.end_s, "the clip's end_s", path=path, uid=item.uid)
    try:
        plan = plan_for(item, index)
    except ValueError as exc:  # a clip that holds no frame of the file
        raise VideoError(str(exc), path=str(path), uid=item.uid) from None
    return PreparedVideo(path, index, plan, duration)


def decode_frames(video: PreparedVideo, uid: str, max_side: int | None = DEFAULT_MAX_SIDE) -> np.ndarray:
    return decode_plan(video.path, video.plan, max_side=max_side, uid=uid, index=video.index)


def load_frames(item: SureonItem, video_root: str | os.PathLike,
                max_side: int | None = DEFAULT_MAX_SIDE) -> tuple[FramePlan, np.ndarray]:
    """The clip's frames; VideoError (naming item and path) for a missing, unreadable or mismatched video."""
    video = prepare(item, video_root)
    return video.plan, decode_frames(video, item.uid, max_side)


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
