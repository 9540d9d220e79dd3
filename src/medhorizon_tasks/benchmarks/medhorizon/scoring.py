"""MedHorizon scoring: per-item records, pooled accuracy tables, prediction files.

Accuracy is pooled at item level (correct / total), as in the paper's Table 2
("item-level correct/total ratios ... rounded to one decimal place"). Items
without a prediction (missing), with an unextractable answer (invalid), whose
video could not be read (error), or whose response was a failure (a request
that failed, ``request_error``; an empty or cut-off reply, ``truncated``:
:mod:`medhorizon_tasks.core.responses`, never extracted) count as wrong and
are counted separately.
"""

from __future__ import annotations

from collections import defaultdict

from ...core.extract import extract_choice
from ...core.predictions import (
    PREDICTION_KEYS,
    STATUS_COUNT_KEYS,
    failed_responses,
    read_predictions,
    records_for,
    status_counts,
)
from ...core.responses import response_failure
from ...core.stats import wilson_ci
from ...core.text import pct
from .release import Item
from .taxonomy import FAMILIES, TASK_CODES, TASK_TYPES

__all__ = ["score_item", "record_for", "missing_record", "error_record", "read_predictions", "score_predictions",
           "report", "format_table", "PREDICTION_KEYS"]

BENCHMARK = "medhorizon"


def _base(item: Item, mode: str) -> dict:
    return {"benchmark": BENCHMARK, "uid": item.uid, "task": item.task, "source": item.source,
            "family": item.family, "hop": item.hop, "mode": mode, "answer": item.answer}


def score_item(item: Item, raw_output: str | None, mode: str) -> dict:
    """The per-item record for one model output (the one record format every report reads); a failed
    response is its status (``request_error``, ``truncated``), wrong, never extracted."""
    rec = _base(item, mode)
    failure = response_failure(raw_output)
    if failure is not None:
        rec.update(raw_output=raw_output, extracted=None, status=failure.status, valid=False, correct=False,
                   error=None)
        return rec
    ex = extract_choice(raw_output, item.options)
    rec.update(raw_output=raw_output, extracted=ex.letter, status=ex.status, valid=ex.valid,
               correct=bool(ex.valid and ex.letter == item.answer), error=None)
    return rec


def record_for(item: Item, raw_output: str | None, mode: str, error: str | None) -> dict:
    """The record of one model output in either framework: scored, or -- when the item's video failed
    (``error``; the model got no frames) -- a video error whatever the model said, its text kept beside it."""
    if not error:
        return score_item(item, raw_output, mode)
    record = error_record(item, mode, error)
    record["raw_output"] = raw_output
    return record


def missing_record(item: Item, mode: str) -> dict:
    rec = _base(item, mode)
    rec.update(raw_output=None, extracted=None, status="missing", valid=False, correct=False, error=None)
    return rec


def error_record(item: Item, mode: str, error: str) -> dict:
    rec = _base(item, mode)
    rec.update(raw_output=None, extracted=None, status="error", valid=False, correct=False, error=error)
    return rec


def score_predictions(items: list[Item], predictions: dict[str, dict], mode: str | None = None) -> list[dict]:
    """One record per benchmark item: scored, missing, or video error."""
    return records_for(items, predictions, mode, score=score_item, missing=missing_record, error=error_record)


# ------------------------------------------------------------------ reports

def _summary(recs: list[dict], with_ci: bool = False) -> dict:
    n = len(recs)
    correct = sum(1 for r in recs if r["correct"])
    out = {"accuracy": correct / n if n else None, "correct": correct, "n": n, **status_counts(recs)}
    if with_ci:
        ci = wilson_ci(correct, n)
        out["ci95"] = list(ci) if ci else None
        out["ci_method"] = "wilson"
    return out


def report(records: list[dict]) -> dict:
    """Pooled accuracy overall and by task, family, hop depth and source (accuracies as 0..1)."""
    groups: dict[str, dict[str, list]] = {k: defaultdict(list) for k in ("task", "family", "hop", "source")}
    for r in records:
        groups["task"][r["task"]].append(r)
        groups["family"][r["family"]].append(r)
        if r["hop"]:
            groups["hop"][str(r["hop"])].append(r)
        groups["source"][r["source"]].append(r)
    task_order = [c for c in TASK_CODES if c in groups["task"]]
    return {
        "benchmark": BENCHMARK,
        "overall": _summary(records, with_ci=True),
        "by_task": {c: _summary(groups["task"][c]) for c in task_order},
        "by_family": {f: _summary(groups["family"][f]) for f in FAMILIES if f in groups["family"]},
        "by_hop": {h: _summary(groups["hop"][h]) for h in sorted(groups["hop"])},
        "by_source": {s: _summary(groups["source"][s]) for s in sorted(groups["source"])},
        "video_errors": [{"uid": r["uid"], "error": r["error"]} for r in records if r.get("error")],
        "failed_responses": failed_responses(records),
    }


def format_table(rows: list[tuple[str, str, dict]]) -> str:
    """Rows ``(model, input, report)`` in the layout of the paper's Table 2 (percent, one decimal)."""
    fine = [t.code for t in TASK_TYPES if t.family == "fine_grained"]
    sem = [t.code for t in TASK_TYPES if t.family == "semantic_reasoning"]
    head = ["Model", "Input", "Ov.", *fine, *sem]
    body = []
    for model, inp, rep in rows:
        body.append([model, inp, pct(rep["overall"]["accuracy"]),
                     *[pct(rep["by_task"].get(c, {}).get("accuracy")) for c in fine + sem]])
    widths = [max(len(str(r[i])) for r in [head, *body]) for i in range(len(head))]
    span_fine = sum(widths[3:3 + len(fine)]) + 3 * (len(fine) - 1)
    span_sem = sum(widths[3 + len(fine):]) + 3 * (len(sem) - 1)
    lead = sum(widths[:3]) + 6
    title = " " * lead + " | " + "Fine-grained Understanding".center(span_fine) + " | " + "Semantic Reasoning".center(span_sem)

    def fmt(r):
        cells = [str(c).ljust(widths[i]) if i < 2 else str(c).rjust(widths[i]) for i, c in enumerate(r)]
        return " | ".join(cells)

    sep = "-+-".join("-" * w for w in widths)
    lines = [title, fmt(head), sep, *[fmt(r) for r in body]]
    notes = []
    for model, inp, rep in rows:
        o = rep["overall"]
        extra = [f"n={o['n']}"]
        if o.get("ci95"):
            extra.append(f"95% CI {pct(o['ci95'][0])}–{pct(o['ci95'][1])}")
        for k in STATUS_COUNT_KEYS:
            if o.get(k):
                extra.append(f"{k}={o[k]}")
        notes.append(f"  {model} [{inp}]: " + ", ".join(extra))
    return "\n".join(lines + ["", *notes])
