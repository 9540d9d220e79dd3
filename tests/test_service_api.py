"""The submission service through its real parts: `leaderboard serve` (uvicorn on 127.0.0.1) over SQLite and
over a PostgreSQL server the test starts itself; requests over HTTP, nothing mocked.

One server per database for most checks (module fixture); the checks that need a server of their own (a
SIGKILL, a full store, a rate limit, a newer schema) start one each."""

from __future__ import annotations

import copy
import csv
import hashlib
import io
import json
import random
import sqlite3
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from medhorizon_tasks.benchmarks.data import load_benchmark_data
from medhorizon_tasks.commands.data_args import synthetic_paths
from medhorizon_tasks.leaderboard.build import build_leaderboard
from medhorizon_tasks.leaderboard.submission import FORMAT, FORMAT_VERSION, check_submission
from medhorizon_tasks.leaderboard.tables import format_csv
from service_server import MAINTAINER_TOKEN, Postgres, Server, maintainer, post_submission, serve_command

MAX_UPLOAD_MB = 2


@pytest.fixture(scope="module")
def datas(synthetic):
    """The embedded synthetic benchmarks, as the server loads them with --synthetic."""
    return {b: load_benchmark_data(b, synthetic_paths(b)[0]) for b in ("medhorizon", "sureon", "surghi")}


def medhorizon_sub(datas, model: str, accuracy: float, seed: int, **meta) -> dict:
    data = datas["medhorizon"]
    rng = random.Random(seed)
    preds = []
    for it in data.items:
        letter = it.answer if rng.random() < accuracy else "ABCD"[("ABCD".index(it.answer) + 1 + rng.randrange(3)) % 4]
        preds.append({"id": it.uid, "output": f"The answer is ({letter})."})
    return {"format": FORMAT, "format_version": FORMAT_VERSION,
            "metadata": {"model": model, "size": "7B", "input_protocol": {"fps": 1, "cap": 64, "frames": None},
                         "date": "2026-11-30", "benchmark": "medhorizon", "data_version": data.version, **meta},
            "predictions": preds}


def surghi_sub(datas, model: str, accuracy: float, seed: int) -> dict:
    data = datas["surghi"]
    rng = random.Random(seed)
    steps = sorted({r.step for r in data.rows})
    preds = [{"dataset": r.dataset, "video": r.video, "frame": r.frame, "phase": r.phase,
              "step": r.step if rng.random() < accuracy else rng.choice(steps)} for r in data.rows]
    return {"format": FORMAT, "format_version": FORMAT_VERSION,
            "metadata": {"model": model, "size": "unknown", "input_protocol": {"fps": 1, "cap": None, "frames": None},
                         "date": "2026-11-30", "benchmark": "surghi", "data_version": data.version},
            "predictions": preds}


def dumps(sub: dict) -> bytes:
    return json.dumps(sub).encode()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(request, datas, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"service-{request.param}")
    pg = None
    if request.param == "sqlite":
        db = f"sqlite:///{folder / 'board.sqlite3'}"
    else:
        pg = Postgres(folder / "pg").start()
        db = pg.url
    srv = Server(db, "--rate-limit", "10000/minute", "--max-upload-mb", str(MAX_UPLOAD_MB),
                 log=folder / "serve.log").start()
    srv.backend = request.param
    yield srv
    srv.stop()
    if pg is not None:
        pg.stop()


def board(srv) -> dict:
    r = httpx.get(srv.url + "/api/board", timeout=60)
    assert r.status_code == 200
    return r.json()


def n_stored(srv) -> int:
    return httpx.get(srv.url + "/healthz", timeout=30).json()["submissions"]


def entries_of(b: dict, bench: str) -> list[dict]:
    return next((x["entries"] for x in b["boards"] if x["benchmark"] == bench), [])


# ------------------------------------------------------------------ accepted, on the board, as build makes it

def test_accepted_submissions_are_on_the_board_with_the_numbers_of_leaderboard_build(server, datas, tmp_path):
    subs = [medhorizon_sub(datas, f"{server.backend}-alpha", 0.9, 1), medhorizon_sub(datas, f"{server.backend}-beta",
                                                                                     0.55, 2),
            surghi_sub(datas, f"{server.backend}-enc", 0.7, 3)]
    for s in subs:
        r = post_submission(server.url, s)
        assert r.status_code == 201, r.text
        got = r.json()
        assert got["accepted"] and not got["duplicate"] and got["page"] == f"/submissions/{got['id']}"
        assert got["scores"]["value"] is not None and len(got["scores"]["ci95"]) == 2
        assert got["groups"], "the reply carries the scores per group with their intervals"
    served = board(server)
    # leaderboard build of every public submission the server holds (this test's and the module's others)
    ids = [e["id"] for x in served["boards"] for e in x["entries"]]
    files = []
    for i in ids:
        path = tmp_path / f"{i}.json"
        got = httpx.get(f"{server.url}/api/submissions/{i}", headers=maintainer(), timeout=30)
        assert got.status_code == 200
        body = json.dumps(_submission_of(server, i, datas)).encode()
        path.write_bytes(body)
        files.append(path)
    built = build_leaderboard(files, {b: datas[b] for b in ("medhorizon", "surghi")})
    for bb in built:
        by_model = {e["model"]: e for e in entries_of(served, bb.benchmark)}
        assert len(by_model) == len(bb.entries)
        for e in bb.entries:
            s = by_model[e.metadata["model"]]
            assert s["rank"] == e.rank
            assert s["value"] == pytest.approx(e.headline, abs=1e-12)
            assert s["ci95"] == pytest.approx(list(e.ci), abs=1e-12)
            assert (s["p_vs_leader_holm"] is None) == (e.p_holm is None)
            if e.p_holm is not None:
                assert s["p_vs_leader_holm"] == pytest.approx(e.p_holm, abs=1e-12)
    # the CSV is build's CSV of the same boards, but for the submission column (a page here, a file there) and
    # the two columns only the server knows, after build's: when it was received, whether it was verified
    served_csv = list(csv.DictReader(io.StringIO(httpx.get(server.url + "/board.csv", timeout=60).text)))
    built_csv = list(csv.DictReader(io.StringIO(format_csv(built))))
    assert list(served_csv[0])[-2:] == ["received_at", "verified"]
    assert all(r["verified"] == "no" and r["received_at"].startswith("20") for r in served_csv)
    strip = lambda rows: sorted(({k: v for k, v in r.items() if k not in ("submission", "received_at", "verified")}
                                 for r in rows),
                                key=lambda r: (r["benchmark"], r["model"]))
    assert strip(served_csv) == strip(built_csv)


def _submission_of(srv, sub_id: int, datas) -> dict:
    """The scored submission JSON of an entry, as the store keeps it (read from the database)."""
    from medhorizon_tasks.service.store import open_store

    store = open_store(srv.db)
    try:
        return json.loads(store.submission_bytes(sub_id))
    finally:
        store.close()


def test_an_accepted_submission_appears_on_the_next_board_request(server, datas):
    before = {e["id"] for e in entries_of(board(server), "medhorizon")}
    r = post_submission(server.url, medhorizon_sub(datas, f"{server.backend}-next", 0.7, 11))
    assert r.status_code == 201
    after = {e["id"] for e in entries_of(board(server), "medhorizon")}
    assert after - before == {r.json()["id"]}
    page = httpx.get(server.url + "/", timeout=60).text
    assert f'href="/submissions/{r.json()["id"]}"' in page


# ------------------------------------------------------------------ refused: every problem, nothing kept

def test_a_refused_submission_lists_every_problem_validate_lists_and_keeps_nothing(server, datas):
    bad = medhorizon_sub(datas, "bad", 0.8, 4)
    bad["predictions"] = bad["predictions"][5:] + [bad["predictions"][6], {"id": "no-such-item", "output": "A"}]
    bad["metadata"]["date"] = "2026-02-31"
    bad["metadata"]["size"] = ""
    _, expected = check_submission(copy.deepcopy(bad), datas["medhorizon"])
    assert len(expected) >= 4
    before, stored = board(server), n_stored(server)
    r = post_submission(server.url, bad)
    assert r.status_code == 422
    assert r.json() == {"accepted": False, "problems": expected}
    assert board(server) == before and n_stored(server) == stored


def test_a_submission_on_data_the_server_does_not_hold_is_refused_naming_what_it_holds(server, datas):
    sub = medhorizon_sub(datas, "old data", 0.8, 5)
    sub["metadata"]["data_version"] = "sha256:0123456789abcdef"
    r = post_submission(server.url, sub)
    assert r.status_code == 422
    problems = r.json()["problems"]
    assert any("data_version mismatch" in p for p in problems)
    held = problems[-1]
    for b in ("medhorizon", "sureon", "surghi"):
        assert datas[b].version in held


def test_the_same_bytes_twice_are_one_entry(server, datas):
    body = dumps(medhorizon_sub(datas, f"{server.backend}-twice", 0.6, 6))
    first = post_submission(server.url, body)
    assert first.status_code == 201
    stored = n_stored(server)
    again = post_submission(server.url, body)
    assert again.status_code == 200
    assert again.json()["duplicate"] is True and again.json()["id"] == first.json()["id"]
    assert "submitted before" in again.json()["message"]
    assert n_stored(server) == stored
    assert [e["model"] for e in entries_of(board(server), "medhorizon")].count(f"{server.backend}-twice") == 1


def test_concurrent_submissions_are_all_kept(server, datas):
    bodies = [dumps(medhorizon_sub(datas, f"{server.backend}-conc{k}", 0.5 + k / 20, 100 + k)) for k in range(6)]
    start = threading.Barrier(len(bodies))

    def send(body):
        start.wait()
        return post_submission(server.url, body)

    with ThreadPoolExecutor(len(bodies)) as pool:
        replies = list(pool.map(send, bodies))
    assert [r.status_code for r in replies] == [201] * len(bodies), [r.text[:200] for r in replies]
    assert len({r.json()["id"] for r in replies}) == len(bodies)
    models = {e["model"] for e in entries_of(board(server), "medhorizon")}
    assert {f"{server.backend}-conc{k}" for k in range(6)} <= models


# ------------------------------------------------------------------ hostile input

def test_an_upload_over_the_limit_is_refused_before_it_is_read(server):
    limit = MAX_UPLOAD_MB * 2 ** 20
    r = httpx.post(server.url + "/api/submissions", content=b"{" + b" " * limit + b"}", timeout=60)
    assert r.status_code == 413 and "Content-Length" in r.json()["problems"][0]
    sent = {"n": 0}

    def chunks():  # no Content-Length: the server must stop it once past the limit, not read it all
        for _ in range(4 * MAX_UPLOAD_MB * 16):
            sent["n"] += 65536
            yield b" " * 65536

    r = httpx.post(server.url + "/api/submissions", content=chunks(), timeout=60)
    assert r.status_code == 413 and "more than" in r.json()["problems"][0]


@pytest.mark.parametrize("body, status, says", [
    (b"[" * 5000 + b"]" * 5000, 422, "nested more than"),
    (b'{"format": ' + b"9" * 5000 + b"}", 422, "digits"),
    (b"[" + b"0," * 400_000 + b"0]", 413, "more JSON values"),
    (b"\xff\xfe{}", 422, "not UTF-8"),
    (b"", 422, "empty"),
    (b"[1, 2", 422, ""),
    (b'{"format": "medhorizon-tasks-submission"}', 422, "metadata: missing"),
])
def test_malicious_or_broken_bodies_are_refused_with_a_reason(server, body, status, says):
    stored = n_stored(server)
    r = httpx.post(server.url + "/api/submissions", content=body, timeout=60)
    assert r.status_code == status, r.text[:300]
    assert r.json()["accepted"] is False and any(says in p for p in r.json()["problems"])
    assert n_stored(server) == stored
    assert httpx.get(server.url + "/healthz", timeout=30).status_code == 200


def test_submitted_text_is_escaped_wherever_it_is_shown(server, datas):
    name = f'<img src=x onerror="alert(1)">{server.backend}<script>alert(2)</script>'
    sub = medhorizon_sub(datas, name, 0.65, 7, notes='"><script>alert(3)</script>', url="https://example.org/m?a=<b>")
    r = post_submission(server.url, sub, headers={"X-Filename": "<svg onload=alert(4)>.json"})
    assert r.status_code == 201, r.text
    sub_id = r.json()["id"]
    for path in ("/", f"/submissions/{sub_id}"):
        resp = httpx.get(server.url + path, timeout=60)
        page = resp.text
        assert "<script>alert" not in page and "<img src=x" not in page and "<svg onload" not in page
        assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in page
        assert "default-src 'none'" in resp.headers["content-security-policy"]
        assert resp.headers["x-frame-options"] == "DENY"
    entry = httpx.get(f"{server.url}/submissions/{sub_id}", timeout=60).text
    assert "&lt;svg onload=alert(4)&gt;.json" in entry
    assert 'href="https://example.org/m?a=&lt;b&gt;"' in entry
    # a non-http(s) link is refused by validation, never shown
    bad = medhorizon_sub(datas, "js link", 0.6, 8, url="javascript:alert(5)")
    r = post_submission(server.url, bad)
    assert r.status_code == 422 and any("url" in p for p in r.json()["problems"])
    # a spreadsheet formula in a name is shown, not run, in the CSV
    r = post_submission(server.url, medhorizon_sub(datas, f"=HYPERLINK(1){server.backend}", 0.6, 9))
    assert r.status_code == 201
    assert f"'=HYPERLINK(1){server.backend}" in httpx.get(server.url + "/board.csv", timeout=60).text


def test_the_form_refuses_a_post_without_its_csrf_token(server, datas):
    files = {"file": ("s.json", dumps(medhorizon_sub(datas, "csrf", 0.6, 10)), "application/json")}
    stored = n_stored(server)
    r = httpx.post(server.url + "/submit", files=files, timeout=60)
    assert r.status_code == 403 and "security token" in r.text
    with httpx.Client(base_url=server.url, timeout=60) as other:  # another session's token, this session's cookie
        token = other.get("/submit").text.split('name="csrf" value="')[1].split('"')[0]
    with httpx.Client(base_url=server.url, timeout=60) as client:
        client.get("/submit")
        r = client.post("/submit", data={"csrf": token}, files=files)
    assert r.status_code == 403
    assert n_stored(server) == stored


# ------------------------------------------------------------------ maintainers

def test_maintainer_actions_need_the_token_and_keep_their_reason(server, datas):
    r = post_submission(server.url, medhorizon_sub(datas, f"{server.backend}-hide-me", 0.6, 12))
    sub_id = r.json()["id"]
    url = f"{server.url}/api/submissions/{sub_id}"
    assert httpx.post(url + "/hide", json={"reason": "x"}, timeout=30).status_code == 401
    assert httpx.post(url + "/hide", json={"reason": "x"}, headers=maintainer("wrong-" + MAINTAINER_TOKEN),
                      timeout=30).status_code == 403
    assert httpx.post(url + "/hide", json={}, headers=maintainer(), timeout=30).status_code == 422
    assert httpx.post(url + "/hide", json={"reason": "duplicate of another run"}, headers=maintainer(),
                      timeout=30).status_code == 200
    assert sub_id not in {e["id"] for e in entries_of(board(server), "medhorizon")}
    assert httpx.get(url, timeout=30).status_code == 404
    assert httpx.get(f"{server.url}/submissions/{sub_id}", timeout=30).status_code == 404
    hidden = httpx.get(url, headers=maintainer(), timeout=30)
    assert hidden.status_code == 200 and hidden.json()["state"] == "hidden"  # never lost
    assert httpx.post(url + "/restore", json={"reason": "checked"}, headers=maintainer(), timeout=30).status_code == 200
    assert sub_id in {e["id"] for e in entries_of(board(server), "medhorizon")}
    assert httpx.post(url + "/delete", json={"reason": "asked by its author"}, headers=maintainer(),
                      timeout=30).status_code == 200
    assert httpx.get(url, headers=maintainer(), timeout=30).status_code == 404
    assert httpx.get(server.url + "/api/actions", timeout=30).status_code == 401
    log = httpx.get(server.url + "/api/actions", headers=maintainer(), timeout=30).json()["actions"]
    mine = [(a["action"], a["reason"]) for a in log if a["submission_id"] == sub_id]
    assert mine == [("hide", "duplicate of another run"), ("restore", "checked"), ("delete", "asked by its author")]
    assert all(a["sha256"] == hashlib.sha256(dumps(medhorizon_sub(datas, f"{server.backend}-hide-me", 0.6, 12)))
               .hexdigest() for a in log if a["submission_id"] == sub_id)


def _walk(value):
    if isinstance(value, dict):
        yield value
        for v in value.values():
            yield from _walk(v)
    elif isinstance(value, list):
        yield value
        for v in value:
            yield from _walk(v)


def test_per_item_answers_are_never_in_a_public_reply(server, datas):
    r = post_submission(server.url, medhorizon_sub(datas, f"{server.backend}-private", 0.8, 13))
    sub_id = r.json()["id"]
    n_items = len(datas["medhorizon"].ids)
    items = httpx.get(f"{server.url}/api/submissions/{sub_id}/items", headers=maintainer(), timeout=30)
    assert items.status_code == 200 and len(items.json()["correct"]) == n_items  # the maintainer sees them
    assert httpx.get(f"{server.url}/api/submissions/{sub_id}/items", timeout=30).status_code == 401
    public = [r.json(), board(server), httpx.get(f"{server.url}/api/submissions/{sub_id}", timeout=30).json()]
    for reply in public:
        for node in _walk(reply):  # no per-item table: nothing as long as the items, no item's id as a key
            assert len(node) < n_items
            if isinstance(node, dict):
                assert not {"correct", "paired", "per_video", "predictions"} & set(node)
    entry = httpx.get(f"{server.url}/submissions/{sub_id}", timeout=60).text
    assert "<h2>By task</h2>" in entry and entry.count("<tr") < n_items  # groups, never a row per item


# ------------------------------------------------------------------ faults: SIGKILL, full store, newer schema

def _rows_are_whole(db: str, datas) -> list[int]:
    """Every stored submission is whole: its bytes hash to its sha256 and it validates against the data."""
    from medhorizon_tasks.leaderboard.submission import validate_submission
    from medhorizon_tasks.service.store import open_store

    store = open_store(db)
    try:
        rows = store.list(include_hidden=True)
        for row in rows:
            assert hashlib.sha256(store.received_bytes(row.id)).hexdigest() == row.sha256
            validate_submission(json.loads(store.submission_bytes(row.id)), datas[row.benchmark])
        return [r.id for r in rows]
    finally:
        store.close()


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_server_killed_during_submissions_restarts_with_whole_submissions_only(backend, datas, tmp_path):
    pg = Postgres(tmp_path / "pg").start() if backend == "postgresql" else None
    db = pg.url if pg else f"sqlite:///{tmp_path / 'board.sqlite3'}"
    try:
        srv = Server(db, "--rate-limit", "10000/minute", log=tmp_path / "serve.log").start()
        acked: list[int] = []
        stop = threading.Event()

        def sender(k):
            n = 0
            while not stop.is_set():
                body = dumps(medhorizon_sub(datas, f"kill-{k}-{n}", 0.6, 1000 * k + n))
                n += 1
                try:
                    r = post_submission(srv.url, body, timeout=30)
                except httpx.HTTPError:
                    return
                if r.status_code == 201:
                    acked.append(r.json()["id"])

        def slow_upload():  # a submission still arriving when the server dies
            body = dumps(medhorizon_sub(datas, "slow", 0.6, 99))

            def trickle():
                for i in range(0, len(body), 256):
                    if stop.is_set():
                        return
                    yield body[i:i + 256]
                    time.sleep(0.1)
            try:
                httpx.post(srv.url + "/api/submissions", content=trickle(), timeout=60)
            except httpx.HTTPError:
                pass

        threads = [threading.Thread(target=sender, args=(k,)) for k in range(3)] + [threading.Thread(target=slow_upload)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 120
        while len(acked) < 6 and time.monotonic() < deadline:
            time.sleep(0.05)
        srv.kill()  # SIGKILL with requests in flight
        stop.set()
        for t in threads:
            t.join(60)
        assert len(acked) >= 6
        kept = _rows_are_whole(db, datas)
        assert set(acked) <= set(kept)  # nothing acknowledged is lost
        again = Server(db, "--rate-limit", "10000/minute", log=tmp_path / "serve2.log").start()
        try:
            served = {e["id"] for e in entries_of(board(again), "medhorizon")}
            assert served == set(kept)
            r = post_submission(again.url, medhorizon_sub(datas, "after the restart", 0.7, 5000))
            assert r.status_code == 201
        finally:
            again.stop()
        if backend == "sqlite":
            con = sqlite3.connect(db.removeprefix("sqlite:///"))
            assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
            con.close()
    finally:
        if pg:
            pg.stop()


def test_a_full_store_refuses_the_submission_clearly_and_keeps_working(datas, tmp_path):
    db = f"sqlite:///{tmp_path / 'board.sqlite3'}"
    with Server(db, "--rate-limit", "10000/minute", "--max-store-mb", "0.1", log=tmp_path / "serve.log") as srv:
        accepted, full = [], None
        for k in range(40):
            r = post_submission(srv.url, medhorizon_sub(datas, f"fill-{k}", 0.6, 2000 + k))
            if r.status_code == 201:
                accepted.append(r.json()["id"])
            else:
                full = r
                break
        assert accepted and full is not None, "the store never filled up"
        assert full.status_code == 507
        assert "store is full" in full.json()["problems"][0] and "nothing was written" in full.json()["problems"][0]
        assert {e["id"] for e in entries_of(board(srv), "medhorizon")} == set(accepted)  # reads go on
        again = post_submission(srv.url, medhorizon_sub(datas, "fill-again", 0.6, 3000))
        assert again.status_code == 507  # still full, still a clear reply, not an error page
        hide = httpx.post(f"{srv.url}/api/submissions/{accepted[0]}/hide", json={"reason": "r"}, headers=maintainer(),
                          timeout=30)
        assert hide.status_code in (200, 507)
    assert _rows_are_whole(db, datas) == accepted


def test_a_store_written_by_a_newer_version_is_refused(datas, tmp_path):
    from medhorizon_tasks.service.store import SCHEMA_VERSION, open_store

    db = f"sqlite:///{tmp_path / 'board.sqlite3'}"
    open_store(db).close()
    con = sqlite3.connect(tmp_path / "board.sqlite3")
    con.execute("UPDATE mh_meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    con.commit()
    con.close()
    res = subprocess.run(serve_command(0, db), capture_output=True, text=True, timeout=300)
    assert res.returncode == 2
    assert f"written by a newer medhorizon-tasks (schema version {SCHEMA_VERSION + 1}" in res.stderr
    assert "Traceback" not in res.stderr


# ------------------------------------------------------------------ submitters: tokens and the rate limit

def test_submitter_tokens_and_the_rate_limit(datas, tmp_path):
    token_file = tmp_path / "maintainer-token"
    token_file.write_text(MAINTAINER_TOKEN + "\n")
    with Server(f"sqlite:///{tmp_path / 'b.sqlite3'}", "--require-token", "--rate-limit", "2/hour",
                "--maintainer-token-file", str(token_file), maintainer_token=None, log=tmp_path / "serve.log") as srv:
        r = post_submission(srv.url, medhorizon_sub(datas, "anonymous", 0.6, 1))
        assert r.status_code == 401 and "submitter token" in r.json()["problems"][0]
        r = post_submission(srv.url, medhorizon_sub(datas, "forged", 0.6, 1), headers={"Authorization": "Bearer nope"})
        assert r.status_code == 403
        assert httpx.post(srv.url + "/api/submitters", json={"name": "lab-a"}, timeout=30).status_code == 401
        issued = httpx.post(srv.url + "/api/submitters", json={"name": "lab-a"}, headers=maintainer(), timeout=30)
        assert issued.status_code == 201
        lab = {"Authorization": f"Bearer {issued.json()['token']}"}
        codes = [post_submission(srv.url, medhorizon_sub(datas, f"lab-a-{k}", 0.6, 10 + k), headers=lab).status_code
                 for k in range(3)]
        assert codes == [201, 201, 429]
        limited = post_submission(srv.url, medhorizon_sub(datas, "lab-a-3", 0.6, 20), headers=lab)
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) > 0
        assert "rate limit" in limited.json()["problems"][0]
        # the maintainer rotates the token by rewriting the file: the old one stops working at once
        new = "rotated-maintainer-token-abcdefghijklmnop"
        token_file.write_text(new)
        assert httpx.get(srv.url + "/api/actions", headers=maintainer(), timeout=30).status_code == 403
        assert httpx.get(srv.url + "/api/actions", headers=maintainer(new), timeout=30).status_code == 200


def test_the_maintainer_token_is_never_a_command_line_argument(tmp_path):
    res = subprocess.run([*serve_command(0, f"sqlite:///{tmp_path / 'b.sqlite3'}"), "--maintainer-token", "x" * 30],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2 and "unrecognized arguments: --maintainer-token" in res.stderr
    short = subprocess.run(serve_command(0, f"sqlite:///{tmp_path / 'b.sqlite3'}"), capture_output=True, text=True,
                           timeout=300, env={**__import__("os").environ, "MEDHORIZON_MAINTAINER_TOKEN": "short"})
    assert short.returncode == 2 and "at least 24" in short.stderr and "Traceback" not in short.stderr
