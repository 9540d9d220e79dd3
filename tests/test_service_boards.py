"""The service's boards (``service/boards.py``) over a real SQLite store, without the web: what a new board costs.

A board is rebuilt from the store's list of submissions on every request; each entry is scored once. Ranking
a board again (a submission accepted, an entry hidden) must not read every submission's bytes from the store
again: with MedHorizon submissions of ~0.4 MiB that was about half of ranking a new board (cProfile of
Boards.boards at 30 of them: 0.15 s of 0.32 s).
"""

from __future__ import annotations

import json

import pytest

from medhorizon_tasks.benchmarks.data import load_benchmark_data
from medhorizon_tasks.leaderboard.build import rank_board, score_entry
from medhorizon_tasks.leaderboard.submission import FORMAT, FORMAT_VERSION, validate_submission
from medhorizon_tasks.service.boards import Boards
from medhorizon_tasks.service.store import Store

NR = 200
TASKS = ["PR", "SD", "RL", "BPQ"]


@pytest.fixture()
def data(tmp_path):
    recs, uid = [], 0
    for v in range(3):
        qa = []
        for t in TASKS * 2:
            qa.append({"uid": uid, "question": f"Q{uid}?", "options": [f"o{uid}-{k}" for k in range(4)],
                       "answer": "ABCD"[uid % 4], "task_id": t})
            uid += 1
        recs.append({"key": f"v{v}", "dataset": "GraSP", "video_path": f"v{v}.mp4", "num_frames": 100, "fps": 25.0,
                     "duration_seconds": 4.0, "qa": qa})
    path = tmp_path / "release.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return load_benchmark_data("medhorizon", path)


def submission(data, model: str, wrong_every: int) -> bytes:
    preds = [{"id": it.uid, "output": it.answer if i % wrong_every else "ABCD"[("ABCD".index(it.answer) + 1) % 4]}
             for i, it in enumerate(data.items)]
    return json.dumps({"format": FORMAT, "format_version": FORMAT_VERSION,
                       "metadata": {"model": model, "size": "7B", "input_protocol": {"fps": 1, "cap": 64, "frames": None},
                                    "date": "2026-11-30", "benchmark": "medhorizon", "data_version": data.version},
                       "predictions": preds}).encode()


class CountingStore(Store):
    """The real store, counting the reads of submissions' bytes."""

    reads = 0

    def submission_bytes(self, sub_id: int) -> bytes:
        self.reads += 1
        return super().submission_bytes(sub_id)


def test_a_new_board_reads_no_known_submission_again_and_keeps_builds_numbers(data, tmp_path):
    store = CountingStore(f"sqlite:///{tmp_path / 'board.sqlite3'}")
    bodies = [submission(data, f"m{k}", k + 2) for k in range(4)]
    for k, body in enumerate(bodies[:3]):
        store.add(received=body, submission=body, benchmark="medhorizon", data_version=data.version, model=f"m{k}",
                  kind="submission", filename=None, submitter=None)
    boards = Boards(store, {"medhorizon": data}, n_resamples=NR)
    first, _ = boards.boards()
    assert store.reads == 3 and len(first[0].entries) == 3  # each scored once, from the store's bytes

    # one more accepted: the new board reads the new submission only
    store.add(received=bodies[3], submission=bodies[3], benchmark="medhorizon", data_version=data.version,
              model="m3", kind="submission", filename=None, submitter=None)
    second, _ = boards.boards()
    assert store.reads == 4
    # one hidden: a board of the others, read from nothing
    hidden = store.list()[0]
    store.act(hidden.id, "hide", "test")
    third, _ = boards.boards()
    assert store.reads == 4

    # and each board is the board build makes of the same submissions
    for board, kept in ((second, bodies), (third, bodies[1:])):
        built = rank_board("medhorizon", data, [score_entry(validate_submission(json.loads(b), data), data,
                                                            n_resamples=NR) for b in kept], n_resamples=NR)
        got = [(e.metadata["model"], e.rank, e.headline, e.ci, e.p_holm) for e in board[0].entries]
        assert got == [(e.metadata["model"], e.rank, e.headline, e.ci, e.p_holm) for e in built.entries]


def test_ranks_of_a_large_board_are_one_plus_the_entries_strictly_above():
    """``rank_board``'s ranks (shared by the served and the built board): ties share a rank (1, 2, 2, 4), values
    equal to 12 decimals tie, a NaN headline is above no one and below no one; counted by bisection, not by
    comparing every pair (a 1,000-entry board spent 0.7 s there)."""
    import dataclasses
    import math
    import random

    from medhorizon_tasks.leaderboard.build import Entry, _rank
    from medhorizon_tasks.leaderboard.submission import Submission

    rng = random.Random(0)
    values = [rng.choice([0.25, 0.5, 0.5 + 1e-14, 0.75, 0.8]) if k % 3 else rng.random() for k in range(400)]
    values[7] = math.nan
    template = Entry(Submission({"model": ""}, {}, ""), 0.0, (0.0, 0.0), 1, {})
    entries = [dataclasses.replace(template, submission=Submission({"model": f"m{k}"}, {}, f"s{k}"), headline=v)
               for k, v in enumerate(values)]
    ranked = _rank(entries)
    for e in ranked:
        v = round(e.headline, 12)
        assert e.rank == 1 + sum(1 for o in values if round(o, 12) > v), (e.headline, e.rank)
    assert next(e.rank for e in ranked if math.isnan(e.headline)) == 1
    assert len({e.rank for e in ranked if e.headline in (0.5, 0.5 + 1e-14)}) == 1
