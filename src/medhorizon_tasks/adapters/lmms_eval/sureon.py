"""lmms-eval glue for the Sureon tasks (``sureon_visual``, ``sureon_blind`` and their synthetic twins).

Data: ``SUREON_DATA`` (the items JSONL) and ``SUREON_VIDEO_ROOT`` (default: the
data file's folder); the synthetic sample is generated on first use. The metric
``accuracy`` is μ, pooled over the accuracy-scored items (MCQ and TO); SM
summaries are kept out of it and judged afterwards by ``medhorizon-tasks score
--benchmark sureon --judge`` on the samples file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ...benchmarks.medhorizon.protocol import video_file, video_index
from ...benchmarks.sureon import scoring
from ...benchmarks.sureon.items import load_items, parse_item
from ...benchmarks.sureon.protocol import build_prompt, load_frames, plan_for
from ...errors import MedHorizonError, VideoError
from .visuals import frames_or_error

DATA_ENV, VIDEO_ROOT_ENV = "SUREON_DATA", "SUREON_VIDEO_ROOT"
_VIDEO_ERRORS: dict[str, str] = {}


def _dataset(path: Path, root: Path):
    from datasets import Dataset

    items = load_items(path)  # validates the whole file first
    raw = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            raw[str(rec["uid"])] = line
    return Dataset.from_list([{"uid": it.uid, "category": it.category, "item_json": raw[it.uid],
                               "video_root": str(root)} for it in items])


def process_docs_data(dataset):
    path = os.environ.get(DATA_ENV)
    if not path:
        raise MedHorizonError(f"The sureon tasks need {DATA_ENV}=/path/to/items.jsonl (and {VIDEO_ROOT_ENV}); "
                              "for the synthetic sample use --tasks sureon_synthetic_visual")
    data = Path(path).expanduser()
    return _dataset(data, Path(os.environ.get(VIDEO_ROOT_ENV) or data.parent))


def process_docs_synthetic(dataset):
    from ...data.synthetic_sureon import build_sureon_sample

    sample = build_sureon_sample()
    return _dataset(sample.data_path, sample.video_root)


def _item(doc):
    problems: list[str] = []
    item = parse_item(json.loads(doc["item_json"]), 0, problems)
    if item is None:
        raise MedHorizonError("; ".join(problems))
    return item


def doc_to_visual(doc, lmms_eval_specific_kwargs=None):
    if (lmms_eval_specific_kwargs or {}).get("mode", "visual") != "visual":
        return []
    item = _item(doc)
    return frames_or_error(lambda: load_frames(item, doc["video_root"])[1], _VIDEO_ERRORS, item.uid, "sureon")


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    item = _item(doc)
    if (lmms_eval_specific_kwargs or {}).get("mode", "visual") != "visual":
        return build_prompt(item)
    try:
        return build_prompt(item, plan_for(item, video_index(video_file(item, doc["video_root"]), item.uid)))
    except (VideoError, ValueError):
        return build_prompt(item)  # the item is reported as a video error


def _process(doc, results, mode):
    item = _item(doc)
    raw = results[0] if results else None
    error = _VIDEO_ERRORS.get(item.uid) if mode == "visual" else None
    record = scoring.error_record(item, mode, error) if error else scoring.score_item(item, raw, mode)
    record["raw_output"] = raw
    return {"accuracy": record}


def process_results_visual(doc, results):
    return _process(doc, results, "visual")


def process_results_blind(doc, results):
    return _process(doc, results, "blind")


def aggregate_mu(records):
    scored = [r for r in records if r["kind"] != "sm"]
    return sum(1 for r in scored if r["correct"]) / len(scored) if scored else None
