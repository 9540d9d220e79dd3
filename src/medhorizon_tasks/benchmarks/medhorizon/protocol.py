"""MedHorizon's evaluation protocol: which frames a model sees, and the prompt.

Modes (paper sections 4.1 and 4.3, appendix 8):

- ``visual``: frames admitted by the 1 FPS + cap rule (:class:`~medhorizon_tasks.core.sampling.FpsCap`)
  over the whole video, or a fixed uniform budget (``frames=N``);
- ``text``: the identical question and options, no frames (the "Text" / blind row);
- ``oracle``: the item's evidence frames (the "GT-images" row): every one of the release's own evidence images
  when a record lists them, however many (the paper: "the oracle setting uses the variable number of available
  evidence images for each item", section 8 RQ2). For a record without them, the package's fallback (the paper
  describes none): the 1 FPS frames inside its evidence windows, uniformly thinned to the run's ``cap`` when more
  (phase-length PR / SD / RL windows hold hundreds or thousands), and for an item without windows the 1 FPS +
  cap frames of the whole video. The cap bounds the fallbacks only.
The "Random" row of the paper is the ``medhorizon_random`` probe model (a
seeded uniform guess, :func:`medhorizon_tasks.data.synthetic.probes.random_answer`) run on
the text task.

How frames reach a model: the frames themselves, decoded by this library in
chronological order, with their timestamps written into the prompt. A model
therefore sees exactly the planned frames whatever its own sampler would do.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...core.errors import VideoError
from ...core.sampling import (
    ChangeSignal,
    FpsCap,
    FrameChange,
    FramePlan,
    Hybrid,
    Perturbation,
    Uniform,
    VideoMeta,
    plan_frames,
)
from ...core.video.decode import VideoIndex
from ...core.video.frame_cache import FrameCache
from ...core.video.metadata import check_duration
from ...core.video.prepared import (  # noqa: F401  (DEFAULT_MAX_SIDE: part of this protocol's settings)
    DEFAULT_MAX_SIDE,
    PreparedVideo,
    decode_prepared,
    video_change_signal,
    video_file,
    video_index,
)
from ...core.video.size import MaxSide, PixelBudget, SizeRule
from .release import LETTERS, Item
from .release_check import evidence_seconds, oracle_policy  # noqa: F401  (evidence_seconds: re-exported)
from .selection import selected_policy

MODES = ("visual", "text", "oracle")
STRATEGIES = ("uniform", "frame_change", "hybrid", "selected")
INSTRUCTION = "Answer with only the letter (A, B, C, or D) of the correct option."
DEFAULT_FPS = 1.0
DEFAULT_CAP = 64           # the paper's fixed-frame budget for most open models


def _flag(value) -> bool:
    """A YAML / model-args boolean: true/false, 1/0, yes/no."""
    if isinstance(value, str):
        if value.strip().lower() not in ("true", "false", "1", "0", "yes", "no", ""):
            raise ValueError(f"expected true or false, got {value!r}")
        return value.strip().lower() in ("true", "1", "yes")
    return bool(value)


@dataclass(frozen=True)
class FrameSetting:
    """How frames are admitted for one run (the task's ``lmms_eval_specific_kwargs``).

    ``frames`` (a fixed budget) overrides fps/cap: uniform over the whole
    decoded sequence, or chosen by ``strategy`` ``frame_change`` / ``hybrid``
    on the fps grid, or ``selected``: the frames a query-aware ``selector`` chose beforehand
    (``medhorizon-tasks select``, :mod:`.selection`). ``order`` perturbs the chronological order afterwards
    (``reverse``, ``block_shuffle``, ``local_shuffle``; seeded by ``order_seed``).
    ``order_study``: one of the four frame-order tasks (paper Fig. 8, RQ3), the
    original order included: no frame times and no "chronological" in the
    prompt, and no real times for a bridge to show, so that the four tasks
    differ in the order of the frames only.
    """

    mode: str = "visual"
    fps: float = DEFAULT_FPS
    cap: int = DEFAULT_CAP
    frames: int | None = None
    max_side: int | None = None      # the older fixed bound on the longer side (when given, and no frame_pixels)
    strategy: str = "uniform"
    frame_pixels: int | None = None  # a total-pixel budget per request (default: core.video.size's; 0: native)
    order: str = "original"
    order_seed: int = 0
    selector: str = ""   # strategy "selected": aks, wfs_sb, vilamp... (the selection file's name)
    order_study: bool = False

    def __post_init__(self):
        if self.mode not in MODES:
            raise ValueError(f"unknown mode {self.mode!r}; expected one of {', '.join(MODES)}")
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {self.strategy!r}; expected one of {', '.join(STRATEGIES)}")
        if self.strategy != "uniform" and not self.frames:
            raise ValueError(f"strategy {self.strategy!r} needs a frame budget (frames=N)")
        if (self.strategy == "selected") != bool(self.selector):
            raise ValueError("strategy 'selected' and a selector name go together (selector=aks, frames=128)")
        Perturbation(self.order, seed=self.order_seed)  # validates kind and seed

    def key(self) -> dict:
        """Everything that decides which frames are decoded (the identity of a video outcome); ``order_study``
        changes only what is said about them, so it is left out."""
        key = dataclasses.asdict(self)
        del key["order_study"]
        if not self.selector:  # the keys of settings without a selector stay what they were
            del key["selector"]
        return {"benchmark": "medhorizon", **key}

    @classmethod
    def from_kwargs(cls, kwargs: dict | None) -> "FrameSetting":
        kw = dict(kwargs or {})
        frames = kw.get("frames")
        pixels = kw.get("frame_pixels")
        max_side = None if "frame_pixels" in kw else kw.get("max_side")
        return cls(frame_pixels=None if pixels is None else int(pixels), mode=str(kw.get("mode", "visual")),
                   fps=float(kw.get("fps", DEFAULT_FPS)), cap=int(kw.get("cap", DEFAULT_CAP)), frames=int(frames) if frames else None,
                   max_side=None if max_side is None else int(max_side), strategy=str(kw.get("strategy", "uniform")),
                   order=str(kw.get("order", "original")), order_seed=int(kw.get("order_seed", 0)),
                   selector=str(kw.get("selector", "")),
                   order_study=_flag(kw.get("order_study", False)))

    def describe(self) -> str:
        """The "Input" column of a report: ``1 FPS, cap 64``, ``32 frames``, ``text only``, ``GT evidence``."""
        if self.mode == "text":
            return "text only"
        if self.mode == "oracle":
            return "GT evidence"
        if self.frames:
            how = f"{self.selector}-selected" if self.selector else self.strategy.replace("_", "-")
            text = f"{self.frames} frames" + ("" if self.strategy == "uniform" else f", {how}")
        else:
            text = f"{self.fps:g} FPS, cap {self.cap}"
        return text if self.order == "original" else f"{text}, {self.order.replace('_', ' ')}"

    @property
    def shows_times(self) -> bool:
        """Whether the frames' real times may be told to the model (prompt, or a bridge's time labels)."""
        return not self.order_study

    @property
    def size_rule(self) -> SizeRule | None:
        """The task's own frame size (a consumer may ask for its own: ``core.video.size.requested_size``): its
        total-pixel budget per request, else its bound on the longer side, else the default pixel budget."""
        if self.frame_pixels is not None:  # 0: the source size
            return PixelBudget(self.frame_pixels) if self.frame_pixels > 0 else None
        if self.max_side is not None:      # 0: the source size
            return MaxSide(self.max_side) if self.max_side > 0 else None
        return PixelBudget()

    @property
    def needs_change_signal(self) -> bool:
        return self.mode == "visual" and self.strategy in ("frame_change", "hybrid")

    def policy(self, item: Item, signal: ChangeSignal | None = None):
        if self.mode == "oracle":
            # every listed evidence image; the cap bounds the fallbacks only (module doc)
            return oracle_policy(item, self.fps, self.cap)
        if self.strategy == "frame_change":
            return FrameChange(self.frames, signal, fps=self.fps)
        if self.strategy == "hybrid":
            return Hybrid(self.frames, signal, fps=self.fps)
        if self.strategy == "selected":
            return selected_policy(item, self.selector, self.frames)
        if self.frames:
            return Uniform(self.frames)
        return FpsCap(self.fps, self.cap)

    @property
    def perturbation(self) -> Perturbation:
        return Perturbation(self.order, seed=self.order_seed)

    @property
    def shows_frames(self) -> bool:
        return self.mode in ("visual", "oracle")


def plan_for(item: Item, setting: FrameSetting, index: VideoIndex | None = None,
             path: Path | None = None) -> FramePlan | None:
    """The frame plan of an item; built on the file's real frame times when the video is indexed.

    Frame-change and hybrid strategies need the video itself (``path``) for
    their change signal.
    """
    if not setting.shows_frames:
        return None
    meta = index.meta() if index is not None else VideoMeta(item.num_frames, item.fps)
    signal = None
    if setting.needs_change_signal:
        if path is None:
            raise VideoError(f"strategy {setting.strategy} needs the video", uid=item.uid)
        signal = video_change_signal(path, item.uid)
    return setting.perturbation.apply(plan_frames(meta, setting.policy(item, signal)))


def prepare(item: Item, setting: FrameSetting, video_root: str | os.PathLike) -> PreparedVideo:
    """Resolve, index and check an item's video, then plan its frames. VideoError (naming the item and
    path) for a missing or unreadable file, or one that does not match the data
    (:func:`~medhorizon_tasks.core.video.metadata.check_duration`)."""
    path = video_file(item, video_root)
    index = video_index(path, item.uid)
    duration = check_duration(index, item.duration_s, path=path, uid=item.uid)
    return PreparedVideo(path, index, plan_for(item, setting, index, path), duration)


def frames_shown(item: Item, setting: FrameSetting, video_root: str | os.PathLike) -> int | None:
    """The number of frames an oracle-mode record carries (its plan on the file's own frame times); None in
    another mode, or when the video fails (its record is then a video error)."""
    if setting.mode != "oracle":
        return None
    try:
        return len(prepare(item, setting, video_root).plan)
    except VideoError:
        return None


def decode_frames(video: PreparedVideo, setting: FrameSetting, uid: str | None = None,
                  cache: FrameCache | None = None) -> np.ndarray:
    """The planned frames of a prepared video, through the frame cache when there is one
    (``cache``, else ``$MEDHORIZON_FRAME_CACHE``): a plan decoded before, by any model or process, is
    read back instead of decoded."""
    return decode_prepared(video, setting.size_rule, uid, cache=cache)


def load_frames(item: Item, setting: FrameSetting, video_root: str | os.PathLike,
                cache: FrameCache | None = None) -> tuple[FramePlan, np.ndarray]:
    """Plan and decode an item's frames. Raises VideoError naming the item and path on any video problem."""
    video = prepare(item, setting, video_root)
    return video.plan, decode_frames(video, setting, item.uid, cache)


def _clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 3600:d}:{s // 60 % 60:02d}:{s % 60:02d}"


def build_prompt(item: Item, plan: FramePlan | None = None, duration_s: float | None = None,
                 times: bool = True) -> str:
    """The question prompt. Text mode (``plan=None``) gets the identical question, options and instruction.

    ``duration_s``: the video file's measured duration (default: the data's).

    Frames in chronological order come with their timestamps. A plan whose
    order was perturbed gets neither the timestamps nor the word
    "chronological": timestamps would let a model undo the perturbation.
    ``times=False`` (:attr:`FrameSetting.shows_times`: the four frame-order
    tasks of Fig. 8, the original order included) gives every order that same
    text, so the order of the frames is the only difference between them
    ("Reversing, block-shuffling, or locally shuffling frames reduces
    Qwen3-VL-8B from 26.5% to 24.2-24.5% overall", section 4.4).
    """
    lines = []
    if plan is not None:
        head = f"These are {len(plan)} frames from a {_clock(item.duration_s if duration_s is None else duration_s)} " \
               "clinical video"
        if times and list(plan.indices) == sorted(plan.indices):
            stamps = ", ".join(f"{t:.1f}" for t in plan.timestamps)
            lines.append(f"{head}, in chronological order, sampled over the whole video. "
                         f"Frame timestamps in seconds: {stamps}.")
        else:
            lines.append(f"{head}, sampled over the whole video.")
        lines.append("")
    lines.append(f"Question: {item.question}")
    lines.append("Options:")
    lines.extend(f"{L}. {opt}" for L, opt in zip(LETTERS, item.options))
    lines.append(INSTRUCTION)
    return "\n".join(lines)

