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
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "VideoMeta", "FramePlan", "FpsCap", "Uniform", "Oracle", "plan_frames",
    "fps_candidates", "uniform_subsample",
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

    def __len__(self) -> int:
        return len(self.indices)

    @property
    def key(self) -> str:
        """Stable identity of the frames this plan selects (not of the video)."""
        h = hashlib.sha256(",".join(map(str, self.indices)).encode())
        return h.hexdigest()[:16]


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

    A window narrower than one grid step contributes its middle frame, so
    every window is represented. ``cap`` (optional) uniformly thins the union.
    An item without evidence windows (global support: the whole procedure is
    the evidence) falls back to ``FpsCap(fps, fallback_cap)``; the plan's
    ``policy`` string records the fallback.
    """

    windows: tuple[tuple[int, int], ...]
    fps: float = 1.0
    cap: int | None = None
    fallback_cap: int = 64

    def describe(self) -> str:
        return f"oracle(fps={self.fps:g},cap={self.cap})"


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


def plan_frames(meta: VideoMeta, policy) -> FramePlan:
    """The frames ``policy`` admits from a video described by ``meta``."""
    label = policy.describe()
    if isinstance(policy, FpsCap):
        idx = uniform_subsample(fps_candidates(meta, policy.fps), policy.cap)
    elif isinstance(policy, Uniform):
        idx = uniform_subsample(np.arange(meta.num_frames, dtype=np.int64), policy.n)
    elif isinstance(policy, Oracle):
        idx = _oracle_indices(meta, policy)
        if idx is None:
            fallback = FpsCap(policy.fps, policy.fallback_cap)
            idx = uniform_subsample(fps_candidates(meta, fallback.fps), fallback.cap)
            label = f"{label}->no_windows->{fallback.describe()}"
    else:
        raise TypeError(f"unknown frame policy {policy!r}")
    idx = np.asarray(idx, dtype=np.int64)
    times = meta.times_of(idx)
    return FramePlan(tuple(int(i) for i in idx), tuple(round(float(t), 6) for t in times), label)


def _oracle_indices(meta: VideoMeta, policy: Oracle) -> np.ndarray | None:
    if not policy.windows:
        return None
    grid = fps_candidates(meta, policy.fps)
    picked: list[np.ndarray] = []
    for start, end in policy.windows:
        start, end = max(0, int(start)), min(meta.num_frames - 1, int(end))
        if end < start:
            continue
        inside = grid[(grid >= start) & (grid <= end)]
        picked.append(inside if len(inside) else np.array([(start + end) // 2], dtype=np.int64))
    if not picked:
        return None
    idx = np.unique(np.concatenate(picked))
    if policy.cap is not None:
        idx = uniform_subsample(idx, policy.cap)
    return idx
