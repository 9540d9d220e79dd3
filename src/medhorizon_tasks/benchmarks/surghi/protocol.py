"""SurgHiBench for generative models: the frames, the prompt and the answer parser.

The paper scores dual encoders frame by frame ("each frame is encoded independently and
similarities are averaged over the temporal window"; its video encoders take T = 16 frames).
A generative model gets the same question per evaluated frame:

* **frames**: a :class:`~medhorizon_tasks.core.sampling.Window` centred on the frame's timestamp,
  1 FPS, +/- ``half_width_s`` (default 4 s: 9 frames; the paper gives no rate for its clips,
  ``half_width_s=8`` gives 17), the evaluated frame always included;
* **prompt**: the frames' timestamps, which one is evaluated, and the *closed* label lists of
  the dataset's hierarchy (phases, then steps, each in vocabulary order);
* **answer**: JSON ``{"phase": ..., "step": ...}``, parsed by :func:`parse_answer`.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass

import numpy as np

from ...core.errors import VideoError
from ...core.extract import strip_reasoning
from ...core.paths import resolve_video_path
from ...core.sampling import FramePlan, Window, plan_frames
from ...core.video.metadata import check_time_inside
from ...core.video.prepared import DEFAULT_MAX_SIDE, PreparedVideo, decode_prepared, video_index
from ...core.video.size import MaxSide, PixelBudget
from .frames import FrameRow
from .hierarchy import Hierarchy, normalize

DEFAULT_HALF_WIDTH_S = 4.0
DEFAULT_FPS = 1.0


def setting_key(*, half_width_s: float = DEFAULT_HALF_WIDTH_S, fps: float = DEFAULT_FPS,
                max_side: int | None = DEFAULT_MAX_SIDE) -> dict:
    """Everything that decides which frames are decoded (the identity of a video outcome)."""
    return {"benchmark": "surghi", "half_width_s": float(half_width_s), "fps": float(fps), "max_side": max_side}


def plan_for(row: FrameRow, index, *, half_width_s: float = DEFAULT_HALF_WIDTH_S,
             fps: float = DEFAULT_FPS) -> FramePlan:
    return plan_frames(index.meta(), Window(float(row.timestamp_s or 0.0), half_width_s, fps))


def prepare(row: FrameRow, video_root: str | os.PathLike, *, half_width_s: float = DEFAULT_HALF_WIDTH_S,
            fps: float = DEFAULT_FPS) -> PreparedVideo:
    """The row's video (index cached per process), checked to contain the row's timestamp, and the window
    plan; VideoError naming the row and path otherwise."""
    path = resolve_video_path(video_root, row.video_path or "", uid=row.uid)
    index = video_index(path, row.uid)
    duration = check_time_inside(index, float(row.timestamp_s or 0.0), "the frame's timestamp_s", path=path,
                                 uid=row.uid)
    try:
        plan = plan_for(row, index, half_width_s=half_width_s, fps=fps)
    except ValueError as exc:
        raise VideoError(str(exc), path=str(path), uid=row.uid) from None
    return PreparedVideo(path, index, plan, duration)


def window_plan(row: FrameRow, video_root: str | os.PathLike, *, half_width_s: float = DEFAULT_HALF_WIDTH_S,
                fps: float = DEFAULT_FPS):
    """``(path, index, plan)`` of the row's window (see :func:`prepare`)."""
    video = prepare(row, video_root, half_width_s=half_width_s, fps=fps)
    return video.path, video.index, video.plan


def decode_frames(video: PreparedVideo, uid: str, max_side: int | None = None) -> np.ndarray:
    """The window's frames at the consumer's size (``core.video.size.requested_size``), else ``max_side``, else
    the default total-pixel budget per request; decoded once per run."""
    return decode_prepared(video, MaxSide(max_side) if max_side else PixelBudget(), uid)


def load_frames(row: FrameRow, video_root: str | os.PathLike, *, half_width_s: float = DEFAULT_HALF_WIDTH_S,
                fps: float = DEFAULT_FPS, max_side: int | None = None) -> tuple[FramePlan, np.ndarray]:
    """The window's frames; VideoError (naming the row and path) when the video is missing or unreadable."""
    video = prepare(row, video_root, half_width_s=half_width_s, fps=fps)
    return video.plan, decode_frames(video, row.uid, max_side)


def build_prompt(row: FrameRow, hierarchy: Hierarchy, plan: FramePlan | None = None) -> str:
    """The question for one evaluated frame.  Without a plan (text only) the frame line is left out."""
    t = float(row.timestamp_s or 0.0)
    lines = [f"You are watching a surgical video ({row.dataset}). Recognise the surgical phase and step "
             f"at {t:.1f} s."]
    if plan is not None and len(plan):
        stamps = ", ".join(f"frame {k + 1} at {s:.1f} s" for k, s in enumerate(plan.timestamps))
        centre = int(np.argmin([abs(s - t) for s in plan.timestamps])) + 1
        lines.append(f"You are given {len(plan)} frames in chronological order: {stamps}. "
                     f"Label frame {centre}.")
    lines += ["", "Phases (choose exactly one):", *(f"- {p}" for p in hierarchy.phases)]
    if not hierarchy.steps:  # a dataset annotated with phases only
        return "\n".join(lines + ["", 'Answer with JSON only, copying the name from the list: {"phase": "<phase>"}'])
    lines += ["", "Steps (choose exactly one):", *(f"- {s}" for s in hierarchy.steps), "",
              'Answer with JSON only, copying the names from the lists: {"phase": "<phase>", "step": "<step>"}']
    return "\n".join(lines)


# ------------------------------------------------------------------ answer parsing

@dataclass(frozen=True)
class PhaseStep:
    """A parsed answer: the labels as the model wrote them (``None`` when absent) and how they were found."""

    phase: str | None
    step: str | None
    status: str  # "json", "fields" (key: value lines) or "none"


_FIELD = re.compile(r"""["']?\b(phase|step)\b["']?\s*[:=]\s*(?:"([^"\n]*)"|'([^'\n]*)'|([^,;}\n]*))""",
                    re.IGNORECASE)


def _json_objects(text: str):
    """Every balanced ``{...}`` span, last first (the final answer usually comes last)."""
    spans, stack = [], []
    for i, ch in enumerate(text):
        if ch == "{":
            stack.append(i)
        elif ch == "}" and stack:
            start = stack.pop()
            if not stack:
                spans.append(text[start:i + 1])
    return reversed(spans)


def _from_mapping(obj) -> tuple[str | None, str | None] | None:
    if not isinstance(obj, dict):
        return None
    keys = {normalize(k): v for k, v in obj.items() if isinstance(k, str)}
    phase, step = keys.get("phase"), keys.get("step")
    if phase is None and step is None:
        return None
    as_text = lambda v: str(v).strip() if isinstance(v, (str, int, float)) and str(v).strip() else None  # noqa: E731
    return as_text(phase), as_text(step)


def parse_answer(text: str | None) -> PhaseStep:
    """The ``phase`` and ``step`` a model answered.

    Tried in order: the last JSON object holding a ``phase`` or ``step`` key (also inside a
    Markdown code fence, with single quotes, or with a trailing comma); then ``phase: X`` /
    ``step: Y`` fields anywhere in the text (last one wins).  Reasoning blocks are ignored
    (:func:`medhorizon_tasks.core.extract.strip_reasoning`, the rule of every scorer).  Labels are returned as written; :func:`resolve_label` maps them onto a
    hierarchy.
    """
    if not text:
        return PhaseStep(None, None, "none")
    body = strip_reasoning(str(text))
    for span in _json_objects(body):
        for candidate in (span, re.sub(r",\s*}", "}", span.replace("'", '"'))):
            try:
                got = _from_mapping(json.loads(candidate))
            except json.JSONDecodeError:
                continue
            if got is not None:
                return PhaseStep(*got, "json")
    found: dict[str, str] = {}
    for m in _FIELD.finditer(body):
        value = next((g for g in m.groups()[1:] if g is not None), "").strip().strip("*`").strip()
        if value:
            found[m.group(1).lower()] = value
    if found:
        return PhaseStep(found.get("phase"), found.get("step"), "fields")
    return PhaseStep(None, None, "none")


def resolve_label(value: str | None, names, canon) -> str | None:
    """Map a written label onto the closed list ``names`` (canonical forms).

    Exact after canonicalisation (case, spacing, underscores, the dataset's aliases) first;
    otherwise the one listed name that appears inside the answer as whole words (the longest
    if several overlap, e.g. "gastric opening" inside "the gastric opening step").  Anything
    else is returned canonicalised but unmatched, to be counted invalid by the metrics.
    """
    if value is None:
        return None
    c = canon(value)
    if c in names:
        return c
    padded = f" {c} "
    hits = [n for n in names if f" {n} " in padded]
    if hits:
        longest = max(hits, key=len)
        if all(h == longest or h in longest for h in hits):
            return longest
    return c


def predicted_labels(text: str | None, hierarchy: Hierarchy) -> tuple[str | None, str | None]:
    """The (phase, step) a model's text names, mapped onto ``hierarchy`` where possible: the one
    rule both the lmms-eval task and ``score`` apply to a generative model's answer."""
    ans = parse_answer(text)
    phases, steps = set(hierarchy.phases), set(hierarchy.membership)
    return (resolve_label(ans.phase, phases, hierarchy.canonical_phase),
            resolve_label(ans.step, steps, hierarchy.canonical_step))
