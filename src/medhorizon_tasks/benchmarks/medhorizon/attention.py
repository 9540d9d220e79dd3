"""Attention drift under redundancy (MedHorizon Fig. 9, section 4.4 "RQ3"), framework-free.

The paper, following ViLAMP: "For each video-question pair, we sample 128
frames, aggregate query-to-visual attention into frame scores, and plot
cumulative attention after ranking frames by attention. For patch-level
analysis, we use the top 32 attended frames as keyframes and compare patches in
the remaining 96 frames with their corresponding patches in the nearest
preceding keyframe." Appendix 8 adds "random-pair visual similarity".

A model hook (``adapters/lmms_eval/bridges/attention.py``) measures, for one
item, the attention of the query rows to every visual token; this module turns
that into the figure's numbers. The unit is the model's *temporal unit*: for
Qwen2.5-VL / Qwen3-VL a temporal patch of two frames (128 frames are 64 units),
and the paper's "temporal units" in its text. Input contract (numpy arrays):

* ``scores``: (T,) attention on each temporal unit (>= 0, any total; shares are
  taken of the total visual attention);
* ``patch_scores``: (T, P) attention on each visual token (P tokens per unit,
  the same grid position at the same index in every unit);
* ``features``: (T, P, D) the visual tokens as the language model receives them.

Per item (:func:`item_metrics`): units needed for 50 / 80 / 90% of the visual
attention (as a share of all units; 1/T when one unit holds it all, and about
p for uniform attention); attention on the first and last tenth of the video's
units; evidence mass (attention on the units inside the item's evidence
windows, which the release has and the paper does not use); the mean pairwise
cosine of the units' mean features; and patch redundancy (each patch of a
non-keyframe unit against the same patch of the nearest preceding keyframe
unit, the keyframes being the top quarter of units by attention: the paper's
32 of 128; units before the first keyframe have no preceding keyframe and are
not compared). :func:`summarise` gives means with 95% bootstrap intervals per
model, task and family.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from importlib.resources import files

import numpy as np

from ...core.stats import mean_ci

__all__ = ["SHARES", "FRAMES", "KEYFRAMES", "CURVE_POINTS", "QUERY_START", "units_for_share", "ranked_curve", "edge_shares",
           "evidence_mass", "mean_pairwise_cosine", "keyframe_units", "patch_redundancy", "item_metrics",
           "summarise", "METRICS", "published_fig9"]

FRAMES = 128          # section 4.4: "For each video-question pair, we sample 128 frames"
KEYFRAMES = 32        # section 4.4: "the top 32 attended frames as keyframes" (a quarter of the 128)
SHARES = (0.5, 0.8, 0.9)  # the text quotes the 90% point; 50 and 80 read the same curve lower down
TENTH = 0.1
TOP_PATCHES = 0.1     # "high-attention patches": the top tenth of the compared patches by attention
CURVE_POINTS = 101    # the cumulative curve sampled at 0, 1, ..., 100% of the units
QUERY_START = "Question:"  # where :func:`.protocol.build_prompt`'s question opens: the query rows start there

METRICS = ("units_for_50", "units_for_80", "units_for_90", "first_tenth", "last_tenth", "evidence_mass",
           "frame_similarity", "patch_similarity", "patch_similarity_top_attention")


def _shares(scores) -> np.ndarray:
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    if s.size == 0:
        raise ValueError("no temporal units")
    if np.any(s < 0) or not np.all(np.isfinite(s)):
        raise ValueError("attention scores must be finite and >= 0")
    total = s.sum()
    if total <= 0:
        raise ValueError("no attention on the visual tokens")
    return s / total


def units_for_share(scores, share: float) -> float:
    """The share of temporal units (ranked by attention, most attended first) whose attention reaches
    ``share`` of the visual attention: k / T for the smallest such k."""
    s = np.sort(_shares(scores))[::-1]
    k = int(np.searchsorted(np.cumsum(s), share - 1e-9) + 1)
    return min(k, s.size) / s.size


def ranked_curve(scores, points: int = CURVE_POINTS) -> list[float]:
    """The cumulative attention after ranking units by attention, read at ``points`` evenly spaced shares of
    the units from 0 to 1 (linear between units): Fig. 9's frame-level curve, comparable across items."""
    s = np.sort(_shares(scores))[::-1]
    x = np.arange(s.size + 1) / s.size
    y = np.concatenate([[0.0], np.cumsum(s)])
    return [float(v) for v in np.interp(np.linspace(0, 1, points), x, y)]


def edge_shares(scores, part: float = TENTH) -> tuple[float, float]:
    """Attention on the first and on the last ``part`` of the units in presentation order; a unit that
    straddles the boundary counts by the fraction of it inside (uniform attention gives ``part`` each)."""
    s = _shares(scores)
    t = s.size
    starts = np.arange(t) / t
    inside_first = np.clip(part - starts, 0, 1 / t) * t
    inside_last = np.clip(starts + 1 / t - (1 - part), 0, 1 / t) * t
    return float((s * inside_first).sum()), float((s * inside_last).sum())


def evidence_mass(scores, unit_times: Sequence[Sequence[float]],
                  windows: Sequence[tuple[float, float]]) -> float | None:
    """Attention on the item's evidence: each unit counts by the fraction of its frames whose time lies in
    a window (seconds, inclusive). None when the item has no windows."""
    if not windows:
        return None
    s = _shares(scores)
    if len(unit_times) != s.size:
        raise ValueError(f"{s.size} units but {len(unit_times)} unit times")
    inside = np.array([np.mean([any(a - 1e-6 <= t <= b + 1e-6 for a, b in windows) for t in times])
                       for times in unit_times])
    return float((s * inside).sum())


def _unit(x: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(norm > 0, norm, 1.0)


def mean_pairwise_cosine(features) -> float | None:
    """Mean cosine similarity over all pairs of units of their mean visual features (the expectation of the
    paper's "random-pair visual similarity"). ``features``: (T, D) or (T, P, D). None below two units."""
    f = np.asarray(features, dtype=np.float64)
    if f.ndim == 3:
        f = f.mean(axis=1)
    t = f.shape[0]
    if t < 2:
        return None
    g = _unit(f) @ _unit(f).T
    return float(g[np.triu_indices(t, k=1)].mean())


def keyframe_units(scores, count: int) -> list[int]:
    """The ``count`` most attended units (ties: the earlier unit), in presentation order."""
    s = _shares(scores)
    order = sorted(range(s.size), key=lambda i: (-s[i], i))
    return sorted(order[:max(0, min(count, s.size))])


def keyframe_count(n_units: int, frames_per_unit: int, n_frames: int | None = None) -> int:
    """The paper's 32 keyframes of 128 frames, in units: a quarter of the frames, at least one unit."""
    frames = n_frames if n_frames is not None else n_units * frames_per_unit
    return max(1, min(n_units, math.ceil(frames * KEYFRAMES / FRAMES / frames_per_unit)))


def patch_redundancy(features, keyframes: Sequence[int], patch_scores=None) -> dict:
    """Cosine of every patch of a non-keyframe unit with the same patch of the nearest preceding keyframe
    unit: the mean over all compared patches, and over the top tenth of them by attention (when
    ``patch_scores`` is given); ``compared_units`` counts the units compared."""
    f = np.asarray(features)
    keys = sorted(set(int(k) for k in keyframes))
    sims, weights = [], []
    compared = 0
    for u in range(f.shape[0]):
        before = [k for k in keys if k < u]
        if u in keys or not before:
            continue
        a = _unit(f[u].astype(np.float64))
        b = _unit(f[before[-1]].astype(np.float64))
        sims.append((a * b).sum(axis=-1))
        if patch_scores is not None:
            weights.append(np.asarray(patch_scores[u], dtype=np.float64))
        compared += 1
    if not sims:
        return {"patch_similarity": None, "patch_similarity_top_attention": None, "compared_units": 0}
    sim = np.concatenate(sims)
    top = None
    if weights:
        w = np.concatenate(weights)
        n = max(1, math.ceil(TOP_PATCHES * w.size))
        top = float(sim[np.argsort(-w, kind="stable")[:n]].mean())
    return {"patch_similarity": float(sim.mean()), "patch_similarity_top_attention": top,
            "compared_units": compared}


def item_metrics(scores, *, unit_times: Sequence[Sequence[float]], windows: Sequence[tuple[float, float]] = (),
                 unit_features=None, patch_features=None, patch_scores=None, frames_per_unit: int = 1,
                 n_frames: int | None = None) -> dict:
    """Every per-item number of the diagnostic (module docstring) from one item's unit scores; features
    (``unit_features`` (T, D), ``patch_features`` (T, P, D)) and ``patch_scores`` (T, P) are optional."""
    s = _shares(scores)
    first, last = edge_shares(s)
    out = {f"units_for_{round(p * 100)}": units_for_share(s, p) for p in SHARES}
    out.update(first_tenth=first, last_tenth=last, evidence_mass=evidence_mass(s, unit_times, windows),
               unit_scores=[float(v) for v in s], curve=ranked_curve(s), units=int(s.size),
               frames_per_unit=int(frames_per_unit))
    out["frame_similarity"] = mean_pairwise_cosine(unit_features) if unit_features is not None else None
    if patch_features is not None:
        keys = keyframe_units(s, keyframe_count(s.size, frames_per_unit, n_frames))
        out["keyframes"] = keys
        out.update(patch_redundancy(patch_features, keys, patch_scores))
    return out


def summarise(records: Sequence[Mapping], *, seed: int = 0) -> list[dict]:
    """Means with 95% bootstrap intervals (:func:`~medhorizon_tasks.core.stats.mean_ci`) of every metric,
    per model overall, per family and per task: rows ``{model, level, group, n, <metric>, <metric>_ci95,
    curve}`` (``curve``: the mean ranked cumulative curve)."""
    groups: dict[tuple[str, str, str], list[Mapping]] = defaultdict(list)
    for r in records:
        for level, group in (("overall", "overall"), ("family", r.get("family", "")), ("task", r.get("task", ""))):
            groups[(r.get("model", ""), level, group)].append(r)
    order = {"overall": 0, "family": 1, "task": 2}
    rows = []
    for (model, level, group), rs in sorted(groups.items(), key=lambda kv: (kv[0][0], order[kv[0][1]], kv[0][2])):
        row: dict = {"model": model, "level": level, "group": group, "n": len(rs)}
        for m in METRICS:
            vals = [r[m] for r in rs if r.get(m) is not None]
            row[m] = float(np.mean(vals)) if vals else None
            ci = mean_ci(vals, seed=seed) if vals else None
            row[f"{m}_ci95"] = list(ci) if ci else None
        curves = [r["curve"] for r in rs if r.get("curve")]
        row["curve"] = [float(v) for v in np.mean(curves, axis=0)] if curves else None
        rows.append(row)
    return rows


def published_fig9() -> dict:
    """The values of Fig. 9 that the paper's text quotes (``published_attention.json``)."""
    return json.loads((files(__package__) / "published_attention.json").read_text(encoding="utf-8"))
