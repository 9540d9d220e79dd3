"""What a refused upload looks like, and what to upload instead: one line for a refusal.

A wrong file is the commonest refusal (a log, the results summary instead of the samples, a VLMEvalKit score
table, another benchmark's predictions); its item-by-item problems say *that* it is wrong, this says *what*
it is. Only the head of the upload is read (its first lines), so the guess costs nothing next to the check.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from ..benchmarks.data import BENCHMARK_NAMES, BENCHMARKS, BenchmarkData

__all__ = ["guess_upload", "benchmark_of_lines"]

_HEAD_LINES = 50
_HEAD_CHARS = 1 << 20
_MAKE = "a submission made by `medhorizon-tasks leaderboard make`"
_SAMPLES = "the samples file lmms-eval writes with --log_samples (`*_samples_<task>.jsonl`)"


def _head(text: str) -> list[str]:
    lines = []
    for line in text[:_HEAD_CHARS].splitlines():
        if line.strip():
            lines.append(line.strip())
        if len(lines) >= _HEAD_LINES:
            break
    return lines


def _json(line: str):
    try:
        return json.loads(line)
    except (ValueError, RecursionError):
        return None


def _ids_of(rec: dict):
    """The item id a predictions line names (MedHorizon / Sureon uid, SurgHiBench frame key), or None."""
    doc = rec.get("doc") if isinstance(rec.get("doc"), dict) else {}
    metric = rec.get("accuracy") if isinstance(rec.get("accuracy"), dict) else {}
    for v in (rec.get("uid"), rec.get("id"), metric.get("uid"), doc.get("uid")):
        if isinstance(v, (int, str)) and not isinstance(v, bool):
            return str(v)
    for where in (rec, doc):
        if all(k in where for k in ("dataset", "video", "frame")):
            try:
                return (str(where["dataset"]), str(where["video"]), int(where["frame"]))
            except (TypeError, ValueError):
                return None
    return None


def benchmark_of_lines(records: list, datas: Mapping[str, BenchmarkData]) -> str | None:
    """The benchmark the lines say they are of: a ``benchmark`` field, else the data whose ids they are."""
    named = {r.get("benchmark") for r in records if isinstance(r, dict)} & set(BENCHMARKS)
    if len(named) == 1:
        return named.pop()
    ids = [i for i in (_ids_of(r) for r in records if isinstance(r, dict)) if i is not None]
    if not ids:
        return None
    hits = {b: sum(i in known for i in ids) for b, known in ((b, set(d.ids)) for b, d in datas.items())}
    best = max(hits, key=hits.get, default=None)
    return best if best is not None and hits[best] > len(ids) // 2 else None


def guess_upload(text: str, chosen: str | None, datas: Mapping[str, BenchmarkData], value=None) -> str | None:
    """One line naming what ``text`` looks like and what to upload instead, or None when it looks like what
    was asked for (then its own problems say what is wrong). ``chosen``: the benchmark the submitter picked;
    ``value``: the upload parsed as one JSON value, when it is one."""
    lines = _head(text)
    if not lines:
        return None
    if value is None and lines[0][:1] not in "{[":
        header = lines[0].lower().replace("\t", ",").split(",")
        if {"dataset", "video", "frame"} <= set(header):
            return None  # SurgHiBench frame rows as CSV
        if "prediction" in header and ("index" in header or "question" in header):
            return ("this looks like VLMEvalKit's predictions table: upload the package's per-item records "
                    "written beside it (`<model>_<dataset>_records.jsonl`), or " + _MAKE)
        if any(k in header for k in ("overall", "acc", "accuracy", "split")):
            return ("this looks like a VLMEvalKit score table (aggregates only; a board scores every item): "
                    "upload the per-item records beside it (`<model>_<dataset>_records.jsonl`), or " + _MAKE)
        return ("this looks like a log or other text, not JSON: upload " + _SAMPLES + ", a predictions JSONL "
                "(`{\"uid\", \"prediction\"}` per line), or " + _MAKE)
    if isinstance(value, dict):
        if "results" in value and ("configs" in value or "versions" in value):
            return ("this is lmms-eval's results summary (aggregates only; a board scores every item): upload "
                    + _SAMPLES + " beside it")
        meta = value.get("metadata") if isinstance(value.get("metadata"), dict) else {}
        bench = meta.get("benchmark")
        if chosen and bench in BENCHMARKS and bench != chosen:
            return (f"this file is a {BENCHMARK_NAMES[bench]} ({bench}) submission, and "
                    f"{BENCHMARK_NAMES[chosen]} ({chosen}) was chosen: choose {bench}")
        if "format" not in value and any(str(k).lower() in ("overall", "acc", "accuracy") for k in value):
            return ("this looks like a VLMEvalKit score file (aggregates only; a board scores every item): upload "
                    "the per-item records beside it (`<model>_<dataset>_records.jsonl`), or " + _MAKE)
        if "format" in value or "metadata" in value or "predictions" in value:
            return None
        records = [value]
    elif isinstance(value, list):
        records = [r for r in value[:_HEAD_LINES] if isinstance(r, dict)]
    else:
        records = [r for r in (_json(x) for x in lines) if isinstance(r, dict)]
    bench = benchmark_of_lines(records, datas)
    if bench is not None and chosen is not None and bench != chosen:
        return (f"these are {BENCHMARK_NAMES[bench]} ({bench}) predictions, and {BENCHMARK_NAMES[chosen]} "
                f"({chosen}) was chosen: choose {bench}")
    if chosen is None and records:
        return ("this is a predictions or samples file, not a submission JSON: send it with the form (choose "
                "its benchmark, give the model's name and size), or send " + _MAKE)
    return None
