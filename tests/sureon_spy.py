"""Sureon's interleaved prompt as a model's ``generate`` received it (issue 40, item 1), for the e2e runs that
add the Sureon task to a native-video bridge's one CLI run (tests/test_bridges_e2e.py, tests/test_rows_e2e.py).

Sureon appendix D.1 / Fig. 17: "Frames are interleaved with their timestamps, followed by the question": the
prompt the tokenizer decodes must hold, for frame k of the clip's plan (computed here from the item and its
video, independently of the bridges), the line ``Frame k at t s:`` and right after it that frame's image tokens,
in plan order, one image per planned frame, and no video input.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

TASK = "sureon_synthetic_visual_noblur"
# Sureon runs are told apart from the other task's by the clip's range, the first line of every Sureon prompt
OPENING = "This is a clip from "
STAMP = r"Frame (\d+) at (\d+\.\d) s:"


def _prompt(folder: Path, call: dict) -> str:
    from transformers import AutoTokenizer

    ids = call["kwargs"]["input_ids"]["values"][0]
    return AutoTokenizer.from_pretrained(folder).decode(ids, clean_up_tokenization_spaces=False)


def split_calls(calls: list[dict], folder: Path) -> tuple[list[dict], list[dict]]:
    """The spy's ``generate`` calls of a run on two tasks: (the other task's, Sureon's, each with its ``prompt``)."""
    other, sureon = [], []
    for call in calls:
        call = {**call, "prompt": _prompt(folder, call)}
        (sureon if OPENING in call["prompt"] else other).append(call)
    return other, sureon


def samples(out: Path) -> list[dict]:
    files = sorted(Path(out).rglob(f"*_samples_{TASK}.jsonl"))
    return [json.loads(line) for line in files[-1].read_text().splitlines()] if files else []


def planned_times(sample: dict) -> tuple[float, ...]:
    """The frame times of the clip a Sureon sample answered, as the protocol plans them (no blurring pass)."""
    from medhorizon_tasks.benchmarks.sureon.items import load_items
    from medhorizon_tasks.benchmarks.sureon.protocol import prepare
    from medhorizon_tasks.data.synthetic.sureon import build_sureon_sample

    data = build_sureon_sample()
    item = next(it for it in load_items(data.data_path) if it.uid == sample["accuracy"]["uid"])
    return prepare(item, data.video_root, blur=False).plan.timestamps


def check_interleaved(run: dict, image: str, video_marks: tuple[str, ...]) -> tuple[dict, tuple[float, ...]]:
    """Assert the layout in the one Sureon ``generate`` call of ``run`` (``sureon_generate``, ``sureon_samples``):
    the clip's range, then for every planned frame its ``Frame k at t s:`` line immediately followed by one image
    (regex ``image``), in plan order, then the question; none of ``video_marks``. Returns the call's kwargs and
    the planned times."""
    log = run["log"].read_text()[-3000:]
    assert len(run["sureon_samples"]) == 1 and len(run["sureon_generate"]) == 1, log
    call = run["sureon_generate"][0]
    prompt, times = call["prompt"], planned_times(run["sureon_samples"][0])
    assert 4 <= len(times) <= 8
    pairs = re.findall(STAMP + r"\s*(?:" + image + r")", prompt)
    assert pairs == [(str(k + 1), f"{t:.1f}") for k, t in enumerate(times)], (pairs, times)
    assert len(re.findall(image, prompt)) == len(times), "one image per planned frame, each after its line"
    assert len(re.findall(STAMP, prompt)) == len(times)
    assert prompt.index(OPENING) < prompt.index("Frame 1 at ")
    last = list(re.finditer(image, prompt))[-1]
    assert "Question: " in prompt[last.end():], "the question after the last frame"
    assert not [m for m in video_marks if m in prompt], "the frames are images, not the model's video input"
    return call["kwargs"], times
