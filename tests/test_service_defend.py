"""The service's defences (issue 45 items 2-4): intake work linear in the upload's size (counted in steps, not
timed), length limits on text, every fault a clear answer (ids out of range, an unwritable store, the database
away and back, an unreadable token file, serve's numbers, server paths, a byte-order mark), and refusals that
help (one line per kind of problem, a guess at what the upload is, the wrong benchmark named).

One `leaderboard serve` per database (module fixture) for the HTTP checks; the start-up refusals run the
command and read its one line."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from medhorizon_tasks.benchmarks.data import load_benchmark_data
from medhorizon_tasks.commands.data_args import synthetic_paths
from medhorizon_tasks.core import safeio
from medhorizon_tasks.leaderboard.submission import TEXT_LIMITS, check_submission, group_problems
from medhorizon_tasks.leaderboard.upload_kind import guess_upload
from medhorizon_tasks.service import intake
from service_server import MAINTAINER_TOKEN, Postgres, Server, free_port, maintainer, post_submission, serve_command
from test_service_api import medhorizon_sub, surghi_sub

EXE = str(Path(sys.executable).with_name("medhorizon-tasks"))


@pytest.fixture(scope="module")
def datas(synthetic):
    return {b: load_benchmark_data(b, synthetic_paths(b)[0]) for b in ("medhorizon", "sureon", "surghi")}


# ------------------------------------------------------------------ linear intake, counted in steps

def _hostile(n: int) -> dict[str, str]:
    """Bodies of about ``n`` characters that made the old scans quadratic or slow."""
    return {
        "escaped quotes": '\\"' * (n // 2),                       # every quote escaped, no string ever closes
        "unterminated after escapes": '["' + '\\"' * (n // 2),
        "many empty strings": '"",' * (n // 3),
        "backslash runs": ('"' + "\\\\" * 50 + '",') * (n // 104),
        "digit runs": ("1" * 308 + ",") * (n // 309),
    }


@pytest.mark.parametrize("shape", list(_hostile(10)))
def test_the_value_count_examines_each_character_a_bounded_number_of_times(shape):
    """The pre-parse count of JSON values is linear: its steps (characters examined) grow as the body grows,
    2x, 4x, 8x, and stay within a small multiple of its length. The old regular expression walked an
    unterminated string again from each of its quotes: 3.5 s at 20 KB, 18 s at 40 KB, 70 s at 80 KB."""
    per_char = []
    for n in (20_000, 40_000, 80_000, 160_000):
        text = _hostile(n)[shape]
        steps = [0]
        intake.count_values(text, steps=steps)
        assert steps[0] <= 3 * len(text) + 10, (shape, n, steps[0])
        per_char.append(steps[0] / len(text))
    assert max(per_char) <= 1.1 * min(per_char) + 0.01, (shape, per_char)


def test_the_value_count_counts_values_outside_strings_and_stops_past_its_limit():
    value = {"a": [1, 2, {"b": "x,y[z{"}], "c": "q\\\"u,o\\\\", "d": []}
    text = json.dumps(value)
    # values: the object, a's list, 1, 2, the inner object, its b, c, d's list: 8; the count is an upper bound
    assert 8 <= intake.count_values(text) <= 10
    assert intake.count_values('"a,b,c"') == 1  # commas inside a string count nothing
    steps = [0]
    assert intake.count_values('"",' * 1_000_000, stop_after=100, steps=steps) > 100
    assert steps[0] < 2_000, "the count stops once past its limit"


def test_depth_and_long_integers_are_found_in_linear_scans():
    deep = '["' + '\\"' * 50_000 + '", ' + "[" * 101 + "]" * 101 + "]"
    with pytest.raises(safeio.DataError, match="line 1: JSON nested more than 100 levels"):
        safeio.loads_json(deep, source="s")
    steps = [0]
    list(safeio.outside_strings(deep, steps=steps))
    assert steps[0] <= len(deep) + 10
    assert not safeio.has_long_int(("1" * 308 + ",") * 1000)
    assert safeio.has_long_int(" " * 77 + "9" * 309)
    assert not safeio.has_long_int("\u0663" * 400)  # not a JSON digit
    with pytest.raises(safeio.DataError, match="309 digits"):
        safeio.loads_json("[" + ",".join(["1" * 308] * 50 + ["2" * 309]) + "]", source="s")
    assert safeio.loads_json("[" + ",".join(["1" * 308] * 50) + "]", source="s")[0] == int("1" * 308)


# ------------------------------------------------------------------ refusals that help

def test_the_same_problem_of_many_items_is_one_line_with_its_count_and_first_items():
    problems = [f"line {i}: field 'uid': missing" for i in range(1, 89)] + ["metadata.model: missing"]
    got = group_problems(problems)
    assert got == ["field 'uid': missing (88 lines: line 1, line 2, line 3, ...)", "metadata.model: missing"]
    got = group_problems([f"line {i}: field 'uid': {str(i - 1)!r} is not an item of this benchmark"
                          for i in range(1, 89)])
    assert got == ["field 'uid': is not an item of this benchmark (88 lines: line 1 ('0'), line 2 ('1'), "
                   "line 3 ('2'), ...)"]
    assert group_problems(["line 4: not valid JSON"]) == ["line 4: not valid JSON"]


def test_validate_on_the_command_line_groups_too(datas, tmp_path):
    sub = medhorizon_sub(datas, "grouped", 0.6, 1)
    for p in sub["predictions"]:
        p["output"] = 7
    path = tmp_path / "sub.json"
    path.write_text(json.dumps(sub))
    done = subprocess.run([EXE, "leaderboard", "validate", str(path), "--synthetic"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 1
    lines = [x for x in done.stderr.splitlines() if x.startswith("  - ")]
    assert len(lines) == 1 and "output: expected text or null, got int (88 items: predictions[0] (id 0)" in lines[0]


def test_the_upload_is_named_with_what_to_upload_instead(datas):
    guess = lambda text, chosen=None, value=None: guess_upload(text, chosen, datas, value) or ""
    assert "log" in guess("2026-11-30 12:00:01 INFO evaluating medhorizon\nTraceback ...\n", "medhorizon")
    assert "results summary" in guess("{}", None, {"results": {"medhorizon": {}}, "configs": {}})
    assert "VLMEvalKit's predictions table" in guess("index,question,A,B,prediction\n1,q,a,b,A\n", "medhorizon")
    assert "VLMEvalKit score" in guess("split,Overall\nnone,0.5\n", "medhorizon")
    sureon_lines = "".join(json.dumps({"uid": u, "prediction": "A"}) + "\n" for u in datas["sureon"].ids[:10])
    assert "Sureon (sureon) predictions" in guess(sureon_lines, "medhorizon") and "choose sureon" in guess(
        sureon_lines, "medhorizon")
    assert "not a submission JSON" in guess(sureon_lines, None)
    assert guess(sureon_lines, "sureon") == ""  # what was asked for: its own problems say the rest
    surghi_csv = "dataset,video,frame,phase,step\nSynthTree,synthtree_01,1,p,s\n"
    assert guess(surghi_csv, "surghi") == ""


def test_text_fields_have_length_limits(datas):
    sub = medhorizon_sub(datas, "m" * (TEXT_LIMITS["model"] + 1), 0.6, 2, notes="n" * 5000)
    _, problems = check_submission(sub, datas["medhorizon"])
    assert f"metadata.model: at most {TEXT_LIMITS['model']} characters, got 201" in problems
    assert "metadata.notes: at most 2,000 characters, got 5,000" in problems
    sub = medhorizon_sub(datas, "ok", 0.6, 2)
    sub["predictions"][0]["output"] = "x" * (TEXT_LIMITS["output"] + 1)
    _, problems = check_submission(sub, datas["medhorizon"])
    assert problems == [f"predictions[0] (id 0): output: at most {TEXT_LIMITS['output']:,} characters, "
                        f"got {TEXT_LIMITS['output'] + 1:,}"]


def test_a_byte_order_mark_is_read_alike_by_validate_the_api_reader_and_the_form(datas, tmp_path):
    body = b"\xef\xbb\xbf" + json.dumps(medhorizon_sub(datas, "bom", 0.6, 3)).encode()
    path = tmp_path / "bom.json"
    path.write_bytes(body)
    done = subprocess.run([EXE, "leaderboard", "validate", str(path), "--synthetic"], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0 and done.stdout.startswith("OK"), done.stderr
    assert intake.looks_like_submission(body), "the form reads it as a submission, not a samples file"
    got = intake.read_submission_upload(body, datas)
    assert got.metadata["model"] == "bom" and len(got.submission.predictions) == len(datas["medhorizon"].ids)


# ------------------------------------------------------------------ the command line: one line, before anything

def _one_line_refusal(args: list[str], env=None) -> str:
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def test_serve_numbers_are_checked_at_the_start(tmp_path):
    db = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    for option, value, says in [("--n-resamples", "0", "resamples"), ("--alpha", "nan", "significance"),
                                ("--alpha", "1", "significance"), ("--max-upload-mb", "nan", "MiB"),
                                ("--max-upload-mb", "inf", "MiB"), ("--port", "70000", "TCP port"),
                                ("--limit-concurrency", "0", "connections"), ("--max-store-mb", "-1", "MiB")]:
        line = _one_line_refusal(serve_command(free_port(), db, option, value))
        assert line.startswith(f"medhorizon-tasks leaderboard: error: {option} ") and says in line, line


def test_a_token_file_that_is_not_utf8_and_a_store_that_cannot_be_written_are_refused_in_one_line(tmp_path):
    token = tmp_path / "token"
    token.write_bytes(b"\xff\xfe" + MAINTAINER_TOKEN.encode())
    db = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    line = _one_line_refusal(serve_command(free_port(), db, "--maintainer-token-file", str(token)))
    assert "--maintainer-token-file" in line and "not UTF-8" in line
    from medhorizon_tasks.service.store import open_store

    open_store(db).close()
    ro = f"sqlite:///file:{tmp_path / 'db.sqlite3'}?mode=ro&uri=true"
    line = _one_line_refusal(serve_command(free_port(), ro))
    assert "the store cannot be written" in line


def test_run_refuses_a_limit_that_is_not_a_positive_integer_and_an_empty_task_name(tmp_path):
    from medhorizon_tasks.adapters.lmms_eval.runner import _launch_arguments, refused_before_start

    for limit in ("inf", "nan", "0", "1.5", "-3"):
        said = refused_before_start(_launch_arguments(["--tasks", "medhorizon_synthetic", "--limit", limit]))
        assert said and said.startswith(f"--limit {limit}:"), (limit, said)
    said = refused_before_start(_launch_arguments(["--tasks", "a,,b"]))
    assert said and "empty task name" in said
    line = _one_line_refusal([EXE, "run", "--model", "medhorizon_needle", "--tasks", "medhorizon_synthetic,",
                              "--output_path", str(tmp_path / "out")])
    assert "empty task name" in line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


# ------------------------------------------------------------------ one server per database

class _Postgres(Postgres):
    def resume(self) -> None:
        """Start the stopped server again on its folder and port (no initdb)."""
        if self.as_user:  # another pytest session may have closed the temporary folders' permissions since
            for parent in self.folder.parents:
                if parent == Path("/"):
                    break
                parent.chmod(parent.stat().st_mode | 0o011)
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "pg.log"), "-w", "-t",
                  "60", "-o", f"-p {self.port} -h 127.0.0.1 -k {self.folder} -c fsync=off", "start")


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(request, datas, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"defend-{request.param}")
    pg = None
    if request.param == "sqlite":
        db = f"sqlite:///{folder / 'board.sqlite3'}"
    else:
        pg = _Postgres(folder / "pg").start()
        db = pg.url
    token = folder / "maintainer-token"
    token.write_text(MAINTAINER_TOKEN)
    srv = Server(db, "--rate-limit", "10000/minute", "--max-upload-mb", "2", "--maintainer-token-file", str(token),
                 log=folder / "serve.log", maintainer_token=None).start()
    srv.backend, srv.pg, srv.token = request.param, pg, token
    yield srv
    srv.stop()
    if pg is not None:
        pg.stop()


def _form(srv, files: dict, data: dict) -> httpx.Response:
    with httpx.Client(base_url=srv.url, timeout=120) as client:
        token = client.get("/submit").text.split('name="csrf" value="')[1].split('"')[0]
        return client.post("/submit", data={"csrf": token, **data}, files=files)


def test_ids_out_of_range_are_not_found(server):
    for i in (2 ** 31, 2 ** 63, 2 ** 64 + 5, 10 ** 30):
        for path in (f"/submissions/{i}", f"/api/submissions/{i}"):
            assert httpx.get(server.url + path, timeout=30).status_code == 404, path
        assert httpx.get(f"{server.url}/api/submissions/{i}/items", headers=maintainer(), timeout=30).status_code == 404
        r = httpx.post(f"{server.url}/api/submissions/{i}/hide", json={"reason": "r"}, headers=maintainer(), timeout=30)
        assert r.status_code == 404, r.text


def test_refusals_name_no_server_path_and_help(server, datas):
    private = [d.source for d in datas.values()] + [str(Path(datas["medhorizon"].source).parent)]
    wrong_version = medhorizon_sub(datas, "v", 0.6, 4)
    wrong_version["metadata"]["data_version"] = "sha256:0123456789abcdef"
    no_ids = medhorizon_sub(datas, "ids", 0.6, 5)
    for p in no_ids["predictions"]:
        del p["id"]
    for body in (wrong_version, no_ids):
        r = post_submission(server.url, body)
        assert r.status_code == 422
        assert not any(p in r.text for p in private), r.text
    problems = r.json()["problems"]
    assert len(problems) <= 4, problems  # 88 missing ids: one line with its count, not 88
    assert any("(88 items" in p for p in problems), problems
    # lmms-eval's results summary sent as a submission: named, and what to send instead
    r = post_submission(server.url, {"results": {"medhorizon_synthetic": {"accuracy": 0.5}}, "configs": {}})
    assert r.status_code == 422 and any("results summary" in p for p in r.json()["problems"])
    # the form with Sureon predictions and MedHorizon chosen: the benchmark is named, in a few lines
    lines = "".join(json.dumps({"uid": u, "prediction": "A"}) + "\n" for u in datas["sureon"].ids)
    r = _form(server, {"file": ("preds.jsonl", lines.encode(), "application/jsonl")},
              {"benchmark": "medhorizon", "model": "m", "size": "7B"})
    assert r.status_code == 422
    assert "choose sureon" in r.text and r.text.count("is not an item") == 1
    assert not any(p in r.text for p in private)


def test_long_text_is_refused_naming_its_limit(server, datas):
    r = post_submission(server.url, medhorizon_sub(datas, "m" * 300, 0.6, 6))
    assert r.status_code == 422 and "metadata.model: at most 200 characters, got 300" in r.json()["problems"]


def test_a_submission_with_a_byte_order_mark_is_taken_by_the_api_and_the_form(server, datas):
    body = b"\xef\xbb\xbf" + json.dumps(medhorizon_sub(datas, f"bom-{server.backend}", 0.6, 7)).encode()
    r = post_submission(server.url, body)
    assert r.status_code == 201, r.text
    other = b"\xef\xbb\xbf" + json.dumps(medhorizon_sub(datas, f"bom-form-{server.backend}", 0.6, 8)).encode()
    r = _form(server, {"file": ("sub.json", other, "application/json")}, {})
    assert r.status_code == 303, r.text


def test_an_unreadable_token_file_is_one_line_and_no_path(server):
    assert httpx.get(server.url + "/api/actions", headers=maintainer(), timeout=30).status_code == 200
    server.token.write_bytes(b"\xff" * 40)
    try:
        r = httpx.get(server.url + "/api/actions", headers=maintainer(), timeout=30)
        assert r.status_code == 503 and "token file" in r.json()["error"]
        assert str(server.token.parent) not in r.text
    finally:
        server.token.write_text(MAINTAINER_TOKEN)
    assert httpx.get(server.url + "/api/actions", headers=maintainer(), timeout=30).status_code == 200


@pytest.mark.parametrize("server", ["postgresql"], indirect=True)  # SQLite is a file, never "away"
def test_the_database_away_is_503_and_the_service_recovers_without_a_restart(server, datas):
    r = post_submission(server.url, surghi_sub(datas, "before", 0.6, 9))
    assert r.status_code == 201
    server.pg.stop()
    try:
        for path in ("/api/board", "/healthz", "/"):
            r = httpx.get(server.url + path, timeout=60)
            assert r.status_code == 503, (path, r.status_code, r.text[:300])
            assert "database is unreachable" in r.text
        r = post_submission(server.url, surghi_sub(datas, "while away", 0.6, 10))
        assert r.status_code == 503 and "nothing was kept" in r.text
    finally:
        server.pg.resume()
    assert server.proc.poll() is None
    r = httpx.get(server.url + "/api/board", timeout=60)
    assert r.status_code == 200 and any(e["model"] == "before" for b in r.json()["boards"] for e in b["entries"])
    assert post_submission(server.url, surghi_sub(datas, "after", 0.6, 11)).status_code == 201


def test_intake_workers_end_with_the_serving_process(tmp_path, synthetic):
    """A spawned worker holds its own copy of the task queue, so it would outlive a killed server: it watches."""
    import os
    import time

    script = tmp_path / "serve_like.py"
    script.write_text(
        "import asyncio, os, sys\n"
        "from medhorizon_tasks.benchmarks.data import load_benchmark_data\n"
        "from medhorizon_tasks.commands.data_args import synthetic_paths\n"
        "from medhorizon_tasks.service.intake import Refused\n"
        "from medhorizon_tasks.service.workers import IntakeWorkers\n"
        "if __name__ == '__main__':\n"
        "    w = IntakeWorkers({'sureon': load_benchmark_data('sureon', synthetic_paths('sureon')[0])}, 2)\n"
        "    try:\n"
        "        asyncio.run(w.read(b'[1]'))\n"
        "    except Refused as exc:\n"
        "        print(exc.problems[0], file=sys.stderr)\n"
        "    print(' '.join(str(p) for p in w._pool._processes), flush=True)\n"
        "    os.kill(os.getpid(), 9)\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert done.returncode == -9, done.stderr
    assert "expected a JSON object" in done.stderr  # read in a worker, refused with its reason
    pids = [int(p) for p in done.stdout.split()]
    assert 1 <= len(pids) <= 2  # started as uploads need them

    def alive(pid: int) -> bool:
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except OSError:
            return False

    deadline = time.monotonic() + 30
    while any(alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = [p for p in pids if alive(p)]
    for p in left:  # the old code's orphans: end them, then fail
        os.kill(p, 9)
    assert not left, f"workers {left} outlived the killed process"
