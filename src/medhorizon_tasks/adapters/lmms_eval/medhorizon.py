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

A video that is missing, unreadable or does not match the data does not stop
the run: the model gets no frames for that item, and its record is marked
``status: "error"`` with the reason (counted as wrong, reported under
``video_errors``) in the tasks whose frame plan failed, and only in those.
"""

from __future__ import annotations

from pathlib import Path

from loguru import logger

from ...benchmarks.medhorizon import scoring
from ...benchmarks.medhorizon.protocol import FrameSetting, build_prompt, decode_frames, frames_shown, prepare
from ...benchmarks.medhorizon.release import DATA_ENV, Item, items_to_dataset, load_release
from ...benchmarks.standard import setting_departures
from ...core.errors import MedHorizonError, VideoError
from ...core.paths import VIDEO_ROOT_ENV, default_video_root
from ...core.settings import env_text
from ...core.video.status import outcome_key
from .visuals import decoded_frames, task_kwargs, video_error, video_file


def _with_root(items: list[Item], root: Path):
    ds = items_to_dataset(items)
    return ds.add_column("video_root", [str(root)] * len(ds))


def process_docs_release(dataset):
    """Replace the placeholder dataset with the MedHorizon release named by ``$MEDHORIZON_DATA``."""
    path = env_text(DATA_ENV)
    if not path:
        raise MedHorizonError(
            f"The medhorizon tasks need the release: set {DATA_ENV}=/path/to/mlvbench_test.jsonl (or a local "
            f"dataset folder) and {VIDEO_ROOT_ENV}=/path/to/videos. For the embedded synthetic benchmark use "
            "--tasks medhorizon_synthetic.")
    return _with_root(load_release(path), default_video_root(path))


def process_docs_synthetic(dataset):
    """Replace the placeholder dataset with the embedded synthetic benchmark (generated once, cached)."""
    from ...data.synthetic.medhorizon import build_synthetic

    bench = build_synthetic(progress=False)
    return _with_root(load_release(bench.data_path), bench.video_root)


def _item(doc: dict) -> Item:
    return Item.from_record(doc)


def _key(item: Item, setting: FrameSetting, doc: dict) -> str:
    return outcome_key("medhorizon", doc["video_root"], item.uid, setting.key())


def _decode(item: Item, setting: FrameSetting, doc: dict):
    def decode():
        video = prepare(item, setting, doc["video_root"])
        return video.plan, decode_frames(video, setting, item.uid), video.duration_s
    return decode


def doc_to_visual(doc: dict, lmms_eval_specific_kwargs=None):
    """The planned frames as PIL images with their timestamps, chronological (empty in text mode or when
    the video is broken)."""
    setting = FrameSetting.from_kwargs(lmms_eval_specific_kwargs)
    if not setting.shows_frames:
        return []
    item = _item(doc)
    return decoded_frames(_key(item, setting, doc), _decode(item, setting, doc), "medhorizon",
                          video_file(doc["video_root"], item.video_path, item.uid), times=setting.shows_times)


def doc_to_text(doc: dict, lmms_eval_specific_kwargs=None) -> str:
    setting = FrameSetting.from_kwargs(lmms_eval_specific_kwargs)
    item = _item(doc)
    if not setting.shows_frames:
        return build_prompt(item)
    try:
        video = prepare(item, setting, doc["video_root"])
    except VideoError:
        # reported per item by doc_to_visual / process_results; the model gets no frames
        return build_prompt(item)
    return build_prompt(item, video.plan, video.duration_s, times=setting.shows_times)


def doc_to_target(doc: dict) -> str:
    return doc["answer"]


def process_results(doc: dict, results) -> dict:
    """The item's record under the task's own frame setting (mode, budget, order, ...), and beside it the
    authors' rule's reading: ``accuracy_authors`` (1 when it is right) and ``rules_disagree`` (1 when the
    two rules read different answers), from :func:`scoring.beside_flags`."""
    setting = FrameSetting.from_kwargs(task_kwargs())
    item = _item(doc)
    raw = results[0] if results else None
    error = None
    if setting.shows_frames:
        error = video_error(_key(item, setting, doc), _decode(item, setting, doc))
    shown = None if error else frames_shown(item, setting, doc["video_root"])
    record = scoring.record_for(item, raw, setting.mode, error, shown, setting_departures(setting))
    right, differ = scoring.beside_flags(record)
    return {"accuracy": record, "accuracy_authors": int(right), "rules_disagree": int(differ)}


# The task YAMLs of earlier releases name one hook per mode; the mode now comes from the task itself.
process_results_visual = process_results_text = process_results_oracle = process_results


def aggregate_accuracy(records: list[dict]) -> float:
    """Pooled item-level accuracy (0..1); the full report comes from ``medhorizon-tasks score``."""
    rep = scoring.report(records)
    o = rep["overall"]
    logger.info(f"[medhorizon] accuracy {o['correct']}/{o['n']} = {o['accuracy']:.4f} "
                f"(invalid {o['invalid']}, video errors {o['errors']}, request errors {o['request_errors']}, "
                f"refused {o['refused']}, truncated {o['truncated']}, out of memory {o['oom']})")
    for e in rep["video_errors"]:
        logger.warning(f"[medhorizon] video error, item {e['uid']}: {e['error']}")
    line = scoring.rules_line(rep)
    if line:
        logger.info(f"[medhorizon] {line}")
    for line in scoring.fallback_lines(rep):
        logger.warning(f"[medhorizon] {line}")
    for f in rep["failed_responses"]:
        logger.warning(f"[medhorizon] no answer from the model, item {f['uid']}: {f['status']} ({f['reason']})")
    return o["accuracy"]


def aggregate_accuracy_authors(flags: list[int]) -> float:
    """Pooled accuracy under the MedHorizon authors' rule (the flags :func:`process_results` wrote)."""
    return sum(flags) / len(flags) if flags else float("nan")


def aggregate_rules_disagree(flags: list[int]) -> int:
    """The number of items on which the authors' rule and the default rule read different answers."""
    return int(sum(flags))
