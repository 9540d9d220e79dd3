"""SurgHiBench scoring: predictions joined to annotations, per video, per dataset, Overall.

Predictions come either as frame rows (``dataset, video, frame, phase, step``; JSONL or
CSV, see :mod:`.frames`) or as an lmms-eval ``--log_samples`` file of the ``surghi`` tasks
(the model's text is parsed again here with :func:`.protocol.predicted_labels`, the very
function the task's ``process_results`` uses).

Every annotated frame is scored.  A frame without a prediction is *missing*: both its
labels are invalid (wrong everywhere) and it is counted in ``n_missing``.  A frame whose
video could not be read (a prediction carrying ``error``) is scored the same way, whatever
labels came with it, and counted in ``n_errors``, as in the other two benchmarks.  A
prediction for a frame that is not annotated is *extra*: it is ignored and counted in
``n_extra`` -- also when its dataset is not in the annotations at all (``unknown_datasets``
in the report, with the annotated dataset it probably meant, e.g. a name that differs only
in case).  Labels outside the hierarchy are invalid and counted in ``n_invalid`` (phase and
step separately, missing and error frames included).  A model response that is a failure (a
request that failed, ``request_error``; an empty or cut-off reply, ``truncated``:
:mod:`medhorizon_tasks.core.responses`) is never parsed for labels: the frame is scored wrong
and counted in ``n_request_errors`` / ``n_refused`` / ``n_truncated`` / ``n_oom`` (the accelerator ran out of
memory on it), and ``failed_responses`` lists it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Mapping

from ...core.errors import DataError
from ...core.jsonl import iter_jsonl
from ...core.log_samples import is_lmms_sample, response_text
from ...core.predictions import failure_listing
from ...core.responses import FAILURE_STATUSES, response_failure
from ...core.text import pct
from .frames import FrameRow, hierarchy_lines, hierarchy_summary, levels_of, parse_row, read_frame_rows
from .hierarchy import Hierarchy
from .metrics import METRIC_KEYS, aggregate_videos, overall, video_metrics
from .protocol import predicted_labels

BENCHMARK = "surghi"
Key = tuple[str, str, int]
COUNT_KEYS = ("n_missing", "n_extra", "n_errors", "n_request_errors", "n_refused", "n_truncated", "n_oom")
_FAILURE_COUNT = {"request_error": "n_request_errors", "refused": "n_refused", "truncated": "n_truncated",
                  "oom": "n_oom"}


@dataclass
class Prediction:
    phase: str | None
    step: str | None
    raw: str | None = None
    error: str | None = None
    failure: str | None = None  # the response's failure status (request_error, refused, truncated), never parsed


@dataclass
class SurghiResult:
    """Per-video metrics and the report built from them (:meth:`report`)."""

    per_video: dict[str, dict[str, dict]]  # dataset -> video -> video_metrics(...)
    hierarchies: dict[str, tuple[Hierarchy, str]]
    counts: dict[str, dict[str, int]] = field(default_factory=dict)  # dataset -> n_missing / n_extra / n_errors
    unknown_datasets: dict[str, int] = field(default_factory=dict)  # predicted dataset not annotated -> n
    phases_only: set[str] = field(default_factory=set)  # datasets annotated with phases only
    failures: list[dict] = field(default_factory=list)  # {"uid", "status", "reason"} of each failed response

    def datasets(self) -> dict[str, dict]:
        out = {}
        for ds, videos in self.per_video.items():
            row = aggregate_videos(list(videos.values()))
            row.update(self.counts.get(ds, {}))
            if ds in self.phases_only:
                row["phases_only"] = True  # step and cross-level metrics not applicable (null)
            out[ds] = row
        return out

    def report(self) -> dict:
        """``{"benchmark": "surghi", "datasets": {name: {...}}, "overall": {...}, "hierarchies": {...}}``;
        metric values are fractions in 0..1 (NaN written as ``null``)."""
        datasets = self.datasets()
        ov = overall(datasets)
        for k in COUNT_KEYS:
            ov[k] = int(sum(d.get(k, 0) for d in datasets.values()))
        ov["n_extra"] += sum(self.unknown_datasets.values())
        hier = {ds: hierarchy_summary(ds, h, src) for ds, (h, src) in self.hierarchies.items()}
        unknown = {name: {"n_extra": n, "did_you_mean": _closest(name, list(self.per_video))}
                   for name, n in sorted(self.unknown_datasets.items())}
        return {"benchmark": BENCHMARK, "datasets": datasets, "overall": ov, "hierarchies": hier,
                "unknown_datasets": unknown, "failed_responses": list(self.failures)}


def _closest(name: str, known: list[str]) -> str | None:
    """The annotated dataset a prediction's dataset name probably meant (same letters and digits, any case)."""
    def fold(s: str) -> str:
        return "".join(ch for ch in s.casefold() if ch.isalnum())
    hits = [k for k in known if fold(k) == fold(name)]
    return hits[0] if len(hits) == 1 else None


def evaluate(annotations: list[FrameRow], predictions: Mapping[Key, Prediction],
             hierarchies: Mapping[str, tuple[Hierarchy, str]]) -> SurghiResult:
    """Score ``predictions`` against ``annotations`` (frames in annotation order within each video)."""
    videos: dict[str, dict[str, list[FrameRow]]] = {}
    for r in annotations:
        videos.setdefault(r.dataset, {}).setdefault(r.video, []).append(r)
    annotated = {r.key for r in annotations}
    per_video: dict[str, dict[str, dict]] = {}
    counts: dict[str, dict[str, int]] = {}
    failures: list[dict] = []
    problems: list[str] = []
    for ds, vids in videos.items():
        if ds not in hierarchies:
            problems.append(f"dataset {ds!r}: no hierarchy")
            continue
        h = hierarchies[ds][0]
        c = counts.setdefault(ds, dict.fromkeys(COUNT_KEYS, 0))
        for vid, rows in vids.items():
            rows = sorted(rows, key=lambda r: r.frame)
            pp, ps = [], []
            for r in rows:
                p = predictions.get(r.key)
                if p is None:
                    c["n_missing"] += 1
                elif p.error:
                    c["n_errors"] += 1  # the model saw no frames: its labels are not an answer
                elif p.failure:
                    c[_FAILURE_COUNT[p.failure]] += 1  # the response was no answer
                    gone = response_failure(p.raw)
                    failures.append({"uid": r.uid, "status": p.failure, "reason": gone.reason if gone else p.failure})
                scored = p is not None and not p.error and not p.failure
                pp.append(p.phase if scored else None)
                ps.append(p.step if scored else None)
            try:
                per_video.setdefault(ds, {})[vid] = video_metrics(
                    [r.phase for r in rows], [r.step for r in rows], pp, ps, h, video=f"{ds}/{vid}")
            except DataError as exc:
                problems.extend(exc.problems)
    unknown: dict[str, int] = {}
    for key in predictions:
        if key in annotated:
            continue
        if key[0] in counts:
            counts[key[0]]["n_extra"] += 1
        else:
            unknown[key[0]] = unknown.get(key[0], 0) + 1
    if problems:
        raise DataError(problems, source="surghi annotations")
    phases_only = {ds for ds, levels in levels_of(annotations).items() if levels == ("phases",)}
    return SurghiResult(per_video, dict(hierarchies), counts, unknown, phases_only=phases_only, failures=failures)


# ------------------------------------------------------------------ records of a framework's run

def frame_record(row: FrameRow, raw: str | None, hierarchy: Hierarchy, error: str | None) -> dict:
    """One evaluated frame's record in either framework: its ground truth and the labels parsed from the
    model's text (the labels of a video error are ignored by the metrics, as in :func:`evaluate`); ``status``
    is the failure a response stands for (``request_error``, ``refused``, ``truncated``; its labels are None), else None."""
    phase, step, failure = _labels(raw, hierarchy)
    return {"uid": row.uid, "dataset": row.dataset, "video": row.video, "frame": row.frame,
            "gt_phase": row.phase, "gt_step": row.step, "pred_phase": phase, "pred_step": step,
            "raw_output": raw, "error": error, "status": failure}


def _labels(raw: str | None, hierarchy: Hierarchy) -> tuple[str | None, str | None, str | None]:
    """``(phase, step, failure status)`` of a model's text: a failed response is never parsed."""
    failure = response_failure(raw)
    if failure is not None:
        return None, None, failure.status
    return (*predicted_labels(raw, hierarchy), None)


def records_report(rows, records, hierarchies: Mapping[str, tuple[Hierarchy, str]]) -> dict:
    """``score --benchmark surghi``'s report of a run's frame records over ``rows``; a row without a record
    counts as missing."""
    rows = list(rows)
    preds = {(r["dataset"], r["video"], int(r["frame"])):
             Prediction(r["pred_phase"], r["pred_step"], r.get("raw_output"), r.get("error"),
                        r.get("status") if r.get("status") in FAILURE_STATUSES else None) for r in records}
    datasets = {r.dataset for r in rows}
    return evaluate(rows, preds, {ds: h for ds, h in hierarchies.items() if ds in datasets}).report()


# ------------------------------------------------------------------ prediction files

def read_predictions(path: str | os.PathLike, hierarchies: Mapping[str, tuple[Hierarchy, str]]) -> dict[Key, Prediction]:
    """Frame-row predictions (JSONL/CSV) or an lmms-eval samples file of a surghi task."""
    first = None
    if not str(path).lower().endswith((".csv", ".tsv")):
        for _, rec in iter_jsonl(path):
            first = rec
            break
    if is_lmms_sample(first):
        return _read_lmms_samples(path, hierarchies)
    rows = read_frame_rows(path, role="predictions")
    return {r.key: Prediction(r.phase, r.step, error=r.error) for r in rows}


def _read_lmms_samples(path, hierarchies) -> dict[Key, Prediction]:
    out: dict[Key, Prediction] = {}
    problems: list[str] = []
    for line, rec in iter_jsonl(path):
        where = f"line {line}"
        # our per-frame record sits under each metric name; lmms-eval logs the doc only sometimes
        metric = next((rec[k] for k in METRIC_KEYS if isinstance(rec, dict) and isinstance(rec.get(k), dict)), None)
        source = metric if metric is not None else (rec.get("doc") if isinstance(rec, dict) else None)
        if not isinstance(source, dict):
            problems.append(f"{where}: not an lmms-eval sample of a surghi task (no '{METRIC_KEYS[0]}' record)")
            continue
        row = parse_row(source, where, "predictions", problems)
        if row is None:
            continue
        if row.key in out:
            problems.append(f"{where}: frame {row.uid} appears twice")
            continue
        raw = response_text(rec)
        metric = metric or {}
        if row.dataset not in hierarchies:
            problems.append(f"{where}: dataset {row.dataset!r} is not in the annotations")
            continue
        phase, step, failure = _labels(raw, hierarchies[row.dataset][0])
        out[row.key] = Prediction(phase, step, raw, metric.get("error"), failure)
    if problems:
        raise DataError(problems, source=str(path))
    return out


# ------------------------------------------------------------------ text report

_SHOW = (("phase_acc", "Phase acc"), ("phase_f1", "Phase F1"), ("step_acc", "Step acc"), ("step_f1", "Step F1"),
         ("multi_level", "Multi-level"), ("both_wrong", "Both-wrong"), ("both_right", "Both-right"),
         ("step_given_phase", "Step|Phase"), ("sibling", "Sibling"), ("cousin", "Cousin"),
         ("semantic_step", "Semantic"))


def _cell(row: dict, key: str) -> str:
    if row.get("phases_only") and key not in ("phase_acc", "phase_f1"):
        return "n/a"
    return pct(row.get(key), missing="-")


def _phase_only_notes(rep: dict) -> list[str]:
    only = [ds for ds, r in rep["datasets"].items() if r.get("phases_only")]
    if not only:
        return []
    rest = [ds for ds in rep["datasets"] if ds not in only]
    return [f"{', '.join(only)}: annotated with phases only: step and cross-level metrics not applicable (n/a); "
            + (f"Overall's are over {', '.join(rest)}" if rest else "Overall has phase metrics only")]


def format_report(rep: dict) -> str:
    """Task 1-3 metrics (percent) per dataset and Overall, and what was invalid or missing."""
    names = [*rep["datasets"], "Overall"]
    rows = {**rep["datasets"], "Overall": rep["overall"]}
    width = max(len(n) for n in names) + 2
    head = "".ljust(width) + "".join(label.rjust(12) for _, label in _SHOW) + "  videos"
    lines = [head]
    for n in names:
        r = rows[n]
        lines.append(n.ljust(width) + "".join(_cell(r, k).rjust(12) for k, _ in _SHOW) + f"  {r['n_videos']:>6}")
    lines += _phase_only_notes(rep)
    for n, r in rows.items():
        notes = [f"{r[k]} {k[2:]}" for k in ("n_invalid", *COUNT_KEYS) if r.get(k)]
        if notes and n != "Overall":
            lines.append(f"{n}: " + ", ".join(notes))
    for name, u in rep.get("unknown_datasets", {}).items():
        hint = f"; did you mean {u['did_you_mean']!r}?" if u.get("did_you_mean") else ""
        lines.append(f"{u['n_extra']} prediction(s) for dataset {name!r}, not in the annotations: ignored{hint}")
    lines.extend(hierarchy_lines(rep.get("hierarchies", {})))
    lines.extend(failure_listing(rep.get("failed_responses", [])))
    return "\n".join(lines)


PAPER_TABLES = (
    ("Table 2. Task 1: single- and multi-level recognition (video-averaged, %)",
     (("phase_acc", "Phase acc"), ("phase_f1", "Phase F1"), ("step_acc", "Step acc"), ("step_f1", "Step F1"),
      ("multi_level", "Multi-level"))),
    ("Table 3. Task 2: cross-level consistency (%)",
     (("both_wrong", "Both wrong"), ("both_right", "Both right"), ("step_given_phase", "Step|Phase"))),
    ("Table 4. Task 3: error severity (%)",
     (("sibling", "Sibling"), ("cousin", "Cousin"), ("semantic_step", "Semantic step"))),
)


def format_paper_tables(rep: dict, model: str) -> str:
    """The report in the paper's Tables 2-4 layout: per table, each dataset then Overall, with ``model`` as the
    row (the paper's rows are its three models; put the published numbers beside these to compare)."""
    names = [*rep["datasets"], "Overall"]
    rows = {**rep["datasets"], "Overall": rep["overall"]}
    width = max(len(n) for n in names) + 2
    mwidth = max(len(model), 5) + 2
    lines: list[str] = []
    for title, cols in PAPER_TABLES:
        lines += ["", title] if lines else [title]
        lines.append("".ljust(width) + "".ljust(mwidth) + "".join(label.rjust(14) for _, label in cols))
        for n in names:
            lines.append(n.ljust(width) + model.ljust(mwidth) + "".join(_cell(rows[n], k).rjust(14) for k, _ in cols))
    return "\n".join(lines + _phase_only_notes(rep))


def dumps_report(rep: dict) -> str:
    """The report as JSON text (NaN as null, floating-point dust rounded away)."""
    from ...core.text import report_json

    return report_json(rep)


__all__ = ["BENCHMARK", "Prediction", "SurghiResult", "evaluate", "frame_record", "records_report",
           "read_predictions", "format_report", "format_paper_tables", "dumps_report"]
