"""Nobody can bend the board (issue 45 item 1) and `leaderboard submit` (item 6), through the real parts: a
`leaderboard serve` over SQLite and over a PostgreSQL server of the test's own, requests over HTTP and the
`medhorizon-tasks leaderboard submit` command, nothing mocked.

* MG (Sureon's visual minus blind) pairs only entries sent with one submitter token: another team's blind
  entry under a model's name changes nothing, and entries without a token are never paired.
* A run off the standard protocol (frames reversed, text only...) is marked on the board, its page and the
  CSV, and ranked apart; `serve --off-protocol refuse` refuses it.
* The protocol of an uploaded run comes from its files (the run's results file, the records' own
  departures); a MedHorizon samples file that says none, with no fields, is refused, never stored as "—".
* Duplicates by content: other white space, or the samples and the submission JSON made from them, are the
  entry already kept; a deleted run is refused saying so, until a maintainer restores it.
"""

from __future__ import annotations

import csv
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from medhorizon_tasks.benchmarks.data import load_benchmark_data
from medhorizon_tasks.commands.data_args import synthetic_paths
from medhorizon_tasks.leaderboard.submission import FORMAT, FORMAT_VERSION, dumps_submission, make_submission
from service_server import Postgres, Server, maintainer, post_submission

EXE = str(Path(sys.executable).with_name("medhorizon-tasks"))
REVERSE_TASK = "medhorizon_synthetic_order_reverse"
REVERSE_KWARGS = {"mode": "visual", "fps": 1, "frame_pixels": 90316800, "frames": 256, "order": "reverse",
                  "order_seed": 0, "order_study": True}
STANDARD_KWARGS = {"mode": "visual", "fps": 1, "cap": 64, "frame_pixels": 90316800}


@pytest.fixture(scope="module")
def datas(synthetic):
    return {b: load_benchmark_data(b, synthetic_paths(b)[0]) for b in ("medhorizon", "sureon")}


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(request, datas, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"integrity-{request.param}")
    pg = Postgres(folder / "pg").start() if request.param == "postgresql" else None
    db = pg.url if pg else f"sqlite:///{folder / 'board.sqlite3'}"
    srv = Server(db, "--rate-limit", "10000/minute", "--n-resamples", "200", log=folder / "serve.log").start()
    srv.backend = request.param
    srv.tokens = {}
    for team in ("team-a", "team-b", "team-c"):
        r = httpx.post(srv.url + "/api/submitters", json={"name": team}, headers=maintainer(), timeout=30)
        assert r.status_code == 201, r.text
        srv.tokens[team] = r.json()["token"]
    yield srv
    srv.stop()
    if pg is not None:
        pg.stop()


def _wrong(letter: str) -> str:
    return "ABCD"[("ABCD".index(letter) + 1) % 4] if letter in "ABCD" else "A"


def medhorizon_outputs(datas, accuracy: float, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [(it.uid, f"The answer is ({it.answer if rng.random() < accuracy else _wrong(it.answer)}).")
            for it in datas["medhorizon"].items]


def medhorizon_sub(datas, model: str, accuracy: float, seed: int, **meta) -> dict:
    meta.setdefault("input_protocol", {"fps": 1, "cap": 64, "frames": None})
    return {"format": FORMAT, "format_version": FORMAT_VERSION,
            "metadata": {"model": model, "size": "7B", "date": "2026-12-01", "benchmark": "medhorizon",
                         "data_version": datas["medhorizon"].version, **meta},
            "predictions": [{"id": u, "output": o} for u, o in medhorizon_outputs(datas, accuracy, seed)]}


def sureon_sub(datas, model: str, mode: str, accuracy: float, seed: int) -> dict:
    rng = random.Random(seed)
    preds = []
    for it in datas["sureon"].items:
        right = rng.random() < accuracy
        if it.kind == "mcq":
            out = it.answer if right else "B" if it.answer != "B" else "C"
        elif it.kind == "to":
            out = " > ".join(it.answer if right else reversed(it.answer))
        else:
            out = "The surgeon sutures."
        preds.append({"id": it.uid, "output": out})
    return {"format": FORMAT, "format_version": FORMAT_VERSION,
            "metadata": {"model": model, "size": "7B", "input_protocol": {"fps": None, "cap": None,
                                                                          "frames": 0 if mode == "blind" else None},
                         "date": "2026-12-01", "benchmark": "sureon", "data_version": datas["sureon"].version,
                         "mode": mode},
            "predictions": preds}


def write_run(folder: Path, task: str, kwargs: dict | None, outputs, departures=None) -> Path:
    """An lmms-eval run's samples file (the package's records in it) and, with ``kwargs``, its results file."""
    folder.mkdir(parents=True, exist_ok=True)
    stamp = "20261201_120000"
    samples = folder / f"{stamp}_samples_{task}.jsonl"
    lines = []
    for i, (uid, text) in enumerate(outputs):
        record = {"uid": uid, "mode": "visual", **({"departures": departures} if departures else {})}
        lines.append(json.dumps({"doc_id": i, "filtered_resps": [text], "accuracy": record}))
    samples.write_text("\n".join(lines) + "\n")
    if kwargs is not None:
        (folder / f"{stamp}_results.json").write_text(json.dumps({
            "config": {"model": "medhorizon_probe", "model_args": ""},
            "configs": {task: {"lmms_eval_specific_kwargs": {"default": kwargs}}}}))
    return samples


def submit(server, *args: str, token: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if k != "MEDHORIZON_SUBMIT_TOKEN"}
    if token:
        environ["MEDHORIZON_SUBMIT_TOKEN"] = token
    return subprocess.run([EXE, "leaderboard", "submit", *args, "--server", server.url], capture_output=True,
                          text=True, timeout=300, env={**environ, **(env or {})})


def board_of(server, bench: str) -> dict:
    r = httpx.get(server.url + "/api/board", timeout=60)
    assert r.status_code == 200
    return next(b for b in r.json()["boards"] if b["benchmark"] == bench)


def bearer(token: str) -> dict:
    return {"Authorization": f"Bearer {token}"}


# ------------------------------------------------------------------ MG pairs one submitter's entries only

def test_mg_pairs_only_entries_of_one_submitter_token(server, datas):
    a, b = bearer(server.tokens["team-a"]), bearer(server.tokens["team-b"])
    model = f"{server.backend}-TeamA-VL"
    assert post_submission(server.url, sureon_sub(datas, model, "visual", 0.9, 1), headers=a).status_code == 201
    assert post_submission(server.url, sureon_sub(datas, model, "blind", 0.4, 2), headers=a).status_code == 201

    def visual_mg():
        board = board_of(server, "sureon")
        (e,) = [e for e in board["entries"] if e["model"] == model and e["mode"] == "visual"]
        return e["secondary"]["mg"], board

    mg, board = visual_mg()
    assert mg is not None and mg > 0
    assert "same submitter token" in " ".join(board["notes"])
    # team B sends a blind entry under team A's model name: team A's MG is what it was, and no second pair forms
    r = post_submission(server.url, sureon_sub(datas, model, "blind", 0.95, 3), headers=b)
    assert r.status_code == 201, r.text
    assert visual_mg()[0] == pytest.approx(mg)
    # a third entry (no token) under the same name: still team A's own pair
    assert post_submission(server.url, sureon_sub(datas, model, "blind", 0.1, 4)).status_code == 201
    assert visual_mg()[0] == pytest.approx(mg)
    # entries without a token are never paired, whatever their names: the column is empty for them
    lone = f"{server.backend}-anonymous-VL"
    assert post_submission(server.url, sureon_sub(datas, lone, "visual", 0.8, 5)).status_code == 201
    assert post_submission(server.url, sureon_sub(datas, lone, "blind", 0.3, 6)).status_code == 201
    board = board_of(server, "sureon")
    assert [e["secondary"]["mg"] for e in board["entries"] if e["model"] == lone] == [None, None]
    served = list(csv.DictReader(io.StringIO(httpx.get(server.url + "/board.csv", timeout=60).text)))
    assert {r["mg"] for r in served if r["model"] == lone} == {""}


# ------------------------------------------------------------------ off the standard protocol

def test_an_off_protocol_run_is_marked_everywhere_and_ranked_apart(server, datas, tmp_path):
    best = medhorizon_outputs(datas, 1.0, 7)  # the best number on the board, by a reversed-order run
    run = write_run(tmp_path / "reverse", REVERSE_TASK, REVERSE_KWARGS, best)
    r = submit(server, str(run), "--model", f"{server.backend}-reverse-run", "--model-size", "7B")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "accepted: " + server.url + "/submissions/" in r.stdout and "ranked apart, off protocol" in r.stdout
    assert "frame order: reverse" in r.stdout
    assert post_submission(server.url, medhorizon_sub(datas, f"{server.backend}-standard", 0.6, 8)).status_code == 201
    board = board_of(server, "medhorizon")
    entries = board["entries"]
    off = [e for e in entries if e["model"] == f"{server.backend}-reverse-run"]
    assert len(off) == 1 and off[0]["rank"] is None and off[0]["off_protocol"] == ["frame order: reverse"]
    ranked = [e for e in entries if not e["off_protocol"]]
    assert ranked and ranked[0]["rank"] == 1 and off[0]["value"] > ranked[0]["value"]
    assert entries.index(off[0]) > max(entries.index(e) for e in ranked), "listed after every ranked entry"
    assert all(e["p_vs_leader"] is None for e in entries if e["off_protocol"])
    assert any("Off protocol" in n for n in board["notes"])
    # the CSV, the board's page and the entry's page carry the mark
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(httpx.get(server.url + "/board.csv", timeout=60).text))}
    assert rows[f"{server.backend}-reverse-run"]["off_protocol"] == "frame order: reverse"
    assert rows[f"{server.backend}-reverse-run"]["rank"] == ""
    assert rows[f"{server.backend}-standard"]["off_protocol"] == ""
    page = httpx.get(server.url + "/", timeout=60).text
    assert f'<tr class="off-protocol" data-model="{server.backend}-reverse-run">' in page
    assert "[off protocol: frame order: reverse]" in page
    entry = httpx.get(server.url + off[0]["page"], timeout=60).text
    assert 'id="off-protocol">frame order: reverse<' in entry and 'id="rank"' not in entry
    # a samples file uploaded alone is marked by its records' own departures
    alone = write_run(tmp_path / "alone", REVERSE_TASK, None, medhorizon_outputs(datas, 0.9, 9),
                      departures=["frame order: reverse"])
    r = submit(server, str(alone), "--model", f"{server.backend}-alone", "--model-size", "7B", "--frames", "256")
    assert r.returncode == 0, r.stderr
    assert [e["off_protocol"] for e in board_of(server, "medhorizon")["entries"]
            if e["model"] == f"{server.backend}-alone"] == [["frame order: reverse"]]
    # a hand-made submission of 0 frames (text only) is off protocol too
    text = medhorizon_sub(datas, f"{server.backend}-text", 0.5, 10, input_protocol={"fps": None, "cap": None,
                                                                                   "frames": 0})
    assert post_submission(server.url, text).json()["scores"]["off_protocol"] == ["text only (no frames)"]


def test_serve_can_refuse_off_protocol_runs(datas, tmp_path):
    with Server(f"sqlite:///{tmp_path / 'b.sqlite3'}", "--off-protocol", "refuse", "--n-resamples", "200",
                log=tmp_path / "serve.log") as srv:
        run = write_run(tmp_path / "reverse", REVERSE_TASK, REVERSE_KWARGS, medhorizon_outputs(datas, 1.0, 7))
        r = submit(srv, str(run), "--model", "reversed", "--model-size", "7B")
        assert r.returncode == 1 and "Traceback" not in r.stderr
        assert "departs from the medhorizon standard protocol (frame order: reverse)" in r.stderr
        assert httpx.get(srv.url + "/healthz", timeout=30).json()["submissions"] == 0
        std = write_run(tmp_path / "std", "medhorizon_synthetic", STANDARD_KWARGS, medhorizon_outputs(datas, 0.5, 1))
        assert submit(srv, str(std), "--model", "standard", "--model-size", "7B").returncode == 0


# ------------------------------------------------------------------ the protocol comes from the upload

def _form_post(server, files: dict, fields: dict) -> httpx.Response:
    with httpx.Client(base_url=server.url, timeout=120) as client:
        token = client.get("/submit").text.split('name="csrf" value="')[1].split('"')[0]
        return client.post("/submit", data={"csrf": token, **fields}, files=files)


def test_the_form_reads_the_protocol_from_the_run_and_refuses_a_run_that_says_none(server, datas, tmp_path):
    run = write_run(tmp_path / "std", "medhorizon_synthetic", STANDARD_KWARGS, medhorizon_outputs(datas, 0.7, 11))
    results = run.with_name("20261201_120000_results.json")
    fields = {"benchmark": "medhorizon", "model": f"{server.backend}-form", "size": "7B"}
    stored = httpx.get(server.url + "/healthz", timeout=30).json()["submissions"]
    # the samples alone, no FPS/cap: refused, naming what to add; nothing kept
    r = _form_post(server, {"file": (run.name, run.read_bytes())}, fields)
    assert r.status_code == 422 and "input protocol: the upload does not say how the run admitted its frames" in r.text
    assert httpx.get(server.url + "/healthz", timeout=30).json()["submissions"] == stored
    # with the run's results file: the run's own protocol, never "—"
    r = _form_post(server, {"file": (run.name, run.read_bytes()), "config": (results.name, results.read_bytes())},
                   fields)
    assert r.status_code == 303, r.text
    sub_id = int(r.headers["location"].split("?")[0].rsplit("/", 1)[1])
    got = httpx.get(f"{server.url}/api/submissions/{sub_id}", timeout=30).json()
    assert got["scores"]["input_protocol_text"] == "1 fps, cap 64" and got["scores"]["off_protocol"] == []
    # a value that contradicts the run is refused, naming both
    r = _form_post(server, {"file": (run.name, run.read_bytes()), "config": (results.name, results.read_bytes())},
                   {**fields, "cap": "128"})
    assert r.status_code == 422 and "contradicts the run" in r.text


# ------------------------------------------------------------------ duplicates by content; deleted runs

def test_duplicates_by_content_and_a_deleted_run_is_not_taken_again_silently(server, datas, tmp_path):
    outputs = medhorizon_outputs(datas, 0.65, 12)
    run = write_run(tmp_path / "dup", "medhorizon_synthetic", STANDARD_KWARGS, outputs)
    first = submit(server, str(run), "--model", f"{server.backend}-dup", "--model-size", "7B",
                   token=server.tokens["team-c"])
    assert first.returncode == 0, first.stderr
    page = first.stdout.split("accepted: ")[1].split()[0]
    sub_id = int(page.rsplit("/", 1)[1])
    # the submission JSON made from the same samples (another date, name and layout): the same entry
    made = make_submission(datas["medhorizon"], run, model="renamed", size="7B", date="2026-12-02")
    r = post_submission(server.url, dumps_submission(made).encode())
    assert r.status_code == 200 and r.json()["duplicate"] and r.json()["id"] == sub_id, r.text
    assert "this run was submitted before" in r.json()["message"]
    r = post_submission(server.url, json.dumps(made, indent=None, separators=(",", ":")).encode())
    assert r.status_code == 200 and r.json()["id"] == sub_id
    again = submit(server, str(run), "--model", f"{server.backend}-dup", "--model-size", "7B")
    assert again.returncode == 0 and again.stdout.startswith(f"already on the board: {page}")
    ids = [e["id"] for e in board_of(server, "medhorizon")["entries"]]
    assert ids.count(sub_id) == 1
    # deleted: the same run sent again is refused, saying so; the maintainer's restore lets it in again
    url = f"{server.url}/api/submissions/{sub_id}"
    assert httpx.post(url + "/delete", json={"reason": "withdrawn"}, headers=maintainer(), timeout=30).status_code == 200
    r = post_submission(server.url, dumps_submission(made).encode())
    assert r.status_code == 409 and not r.json()["accepted"]
    (problem,) = r.json()["problems"]
    assert f"entry {sub_id}, deleted by the board's maintainer" in problem and "withdrawn" in problem
    assert f"/api/submissions/{sub_id}/restore" in problem
    refused = submit(server, str(run), "--model", f"{server.backend}-dup", "--model-size", "7B")
    assert refused.returncode == 1 and "deleted by the board's maintainer" in refused.stderr
    assert httpx.post(url + "/restore", json={"reason": "sent by mistake"}, headers=maintainer(),
                      timeout=30).status_code == 200
    back = post_submission(server.url, dumps_submission(made).encode())
    assert back.status_code == 201 and back.json()["id"] != sub_id
    log = [(a["action"], a["reason"]) for a in httpx.get(server.url + "/api/actions", headers=maintainer(),
                                                          timeout=30).json()["actions"] if a["submission_id"] == sub_id]
    assert log == [("delete", "withdrawn"), ("restore", "sent by mistake")]


# ------------------------------------------------------------------ leaderboard submit

def test_leaderboard_submit_prints_the_entry_or_every_problem(server, datas, tmp_path):
    sub = tmp_path / "sub.json"
    sub.write_text(json.dumps(medhorizon_sub(datas, f"{server.backend}-cli", 0.75, 13)))
    token_file = tmp_path / "token"
    token_file.write_text(server.tokens["team-c"] + "\n")
    r = submit(server, str(sub), "--token-file", str(token_file))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith(f"accepted: {server.url}/submissions/")
    sub_id = int(lines[0].rsplit("/", 1)[1])
    got = httpx.get(f"{server.url}/api/submissions/{sub_id}", timeout=30).json()
    s = got["scores"]
    assert f"rank {s['rank']}; Overall accuracy {100 * s['value']:.1f}% [95% CI {100 * s['ci95'][0]:.1f}, " \
           f"{100 * s['ci95'][1]:.1f}]" in lines[1]
    # a plain predictions file, with its protocol given: made into a submission by the server
    preds = tmp_path / "predictions.jsonl"
    preds.write_text("".join(json.dumps({"uid": u, "prediction": o}) + "\n"
                             for u, o in medhorizon_outputs(datas, 0.55, 15)))
    r = submit(server, str(preds), "--benchmark", "medhorizon", "--model", f"{server.backend}-preds",
               "--model-size", "3B", "--fps", "1", "--cap", "128")
    assert r.returncode == 0, r.stderr
    got = httpx.get(server.url + "/api/submissions/" + r.stdout.split()[1].rsplit("/", 1)[1], timeout=30).json()
    assert got["kind"] == "samples" and got["scores"]["input_protocol_text"] == "1 fps, cap 128"
    # without it: refused, naming what to give
    r = submit(server, str(preds), "--benchmark", "medhorizon", "--model", f"{server.backend}-preds2",
               "--model-size", "3B")
    assert r.returncode == 1 and "give fps and cap (or frames)" in r.stderr
    # refused: every problem, exit 1
    bad = medhorizon_sub(datas, f"{server.backend}-bad", 0.75, 14, date="2026-13-01")
    bad["predictions"] = bad["predictions"][:-2]
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    r = submit(server, str(tmp_path / "bad.json"))
    assert r.returncode == 1 and r.stdout == "" and "Traceback" not in r.stderr
    assert "2 problems" in r.stderr and "metadata.date" in r.stderr and "missing id(s)" in r.stderr
    # a token the server does not know: refused; the token comes from the environment too
    assert submit(server, str(sub), token="not-a-token").returncode == 1
    # usage: 2, one line, nothing sent
    for args in ([str(sub), "--server", "ftp://x"], [str(tmp_path / "none.json")],
                 [str(sub), "--token-file", str(tmp_path / "no-such-token")],
                 [str(write_run(tmp_path / "p", "medhorizon_synthetic", None, medhorizon_outputs(datas, 0.5, 1)))]):
        r = subprocess.run([EXE, "leaderboard", "submit", "--server", server.url, *args], capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 2 and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    # a server that is not there: not sent, exit 1
    r = subprocess.run([EXE, "leaderboard", "submit", str(sub), "--server", "http://127.0.0.1:9"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "did not answer" in r.stderr
