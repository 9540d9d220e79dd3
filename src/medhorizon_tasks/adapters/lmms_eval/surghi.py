"""lmms-eval glue for the SurgHiBench phase/step tasks (``surghi`` and ``surghi_synthetic``).

Data: ``SURGHI_DATA`` (task items: JSONL or CSV rows ``dataset, video, frame, phase, step,
timestamp_s, video_path``), ``SURGHI_HIERARCHY`` (optional hierarchy JSON, see
``medhorizon-tasks score --benchmark surghi --help``; default: a ``hierarchies.json`` next
to the data, then the shipped MultiBypass140 / GraSP / MIPO hierarchies, then one derived
from the items) and ``SURGHI_VIDEO_ROOT`` (default: the data file's folder).

Each evaluated frame is one request; ``process_results`` keeps the frame's ground truth and
the parsed answer, and each metric's aggregation rebuilds the per-video label sequences and
applies :mod:`medhorizon_tasks.benchmarks.surghi.metrics` (per video, averaged; Overall =
mean over datasets), so lmms-eval prints the same numbers as ``medhorizon-tasks score``.
"""

from __future__ import annotations

from pathlib import Path

from loguru import logger

from ...benchmarks.surghi import protocol
from ...benchmarks.surghi.frames import (
    HIERARCHY_ENV,
    FrameRow,
    hierarchy_file_for,
    hierarchy_lines,
    hierarchy_summary,
    item_features,
    load_hierarchy_file,
    read_frame_rows,
    resolve_hierarchies,
)
from ...benchmarks.surghi.scoring import frame_record, records_report
from ...core.errors import MedHorizonError, VideoError
from ...core.settings import env_text
from ...core.video.status import outcome_key
from .visuals import decoded_frames, task_kwargs, video_error, video_file

DATA_ENV, VIDEO_ROOT_ENV = "SURGHI_DATA", "SURGHI_VIDEO_ROOT"
_HIERARCHIES: dict = {}    # dataset -> (Hierarchy, source), filled by process_docs


def _dataset(data: Path, hierarchy_file: Path | None, root: Path):
    from datasets import Dataset, Value

    rows = read_frame_rows(data, role="items")  # validates the whole file first
    given = load_hierarchy_file(hierarchy_file) if hierarchy_file else None
    _HIERARCHIES.update(resolve_hierarchies(rows, given))
    summaries = {ds: hierarchy_summary(ds, h, src) for ds, (h, src) in sorted(_HIERARCHIES.items())}
    for line in hierarchy_lines(summaries):  # the tree-likeness used beside the paper's (Table 1)
        (logger.warning if line.startswith("warning") else logger.info)(f"[surghi] {line}")
    features = item_features()
    features["video_root"] = Value("string")
    return Dataset.from_list([{"uid": r.uid, "dataset": r.dataset, "video": r.video, "frame": r.frame,
                               "phase": r.phase, "step": r.step, "timestamp_s": r.timestamp_s,
                               "video_path": r.video_path, "video_root": str(root)} for r in rows],
                             features=features)


def process_docs_data(dataset):
    path = env_text(DATA_ENV)
    if not path:
        raise MedHorizonError(f"The surghi task needs {DATA_ENV}=/path/to/items.jsonl (and {VIDEO_ROOT_ENV}, "
                              f"optionally {HIERARCHY_ENV}); for the synthetic sample use --tasks surghi_synthetic")
    data = Path(path).expanduser()
    return _dataset(data, hierarchy_file_for(data), Path(env_text(VIDEO_ROOT_ENV) or data.parent).expanduser())


def process_docs_synthetic(dataset):
    from ...data.synthetic.surghi import build_surghi_sample

    sample = build_surghi_sample()
    return _dataset(sample.annotations_path, sample.hierarchy_path, sample.video_root)


def _row(doc) -> FrameRow:
    return FrameRow(doc["dataset"], doc["video"], int(doc["frame"]), doc["phase"], doc["step"],
                    float(doc["timestamp_s"]), doc["video_path"])


def _hierarchy(dataset: str):
    if dataset not in _HIERARCHIES:
        raise MedHorizonError(f"surghi: no hierarchy loaded for dataset {dataset!r} (process_docs did not run?)")
    return _HIERARCHIES[dataset][0]


def _window(kwargs) -> dict:
    kw = kwargs or {}
    return {"half_width_s": float(kw.get("window_half_width_s", protocol.DEFAULT_HALF_WIDTH_S)),
            "fps": float(kw.get("window_fps", protocol.DEFAULT_FPS))}


def _key(row: FrameRow, doc, window: dict) -> str:
    return outcome_key("surghi", doc["video_root"], row.uid, protocol.setting_key(**window))


def _decode(row: FrameRow, doc, window: dict):
    def decode():
        video = protocol.prepare(row, doc["video_root"], **window)
        return video.plan, protocol.decode_frames(video, row.uid), video.duration_s
    return decode


def doc_to_visual(doc, lmms_eval_specific_kwargs=None):
    row = _row(doc)
    window = _window(lmms_eval_specific_kwargs)
    return decoded_frames(_key(row, doc, window), _decode(row, doc, window), "surghi",
                          video_file(doc["video_root"], row.video_path, row.uid))


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    row = _row(doc)
    h = _hierarchy(row.dataset)
    try:
        video = protocol.prepare(row, doc["video_root"], **_window(lmms_eval_specific_kwargs))
    except VideoError:
        return protocol.build_prompt(row, h)  # the frame is reported as a video error
    return protocol.build_prompt(row, h, video.plan)


def process_results(doc, results):
    row = _row(doc)
    window = _window(task_kwargs())
    raw = results[0] if results else None
    record = frame_record(row, raw, _hierarchy(row.dataset), video_error(_key(row, doc, window),
                                                                         _decode(row, doc, window)))
    return {k: record for k in METRIC_NAMES}


_LAST_REPORT: tuple[tuple, dict] | None = None  # lmms-eval aggregates each of the 11 metrics separately


def surghi_report(records: list[dict]) -> dict:
    """The ``score --benchmark surghi`` report of a task's records (hierarchies from process_docs),
    computed once for the 11 metric aggregations that receive the same records."""
    global _LAST_REPORT
    key = tuple((r["uid"], r["pred_phase"], r["pred_step"], r.get("error"), r.get("status")) for r in records)
    if _LAST_REPORT is not None and _LAST_REPORT[0] == key:
        return _LAST_REPORT[1]
    rows = [FrameRow(r["dataset"], r["video"], int(r["frame"]), r["gt_phase"], r["gt_step"]) for r in records]
    report = records_report(rows, records, _HIERARCHIES)
    _LAST_REPORT = (key, report)
    return report


def _aggregate(key: str):
    def aggregate(records):
        value = surghi_report(records)["overall"][key]
        return None if value != value else value  # NaN (e.g. no right phase anywhere) -> None
    aggregate.__name__ = f"aggregate_{key}"
    return aggregate


METRIC_NAMES = ("phase_acc", "phase_f1", "step_acc", "step_f1", "multi_level", "both_wrong", "both_right",
                "step_given_phase", "sibling", "cousin", "semantic_step")
aggregate_phase_acc = _aggregate("phase_acc")
aggregate_phase_f1 = _aggregate("phase_f1")
aggregate_step_acc = _aggregate("step_acc")
aggregate_step_f1 = _aggregate("step_f1")
aggregate_multi_level = _aggregate("multi_level")
aggregate_both_wrong = _aggregate("both_wrong")
aggregate_both_right = _aggregate("both_right")
aggregate_step_given_phase = _aggregate("step_given_phase")
aggregate_sibling = _aggregate("sibling")
aggregate_cousin = _aggregate("cousin")
aggregate_semantic_step = _aggregate("semantic_step")
