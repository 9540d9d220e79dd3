"""Sureon's evaluation protocol: clip frames and the prompt, in a visual and a blind mode.

Paper, appendix D.1: "For each clip we uniformly sample up to 8 frames across
its duration at the video's frame rate, clamped to a minimum of 4 frames.
Before inference, we apply a two-stage blurring pass to the sampled frames
[...] Each frame in the prompt is tagged with its absolute timestamp, preceded
by the clip's time range, followed by the question and the option list."

Visual: up to 8 frames uniformly over the clip's own frames, at least 4
(:class:`~medhorizon_tasks.core.sampling.Clip`), decoded by this library,
blurred (:data:`BLUR`: on-screen text and faces; on by default, see
:func:`blur_enabled`) and handed to the model in order, interleaved with
their timestamps (:func:`prompt_parts`, the one rule both frameworks call):
the clip's range, then each frame right after its own timestamp, then the
question and options ("Frames are interleaved with their timestamps,
followed by the question and seven answer options", Fig. 17).
Blind: the identical text without frames and their timestamps, so the
multimodal gain S_v − S_wv compares like with like.
"""

from __future__ import annotations

import os

import numpy as np

from ...core.errors import MedHorizonError, VideoError
from ...core.sampling import Clip, FramePlan, plan_frames
from ...core.video.metadata import check_time_inside
from ...core.video.prepared import (
    DEFAULT_MAX_SIDE,
    PreparedVideo,
    decode_prepared,
    frame_size,
    scale_frames,
    video_file,
    video_index,
)
from ...core.video.redact import Redaction, blur_unavailable
from ...core.video.size import MaxSide, PixelBudget, SizeRule
from .items import LETTERS, SureonItem

MODES = ("visual", "blind")
BLUR_ENV = "SUREON_BLUR"
BLUR = Redaction()  # the paper's two-stage pass: OCR-found text and detected faces (see core.video.redact)
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def blur_enabled(setting=None) -> bool:
    """Whether the visual mode blurs its frames: the task kwarg / VLMEvalKit preset ``blur`` when it is given,
    else ``$SUREON_BLUR``, else on (the paper's protocol). A value that is not a yes/no names where it came from."""
    if setting is not None:
        where = f"the task setting blur={setting!r}"
    else:
        setting, where = os.environ.get(BLUR_ENV), f"{BLUR_ENV}={os.environ.get(BLUR_ENV)!r}"
        if setting is None or not str(setting).strip():
            return True
    if isinstance(setting, bool):
        return setting
    value = str(setting).strip().lower()
    if value in _TRUE or value in _FALSE:
        return value in _TRUE
    raise MedHorizonError(f"{where} is not one of {', '.join(_TRUE + _FALSE)}")


def blur_problem(setting=None) -> str | None:
    """Why a visual run with this blur setting cannot start here (the detectors are not installed), or None."""
    if not blur_enabled(setting):
        return None
    problem = blur_unavailable()
    if problem is None:
        return None
    return (f"Sureon's visual mode blurs text and faces in its frames (paper, appendix D.1), and {problem}; "
            f"to run without the blurring pass set {BLUR_ENV}=0 or use the *_noblur task / preset")


def departures(mode: str, blur: bool) -> list[str]:
    """How a run in ``mode`` with this blur setting departs from the paper's protocol (a label every report
    of it carries): the visual mode without the blurring pass (appendix D.1 blurs text and faces)."""
    from ..paper_match import NO_BLUR

    return [NO_BLUR] if mode == "visual" and not blur else []


def setting_key(mode: str = "visual", max_side: int | None = DEFAULT_MAX_SIDE, blur: bool = True) -> dict:
    """Everything that decides which frames are decoded and how they look (the identity of a video outcome)."""
    return {"benchmark": "sureon", "mode": mode, "max_side": max_side, "clip": "own-frames-min4-max8",
            "blur": BLUR.describe() if blur and mode == "visual" else None}


def plan_for(item: SureonItem, index, blur: bool = True) -> FramePlan:
    plan = plan_frames(index.meta(), Clip(item.start_s, item.end_s))
    return plan.with_redaction(BLUR.describe()) if blur else plan


def prepare(item: SureonItem, video_root: str | os.PathLike, *, blur: bool = True) -> PreparedVideo:
    """Resolve and index the item's video, check the clip lies inside the file, plan its frames (blurred or
    not); VideoError naming the item and path otherwise."""
    path = video_file(item, video_root)
    index = video_index(path, item.uid)
    duration = check_time_inside(index, item.end_s, "the clip's end_s", path=path, uid=item.uid)
    try:
        plan = plan_for(item, index, blur)
    except ValueError as exc:  # a clip that holds no frame of the file
        raise VideoError(str(exc), path=str(path), uid=item.uid) from None
    return PreparedVideo(path, index, plan, duration)


def decode_frames(video: PreparedVideo, uid: str, max_side: int | None = None, *,
                  rule: SizeRule | None = None) -> np.ndarray:
    """The planned frames as the model sees them, at the consumer's size (``core.video.size.requested_size``),
    else ``rule``, else ``max_side``, else the default total-pixel budget per request; decoded once per run,
    through the frame cache when ``$MEDHORIZON_FRAME_CACHE`` is set (a hit runs neither the decoder nor the
    detectors). A blurred plan is decoded and blurred at the video's full resolution (text and face detection see
    every pixel the recording has, Sureon appendix D.1) and scaled to the model's size afterwards."""
    task_rule = rule or (MaxSide(max_side) if max_side else PixelBudget())
    if not video.plan.redaction:
        return decode_prepared(video, task_rule, uid)
    full = decode_prepared(video, None, uid, redaction=BLUR, size=video.index.display_size)
    return scale_frames(full, frame_size(video, task_rule))


def load_frames(item: SureonItem, video_root: str | os.PathLike,
                max_side: int | None = None, *, blur: bool = True) -> tuple[FramePlan, np.ndarray]:
    """The clip's frames; VideoError (naming item and path) for a missing, unreadable or mismatched video."""
    video = prepare(item, video_root, blur=blur)
    return video.plan, decode_frames(video, item.uid, max_side)


def _instruction(item: SureonItem) -> list[str]:
    if item.kind == "mcq":
        lines = ["Options:", *(f"{L}. {o}" for L, o in zip(LETTERS, item.options))]
        return [*lines, f"Answer with only the letter ({', '.join(LETTERS[:len(item.options)])}) of the correct option."]
    if item.kind == "to":
        return [f"Events: {'; '.join(item.events)}.",
                "Give the three events in the order they occur, as: first > second > third."]
    return ["Describe the sequence of surgical actions in this clip, in order."]


def _clip_range(item: SureonItem) -> str:
    return f"This is a clip from {item.start_s:.1f} s to {item.end_s:.1f} s of a surgical video."


def _question(item: SureonItem) -> str:
    return "\n".join([f"Question: {item.question}", *_instruction(item)])


def frame_stamp(k: int, t: float) -> str:
    """The text right before frame ``k`` (0-based) taken at ``t`` s: ``Frame 1 at 12.0 s:``."""
    return f"Frame {k + 1} at {t:.1f} s:"


def prompt_parts(item: SureonItem, plan: FramePlan) -> list[str | int]:
    """The visual prompt as the model is to see it (appendix D.1, Fig. 17): text parts (``str``) and frames
    (``int``: the position of the frame in ``plan``), in order -- the clip's time range first, then each frame
    immediately preceded by its absolute timestamp, then the question and the options (after a blank line)::

        ["This is a clip from 12.0 s to 18.0 s of a surgical video.",
         "Frame 1 at 12.0 s:", 0, "Frame 2 at 12.9 s:", 1, ..., "\\nQuestion: ...\\nOptions:\\nA. ..."]

    Every consumer that can interleave text and images builds its request from this list: VLMEvalKit's
    ``build_prompt`` message list, lmms-eval's ``doc_to_messages`` (chat models) and the bridges that take
    interleaved input (``medhorizon_openai``, ``medhorizon_internvl3``); the others get :func:`build_prompt`,
    its text parts joined by newlines."""
    parts: list[str | int] = [_clip_range(item)]
    for k, t in enumerate(plan.timestamps):
        parts += [frame_stamp(k, t), k]
    parts.append("\n" + _question(item))
    return parts


def build_prompt(item: SureonItem, plan: FramePlan | None = None) -> str:
    """The prompt as one text: the text parts of :func:`prompt_parts` joined by newlines, for a consumer that
    can only put all images before one text (lmms-eval's "simple" wrappers, the one-video bridges), so that
    every framework states the same words. Blind mode (``plan=None``): the clip's range, a blank line, the
    question and the options -- the visual text without its frame lines."""
    if plan is None:
        return "\n".join([_clip_range(item), "\n" + _question(item)])
    return "\n".join(p for p in prompt_parts(item, plan) if isinstance(p, str))
