"""lmms-eval glue for the Sureon tasks (``sureon_visual``, ``sureon_blind`` and their synthetic twins).

Data: ``SUREON_DATA`` (the items JSONL) and ``SUREON_VIDEO_ROOT`` (default: the
data file's folder); the synthetic sample is generated on first use. The visual
tasks blur text and faces in their frames (the paper's pass); the ``*_noblur``
tasks (task kwarg ``blur: false``) and ``SUREON_BLUR=0`` show the raw frames. The metric
``accuracy`` is μ, pooled over the accuracy-scored items (MCQ and TO); SM
summaries are kept out of it and judged afterwards by ``medhorizon-tasks score
--benchmark sureon --judge`` on the samples file.
"""

from __future__ import annotations

import json
from pathlib import Path

from ...benchmarks.sureon import scoring
from ...benchmarks.sureon.items import load_items, parse_item
from ...benchmarks.sureon.protocol import (
    blur_enabled,
    build_prompt,
    decode_frames,
    departures,
    prepare,
    prompt_parts,
    setting_key,
)
from ...core.errors import MedHorizonError, VideoError
from ...core.predictions import parse_uid
from ...core.safeio import iter_jsonl
from ...core.settings import env_text
from ...core.video.planned_frames import PlannedFrames
from ...core.video.size import PixelBudget
from ...core.video.status import outcome_key
from .visuals import decoded_frames, task_kwargs, video_error, video_file

DATA_ENV, VIDEO_ROOT_ENV = "SUREON_DATA", "SUREON_VIDEO_ROOT"


def _dataset(path: Path, root: Path):
    from datasets import Dataset

    items = load_items(path)  # validates the whole file first
    # each item's record as read (the same reader, so a byte-order mark or a U+2028 in a text is no problem)
    raw = {parse_uid(rec["uid"]): json.dumps(rec) for _, rec in iter_jsonl(path)}
    return Dataset.from_list([{"uid": it.uid, "category": it.category, "item_json": raw[it.uid],
                               "video_root": str(root)} for it in items])


def process_docs_data(dataset):
    path = env_text(DATA_ENV)
    if not path:
        raise MedHorizonError(f"The sureon tasks need {DATA_ENV}=/path/to/items.jsonl (and {VIDEO_ROOT_ENV}); "
                              "for the synthetic sample use --tasks sureon_synthetic_visual")
    data = Path(path).expanduser()
    return _dataset(data, Path(env_text(VIDEO_ROOT_ENV) or data.parent))


def process_docs_synthetic(dataset):
    from ...data.synthetic.sureon import build_sureon_sample

    sample = build_sureon_sample()
    return _dataset(sample.data_path, sample.video_root)


def _item(doc):
    problems: list[str] = []
    item = parse_item(json.loads(doc["item_json"]), 0, problems)
    if item is None:
        raise MedHorizonError("; ".join(problems))
    return item


def _mode(kwargs) -> str:
    return (kwargs or {}).get("mode", "visual")


def _blur(kwargs) -> bool:
    """The visual mode's blurring pass: the task's ``blur`` kwarg, else ``$SUREON_BLUR``, else on."""
    return _mode(kwargs) == "visual" and blur_enabled((kwargs or {}).get("blur"))


def _key(item, doc, kwargs) -> str:
    return outcome_key("sureon", doc["video_root"], item.uid, setting_key(_mode(kwargs), blur=_blur(kwargs)))


def _decode(item, doc, kwargs):
    def decode():
        video = prepare(item, doc["video_root"], blur=_blur(kwargs))
        pixels = (kwargs or {}).get("frame_pixels")  # the task's total-pixel budget per request (a bridge may ask
        rule = PixelBudget(int(pixels)) if pixels else None  # for its processor's size instead)
        return video.plan, decode_frames(video, item.uid, rule=rule), video.duration_s
    return decode


def doc_to_visual(doc, lmms_eval_specific_kwargs=None):
    """The clip's frames, carrying the prompt's interleaved layout (Fig. 17: :func:`prompt_parts`) for the bridges
    that send text and images interleaved."""
    kwargs = lmms_eval_specific_kwargs
    if _mode(kwargs) != "visual":
        return []
    item = _item(doc)
    frames = decoded_frames(_key(item, doc, kwargs), _decode(item, doc, kwargs), "sureon",
                            video_file(doc["video_root"], item.video_path, item.uid))
    if not frames:
        return frames
    return PlannedFrames(frames, timestamps=frames.timestamps, policy=frames.policy, duration_s=frames.duration_s,
                         chronological=frames.chronological, interleaved=prompt_parts(item, frames))


def doc_to_messages(doc, lmms_eval_specific_kwargs=None):
    """lmms-eval's chat models: one user turn, the frames interleaved with their timestamps between the clip's
    range and the question (:func:`prompt_parts`, the rule VLMEvalKit's ``build_prompt`` follows too); the blind
    mode, and a clip whose frames failed, the text alone."""
    frames = doc_to_visual(doc, lmms_eval_specific_kwargs)
    if not frames:
        text = doc_to_text(doc, lmms_eval_specific_kwargs)
        return [{"role": "user", "content": [{"type": "text", "text": text}]}]
    content = [{"type": "image", "url": frames[p]} if isinstance(p, int) else {"type": "text", "text": p}
               for p in frames.interleaved]
    return [{"role": "user", "content": content}]


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    item = _item(doc)
    if _mode(lmms_eval_specific_kwargs) != "visual":
        return build_prompt(item)
    try:
        return build_prompt(item, prepare(item, doc["video_root"], blur=_blur(lmms_eval_specific_kwargs)).plan)
    except VideoError:
        return build_prompt(item)  # the item is reported as a video error


def process_results(doc, results):
    """The item's record in the task's mode (visual: a video error when its clip could not be decoded)."""
    kwargs = task_kwargs()
    mode = _mode(kwargs)
    item = _item(doc)
    raw = results[0] if results else None
    error = video_error(_key(item, doc, kwargs), _decode(item, doc, kwargs)) if mode == "visual" else None
    return {"accuracy": scoring.record_for(item, raw, mode, error, departures=departures(mode, _blur(kwargs)))}


# The task YAMLs of earlier releases name one hook per mode; the mode now comes from the task itself.
process_results_visual = process_results_blind = process_results


def aggregate_mu(records):
    scored = [r for r in records if r["kind"] != "sm"]
    return sum(1 for r in scored if r["correct"]) / len(scored) if scored else None
