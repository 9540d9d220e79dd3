"""lmms-eval glue for the MedHorizon tasks in ``task_yaml/``.

Every protocol rule lives in :mod:`medhorizon_tasks.benchmarks.medhorizon`;
this module only maps lmms-eval's hooks onto it. Task variants differ only in
``lmms_eval_specific_kwargs`` (``mode``, ``fps``, ``cap``, ``frames``,
``max_side``).

Where data lives (no package editing):
- ``MEDHORIZON_DATA``: the release JSONL or a local Hugging Face dataset folder;
- ``MEDHORIZON_VIDEO_ROOT``: the folder that the release's ``video_path``
  values are relative to (default: the folder holding the data);
- ``MEDHORIZON_SYNTHETIC_DIR``: where the embedded synthetic benchmark is
  generated (default: ``~/.cache/medhorizon_tasks/synthetic/v<N>``).

A video that is missing or unreadable does not stop the run: the model gets no
frames for that item, and its record is marked ``status: "error"`` with the
reason (counted as wrong, reported under ``video_errors``).
"""

from __future__ import annotations

import os
from pathlib import Path

from loguru import logger

from ...benchmarks.medhorizon import scoring
from ...benchmarks.medhorizon.protocol import FrameSetting, build_prompt, load_frames, plan_for, video_file, video_index
from ...benchmarks.medhorizon.release import DATA_ENV, Item, items_to_dataset, load_release
from ...errors import MedHorizonError, VideoError
from ...paths import VIDEO_ROOT_ENV, default_video_root
from .visuals import frames_or_error

# uid -> reason, for items whose video failed in this process (read by process_results).
_VIDEO_ERRORS: dict[tuple[str, str], str] = {}


def _with_root(items: list[Item], root: Path):
    ds = items_to_dataset(items)
    return ds.add_column("video_root", [str(root)] * len(ds))


def process_docs_release(dataset):
    """Replace the placeholder dataset with the MedHorizon release named by ``$MEDHORIZON_DATA``."""
    path = os.environ.get(DATA_ENV)
    if not path:
        raise MedHorizonError(
            f"The medhorizon tasks need the release: set {DATA_ENV}=/path/to/mlvbench_test.jsonl (or a local "
            f"dataset folder) and {VIDEO_ROOT_ENV}=/path/to/videos. For the embedded synthetic benchmark use "
            "--tasks medhorizon_synthetic.")
    return _with_root(load_release(path), default_video_root(path))


def process_docs_synthetic(dataset):
    """Replace the placeholder dataset with the embedded synthetic benchmark (generated once, cached)."""
    from ...data.synthetic import build_synthetic

    bench = build_synthetic(progress=False)
    return _with_root(load_release(bench.data_path), bench.video_root)


def _item(doc: dict) -> Item:
    return Item.from_record(doc)


def doc_to_visual(doc: dict, lmms_eval_specific_kwargs=None):
    """The planned frames as PIL images, chronological (empty in text mode or when the video is broken)."""
    setting = FrameSetting.from_kwargs(lmms_eval_specific_kwargs)
    if not setting.shows_frames:
        return []
    item = _item(doc)
    return frames_or_error(lambda: load_frames(item, setting, doc["video_root"])[1], _VIDEO_ERRORS,
                           (item.uid, setting.mode), "medhorizon")


def doc_to_text(doc: dict, lmms_eval_specific_kwargs=None) -> str:
    setting = FrameSetting.from_kwargs(lmms_eval_specific_kwargs)
    item = _item(doc)
    if not setting.shows_frames:
        return build_prompt(item)
    try:
        path = video_file(item, doc["video_root"])
        return build_prompt(item, plan_for(item, setting, video_index(path, item.uid), path))
    except VideoError:
        # reported per item by doc_to_visual / process_results; the model gets no frames
        return build_prompt(item)


def doc_to_target(doc: dict) -> str:
    return doc["answer"]


def _process(doc: dict, results, mode: str) -> dict:
    item = _item(doc)
    raw = results[0] if results else None
    error = _VIDEO_ERRORS.get((item.uid, mode))
    if error is None and mode != "text":
        # A rank that never called doc_to_visual for this doc (cached response) re-checks cheaply.
        try:
            video_index(video_file(item, doc["video_root"]), item.uid)
        except VideoError as exc:
            error = str(exc)
    record = scoring.error_record(item, mode, error) if error else scoring.score_item(item, raw, mode)
    if error:
        record["raw_output"] = raw
    return {"accuracy": record}


def process_results_visual(doc, results):
    return _process(doc, results, "visual")


def process_results_text(doc, results):
    return _process(doc, results, "text")


def process_results_oracle(doc, results):
    return _process(doc, results, "oracle")


def aggregate_accuracy(records: list[dict]) -> float:
    """Pooled item-level accuracy (0..1); the full report comes from ``medhorizon-tasks score``."""
    rep = scoring.report(records)
    o = rep["overall"]
    logger.info(f"[medhorizon] accuracy {o['correct']}/{o['n']} = {o['accuracy']:.4f} "
                f"(invalid {o['invalid']}, video errors {o['errors']})")
    for e in rep["video_errors"]:
        logger.warning(f"[medhorizon] video error, item {e['uid']}: {e['error']}")
    return o["accuracy"]
