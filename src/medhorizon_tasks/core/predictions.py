"""Prediction files of any benchmark, and one record per benchmark item.

A predictions file is one JSON object a line, in one of three shapes:
the authors' format (``{"uid": 0, "prediction": "A"}``), an lmms-eval
``--log_samples`` file of this package's tasks, or the per-item records this
package writes. :func:`read_predictions` reads any of them into
``uid -> {"raw", "mode", "error"}`` (plus ``"departures"``, the run's departures from its paper's protocol,
when a record names any: Sureon's ``"no blur"``); :func:`records_for` turns that into one
record per item with the benchmark's own scoring rule, and :func:`status_counts` /
:func:`failed_responses` say in every report what did not count as an answer.
"""

from __future__ import annotations

import os

from .errors import DataError
from .jsonl import iter_jsonl
from .log_samples import is_lmms_sample, response_text
from .responses import FAILURE_STATUSES, OOM, REFUSED, REQUEST_ERROR, TRUNCATED, response_failure
from .text import listing

__all__ = ["PREDICTION_KEYS", "parse_uid", "read_predictions", "departures_of", "records_for", "status_counts", "failed_responses",
           "failure_listing", "STATUS_COUNT_KEYS"]

PREDICTION_KEYS = ("prediction", "pred", "answer")


def parse_uid(raw) -> str | None:
    """A uid as text: integers and non-blank strings are accepted, anything else (bools included) is not."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return str(raw)
    if isinstance(raw, str) and raw.strip():
        return raw.strip()
    return None


def read_predictions(path: str | os.PathLike, known_uids) -> dict[str, dict]:
    """``uid -> {"raw": str | None, "mode": str | None, "error": str | None}`` from a predictions file.

    Accepts the authors' format (``{"uid": 0, "prediction": "A"}``, key
    ``prediction``, ``pred`` or ``answer``; raw model text allowed),
    lmms-eval ``--log_samples`` files of this package's tasks, and the
    per-item records this package writes (``score --out``, VLMEvalKit's
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


def _departures(rec: dict) -> dict:
    """``{"departures": [...]}`` when a record names the run's protocol departures, else nothing."""
    value = rec.get("departures")
    if isinstance(value, list) and value and all(isinstance(d, str) for d in value):
        return {"departures": list(value)}
    return {}


def departures_of(predictions: dict[str, dict]) -> list[str]:
    """Every protocol departure any prediction's record names, once each, in order of appearance."""
    return list(dict.fromkeys(d for p in predictions.values() for d in p.get("departures") or ()))


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
                 "error": error if isinstance(error, str) and error else None, **_departures(rec)}


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
    return uid, {"raw": raw, "mode": metric.get("mode"), "error": metric.get("error"), **_departures(metric)}


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
        if p and p.get("departures"):
            records[-1]["departures"] = list(p["departures"])
    return records


# ------------------------------------------------------------------ what did not count as an answer

STATUS_COUNT_KEYS = ("invalid", "missing", "errors", "request_errors", "refused", "truncated", "oom")
_COUNTED = {"missing": "missing", "error": "errors", REQUEST_ERROR: "request_errors", REFUSED: "refused",
            TRUNCATED: "truncated", OOM: "oom"}
_ANSWERED = ("ok", "not_judged")  # an answer, scored (or waiting for the judge)


def status_counts(records) -> dict[str, int]:
    """How many records of a group did not count as an answer, by kind: ``invalid`` (no extractable answer),
    ``missing`` (no prediction), ``errors`` (the video could not be read), ``request_errors``, ``refused``,
    ``truncated`` and ``oom`` (the model's response was a failure, :mod:`medhorizon_tasks.core.responses`)."""
    counts = dict.fromkeys(STATUS_COUNT_KEYS, 0)
    for r in records:
        status = r.get("status")
        if status not in _ANSWERED:
            counts[_COUNTED.get(status, "invalid")] += 1
    return counts


def failed_responses(records) -> list[dict]:
    """``{"uid", "status", "reason"}`` of every record whose response was a failure (``request_error``,
    ``refused``, ``truncated`` or ``oom``: its reason names the frame count and size), in record order: what the reports list by uid."""
    out = []
    for r in records:
        if isinstance(r, dict) and r.get("status") in FAILURE_STATUSES:
            failure = response_failure(r.get("raw_output"))
            out.append({"uid": str(r.get("uid")), "status": r["status"],
                        "reason": failure.reason if failure else r["status"]})
    return out


def failure_listing(failures: list[dict], prefix: str = "") -> list[str]:
    """The text reports' lines for :func:`failed_responses`: a title, then ``item <uid>: <status> (<reason>)``."""
    return listing(f"{prefix}no answer from the model (scored wrong)",
                   [f"item {f['uid']}: {f['status']} ({f['reason']})" for f in failures])
