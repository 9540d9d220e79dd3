"""Frame plans: which frames of a video a model is shown. Pure functions, no I/O.

A policy is a small frozen value; ``plan_frames(meta, policy)`` turns it into a
:class:`FramePlan` (frame indices + timestamps, chronological) with a stable
``key`` so decoded frames can be cached and reused across models.

MedHorizon's admission rule (paper, appendix 7.1), implemented by
:class:`FpsCap`:

1. Decode candidate frame indices at the model fps, normally 1 FPS, over the
   WHOLE video.
2. If the number of candidates is at most the cap C, keep all candidates.
3. If it exceeds C, keep C indices uniformly spaced from the first to the last
   candidate.
4. Preserve chronological order in the model input.

Capped inputs are never produced by prefix truncation. Fixed-frame rows
(:class:`Uniform`) apply the same uniform rule to the full decoded frame-index
sequence. :class:`Oracle` shows the item's evidence frames instead.

The paper's diagnostics (section 4.4-4.5, appendix 8) live here too:

* :func:`perturb` / :class:`Perturbation` reorder a finished plan (RQ3:
  reverse, block shuffle with 8 blocks, local shuffle with window 16), seeded
  and reproducible; the frames stay the same, only their order changes.
* :class:`FrameChange` and :class:`Hybrid` (RQ4) choose frames of the 1 FPS
  grid from a per-video :class:`ChangeSignal` (see
  :func:`medhorizon_tasks.core.video.frame_change.change_signal` for computing one).
"""

from __future__ import annotations

import bisect
import dataclasses
import hashlib
import math
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "VideoMeta", "FramePlan", "FpsCap", "Uniform", "Oracle", "Clip", "Window", "CentredClip", "plan_frames",
    "fps_candidates", "uniform_subsample", "uniform_frames",
    "ChangeSignal", "FrameChange", "Hybrid", "Selected",
    "Perturbation", "perturb", "PERTURBATION_KINDS",
]


@dataclass(frozen=True)
class VideoMeta:
    """What the planner needs to know about a video.

    ``frame_times`` (seconds, one per frame, increasing) is given for
    variable-frame-rate video; otherwise frame i is at ``i / fps``.
    """

    num_frames: int
    fps: float
    frame_times: tuple[float, ...] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if not isinstance(self.num_frames, int) or self.num_frames <= 0:
            raise ValueError(f"num_frames must be a positive integer, got {self.num_frames!r}")
        if not (isinstance(self.fps, (int, float)) and math.isfinite(self.fps) and self.fps > 0):
            raise ValueError(f"fps must be a positive number, got {self.fps!r}")
        if self.frame_times is not None and len(self.frame_times) != self.num_frames:
            raise ValueError("frame_times must have one entry per frame")

    @property
    def duration_s(self) -> float:
        if self.frame_times is not None:
            return self.frame_times[-1] + 1.0 / self.fps
        return self.num_frames / self.fps

    def times_of(self, indices: np.ndarray) -> np.ndarray:
        if self.frame_times is not None:
            return np.asarray(self.frame_times, dtype=np.float64)[indices]
        return indices.astype(np.float64) / float(self.fps)


@dataclass(frozen=True)
class FramePlan:
    """Frame indices (into the decoded sequence) and their timestamps, in the order the model sees them."""

    indices: tuple[int, ...]
    timestamps: tuple[float, ...]
    policy: str
    # What is done to the decoded frames before a model sees them (e.g. Sureon's blurring pass,
    # :class:`medhorizon_tasks.core.video.redact.Redaction`), as its ``describe()``; "" = the raw pixels.
    redaction: str = ""

    def __len__(self) -> int:
        return len(self.indices)

    @property
    def key(self) -> str:
        """Stable identity of the pixels this plan gives (not of the video): its frame indices, and its
        redaction pass when it has one, so that blurred and raw frames are never cached under one key."""
        text = ",".join(map(str, self.indices)) + (f"|{self.redaction}" if self.redaction else "")
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def with_redaction(self, redaction: str) -> "FramePlan":
        """The same frames, to be shown after the pass ``redaction`` describes ("" = raw)."""
        return dataclasses.replace(self, redaction=redaction)


# ----------------------------------------------------------------- policies

@dataclass(frozen=True)
class FpsCap:
    """MedHorizon's rule: candidates on a ``fps`` grid over the whole video, uniformly capped to ``cap``."""

    fps: float = 1.0
    cap: int = 64

    def describe(self) -> str:
        return f"fps_cap(fps={self.fps:g},cap={self.cap})"


@dataclass(frozen=True)
class Uniform:
    """``n`` frames uniformly over the full decoded sequence, first and last frame included."""

    n: int

    def describe(self) -> str:
        return f"uniform(n={self.n})"


@dataclass(frozen=True)
class Oracle:
    """The item's evidence frames: the ``fps`` grid points inside each evidence window.

    ``windows`` are ``(start_s, end_s)`` in seconds of the video's own timeline
    (both ends inclusive), so evidence given in the data's frame numbering is
    mapped through time and still lands on the right frames of a file whose
    frame rate differs from the data's. A window narrower than one grid step
    contributes the frame nearest its middle, so every window is represented;
    a window that starts after the video's end contributes nothing. ``cap``
    uniformly thins the union when it holds more frames (:func:`uniform_subsample`):
    phase-length windows hold hundreds or thousands of 1 FPS frames, and the
    paper's oracle shows "the variable number of available evidence images for
    each item" (MedHorizon section 8, RQ2), not a whole phase. ``images``
    (seconds), when the data lists its evidence images, replaces the windows:
    exactly the frame nearest each listed time (thinned to ``cap`` only when
    more). An item without either (global support: the whole procedure is the
    evidence) falls back to ``FpsCap(fps, fallback_cap)``; the plan's ``policy``
    string records the fallback.
    """

    windows: tuple[tuple[float, float], ...]
    fps: float = 1.0
    cap: int | None = None
    fallback_cap: int = 64
    images: tuple[float, ...] = ()

    def __post_init__(self):
        if self.cap is not None:
            _check_budget(self.cap, "oracle cap")

    def describe(self) -> str:
        source = ",images" if self.images else ""
        return f"oracle(fps={self.fps:g},cap={self.cap}{source})"


@dataclass(frozen=True)
class Clip:
    """Sureon's clip frames (paper, appendix D.1): "for each clip we uniformly sample up to 8 frames across
    its duration at the video's frame rate, clamped to a minimum of 4 frames".

    The candidates are the clip's own frames -- every frame of the video whose
    timestamp lies in ``[start_s, end_s]`` (both ends included), at the video's
    frame rate, not a 1 FPS grid -- and ``clamp(own frames, min_frames,
    max_frames)`` of them are kept uniformly, first and last included
    (:func:`uniform_subsample`). So any clip of at least ``max_frames`` frames
    (a third of a second at 25 fps) gets exactly ``max_frames``. A clip with
    fewer than ``min_frames`` frames still gives ``min_frames``: its frames are
    spread uniformly over the ``min_frames`` positions, so some are shown twice
    (the plan's ``policy`` then ends in ``->repeat``).
    """

    start_s: float
    end_s: float
    min_frames: int = 4
    max_frames: int = 8

    def __post_init__(self):
        if not (math.isfinite(self.start_s) and math.isfinite(self.end_s) and 0 <= self.start_s < self.end_s):
            raise ValueError(f"a clip needs 0 <= start_s < end_s, got [{self.start_s}, {self.end_s}]")
        if not 1 <= self.min_frames <= self.max_frames:
            raise ValueError("clip frame counts need 1 <= min_frames <= max_frames")

    def describe(self) -> str:
        return f"clip(start={self.start_s:g},end={self.end_s:g},frames={self.min_frames}-{self.max_frames})"


@dataclass(frozen=True)
class Window:
    """Frames around one timestamp (frame-wise phase/step recognition): the frame nearest to
    ``center_s`` and those nearest to ``center_s +/- k / fps`` for ``k = 1..round(half_width_s * fps)``,
    the ones that fall inside the video, in time order.

    The evaluated frame is always in the plan (a window cut by the video's start or end is
    simply shorter, never shifted), so the frame a label belongs to is always seen.
    """

    center_s: float
    half_width_s: float = 4.0
    fps: float = 1.0

    def __post_init__(self):
        if not (math.isfinite(self.center_s) and self.center_s >= 0):
            raise ValueError(f"a window needs a finite center_s >= 0, got {self.center_s}")
        if not (math.isfinite(self.half_width_s) and self.half_width_s >= 0):
            raise ValueError(f"a window needs half_width_s >= 0, got {self.half_width_s}")
        if not (math.isfinite(self.fps) and self.fps > 0):
            raise ValueError(f"a window needs fps > 0, got {self.fps}")

    def describe(self) -> str:
        return f"window(center={self.center_s:g},half_width={self.half_width_s:g},fps={self.fps:g})"


@dataclass(frozen=True)
class CentredClip:
    """``frames`` frames at ``fps`` centred on ``center_s``: what a zero-shot dual encoder sees of one
    evaluated frame (SurgHiBench, supplement A.2, follows SurgLaVi's protocol: T = 16 frames at the
    annotations' 1 FPS, centred on the anchor frame).

    The frames nearest to ``center_s + j / fps`` for ``j = -(frames // 2) .. frames - frames // 2 - 1``,
    so the evaluated frame is at position ``frames // 2`` (16 frames: 8 before, 7 after). Near the
    video's start or end the window is *shifted* to stay inside the video (still ``frames`` frames, the
    evaluated frame among them); a video with fewer grid points than ``frames`` gives all of them and
    repeats the last. This is the rule of ``VideoPreprocessor(mode="centered")`` in the ``surgclip``
    package (0.1.0) on a frame list at the sample rate, with time in place of list positions.
    """

    center_s: float
    frames: int = 16
    fps: float = 1.0

    def __post_init__(self):
        if not (math.isfinite(self.center_s) and self.center_s >= 0):
            raise ValueError(f"a clip needs a finite center_s >= 0, got {self.center_s}")
        _check_positive_int(self.frames, "clip frames")
        if not (math.isfinite(self.fps) and self.fps > 0):
            raise ValueError(f"a clip needs fps > 0, got {self.fps}")

    def describe(self) -> str:
        return f"centred_clip(center={self.center_s:g},frames={self.frames},fps={self.fps:g})"


@dataclass(frozen=True)
class ChangeSignal:
    """How much the picture changes over one video: ``scores[k]`` at ``times[k]``.

    ``times``: seconds on the video's own timeline (0 = its first frame, as in
    :class:`VideoMeta`), strictly increasing. ``scores``: how much the picture
    changed at that point compared with the previous point (non-negative; the
    first point has nothing to compare with and scores 0 by convention).
    ``method`` records how the signal was computed; it is not compared.
    Computed from a video by :func:`medhorizon_tasks.core.video.frame_change.change_signal`.
    """

    times: tuple[float, ...]
    scores: tuple[float, ...]
    method: str = field(default="", compare=False)

    def __post_init__(self):
        times = tuple(float(t) for t in self.times)
        scores = tuple(float(x) for x in self.scores)
        if len(times) != len(scores):
            raise ValueError(f"a change signal needs one score per time point, got {len(times)} times "
                             f"and {len(scores)} scores")
        if not all(math.isfinite(t) for t in times) or any(b <= a for a, b in zip(times, times[1:])):
            raise ValueError("change signal times must be finite and strictly increasing")
        if not all(math.isfinite(x) and x >= 0 for x in scores):
            raise ValueError("change signal scores must be finite and non-negative")
        object.__setattr__(self, "times", times)
        object.__setattr__(self, "scores", scores)

    def __len__(self) -> int:
        return len(self.times)


def _check_budget(n, what: str) -> None:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n <= 0:
        raise ValueError(f"{what}: the frame budget n must be a positive integer, got {n!r}")


@dataclass(frozen=True)
class FrameChange:
    """Differential frame-change sampling (paper RQ4): the ``n`` frames where the picture changes most.

    The candidates are the ``fps`` grid (:func:`fps_candidates`, 1 FPS by
    default). Change points are ranked by score, highest first (equal scores:
    earlier first); each is mapped to the candidate nearest in time (equally
    near: the earlier one); a change point whose candidate is already taken is
    skipped in favour of the next-ranked change point. Points scoring 0 (no
    change at all) are not ranked. When the signal yields fewer than ``n``
    distinct candidates (a short or static video), the remaining frames are
    the not-yet-chosen candidates spread uniformly (:func:`uniform_subsample`),
    and the plan's ``policy`` records ``->uniform_fill(k)``. Frames are shown
    chronologically; a video with at most ``n`` candidates gives them all.
    """

    n: int
    signal: ChangeSignal = field(repr=False)
    fps: float = 1.0

    def __post_init__(self):
        _check_budget(self.n, "frame_change")
        if not isinstance(self.signal, ChangeSignal):
            raise TypeError(f"frame_change needs a ChangeSignal, got {type(self.signal).__name__}")

    def describe(self) -> str:
        extra = "" if self.fps == 1.0 else f",fps={self.fps:g}"
        return f"frame_change(n={self.n}{extra})"


@dataclass(frozen=True)
class Hybrid:
    """Half uniform, half differential frames (paper RQ4, appendix 8).

    ``ceil(n / 2)`` candidates come from :func:`uniform_subsample` over the
    ``fps`` grid (so the first and last candidate are always there when
    ``n >= 3``), then the top-ranked :class:`FrameChange` candidates that are not
    already chosen, until ``n`` frames in total (uniform fill as in
    :class:`FrameChange` when the signal runs out). The uniform half takes the
    odd frame: coverage of the whole procedure is what the paper found to be
    the stable part, and for the paper's budgets (32, 64) both halves are equal
    anyway. Frames are shown chronologically.
    """

    n: int
    signal: ChangeSignal = field(repr=False)
    fps: float = 1.0

    def __post_init__(self):
        _check_budget(self.n, "hybrid")
        if not isinstance(self.signal, ChangeSignal):
            raise TypeError(f"hybrid needs a ChangeSignal, got {type(self.signal).__name__}")

    @property
    def n_uniform(self) -> int:
        return (self.n + 1) // 2

    def describe(self) -> str:
        extra = "" if self.fps == 1.0 else f",fps={self.fps:g}"
        return f"hybrid(n={self.n}{extra})"


@dataclass(frozen=True)
class Selected:
    """Frames chosen beforehand by a query-aware selector (:mod:`.selectors`, ``medhorizon-tasks select``):
    their ``indices`` into the decoded sequence, shown in time order; ``label`` names the selector."""

    indices: tuple[int, ...]
    label: str = "selected"

    def __post_init__(self):
        if not self.indices or any(b <= a for a, b in zip(self.indices, self.indices[1:])) or self.indices[0] < 0:
            raise ValueError("a selection needs at least one frame index, increasing and >= 0")

    def describe(self) -> str:
        return self.label


# ----------------------------------------------------------------- the rule

def fps_candidates(meta: VideoMeta, fps: float) -> np.ndarray:
    """Indices of the frames on a ``fps`` grid over the whole video: for t = 0, 1/fps, 2/fps, ...
    the first frame whose timestamp is at or after t (so at 1 FPS a 10 s video gives 10 candidates)."""
    if not (math.isfinite(fps) and fps > 0):
        raise ValueError(f"sampling fps must be positive, got {fps!r}")
    eps = 1e-6
    if meta.frame_times is None:
        # Frame i is at i / video_fps; the first frame at or after t is ceil(t * video_fps).
        n_points = int(math.floor((meta.num_frames - 1) / meta.fps * fps + eps)) + 1
        t = np.arange(n_points, dtype=np.float64) / fps
        idx = np.ceil(t * meta.fps - eps).astype(np.int64)
    else:
        times = np.asarray(meta.frame_times, dtype=np.float64)
        n_points = int(math.floor((times[-1] - times[0]) * fps + eps)) + 1
        t = times[0] + np.arange(n_points, dtype=np.float64) / fps
        idx = np.searchsorted(times, t - eps, side="left").astype(np.int64)
    idx = idx[idx < meta.num_frames]
    return np.unique(idx)  # a grid finer than the video's own frame rate hits frames twice


def uniform_subsample(candidates: np.ndarray, cap: int) -> np.ndarray:
    """Keep ``cap`` of the candidates uniformly spaced from the first to the last (both kept)."""
    if cap <= 0:
        raise ValueError(f"frame cap must be positive, got {cap!r}")
    n = len(candidates)
    if n <= cap:
        return candidates
    if cap == 1:
        return candidates[[0]]
    # Round half up (not numpy's half-to-even) so the rule is the obvious one.
    # When n > cap the spacing exceeds 1, so the picks are distinct.
    pos = np.floor(np.linspace(0.0, n - 1, cap) + 0.5).astype(np.int64)
    return candidates[pos]


def uniform_frames(meta: VideoMeta, n: int) -> np.ndarray:
    """The frames of *the* uniform plan of ``n`` frames: ``n`` of the video's decoded frames uniformly from the
    first to the last (MedHorizon's fixed-frame rule, "uniform over the full decoded frame index sequence").
    The ``medhorizon_frames<N>`` tasks show it, ``stats --recall`` measures it, and ``select`` writes it beside
    every selection (``selection-uniform-<N>.jsonl``): one definition, so their recalls are one number."""
    return uniform_subsample(np.arange(meta.num_frames, dtype=np.int64), n)


def plan_frames(meta: VideoMeta, policy) -> FramePlan:
    """The frames ``policy`` admits from a video described by ``meta``."""
    label = policy.describe()
    if isinstance(policy, FpsCap):
        idx = uniform_subsample(fps_candidates(meta, policy.fps), policy.cap)
    elif isinstance(policy, Uniform):
        idx = uniform_frames(meta, policy.n)
    elif isinstance(policy, Oracle):
        idx = _oracle_indices(meta, policy)
        if idx is None:
            fallback = FpsCap(policy.fps, policy.fallback_cap)
            idx = uniform_subsample(fps_candidates(meta, fallback.fps), fallback.cap)
            label = f"{label}->no_windows->{fallback.describe()}"
    elif isinstance(policy, Clip):
        idx = _clip_indices(meta, policy)
        if len(idx) > len(np.unique(idx)):
            label = f"{label}->repeat"
    elif isinstance(policy, Window):
        idx = _window_indices(meta, policy)
    elif isinstance(policy, CentredClip):
        idx = _centred_clip_indices(meta, policy)
    elif isinstance(policy, Selected):
        if policy.indices[-1] >= meta.num_frames:
            raise ValueError(f"selected frame {policy.indices[-1]} is past the video's {meta.num_frames} frames")
        idx = np.asarray(policy.indices, dtype=np.int64)
    elif isinstance(policy, (FrameChange, Hybrid)):
        idx, filled = _change_indices(meta, policy)
        if filled:
            label = f"{label}->uniform_fill({filled})"
    else:
        raise TypeError(f"unknown frame policy {policy!r}")
    idx = np.asarray(idx, dtype=np.int64)
    times = meta.times_of(idx)
    return FramePlan(tuple(int(i) for i in idx), tuple(round(float(t), 6) for t in times), label)


def _clip_indices(meta: VideoMeta, policy: Clip) -> np.ndarray:
    all_idx = np.arange(meta.num_frames, dtype=np.int64)
    times = meta.times_of(all_idx)
    inside = all_idx[(times >= policy.start_s - 1e-6) & (times <= policy.end_s + 1e-6)]
    if not len(inside):
        raise ValueError(f"clip [{policy.start_s}, {policy.end_s}] s holds no frame of a "
                         f"{meta.duration_s:.1f} s video")
    if len(inside) >= policy.min_frames:
        return uniform_subsample(inside, policy.max_frames)
    # Fewer own frames than the minimum: every one of them, spread over min_frames positions (round half up).
    pos = np.floor(np.linspace(0.0, len(inside) - 1, policy.min_frames) + 0.5).astype(np.int64)
    return inside[pos]


def _window_indices(meta: VideoMeta, policy: Window) -> np.ndarray:
    # Called once per evaluated frame: work on the window's few timestamps, never on the whole video.
    if policy.center_s > meta.duration_s + 1e-6:
        raise ValueError(f"window centre {policy.center_s:g} s is after the end of a {meta.duration_s:.1f} s video")
    k = int(round(policy.half_width_s * policy.fps))
    wanted = policy.center_s + np.arange(-k, k + 1, dtype=np.float64) / policy.fps
    wanted = wanted[(wanted >= -1e-6) & (wanted < meta.duration_s - 1e-9)]
    return np.unique(_nearest_frames(meta, wanted))


def _centred_clip_indices(meta: VideoMeta, policy: CentredClip) -> np.ndarray:
    if policy.center_s > meta.duration_s + 1e-6:
        raise ValueError(f"clip centre {policy.center_s:g} s is after the end of a {meta.duration_s:.1f} s video")
    t, fps, n = policy.center_s, policy.fps, policy.frames
    first = -int(math.floor(t * fps + 1e-6))                               # earliest offset at a time >= 0
    last = max(0, int(math.ceil((meta.duration_s - t) * fps - 1e-9)) - 1)  # latest offset before the end
    start = max(first, -(n // 2))
    end = start + n - 1
    if end > last:  # shifted back from the end, as far as the start allows
        end = last
        start = max(first, end - n + 1)
    idx = _nearest_frames(meta, t + np.arange(start, end + 1, dtype=np.float64) / fps)
    return np.concatenate([idx, np.full(n - len(idx), idx[-1], dtype=np.int64)])


def _nearest_frames(meta: VideoMeta, wanted: np.ndarray) -> np.ndarray:
    """The frame nearest to each time (equally near: the earlier one), in the order given."""
    last = meta.num_frames - 1
    if meta.frame_times is None:  # frame i at i / fps
        return np.clip(np.ceil(wanted * meta.fps - 0.5), 0, last).astype(np.int64)
    times = meta.frame_times
    pos = np.array([bisect.bisect_left(times, t) for t in wanted], dtype=np.int64)
    right = np.clip(pos, 0, last)
    left = np.clip(pos - 1, 0, last)
    t_left = np.array([times[i] for i in left]) if len(left) else np.empty(0)
    t_right = np.array([times[i] for i in right]) if len(right) else np.empty(0)
    return np.where(np.abs(wanted - t_left) <= np.abs(t_right - wanted), left, right).astype(np.int64)


def _nearest_frame(meta: VideoMeta, t: float) -> int:
    """The frame whose timestamp is nearest to ``t`` seconds (equally near: the earlier one)."""
    last = meta.num_frames - 1
    if meta.frame_times is None:
        return int(min(max(math.ceil(t * meta.fps - 0.5), 0), last))
    times = meta.frame_times
    right = min(bisect.bisect_left(times, t), last)
    left = max(right - 1, 0)
    return left if abs(t - times[left]) <= abs(times[right] - t) else right


def _oracle_indices(meta: VideoMeta, policy: Oracle) -> np.ndarray | None:
    if policy.images:
        wanted = np.asarray(policy.images, dtype=np.float64)
        wanted = wanted[(wanted >= 0.0) & (wanted <= meta.duration_s + 1e-6)]
        if not len(wanted):
            return None
        idx = np.unique(_nearest_frames(meta, wanted))
        return idx if policy.cap is None else uniform_subsample(idx, policy.cap)
    if not policy.windows:
        return None
    grid = fps_candidates(meta, policy.fps)
    grid_times = meta.times_of(grid)
    eps = 1e-6
    picked: list[np.ndarray] = []
    for start, end in policy.windows:
        start, end = max(0.0, float(start)), float(end)
        if end < start or start > meta.duration_s:
            continue
        inside = grid[(grid_times >= start - eps) & (grid_times <= end + eps)]
        picked.append(inside if len(inside) else np.array([_nearest_frame(meta, (start + end) / 2)], dtype=np.int64))
    if not picked:
        return None
    idx = np.unique(np.concatenate(picked))
    if policy.cap is not None:
        idx = uniform_subsample(idx, policy.cap)
    return idx


# ------------------------------------------------------- frame-change sampling

def _change_ranking(cand_times: np.ndarray, signal: ChangeSignal) -> np.ndarray:
    """Positions into the candidates, best change first, each at most once (see :class:`FrameChange`)."""
    if len(cand_times) == 0 or len(signal) == 0:
        return np.zeros(0, dtype=np.int64)
    times = np.asarray(signal.times, dtype=np.float64)
    scores = np.asarray(signal.scores, dtype=np.float64)
    order = np.lexsort((np.arange(len(times)), -scores))  # score descending, then earlier first
    order = order[scores[order] > 0]
    t = times[order]
    right = np.clip(np.searchsorted(cand_times, t, side="left"), 0, len(cand_times) - 1)
    left = np.clip(right - 1, 0, len(cand_times) - 1)
    nearest = np.where(np.abs(t - cand_times[left]) <= np.abs(cand_times[right] - t), left, right)
    _, first = np.unique(nearest, return_index=True)  # first = best-ranked change point per candidate
    return nearest[np.sort(first)].astype(np.int64)


def _change_indices(meta: VideoMeta, policy) -> tuple[np.ndarray, int]:
    """(frame indices, number of uniform-fill frames) for a FrameChange or Hybrid policy."""
    cands = fps_candidates(meta, policy.fps)
    n = int(policy.n)
    if len(cands) <= n:
        return cands, 0
    positions = np.arange(len(cands), dtype=np.int64)
    chosen = uniform_subsample(positions, policy.n_uniform) if isinstance(policy, Hybrid) else positions[:0]
    ranked = _change_ranking(meta.times_of(cands), policy.signal)
    ranked = ranked[~np.isin(ranked, chosen)]
    chosen = np.concatenate([chosen, ranked[: n - len(chosen)]])
    filled = n - len(chosen)
    if filled:
        rest = positions[~np.isin(positions, chosen)]
        chosen = np.concatenate([chosen, uniform_subsample(rest, filled)])
    return cands[np.sort(chosen)], filled


# ------------------------------------------------------- order perturbations

PERTURBATION_KINDS = ("original", "reverse", "block_shuffle", "local_shuffle")


def _check_positive_int(value, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")


@dataclass(frozen=True)
class Perturbation:
    """An order perturbation of a finished plan (paper RQ3); see :func:`perturb`."""

    kind: str
    seed: int = 0
    blocks: int = 8
    window: int = 16

    def __post_init__(self):
        if self.kind not in PERTURBATION_KINDS:
            raise ValueError(f"unknown order perturbation {self.kind!r} (expected one of {', '.join(PERTURBATION_KINDS)})")
        if isinstance(self.seed, bool) or not isinstance(self.seed, (int, np.integer)) or self.seed < 0:
            raise ValueError(f"perturbation seed must be a non-negative integer, got {self.seed!r}")
        _check_positive_int(self.blocks, "blocks")
        _check_positive_int(self.window, "window")

    def describe(self) -> str:
        if self.kind == "block_shuffle":
            return f"block_shuffle(blocks={self.blocks},seed={self.seed})"
        if self.kind == "local_shuffle":
            return f"local_shuffle(window={self.window},seed={self.seed})"
        return self.kind

    def order(self, n: int) -> np.ndarray:
        """The new order of a plan of ``n`` frames: position k shows old frame ``order[k]``."""
        if self.kind == "original" or n < 2:
            return np.arange(n, dtype=np.int64)
        if self.kind == "reverse":
            return np.arange(n - 1, -1, -1, dtype=np.int64)
        rng = np.random.default_rng(int(self.seed))
        if self.kind == "block_shuffle":
            # np.array_split sizes: the first n % b blocks are one frame longer.
            blocks = np.array_split(np.arange(n, dtype=np.int64), min(int(self.blocks), n))
            return np.concatenate([blocks[b] for b in _non_identity_permutation(rng, len(blocks))])
        out = np.arange(n, dtype=np.int64)  # local_shuffle
        w = int(self.window)
        for start in range(0, n, w):
            stop = min(start + w, n)
            out[start:stop] = start + _non_identity_permutation(rng, stop - start)
        return out

    def apply(self, plan: FramePlan) -> FramePlan:
        """The same frames in the perturbed order; timestamps travel with their frames.

        ``original`` returns ``plan`` itself (same frames, order and ``policy``),
        so the unperturbed row shares its cache key with the plain plan. Other
        kinds append ``|`` and :meth:`describe` to the plan's ``policy``.
        """
        if self.kind == "original":
            return plan
        order = self.order(len(plan))
        return FramePlan(tuple(plan.indices[k] for k in order), tuple(plan.timestamps[k] for k in order),
                         f"{plan.policy}|{self.describe()}", plan.redaction)


def _non_identity_permutation(rng: np.random.Generator, k: int) -> np.ndarray:
    """A random permutation of ``range(k)`` that is not the identity when k >= 2.

    Drawn as the argsort of ``k`` uniform doubles (plain ``Generator.random``
    output, the most version-stable part of numpy's generator API), redrawn
    while it is the identity (rejection keeps it uniform over the others).
    """
    if k < 2:
        return np.arange(k, dtype=np.int64)
    ident = np.arange(k)
    while True:
        p = np.argsort(rng.random(k), kind="stable")
        if not np.array_equal(p, ident):
            return p.astype(np.int64)


def perturb(plan: FramePlan, kind: str, *, seed: int = 0, blocks: int = 8, window: int = 16) -> FramePlan:
    """``plan`` with its frame order perturbed (paper RQ3, appendix 8: 256 frames, 8 blocks, window 16).

    * ``original``: unchanged (the plan itself is returned).
    * ``reverse``: exact reverse order.
    * ``block_shuffle``: the chronological sequence is cut into ``blocks``
      contiguous blocks of near-equal size (sizes differ by at most one, longer
      blocks first; ``min(blocks, len(plan))`` blocks), and the blocks are
      permuted, never by the identity when there are two or more blocks.
    * ``local_shuffle``: frames are shuffled within consecutive windows of
      ``window`` frames (the last window may be shorter); every window of two or
      more frames is permuted, never by the identity. A frame never leaves its window.

    Deterministic: the result depends only on (plan, kind, seed, blocks or
    window), through ``numpy.random.default_rng(seed)``; one generator is used
    per call, windows drawn in chronological order. The returned plan's
    ``policy`` is ``"<plan.policy>|<kind>(<parameter>,seed=<seed>)"``, e.g.
    ``fps_cap(fps=1,cap=256)|block_shuffle(blocks=8,seed=0)``.
    """
    return Perturbation(kind, seed=seed, blocks=blocks, window=window).apply(plan)
