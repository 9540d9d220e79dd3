"""Evidence recall of a frame plan, without a model: do the shown frames hit the item's evidence windows?

For every localizable item (:func:`~.sparsity.is_localizable`: not global support, at least one
evidence window), given the frames a plan shows it as timestamps in seconds:

* the item is **hit** when at least one shown frame lies inside one of its evidence windows;
* each evidence window is hit when at least one shown frame lies inside it.

A window ``(a, b)`` (inclusive frame numbers of the data, at the item's ``fps``) covers the times
``[a / fps, b / fps]`` (both ends included, 1 microsecond of slack), the same time mapping the
oracle plan uses (:func:`~.protocol.evidence_seconds`). **Item recall** = hit items / localizable
items; **window recall** = hit windows / windows of localizable items; both overall, by family and by
task (taxonomy order). Global-support items and items without windows are counted, not scored.

Any plan policy can be measured from the release metadata alone (:func:`uniform_timestamps`: the
package's uniform and 1 FPS + cap plans on the data's own frame grid), and any selection from its
recorded timestamps. Budget curves: :func:`recall_curve`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

import numpy as np

from ...core.sampling import FpsCap, Uniform, VideoMeta, plan_frames
from ...core.text import pct
from .release import Item
from .sparsity import is_localizable
from .taxonomy import TASK_CODES

__all__ = ["item_hits", "evidence_recall", "format_recall", "uniform_timestamps", "recall_curve", "format_curve"]

_EPS = 1e-6


def item_hits(item: Item, timestamps: Sequence[float]) -> list[bool]:
    """Per evidence window of ``item``: does any of ``timestamps`` (seconds) fall inside it?"""
    t = np.sort(np.asarray(list(timestamps), dtype=np.float64))
    out = []
    for a, b in item.evidence_windows:
        lo, hi = a / item.fps - _EPS, b / item.fps + _EPS
        k = np.searchsorted(t, lo, side="left")
        out.append(bool(k < len(t) and t[k] <= hi))
    return out


def _group(hits: list[tuple[bool, int, int]]) -> dict:
    n = len(hits)
    windows = sum(w for _, _, w in hits)
    return {"n": n, "item_recall": sum(h for h, _, _ in hits) / n if n else None,
            "windows": windows, "window_recall": sum(w for _, w, _ in hits) / windows if windows else None}


def evidence_recall(items: Sequence[Item], shown: Mapping[str, Sequence[float]]) -> dict:
    """Item and window recall of the frames ``shown[uid]`` (timestamps in seconds) over ``items``.

    Keys: ``n_items``, ``n_scored`` (localizable items), ``n_excluded`` (global support or no window),
    ``n_missing`` (localizable items without an entry in ``shown``, scored as not hit),
    ``item_recall``, ``window_recall`` (fractions, None when nothing is scored), ``windows``,
    ``by_family`` and ``by_task`` (each ``{"n", "item_recall", "windows", "window_recall"}``).
    """
    rows: list[tuple[bool, int, int]] = []
    fam: dict[str, list] = defaultdict(list)
    task: dict[str, list] = defaultdict(list)
    excluded = missing = 0
    for it in items:
        if not is_localizable(it):
            excluded += 1
            continue
        ts = shown.get(it.uid)
        if ts is None:
            missing += 1
        hits = item_hits(it, ts or ())
        row = (any(hits), sum(hits), len(hits))
        rows.append(row)
        fam[it.family].append(row)
        task[it.task].append(row)
    overall = _group(rows)
    order = [c for c in TASK_CODES if c in task] + sorted(c for c in task if c not in TASK_CODES)
    return {"n_items": len(items), "n_scored": overall["n"], "n_excluded": excluded, "n_missing": missing,
            "item_recall": overall["item_recall"], "windows": overall["windows"],
            "window_recall": overall["window_recall"],
            "by_family": {f: _group(fam[f]) for f in sorted(fam)}, "by_task": {c: _group(task[c]) for c in order}}


def uniform_timestamps(items: Sequence[Item], policy) -> dict[str, tuple[float, ...]]:
    """The timestamps a video-independent plan policy (``Uniform``, ``FpsCap``) shows each item, planned on
    the data's own frame grid (``num_frames`` at ``fps``): no video is read."""
    if not isinstance(policy, (Uniform, FpsCap)):
        raise TypeError(f"{policy!r} needs the video itself; measure its plans' timestamps instead")
    cache: dict[tuple, tuple[float, ...]] = {}
    out = {}
    for it in items:
        key = (it.num_frames, it.fps)
        if key not in cache:
            cache[key] = plan_frames(VideoMeta(it.num_frames, it.fps), policy).timestamps
        out[it.uid] = cache[key]
    return out


def recall_curve(items: Sequence[Item], shown_at: Mapping[int, Mapping[str, Sequence[float]]]) -> list[dict]:
    """``[{"budget", "item_recall", "window_recall", "n_scored", "n_missing"}]`` for each budget of ``shown_at``
    (``n_missing``: localizable items shown nothing, scored as not hit)."""
    out = []
    for budget in sorted(shown_at):
        rep = evidence_recall(items, shown_at[budget])
        out.append({"budget": budget, "item_recall": rep["item_recall"], "window_recall": rep["window_recall"],
                    "n_scored": rep["n_scored"], "n_missing": rep["n_missing"]})
    return out


def format_recall(report: dict, label: str = "") -> str:
    """The recall line the checks read (``evidence recall: item ...``), then the family and task table."""
    head = f"{label}: " if label else ""
    lines = [f"{head}evidence recall: item {pct(report['item_recall'], 1, unit='%')} "
             f"({report['n_scored']} localizable items), window {pct(report['window_recall'], 1, unit='%')} "
             f"({report['windows']} windows); {report['n_excluded']} items without localizable evidence not scored"]
    for title, groups in (("family", report["by_family"]), ("task", report["by_task"])):
        for name, g in groups.items():
            lines.append(f"  {title} {name}: item {pct(g['item_recall'], 1, unit='%')} of {g['n']}, "
                         f"window {pct(g['window_recall'], 1, unit='%')} of {g['windows']}")
    return "\n".join(lines)


def format_curve(curves: Mapping[str, list[dict]]) -> str:
    """A table: one row per budget, one item-recall column per plan (``{label: recall_curve(...)}``)."""
    labels = list(curves)
    budgets = sorted({r["budget"] for c in curves.values() for r in c})
    by = {lab: {r["budget"]: r for r in c} for lab, c in curves.items()}
    lines = ["| frames | " + " | ".join(f"{lab} item recall" for lab in labels) + " |",
             "| ---: | " + " | ".join("---:" for _ in labels) + " |"]
    for b in budgets:
        cells = [pct(by[lab][b]["item_recall"], 1, unit="%") if b in by[lab] else "—" for lab in labels]
        lines.append(f"| {b} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
