"""The synthetic MedHorizon benchmark's questions: one JSONL record per video of the layout, a pure
function of the seed (:func:`plan_synthetic`).

The seed drives the questions' order, options, answers, tags and evidence
placement: windows of 3-8 s (1 or 2 per question, never overlapping within a
video), each long video with a window in its last tenth and every video one
in its first half (see :mod:`.layout` for the videos and :mod:`.vocabulary`
for the wording).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import numpy as np

from . import layout
from .layout import (
    _ENDS_ON_LAST_FRAME,
    _GLOBAL_TASKS,
    _LESION_TASKS,
    _ORDER_VIDEOS,
    _STARTS_AT_FRAME_0,
    LETTERS,
    ORDER_MARK,
    SYNTHETIC_SOURCES,
    SYNTHETIC_TASKS,
    _slug,
)
from .vocabulary import _options_for, _question_text

_MIN_WINDOW_S, _MAX_WINDOW_S = 3.0, 8.0
_GAP_S = 2.0  # background seconds kept between windows of different questions
_LONG_SPARSITY_LIMIT = 0.005


# ---------------------------------------------------------------------------
# Planning (pure)
# ---------------------------------------------------------------------------


def _duration_tier(seconds: float) -> str:
    if seconds < 600:
        return "<10min"
    if seconds < 3600:
        return "10-60min"
    return ">=1h"


def _overlaps(start: int, end: int, taken: list[tuple[int, int]], gap: int) -> bool:
    return any(start <= e + gap and end >= s - gap for s, e in taken)


def _place(
    rng: np.random.Generator,
    lo: int,
    hi: int,
    length: int,
    taken: list[tuple[int, int]],
    gap: int,
) -> tuple[int, int]:
    """A window of ``length`` frames with start in [lo, hi - length], not near ``taken``."""
    last_start = hi - length
    if last_start < lo:
        raise RuntimeError("no room for an evidence window")
    for _ in range(10_000):
        s = int(rng.integers(lo, last_start + 1))
        if not _overlaps(s, s + length - 1, taken, gap):
            return s, s + length - 1
    raise RuntimeError("could not place a non-overlapping evidence window")


def _window_length(rng: np.random.Generator, fps: float) -> int:
    seconds = float(rng.uniform(_MIN_WINDOW_S, _MAX_WINDOW_S))
    n = round(seconds * fps)
    return max(
        int(np.ceil(_MIN_WINDOW_S * fps)), min(n, int(np.floor(_MAX_WINDOW_S * fps)))
    )


def plan_synthetic(seed: int = 0) -> list[dict[str, Any]]:
    """The benchmark's JSONL records (one per video), a pure function of ``seed``."""
    # the version and the layout are read through their module: replacing them there changes the plan too
    rng = np.random.default_rng([int(seed) & 0xFFFFFFFF, layout.GENERATOR_VERSION])
    n_questions = sum(len(v[4]) for v in layout._VIDEO_LAYOUT) + len(_ORDER_VIDEOS)
    answers = np.tile(np.arange(4), (n_questions + 3) // 4)[:n_questions]
    rng.shuffle(answers)

    records: list[dict[str, Any]] = []
    uid = 0
    for source, index, minutes, (width, height, fps), tasks in layout._VIDEO_LAYOUT:
        organ, scene_type, _style = SYNTHETIC_SOURCES[source]
        slug = _slug(source)
        key = f"syn-{slug}-{index:02d}"
        num_frames = round(minutes * 60 * fps)
        is_long = num_frames / fps >= 3600
        gap = round(_GAP_S * fps)

        order = [tasks[i] for i in rng.permutation(len(tasks))]
        if key in _ORDER_VIDEOS:
            order.append("ORDER")
        tags = [int(t) for t in rng.choice(64, size=len(order), replace=False)]
        n_windows = [
            2 if (t in _GLOBAL_TASKS or t == "ORDER" or rng.random() < 0.2) else 1 for t in order
        ]
        lengths = [[_window_length(rng, fps) for _ in range(k)] for k in n_windows]

        # placement: the constrained windows first, then the rest anywhere.
        taken: list[tuple[int, int]] = []
        windows: list[list[tuple[int, int]]] = [[] for _ in order]
        if is_long:  # question 0's first window in the last tenth
            length = lengths[0][0]
            if key == _ENDS_ON_LAST_FRAME:
                w = (num_frames - length, num_frames - 1)
            else:
                w = _place(
                    rng, int(np.ceil(0.9 * num_frames)), num_frames, length, taken, gap
                )
            taken.append(w)
            windows[0].append(w)
        q_first_half = 1 if is_long else 0  # a window that ends in the first half
        length = lengths[q_first_half][0]
        if key == _STARTS_AT_FRAME_0:
            w = (0, length - 1)
        else:
            w = _place(rng, 0, num_frames // 2, length, taken, gap)
        taken.append(w)
        windows[q_first_half].append(w)
        for qi, lens in enumerate(lengths):
            for length in lens[len(windows[qi]) :]:
                w = _place(rng, 0, num_frames, length, taken, gap)
                taken.append(w)
                windows[qi].append(w)

        qa: list[dict[str, Any]] = []
        for qi, kind in enumerate(order):
            task = "RSR" if kind == "ORDER" else kind
            answer_index = int(answers[uid])
            options = _options_for(kind, source, rng)
            # put a randomly chosen option at the answer position
            correct = options.pop(int(rng.integers(0, 4)))
            options.insert(answer_index, correct)
            if uid % 7 == 3:
                options_field: Any = {
                    LETTERS[i]: f"{LETTERS[i]}. {o}" for i, o in enumerate(options)
                }
            else:
                options_field = options
            frame_windows = sorted(windows[qi])
            if is_long:
                covered = sum(e - s + 1 for s, e in frame_windows)
                assert covered < _LONG_SPARSITY_LIMIT * num_frames, (key, task, covered)
            if task in _GLOBAL_TASKS:
                support = "global"
            elif task in _LESION_TASKS and source in ("REAL-Colon", "Galar"):
                support = "proxy"
            else:
                support = "local"
            name, task_class, category = SYNTHETIC_TASKS[task]
            mark = f"[probe #{tags[qi]} {ORDER_MARK}]" if kind == "ORDER" else f"[probe #{tags[qi]}]"
            extra: dict[str, Any] = {}
            if kind == "ORDER":
                # the earlier window shows the answer, the later one a decoy option
                decoy = (answer_index + 1 + int(rng.integers(0, 3))) % 4
                extra["synthetic_codes"] = [[tags[qi], answer_index], [tags[qi], decoy]]
            qa.append(
                {
                    "uid": uid,
                    "question": f"{_question_text(kind, source, rng)} {mark}",
                    "options": options_field,
                    "answer": LETTERS[answer_index],
                    "task_id": task,
                    "task_name": name,
                    "task_class": task_class,
                    "category": category,
                    "evidence": {
                        "support": support,
                        "frame_windows": [[s, e] for s, e in frame_windows],
                    },
                    "synthetic_tag": tags[qi],
                    **extra,
                }
            )
            uid += 1

        records.append(
            {
                "key": key,
                "dataset": source,
                "organ": organ,
                "scene_type": scene_type,
                "duration_tier": _duration_tier(num_frames / fps),
                "video_path": f"{slug}/{key}.mp4",
                "num_frames": num_frames,
                "fps": float(fps),
                "duration_seconds": num_frames / fps,
                "split": "test",
                "qa": qa,
            }
        )
    return records


def jsonl_bytes(records: Iterable[dict[str, Any]]) -> bytes:
    """The exact bytes written to the JSONL file for ``records``."""
    return "".join(json.dumps(r, ensure_ascii=True) + "\n" for r in records).encode(
        "utf-8"
    )
