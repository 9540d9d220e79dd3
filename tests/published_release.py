"""A MedHorizon release with exactly the published counts (paper Table 3, Table 4, appendix 6.3), for tests.

1,253 items over 340 videos; the per-task, per-answer, per-source item and
per-source video counts of the paper. Questions and options are placeholders;
no video exists (``check --no-videos``, ``score``).
"""

import json
from pathlib import Path

TASKS = {"PR": 517, "SD": 112, "RL": 60, "BPQ": 39, "LLS": 39, "Site": 47, "Hist": 47, "Size": 47, "IR": 235,
         "WR": 26, "RSR": 26, "CPR": 26, "LA": 32}
ANSWERS = {"A": 309, "B": 303, "C": 319, "D": 322}
SOURCES = {"AutoLaparo": (44, 20), "Galar": (60, 44), "GraSP": (112, 13), "MultiBypass": (403, 125),
           "PitVQA": (13, 10), "REAL-Colon": (251, 39), "TMVP": (340, 59), "US-Study": (30, 30)}


def _answers() -> list[str]:
    """1,253 answer letters with the published counts, interleaved (so every task gets all four)."""
    left = dict(ANSWERS)
    out = []
    while any(left.values()):
        for letter in "ABCD":
            if left[letter]:
                out.append(letter)
                left[letter] -= 1
    return out


def published_items() -> list[dict]:
    """Flat item dicts ``{uid, task, answer, source, video}`` with the published counts."""
    tasks = [code for code, n in TASKS.items() for _ in range(n)]
    answers = _answers()
    items = []
    for source, (n_items, n_videos) in SOURCES.items():
        for j in range(n_items):
            uid = len(items)
            items.append({"uid": uid, "task": tasks[uid], "answer": answers[uid], "source": source,
                          "video": f"{source}-{j % n_videos:03d}"})
    return items


def write_release(path: Path, items: list[dict]) -> Path:
    """The items as a release JSONL (one record per video)."""
    videos: dict[str, dict] = {}
    for it in items:
        rec = videos.setdefault(it["video"], {"key": it["video"], "dataset": it["source"],
                                              "video_path": f"{it['video']}.mp4", "num_frames": 600, "fps": 1.0,
                                              "duration_seconds": 600.0, "qa": []})
        rec["qa"].append({"uid": it["uid"], "question": f"Question {it['uid']}?",
                          "options": ["first", "second", "third", "fourth"], "answer": it["answer"],
                          "task_id": it["task"], "evidence": {"support": "local", "frame_windows": [[10, 20]]}})
    path.write_text("".join(json.dumps(r) + "\n" for r in videos.values()))
    return path
