"""The service at scale (issue 46): scores kept in the store and read back after a restart, rescoring when the
scorer changes, several processes on one store (the boards they show, the rate limit they share).

The store-level checks run on a real SQLite file without the web; the process-level ones start real
``leaderboard serve`` processes (uvicorn) on one SQLite store and on one PostgreSQL server of the test's own."""

from __future__ import annotations

import json
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from medhorizon_tasks.benchmarks.data import load_benchmark_data
from medhorizon_tasks.commands.data_args import synthetic_paths
from medhorizon_tasks.leaderboard import build
from medhorizon_tasks.leaderboard.build import build_leaderboard
from medhorizon_tasks.leaderboard.submission import FORMAT, FORMAT_VERSION, validate_submission
from medhorizon_tasks.service import boards as boards_mod
from medhorizon_tasks.service.boards import Boards, entry_from_store, scorer_key, stored_score
from medhorizon_tasks.service.security import RateLimit
from medhorizon_tasks.service.store import OverRate, Store
from service_server import Postgres, Server, post_submission

NR = 200


@pytest.fixture(scope="module")
def datas(synthetic):
    return {b: load_benchmark_data(b, synthetic_paths(b)[0]) for b in ("medhorizon", "sureon", "surghi")}


def _meta(data, model: str, **kw) -> dict:
    return {"model": model, "size": "7B", "input_protocol": {"fps": 1, "cap": 64, "frames": None},
            "date": "2026-11-30", "benchmark": data.benchmark, "data_version": data.version, **kw}


def mcq_sub(data, model: str, accuracy: float, seed: int, **kw) -> dict:
    rng = random.Random(seed)
    letters = "ABCDEFG" if data.benchmark == "sureon" else "ABCD"
    preds = []
    for it in data.items:
        kind = getattr(it, "kind", "mcq")
        right = rng.random() < accuracy
        if kind == "to":
            order = list(it.answer) if right else list(reversed(it.answer))
            preds.append({"id": it.uid, "output": "Answer: " + " > ".join(order)})
        elif kind == "sm":
            preds.append({"id": it.uid, "output": "A summary."})
        else:
            letter = it.answer if right else letters[(letters.index(it.answer) + 1 + rng.randrange(3)) % len(letters)]
            preds.append({"id": it.uid, "output": f"The answer is ({letter})."})
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "metadata": _meta(data, model, **kw),
            "predictions": preds}


def surghi_sub(data, model: str, accuracy: float, seed: int) -> dict:
    rng = random.Random(seed)
    steps = sorted({r.step for r in data.rows})
    preds = [{"dataset": r.dataset, "video": r.video, "frame": r.frame, "phase": r.phase,
              "step": r.step if rng.random() < accuracy else rng.choice(steps)} for r in data.rows]
    meta = _meta(data, model)
    meta["input_protocol"] = {"fps": 1, "cap": None, "frames": None}
    return {"format": FORMAT, "format_version": FORMAT_VERSION, "metadata": meta, "predictions": preds}


def every_benchmark(datas) -> list[dict]:
    """Submissions of the three benchmarks, Sureon with a visual and a blind entry of one model (its MG)."""
    return ([mcq_sub(datas["medhorizon"], f"mh-{k}", 0.4 + 0.15 * k, k) for k in range(3)]
            + [mcq_sub(datas["sureon"], "su-pair", 0.8, 10, mode="visual"),
               mcq_sub(datas["sureon"], "su-pair", 0.3, 11, mode="blind"),
               mcq_sub(datas["sureon"], "su-other", 0.5, 12, mode="visual")]
            + [surghi_sub(datas["surghi"], f"sg-{k}", 0.3 + 0.3 * k, 20 + k) for k in range(2)])


def keep_as_the_service_does(boards: Boards, store: Store, sub: dict, datas) -> int:
    """Kept as an accepted upload is, every submission from one submitter token (so the service pairs Sureon's
    visual and blind entries as build pairs them by name)."""
    body = json.dumps(sub).encode()
    data = datas[sub["metadata"]["benchmark"]]
    entry = boards.score(validate_submission(sub, data), data, body)
    row, new = store.add(received=body, submission=body, benchmark=data.benchmark, data_version=data.version,
                         model=sub["metadata"]["model"], kind="submission", filename=None, submitter="token:team",
                         score=boards.to_keep(entry, data))
    assert new
    return row.id


def numbers(board) -> list[tuple]:
    return [(e.metadata["model"], e.metadata.get("mode"), e.rank, e.headline, e.ci, e.n, e.p_value, e.p_holm,
             e.significant, json.dumps(e.secondary, sort_keys=True), json.dumps(e.groups, sort_keys=True))
            for e in board.entries]


# ------------------------------------------------------------------ scores kept, not recomputed

def test_a_restarted_board_reads_the_kept_scores_and_shows_builds_numbers(datas, tmp_path, monkeypatch):
    db = f"sqlite:///{tmp_path / 'board.sqlite3'}"
    subs = every_benchmark(datas)
    store = Store(db)
    boards = Boards(store, datas, n_resamples=NR)
    ids = [keep_as_the_service_does(boards, store, s, datas) for s in subs]
    store.close()

    # a new process on the same store: nothing may be scored, no submission's bytes read
    def no_scoring(*a, **kw):
        raise AssertionError("scored again")

    monkeypatch.setattr(boards_mod, "score_entry", no_scoring)
    monkeypatch.setattr(Store, "submission_bytes", no_scoring)
    again = Store(db)
    served, _ = Boards(again, datas, n_resamples=NR, background=True).boards()
    built = build_leaderboard(subs, datas, n_resamples=NR)
    assert [b.benchmark for b in served] == [b.benchmark for b in built] == ["medhorizon", "sureon", "surghi"]
    for s, b in zip(served, built):
        assert numbers(s) == numbers(b)
        # the notes are build's but for the pairing rule of MG (the service pairs one submitter's entries)
        assert [n.split(" A visual and a blind entry are paired")[0] for n in s.notes] == \
            [n.split(" A visual and a blind entry are paired")[0] for n in b.notes]
    assert any("sent with the same submitter token" in n for n in served[1].notes)
    assert any("mg" in e.secondary for e in served[1].entries)  # Sureon's MG, from the kept correctness

    # the kept per-item correctness is the entry's, item for item and in its order
    kept = again.scores()
    assert sorted(kept) == ids
    for sid, sub in zip(ids, subs):
        data = datas[sub["metadata"]["benchmark"]]
        fresh = build.score_entry(validate_submission(sub, data), data, n_resamples=NR)
        back = entry_from_store(kept[sid], data)
        if isinstance(fresh.paired, dict) and data.benchmark != "surghi":
            assert list(back.paired.items()) == list(fresh.paired.items())
            assert kept[sid].correct and len(kept[sid].correct) <= 2 * (len(data.ids) // 8 + 1)  # bits, not JSON
        else:
            assert back.paired == fresh.paired

    # a deleted entry's score goes with it
    again.act(ids[0], "delete", "test")
    assert ids[0] not in again.scores()
    again.close()


def test_a_changed_scorer_is_rescored_in_the_background_and_never_served_stale(datas, tmp_path, monkeypatch):
    db = f"sqlite:///{tmp_path / 'board.sqlite3'}"
    subs = [mcq_sub(datas["medhorizon"], f"m{k}", 0.3 + 0.2 * k, k) for k in range(3)]
    store = Store(db)
    old = Boards(store, datas, n_resamples=NR)
    for s in subs:
        keep_as_the_service_does(old, store, s, datas)
    assert {s.scorer for s in store.scores().values()} == {scorer_key(NR, 0)}

    # the scoring code changes: its version is bumped
    monkeypatch.setattr(boards_mod, "SCORER_VERSION", build.SCORER_VERSION + 1)
    new_key = scorer_key(NR, 0)
    assert new_key != old.scorer
    gate = threading.Event()
    real = boards_mod.score_entry

    def held_scoring(*a, **kw):  # the rescoring waits until the stale board has been looked at
        gate.wait(60)
        return real(*a, **kw)

    monkeypatch.setattr(boards_mod, "score_entry", held_scoring)
    boards = Boards(store, datas, n_resamples=NR, background=True)
    stale, _ = boards.boards()
    assert stale == [] and boards.rescoring() == 3  # left off, not shown with the old numbers
    assert boards_mod.board_json(stale, [], boards.rescoring())["rescoring"] == 3
    gate.set()
    deadline = time.monotonic() + 120
    while boards.rescoring() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert boards.rescoring() == 0
    assert {s.scorer for s in store.scores().values()} == {new_key}
    fresh, _ = boards.boards()
    assert numbers(fresh[0]) == numbers(build_leaderboard(subs, datas, n_resamples=NR)[0])

    # some rescored, one not yet: the board shows the rescored ones and says how many are waiting
    gate.clear()
    monkeypatch.setattr(boards_mod, "SCORER_VERSION", build.SCORER_VERSION + 2)
    partial = Boards(store, datas, n_resamples=NR, background=True)
    first = store.list()[0]
    partial_entry = real(validate_submission(subs[0], datas["medhorizon"]), datas["medhorizon"], n_resamples=NR)
    # one row already rescored, as another process would have done
    store.keep_score(stored_score(partial_entry, datas["medhorizon"], partial.scorer, first.id))
    shown, _ = partial.boards()
    assert [e.metadata["model"] for e in shown[0].entries] == ["m0"]
    assert any("2 more entries are being rescored" in n for n in shown[0].notes)
    gate.set()
    deadline = time.monotonic() + 120
    while partial.rescoring() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [e.metadata["model"] for e in partial.boards()[0][0].entries] == ["m2", "m1", "m0"]
    store.close()


# ------------------------------------------------------------------ the rate limit, in the store

def test_the_rate_limit_counts_accepted_submissions_across_stores_and_attempts_under_a_higher_cap(datas, tmp_path):
    db = f"sqlite:///{tmp_path / 'board.sqlite3'}"
    a, b = Store(db), Store(db)  # two processes' stores on one database
    limit_a, limit_b = RateLimit(2, 3600, a), RateLimit(2, 3600, b)
    assert limit_a.attempts == 30 and "at most 2 accepted submissions per hour" in limit_a.describe()
    # refused attempts do not use up the accepted submissions: 20 attempts, then still two may be accepted
    for _ in range(20):
        assert limit_a.check("address:x") is None
    data = datas["medhorizon"]

    def accept(store, limit, k):
        body = json.dumps(mcq_sub(data, f"r{k}", 0.5, k)).encode()
        try:
            return store.add(received=body, submission=body, benchmark="medhorizon", data_version=data.version,
                             model=f"r{k}", kind="submission", filename=None, submitter="address:x",
                             rate=limit.accepted("address:x"))[1]
        except OverRate as exc:
            assert 3500 < exc.wait <= 3600
            return False

    # eight at once, from two stores: exactly two kept
    with ThreadPoolExecutor(8) as pool:
        kept = list(pool.map(lambda k: accept(*((a, limit_a) if k % 2 else (b, limit_b)), k), range(8)))
    assert sum(kept) == 2 and len(a.list()) == 2
    over = limit_b.check("address:x")
    assert over is not None and "at most 2 accepted submissions per hour" in over[1]
    assert limit_b.check("address:other") is None  # per submitter
    # the attempts' cap: 30 in all (20 + 1 made above, 9 more), then refused
    for _ in range(9):
        limit_a.check("address:x")
    wait = limit_a.check("address:x")
    assert wait is not None and "more than 30 attempts per hour" in wait[1]
    a.close()
    b.close()


# ------------------------------------------------------------------ several processes on one store

@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def two_servers(request, datas, tmp_path_factory):
    """Two `serve` processes (replicas) on one store, the second with two uvicorn workers itself."""
    folder = tmp_path_factory.mktemp(f"replicas-{request.param}")
    pg = Postgres(folder / "pg").start() if request.param == "postgresql" else None
    db = pg.url if pg else f"sqlite:///{folder / 'board.sqlite3'}"
    one = Server(db, "--rate-limit", "2/hour", log=folder / "one.log").start()
    two = Server(db, "--rate-limit", "2/hour", "--workers", "2", log=folder / "two.log").start()
    yield one, two
    one.stop()
    two.stop()
    if pg:
        pg.stop()


def _board(srv) -> dict:
    r = httpx.get(srv.url + "/api/board", timeout=60)
    assert r.status_code == 200
    return r.json()


def test_two_processes_on_one_store_show_one_board_and_share_one_rate_limit(two_servers, datas):
    one, two = two_servers
    sub = lambda k: mcq_sub(datas["medhorizon"], f"replica-{k}", 0.5 + 0.1 * k, 100 + k)  # noqa: E731
    # refused uploads are attempts, not submissions: they use up nothing of the 2/hour
    for _ in range(3):
        bad = post_submission(one.url, {"format": FORMAT})
        assert bad.status_code == 422
    first = post_submission(one.url, sub(0))
    assert first.status_code == 201
    # accepted by one, on the other's next board (every worker of it: several requests)
    for _ in range(4):
        assert [e["model"] for e in _board(two)["boards"][0]["entries"]] == ["replica-0"]
    second = post_submission(two.url, sub(1))
    assert second.status_code == 201
    assert sorted(e["model"] for e in _board(one)["boards"][0]["entries"]) == ["replica-0", "replica-1"]
    # the limit of 2/hour holds across both processes (and both workers of the second): two kept, not four
    for srv, k in ((one, 2), (two, 3), (two, 4)):
        r = post_submission(srv.url, sub(k))
        assert r.status_code == 429, r.text
        assert "at most 2 accepted submissions per hour" in r.json()["problems"][0]
        assert int(r.headers["retry-after"]) > 3000
    assert len(_board(one)["boards"][0]["entries"]) == 2
    # the form says the limit
    form = httpx.get(two.url + "/submit", timeout=30).text
    assert "at most 2 accepted submissions per hour" in form
    # a form from one worker is taken by the other (one CSRF key for the processes of one serve)
    for _ in range(3):
        page = httpx.get(two.url + "/submit", timeout=30)
        token = page.text.split('name="csrf" value="', 1)[1].split('"', 1)[0]
        r = httpx.post(two.url + "/submit", data={"csrf": token}, cookies=page.cookies, timeout=30,
                       files={"file": ("s.json", json.dumps(sub(5)).encode(), "application/json")})
        assert r.status_code == 429  # past the CSRF check on whichever worker: the limit answers


def test_a_killed_server_restarts_with_the_same_board_from_its_kept_scores(datas, tmp_path):
    db = f"sqlite:///{tmp_path / 'board.sqlite3'}"
    subs = every_benchmark(datas)
    srv = Server(db, "--rate-limit", "10000/minute", "--n-resamples", str(NR), log=tmp_path / "a.log").start()
    for s in subs:
        assert post_submission(srv.url, s).status_code == 201
    before = _board(srv)
    srv.kill()
    again = Server(db, "--rate-limit", "10000/minute", "--n-resamples", str(NR), log=tmp_path / "b.log").start()
    try:
        after = _board(again)
    finally:
        again.stop()
    assert after == before and after["rescoring"] == 0
    built = build_leaderboard(subs, datas, n_resamples=NR)
    for b, served in zip(built, after["boards"]):
        assert [(e["model"], e["rank"], e["value"]) for e in served["entries"]] == \
            [(e.metadata["model"], e.rank, e.headline) for e in b.entries]
    kept = Store(db).scores()
    assert len(kept) == len(subs)


def test_mcnemar_of_runs_in_the_same_order_counts_as_the_item_by_item_path():
    """The board's tests count their cells by C loops when both runs list the same items in the same order; the
    same runs in another order take the item-by-item path: the same result."""
    from medhorizon_tasks.core.stats import mcnemar_test

    rng = random.Random(3)
    for n, p in ((1253, 0.5), (40, 0.9), (0, 0.5)):
        a = {f"u{k}": rng.random() < p for k in range(n)}
        b = {f"u{k}": rng.random() < p for k in range(n)}
        shuffled = dict(sorted(b.items(), key=lambda kv: rng.random()))
        assert mcnemar_test(a, b) == mcnemar_test(a, shuffled)
    with pytest.raises(ValueError, match="only in b"):
        mcnemar_test({"x": True}, {"x": True, "y": False})
    with pytest.raises(ValueError):
        mcnemar_test({"x": True}, {"x": 2})
