"""MedHorizon scoring: per-item records, pooled accuracy tables, prediction files.

Accuracy is pooled at item level (correct / total), as in the paper's Table 2
("item-level correct/total ratios ... rounded to one decimal place"). Items
without a prediction (missing), with an unextractable answer (invalid) or whose
video could not be read (error) count as wrong and are counted separately.
"""

from __future__ import annotations

import os
from collections import defaultdict

from ...core.errors import DataError
from ...core.extract import extract_choice
from ...core.jsonl import iter_jsonl
from ...core.log_samples import is_lmms_sample, response_text
from ...core.stats import wilson_ci
from .release import Item, parse_uid
from .taxonomy import FAMILIES, TASK_CODES, TASK_TYPES

__all__ = ["score_item", "record_for", "missing_record", "error_record", "read_predictions", "score_predictions",
           "report", "format_table", "PREDICTION_KEYS"]

BENCHMARK = "medhorizon"
PREDICTION_KEYS = ("prediction", "pred", "answer")


def _base(item: Item, mode: str) -> dict:
    return {"benchmark": BENCHMARK, "uid": item.uid, "task": item.task, "source": item.source,
            "family": item.family, "hop": item.hop, "mode": mode, "answer": item.answer}


def score_item(item: Item, raw_output: str | None, mode: str) -> dict:
    """The per-item record for one model output (the one record format every report reads)."""
    ex = extract_choice(raw_output, item.options)
    rec = _base(item, mode)
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


# ------------------------------------------------------------ prediction files

def read_predictions(path: str | os.PathLike, known_uids) -> dict[str, dict]:
    """``uid -> {"raw": str | None, "mode": str | None, "error": str | None}`` from a predictions file.

    Accepts the authors' format (``{"uid": 0, "prediction": "A"}``, key
    ``prediction``, ``pred`` or ``answer``; raw model text allowed),
    lmms-eval ``--log_samples`` files of this package's tasks, and the
    per-item records this package writes (``score --records``, VLMEvalKit's
    ``_records.jsonl``): their ``raw_output`` is the prediction and their video
    error is kept -- never their gold ``answer``, which would score 100%.
    Duplicate or unknown uids are errors.
    """
    known = set(known_uids)
    out: dict[str, dict] = {}
    problems: list[str] = []
    for line, rec in iter_jsonl(path):
        if not isinstance(rec, dict):
            problems.append(f"line {line}: expected a JSON object, got {type(rec).__name__}")
            continue
        if is_lmms_sample(rec):
            entry = _from_lmms_sample(rec, line, problems)
        elif _is_record(rec):
            entry = _from_record(rec, line, problems)
        else:
            entry = _from_plain(rec, line, problems)
        if entry is None:
            continue
        uid, value = entry
        if uid not in known:
            problems.append(f"line {line}: field 'uid': {uid!r} is not an item of this benchmark")
        elif uid in out:
            problems.append(f"line {line}: field 'uid': {uid!r} is predicted more than once")
        else:
            out[uid] = value
    if not out and not problems:
        problems.append("no predictions: the file has no prediction line (an empty or blank file is not an "
                        "evaluation of any item)")
    if problems:
        raise DataError(problems, source=str(path))
    return out


def _is_record(rec: dict) -> bool:
    """A line of this package's per-item records (any benchmark): it carries the scoring's own fields."""
    return isinstance(rec.get("benchmark"), str) and "status" in rec and "raw_output" in rec and "correct" in rec


def _from_record(rec: dict, line: int, problems: list[str]):
    uid = parse_uid(rec.get("uid"))
    if uid is None:
        problems.append(f"line {line}: field 'uid': missing or not an integer/string")
        return None
    raw, error = rec.get("raw_output"), rec.get("error")
    if raw is not None and not isinstance(raw, str):
        problems.append(f"line {line} (uid {uid}): field 'raw_output': expected text, got {type(raw).__name__}")
        return None
    return uid, {"raw": raw, "mode": rec.get("mode") if isinstance(rec.get("mode"), str) else None,
                 "error": error if isinstance(error, str) and error else None}


def _from_plain(rec: dict, line: int, problems: list[str]):
    uid = parse_uid(rec.get("uid"))
    if uid is None:
        problems.append(f"line {line}: field 'uid': missing or not an integer/string")
        return None
    for key in PREDICTION_KEYS:
        if key in rec:
            value = rec[key]
            if value is not None and not isinstance(value, str):
                problems.append(f"line {line} (uid {uid}): field '{key}': expected text, got {type(value).__name__}")
                return None
            return uid, {"raw": value, "mode": rec.get("mode") if isinstance(rec.get("mode"), str) else None,
                         "error": None}
    problems.append(f"line {line} (uid {uid}): no prediction field (expected one of {', '.join(PREDICTION_KEYS)})")
    return None


def _from_lmms_sample(rec: dict, line: int, problems: list[str]):
    """A line of an lmms-eval samples file; our per-item record sits under the metric name ``accuracy``."""
    metric = rec.get("accuracy") if isinstance(rec.get("accuracy"), dict) else {}
    doc = rec.get("doc") if isinstance(rec.get("doc"), dict) else {}
    uid = parse_uid(metric.get("uid", doc.get("uid")))
    if uid is None:
        problems.append(f"line {line}: field 'accuracy.uid': this lmms-eval sample is not from a medhorizon task")
        return None
    raw = response_text(rec)
    return uid, {"raw": raw, "mode": metric.get("mode"), "error": metric.get("error")}


def records_for(items, predictions: dict[str, dict], mode: str | None, *, score, missing, error) -> list[dict]:
    """One record per benchmark item (any benchmark): ``score(item, raw, mode)``, ``missing(item, mode)``
    when it has no prediction, ``error(item, mode, reason)`` when its video failed."""
    records = []
    for it in items:
        p = predictions.get(it.uid)
        m = mode or (p or {}).get("mode") or "unknown"
        if p is None:
            records.append(missing(it, m))
        elif p.get("error"):
            rec = error(it, m, p["error"])
            rec["raw_output"] = p.get("raw")  # what the model said without frames: kept, as record_for keeps it
            records.append(rec)
        else:
            records.append(score(it, p["raw"], m))
    return records


def score_predictions(items: list[Item], predictions: dict[str, dict], mode: str | None = None) -> list[dict]:
    """One record per benchmark item: scored, missing, or video error."""
    return records_for(items, predictions, mode, score=score_item, missing=missing_record, error=error_record)


# ------------------------------------------------------------------ reports

def _summary(recs: list[dict], with_ci: bool = False) -> dict:
    n = len(recs)
    correct = sum(1 for r in recs if r["correct"])
    out = {
        "accuracy": correct / n if n else None,
        "correct": correct,
        "n": n,
        "invalid": sum(1 for r in recs if r["status"] not in ("ok", "missing", "error")),
        "missing": sum(1 for r in recs if r["status"] == "missing"),
        "errors": sum(1 for r in recs if r["status"] == "error"),
    }
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
    }


def _pct(x) -> str:
    return "—" if x is None else f"{100 * x:.1f}"


def format_table(rows: list[tuple[str, str, dict]]) -> str:
    """Rows ``(model, input, report)`` in the layout of the paper's Table 2 (percent, one decimal)."""
    fine = [t.code for t in TASK_TYPES if t.family == "fine_grained"]
    sem = [t.code for t in TASK_TYPES if t.family == "semantic_reasoning"]
    head = ["Model", "Input", "Ov.", *fine, *sem]
    body = []
    for model, inp, rep in rows:
        body.append([model, inp, _pct(rep["overall"]["accuracy"]),
                     *[_pct(rep["by_task"].get(c, {}).get("accuracy")) for c in fine + sem]])
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
            extra.append(f"95% CI {_pct(o['ci95'][0])}–{_pct(o['ci95'][1])}")
        for k in ("invalid", "missing", "errors"):
            if o.get(k):
                extra.append(f"{k}={o[k]}")
        notes.append(f"  {model} [{inp}]: " + ", ".join(extra))
    return "\n".join(lines + ["", *notes])
