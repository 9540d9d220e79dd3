"""What a ``select`` run writes into ``--out``:

* ``selection-<selector>-<budget>.jsonl``: one row per item (the items' order): ``uid``, ``video_key``,
  ``selector``, ``selector_version``, ``selector_settings`` (every parameter, e.g. ViLAMP's
  ``max_candidates``), ``budget``, ``scorer``, ``scorer_output`` (what its relevance is: ``probability``,
  ``cosine``...), ``relevance`` (``raw``, or ``minmax``: normalised per video, see
  :func:`~medhorizon_tasks.core.selectors.relevance_for`), ``fps`` (of the candidates), ``policy`` (the
  plan's, with any fallback taken), ``indices`` (frame indices of the video file) and ``timestamps``
  (seconds); an item whose video could not be read has ``error`` and no frames. The uniform plan of every
  budget (the ``medhorizon_frames<N>`` tasks' plan) is written beside (``selection-uniform-<budget>.jsonl``).
  The task variants (``medhorizon_aks128`` ...) read these files and check their selector and budget.
* ``select.json``: the run's identity, the files, per selection its evidence recall (with ``--recall``:
  overall, by family, by task; :mod:`medhorizon_tasks.benchmarks.medhorizon.evidence_recall`) and the
  needle probe's accuracy (synthetic benchmark), the video errors;
* ``recall.png`` (``--recall`` with two or more budgets): item recall against the budget, each selector
  beside uniform.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from ..benchmarks.medhorizon.evidence_recall import evidence_recall, format_recall
from ..core.safeio import atomic_write_json, atomic_write_jsonl
from ..core.selectors import relevance_mode, selector_settings
from ..core.text import pct

__all__ = ["FILES", "selection_key", "write_outputs", "summary_lines"]


def selection_key(name: str, budget: int) -> str:
    """How a selection is named in the journal and its file (``aks-128``)."""
    return f"{name}-{budget}"


def FILES(job) -> list[str]:  # noqa: N802 - a table of names, like zeroshot_outputs.FILES
    names = [f"selection-{selection_key(s.name, s.budget)}.jsonl" for s in job.selectors] + ["select.json"]
    if job.recall and len({s.budget for s in job.selectors}) > 1:
        names.append("recall.png")
    return names


def write_outputs(job, units, records: dict, identity: dict, this_run: dict) -> dict:
    out = Path(job.out)
    by_uid: dict[str, dict] = {}
    errors: list[str] = []
    for u in units:
        rec = records[u]
        if rec["error"]:
            errors.append(f"{u.video_key}: {rec['error']}")
        for i in u.items:
            by_uid[job.items[i].uid] = {"video": u, "rec": rec}
    summary: dict = {"identity": identity, "items": len(job.items), "videos": len(units),
                     "video_errors": errors, "selections": {}}
    for sel in job.selectors:
        key = selection_key(sel.name, sel.budget)
        rows, shown, needle = [], {}, []
        settings = selector_settings(sel)
        relevance = relevance_mode(sel, job.scale)
        for it in job.items:
            got = by_uid[it.uid]["rec"]
            base = {"uid": it.uid, "video_key": it.video_key, "selector": sel.name,
                    "selector_version": getattr(sel, "version", "?"), "selector_settings": settings,
                    "budget": sel.budget, "scorer": job.scorer_spec, "scorer_output": job.scale,
                    "relevance": relevance, "fps": job.fps}
            if got["error"]:
                rows.append({**base, "error": got["error"]})
                needle.append(False)
                continue
            s = got["items"][it.uid][key]
            rows.append({**base, "policy": s["policy"], "indices": s["indices"], "timestamps": s["timestamps"]})
            shown[it.uid] = s["timestamps"]
            if "needle_correct" in s:
                needle.append(bool(s["needle_correct"]))
        atomic_write_jsonl(out / f"selection-{key}.jsonl", rows)
        entry: dict = {"selector": sel.name, "budget": sel.budget, "describe": sel.describe(),
                       "version": getattr(sel, "version", "?"), "settings": settings, "file": f"selection-{key}.jsonl",
                       "scorer_output": job.scale, "relevance": relevance, "fallbacks": _fallbacks(rows)}
        if job.recall:
            entry["recall"] = evidence_recall(job.items, shown)
        if job.needle:
            entry["needle_accuracy"] = sum(needle) / len(needle) if needle else None
            entry["needle_correct"] = sum(needle)
        summary["selections"][key] = entry
    if job.recall and len({s.budget for s in job.selectors}) > 1:
        _plot(summary, out / "recall.png")
    # this_run (which process selected what) stays out of the file, which is then the same whatever the processes
    atomic_write_json(out / "select.json", summary)
    summary["this_run"] = this_run
    summary["text"] = "\n".join(summary_lines(summary))
    return summary


def _fallbacks(rows: list[dict]) -> dict:
    counts: dict[str, int] = defaultdict(int)
    for r in rows:
        note = r.get("policy", "").partition("->")[2]
        if note:
            counts[note] += 1
    return dict(counts)


def summary_lines(summary: dict) -> list[str]:
    """One line per selection: its evidence recall (``--recall``) and needle accuracy (synthetic)."""
    lines = []
    for key, e in summary["selections"].items():
        parts = []
        if "recall" in e:
            parts.append(format_recall(e["recall"]).splitlines()[0])
        if e.get("needle_accuracy") is not None:
            parts.append(f"needle accuracy {pct(e['needle_accuracy'], 1, unit='%')} "
                         f"({e['needle_correct']}/{summary['items']})")
        fb = ", ".join(f"{n} x {k}" for k, n in e["fallbacks"].items())
        lines.append(f"{key}: " + ("; ".join(parts) or f"selection written to {e['file']}")
                     + (f" [fallbacks: {fb}]" if fb else "")
                     + (f" [relevance min-max normalised per video: the scorer's {e.get('scorer_output')} is not a "
                        "probability]" if e.get("relevance") == "minmax" else ""))
    if summary["video_errors"]:
        lines.append(f"video errors ({len(summary['video_errors'])}): " + "; ".join(summary["video_errors"][:5]))
    return lines


def _plot(summary: dict, path: Path) -> None:
    from ..plots.recall import plot_recall

    curves: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for e in summary["selections"].values():
        r = e["recall"]["item_recall"]
        if r is not None:
            curves[e["selector"]].append((e["budget"], 100 * r))
    ordered = dict(sorted(curves.items(), key=lambda kv: (kv[0] != "uniform", kv[0])))
    tmp = path.with_suffix(".tmp.png")
    plot_recall(ordered, tmp)
    tmp.replace(path)
