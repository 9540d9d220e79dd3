"""Query-aware frame selectors: which of a video's 1 FPS candidates a question is shown. Pure functions.

A selector is a small frozen value, like the policies of :mod:`.sampling`, with one method,
``select(scores, embeddings) -> Selection``: ``scores`` is the per-item relevance of each
candidate frame (the video's :func:`~.sampling.fps_candidates`, in time order) to the question,
``embeddings`` the candidates' frame embeddings (``(N, D)``; only selectors with
``uses_embeddings`` read them). The answer is positions into the candidates, in time order, or
``None`` for "fall back to a uniform plan over the whole video" (WFS-SB's rule for short videos).
:func:`plan_selection` turns it into a :class:`~.sampling.FramePlan` whose ``policy`` records the
selector, its version and any fallback taken.

The three published selectors (MedHorizon Table 2 / Table 7, "128 selected frames", "using each
released method-specific selector"), each written from its public repository's description:

* :class:`Aks` (ncTimTang/AKS, ``frame_select.py``): scores min-max normalised per video; a
  recursive judge-or-split of the timeline: a segment is a leaf when the mean of its top-``budget``
  scores minus the mean of all its scores exceeds ``t1`` (0.8), else it is halved (the first half
  ``len // 2``), down to ``depth`` (5); a leaf at depth d takes its top ``floor(budget / 2**d)``
  frames. The judge's top-n uses the *full* budget at every depth (the released code's quirk, kept:
  a segment shorter than the budget compares the mean of all its frames with itself and never
  becomes a leaf before the depth limit). Fewer candidates than the budget: all of them. Equal
  scores: the earlier frame first. Two cases the released code does not handle: a video whose
  scores are all equal (0/0 there) is normalised to zeros here, and a budget below ``2**depth``
  (whose deepest leaves would take no frame) lowers the depth to ``floor(log2(budget))``; the
  plan's policy records both.
* :class:`Wfs` (MAC-AutoML/WFS-SB, ``wfs/core.py`` + ``configs/wfs_defaults.yaml``): a db4 DWT of
  the relevance curve (``level = clip(floor(log2 N) - 3, 1, pywt max level)``), the coarsest detail
  band alone reconstructed; peaks of its magnitude (``scipy.signal.find_peaks``: height > mean +
  0.5 std, prominence > 0.05 range, distance >= max(5, floor(0.02 N))) cut the video into clips;
  clip importance = 0.4 duration share + 0.2 mean + 0.3 max + 0.1 variance / global variance;
  with more than 3 clips those below max(0.05, mean - 1.2 std) of importance are dropped; the
  budget is split by softmax of importance with largest remainder; within each clip greedy MMR
  (lambda 0.5, relevance mapped to [-1, 1], similarity = frame-embedding cosine, else
  exp(-distance / 10)) seeded with the clip's most relevant frame; the union trimmed (most relevant
  kept) or padded (MMR over the whole video) to the budget. No peak: half the budget uniform, the
  rest the most relevant other frames. Fewer candidates than the budget: a uniform plan of
  ``budget`` frames over the whole video (its ``uniform_sample_from_video``). Relevance is min-max
  normalised per video first (the released scorers give ITM probabilities in [0, 1]).
* :class:`KeyframeNms` (steven-ccq/ViLAMP, ``SeqFrameSelector``, ``f2t_thrd=0.2``,
  ``f2f_thrd=0.85``): frames taken in decreasing relevance while their relevance is at least
  ``threshold`` (raw cosine, not normalised), each taken frame suppressing every frame whose
  embedding is more than ``suppress`` cosine-similar to it; the rest of the budget spread over the
  gaps between keyframes with one spacing D (the smallest whose ``ceil(len / D) - 1`` points per
  gap fit), and any last frames from the latest free positions backwards. No frame above the
  threshold: the spread alone (uniform over the video). ViLAMP's feature merging is inside its model.

:class:`UniformSelect` is the baseline on the same candidates (= ``FpsCap(fps, budget)``).

A user's selector plugs in by entry point (group :data:`SELECTOR_GROUP`): a factory called with
``budget=`` and the ``--selector-arg`` values, returning an object with ``name``, ``version``,
``uses_embeddings``, ``describe()`` and ``select()``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

import numpy as np

from .errors import MedHorizonError
from .sampling import FramePlan, VideoMeta, fps_candidates, uniform_subsample

__all__ = ["SELECTOR_GROUP", "BUILTIN", "Selection", "FrameSelector", "UniformSelect", "Aks", "Wfs",
           "KeyframeNms", "plan_selection", "load_selector", "selector_names"]

SELECTOR_GROUP = "medhorizon_tasks.frame_selectors"
VERSION = "1"


@dataclass(frozen=True)
class Selection:
    """Positions into the candidates (time order), or ``None``: a uniform plan over the whole video.
    ``note``: the fallback or adjustment taken ("" = none)."""

    positions: np.ndarray | None
    note: str = ""


@runtime_checkable
class FrameSelector(Protocol):
    name: str
    version: str
    budget: int
    uses_embeddings: bool

    def describe(self) -> str: ...

    def select(self, scores: np.ndarray, embeddings: np.ndarray | None = None) -> Selection: ...


def _check_budget(budget) -> None:
    if isinstance(budget, bool) or not isinstance(budget, (int, np.integer)) or budget <= 0:
        raise ValueError(f"a selector budget must be a positive integer, got {budget!r}")


def _top(scores: np.ndarray, n: int) -> np.ndarray:
    """Positions of the ``n`` highest scores, highest first, equal scores earlier first."""
    return np.argsort(-scores, kind="stable")[:max(int(n), 0)]


def _minmax(scores: np.ndarray) -> tuple[np.ndarray, bool]:
    lo, hi = float(scores.min()), float(scores.max())
    if hi - lo <= 0:
        return np.zeros_like(scores), True
    return (scores - lo) / (hi - lo), False


def _unit(x: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norm > 0, norm, 1.0)


def _pywt():
    try:
        import pywt
    except ImportError:
        raise MedHorizonError("WFS-SB's selector needs PyWavelets (its db4 wavelet transform): "
                              'pip install "medhorizon-tasks[selectors]"') from None
    return pywt


def _as_scores(scores) -> np.ndarray:
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    if not np.isfinite(s).all():
        raise ValueError("relevance scores must be finite")
    return s


# ----------------------------------------------------------------- uniform

@dataclass(frozen=True)
class UniformSelect:
    """The baseline: ``budget`` of the candidates uniformly, first and last kept (MedHorizon's cap rule)."""

    budget: int
    name: str = "uniform"
    version: str = VERSION
    uses_embeddings: bool = False

    def __post_init__(self):
        _check_budget(self.budget)

    def describe(self) -> str:
        return f"uniform_select(budget={self.budget})"

    def select(self, scores, embeddings=None) -> Selection:
        n = len(_as_scores(scores))
        return Selection(uniform_subsample(np.arange(n, dtype=np.int64), self.budget))


# ----------------------------------------------------------------- AKS

@dataclass(frozen=True)
class Aks:
    """Adaptive Keyframe Sampling (see the module doc): judge-or-split, leaves take top frames."""

    budget: int
    t1: float = 0.8
    depth: int = 5
    name: str = "aks"
    version: str = VERSION
    uses_embeddings: bool = False

    def __post_init__(self):
        _check_budget(self.budget)
        if isinstance(self.depth, bool) or not isinstance(self.depth, int) or self.depth < 0:
            raise ValueError(f"AKS depth must be a whole number >= 0, got {self.depth!r}")

    @property
    def effective_depth(self) -> int:
        return min(self.depth, int(math.floor(math.log2(self.budget))))

    def describe(self) -> str:
        return f"aks(budget={self.budget},t1={self.t1:g},depth={self.depth})"

    def leaves(self, normalised: np.ndarray) -> list[tuple[int, int, int]]:
        """``(start, stop, depth)`` of every leaf segment, in time order."""
        out: list[tuple[int, int, int]] = []
        max_depth = self.effective_depth

        def visit(start: int, stop: int, d: int) -> None:
            seg = normalised[start:stop]
            top_mean = float(seg[_top(seg, self.budget)].mean())  # full budget at every depth (the quirk)
            if top_mean - float(seg.mean()) > self.t1 or d >= max_depth:
                out.append((start, stop, d))
                return
            mid = start + (stop - start) // 2
            visit(start, mid, d + 1)
            visit(mid, stop, d + 1)

        visit(0, len(normalised), 0)
        return out

    def select(self, scores, embeddings=None) -> Selection:
        s = _as_scores(scores)
        if len(s) < self.budget:
            return Selection(np.arange(len(s), dtype=np.int64), "fewer_candidates_than_budget")
        norm, flat = _minmax(s)
        picked = [start + _top(norm[start:stop], self.budget // 2 ** d) for start, stop, d in self.leaves(norm)]
        notes = [n for n, on in (("constant_relevance", flat),
                                 (f"depth={self.effective_depth}", self.effective_depth < self.depth)) if on]
        return Selection(np.sort(np.concatenate(picked)).astype(np.int64), ",".join(notes))


# ----------------------------------------------------------------- WFS-SB

@dataclass(frozen=True)
class Wfs:
    """Wavelet frame selection with segment budgets (see the module doc; defaults: the benchmark config)."""

    budget: int
    wavelet: str = "db4"
    drift: int = 3
    height_factor: float = 0.5
    prominence_factor: float = 0.05
    distance_ratio: float = 0.02
    distance_min: int = 5
    w_duration: float = 0.4
    w_mean: float = 0.2
    w_max: float = 0.3
    w_var: float = 0.1
    strictness: float = 1.2
    min_importance: float = 0.05
    temperature: float = 1.0
    lam: float = 0.5
    name: str = "wfs_sb"
    version: str = VERSION
    uses_embeddings: bool = True

    def __post_init__(self):
        _check_budget(self.budget)
        _pywt()  # a clear error before any video is scored

    def describe(self) -> str:
        return f"wfs_sb(budget={self.budget},wavelet={self.wavelet},lambda={self.lam:g})"

    def level(self, n: int) -> int:
        pywt = _pywt()
        top = pywt.dwt_max_level(n, pywt.Wavelet(self.wavelet).dec_len)
        if n <= 1 or top <= 1:
            return 1
        return int(np.clip(int(np.floor(np.log2(n) - self.drift)), 1, top))

    def detail(self, rel: np.ndarray) -> np.ndarray:
        """The coarsest detail band of the DWT, reconstructed alone, on the candidates' timeline."""
        pywt = _pywt()
        coeffs = pywt.wavedec(rel, self.wavelet, level=self.level(len(rel)), mode="symmetric")
        kept = [c if k == 1 else np.zeros_like(c) for k, c in enumerate(coeffs)]
        return pywt.waverec(kept, self.wavelet, mode="symmetric")[:len(rel)]

    def boundaries(self, rel: np.ndarray) -> np.ndarray:
        from scipy.signal import find_peaks

        mag = np.abs(self.detail(rel))
        distance = max(self.distance_min, int(len(rel) * self.distance_ratio), 1)
        peaks, _ = find_peaks(mag, height=mag.mean() + self.height_factor * mag.std(),
                              prominence=self.prominence_factor * (mag.max() - mag.min()), distance=distance)
        return peaks

    def importance(self, rel: np.ndarray, start: int, stop: int) -> float:
        seg = rel[start:stop]
        return (self.w_duration * (stop - start) / len(rel) + self.w_mean * float(seg.mean())
                + self.w_max * float(seg.max()) + self.w_var * float(seg.var()) / (float(rel.var()) + 1e-8))

    def allocate(self, importance: np.ndarray) -> np.ndarray:
        """Frames per clip: softmax shares of the budget, floors, then the largest remainders."""
        x = importance / max(self.temperature, 1e-8)
        share = np.exp(x - x.max())
        raw = share / share.sum() * self.budget
        alloc = np.floor(raw).astype(np.int64)
        order = np.argsort(-(raw - alloc), kind="stable")
        alloc[order[: self.budget - int(alloc.sum())]] += 1
        return alloc

    def _mmr(self, rel: np.ndarray, sim, pool: np.ndarray, chosen: list[int], n: int) -> list[int]:
        """Greedy MMR: add from ``pool`` the frame maximising lam*rel - (1-lam)*(max similarity to the chosen);
        equal values: the earlier frame. The max similarity is kept up to date one chosen frame at a time."""
        pool = np.asarray([p for p in pool if p not in set(chosen)], dtype=np.int64)
        out = list(chosen)
        penalty = np.full(len(pool), -np.inf)
        for c in out:
            penalty = np.maximum(penalty, sim(pool, np.asarray([c]))[:, 0])
        free = np.ones(len(pool), dtype=bool)
        while len(out) < n and free.any():
            pen = np.where(np.isfinite(penalty), penalty, 0.0)
            value = np.where(free, self.lam * rel[pool] - (1.0 - self.lam) * pen, -np.inf)
            k = int(np.argmax(value))
            free[k] = False
            out.append(int(pool[k]))
            penalty = np.maximum(penalty, sim(pool, pool[[k]])[:, 0])
        return out

    def select(self, scores, embeddings=None) -> Selection:
        s = _as_scores(scores)
        n = len(s)
        if n < self.budget:
            return Selection(None, "uniform_fallback")
        rel, _ = _minmax(s)
        if embeddings is not None:
            unit = _unit(np.asarray(embeddings, dtype=np.float64))

            def sim(a, b):
                return unit[a] @ unit[b].T
        else:
            def sim(a, b):
                return np.exp(-np.abs(a[:, None] - b[None, :]) / 10.0)
        peaks = self.boundaries(rel)
        if len(peaks) == 0:
            uni = uniform_subsample(np.arange(n, dtype=np.int64), self.budget // 2)
            rest = [int(p) for p in _top(rel, n) if p not in set(uni.tolist())][: self.budget - len(uni)]
            return Selection(np.sort(np.concatenate([uni, np.asarray(rest, dtype=np.int64)])), "no_boundaries")
        edges = [0, *peaks.tolist(), n]
        clips = [(a, b) for a, b in zip(edges, edges[1:]) if b > a]
        imp = np.array([self.importance(rel, a, b) for a, b in clips])
        if len(clips) > 3:
            keep = imp >= max(self.min_importance, imp.mean() - self.strictness * imp.std())
            if keep.any():
                clips, imp = [c for c, k in zip(clips, keep) if k], imp[keep]
        signed = 2.0 * rel - 1.0
        chosen: list[int] = []
        for (a, b), k in zip(clips, self.allocate(imp)):
            if k > 0:
                seed = a + int(np.argmax(rel[a:b]))
                chosen += self._mmr(signed, sim, np.arange(a, b), [seed], int(k))
        chosen = sorted(set(chosen))
        if len(chosen) > self.budget:
            chosen = sorted(int(p) for p in np.asarray(chosen)[_top(signed[chosen], self.budget)])
        elif len(chosen) < self.budget:
            chosen = sorted(self._mmr(signed, sim, np.arange(n), chosen, self.budget))
        return Selection(np.asarray(chosen, dtype=np.int64))


# ----------------------------------------------------------------- ViLAMP

@dataclass(frozen=True)
class KeyframeNms:
    """ViLAMP's differential keyframe selection (see the module doc)."""

    budget: int
    threshold: float = 0.2
    suppress: float = 0.85
    name: str = "vilamp"
    version: str = VERSION
    uses_embeddings: bool = True

    def __post_init__(self):
        _check_budget(self.budget)

    def describe(self) -> str:
        return f"keyframe_nms(budget={self.budget},threshold={self.threshold:g},suppress={self.suppress:g})"

    def keyframes(self, s: np.ndarray, embeddings: np.ndarray | None) -> list[int]:
        unit = None if embeddings is None else _unit(np.asarray(embeddings, dtype=np.float64))
        seen = np.zeros(len(s), dtype=bool)
        keys: list[int] = []
        for p in _top(s, len(s)):
            if len(keys) >= self.budget or s[p] < self.threshold:
                break
            if seen[p]:
                continue
            keys.append(int(p))
            seen[p] = True
            if unit is not None:
                seen |= unit @ unit[p] > self.suppress
        return keys

    @staticmethod
    def spread(n: int, keys: list[int], budget: int) -> list[int]:
        """``keys`` plus the rest of ``budget`` spread over the gaps between them (see the module doc)."""
        taken = np.zeros(n, dtype=bool)
        taken[keys] = True
        free = budget - len(keys)
        gaps, start = [], 0
        for k in sorted(keys) + [n]:
            if k > start:
                gaps.append((start, k - 1))
            start = k + 1

        def needed(d: int) -> int:
            return sum(math.ceil((b - a + 1) / d) - 1 for a, b in gaps)

        lo, hi = 1, max(n, 1)
        while lo < hi:  # the smallest spacing whose points fit in what is left
            mid = (lo + hi) // 2
            lo, hi = (lo, mid) if needed(mid) <= free else (mid + 1, hi)
        for a, b in gaps:
            length = b - a + 1
            k = math.ceil(length / lo) - 1
            step = math.ceil(length / (k + 1)) if k > 0 else 0
            for i in range(1, k + 1):
                taken[min(a + step * i, b)] = True
        left = budget - int(taken.sum())
        for p in range(n - 1, -1, -1):  # the last free positions, latest first
            if left <= 0:
                break
            if not taken[p]:
                taken[p] = True
                left -= 1
        return np.flatnonzero(taken).tolist()

    def select(self, scores, embeddings=None) -> Selection:
        s = _as_scores(scores)
        if len(s) <= self.budget:
            return Selection(np.arange(len(s), dtype=np.int64), "fewer_candidates_than_budget")
        keys = self.keyframes(s, embeddings)
        return Selection(np.asarray(self.spread(len(s), keys, self.budget), dtype=np.int64),
                         "" if keys else "no_keyframe")


# ----------------------------------------------------------------- plans and plug-ins

BUILTIN = {"uniform": UniformSelect, "aks": Aks, "wfs_sb": Wfs, "vilamp": KeyframeNms}


def plan_selection(meta: VideoMeta, selector, scores, embeddings=None, fps: float = 1.0) -> FramePlan:
    """The frames ``selector`` picks from the video's ``fps`` candidates, given one relevance per candidate."""
    cands = fps_candidates(meta, fps)
    s = _as_scores(scores)
    if len(s) != len(cands):
        raise ValueError(f"{len(s)} relevance scores for {len(cands)} candidate frames")
    if embeddings is not None and len(embeddings) != len(cands):
        raise ValueError(f"{len(embeddings)} frame embeddings for {len(cands)} candidate frames")
    result = selector.select(s, embeddings if getattr(selector, "uses_embeddings", False) else None)
    label = f"{selector.describe()}@{getattr(selector, 'version', '?')}"
    if result.positions is None:
        idx = uniform_subsample(np.arange(meta.num_frames, dtype=np.int64), selector.budget)
    else:
        pos = np.asarray(result.positions, dtype=np.int64)
        if len(pos) and (pos.min() < 0 or pos.max() >= len(cands) or np.any(np.diff(pos) <= 0)):
            raise ValueError(f"selector {selector.describe()} returned positions that are not increasing "
                             f"positions among {len(cands)} candidates")
        idx = cands[pos]
    if result.note:
        label += f"->{result.note}"
    times = meta.times_of(idx)
    return FramePlan(tuple(int(i) for i in idx), tuple(round(float(t), 6) for t in times), label)


def selector_names() -> list[str]:
    return sorted({*BUILTIN, *(ep.name for ep in entry_points(group=SELECTOR_GROUP))})


def load_selector(name: str, budget: int, args: dict[str, Any] | None = None):
    """The selector ``name`` (built in, or registered under :data:`SELECTOR_GROUP`) for ``budget`` frames."""
    args = dict(args or {})
    if name in BUILTIN:
        factory = BUILTIN[name]
    else:
        found = [ep for ep in entry_points(group=SELECTOR_GROUP) if ep.name == name]
        if not found:
            raise MedHorizonError(f"--selector {name!r}: not one of {', '.join(selector_names())} (plug-ins "
                                  f"register under the entry-point group {SELECTOR_GROUP!r})")
        try:
            factory = found[0].load()
        except Exception as exc:  # noqa: BLE001 - a plug-in's import error, named
            raise MedHorizonError(f"--selector {name}: entry point {found[0].value} failed to load "
                                  f"({type(exc).__name__}: {exc})") from None
    try:
        sel = factory(budget=int(budget), **args)
    except (TypeError, ValueError) as exc:
        raise MedHorizonError(f"--selector {name} with budget {budget} and {args or 'no --selector-arg'}: {exc}") \
            from None
    missing = [a for a in ("name", "version", "describe", "select") if not hasattr(sel, a)]
    if missing:
        raise MedHorizonError(f"--selector {name}: the object it makes has no {', '.join(missing)} "
                              "(see FrameSelector in medhorizon_tasks.core.selectors)")
    return sel
