"""Closed-model requests through the real ``medhorizon-tasks run`` (lmms-eval CLI), against the local mock provider
(tests/openai_mock.py), where a user meets them. Three runs, started together in one module fixture:

* ``refused``: the issue's reproduction -- ``--model medhorizon_openai --model_args model=gpt-5.4,...
  --tasks medhorizon_synthetic --limit 2``, with a token-limit key GPT-5.x refuses (before: two refused requests,
  lmms-eval's placeholder read as a letter, 0.50 and exit 0). It must stop at the first request with the
  provider's message, exit non-zero and score nothing;
* ``flaky``: each request is first refused with 429, then answered: retried, scored, exit 0;
* ``failures``: an empty reply, one cut at the token limit, and a request that gets a 500 and then misses its
  ``timeout``: ``truncated`` / ``request_error`` in the samples and the results, listed by ``run``, exit 1.
"""

import json
import os
import subprocess
import sys

import pytest

from medhorizon_tasks.adapters.lmms_eval.runner import OFFLINE_ENV
from medhorizon_tasks.commands.main import main
from openai_mock import MockProvider, answer, sleep, status

pytestmark = pytest.mark.e2e

TASK = "medhorizon_synthetic"
TIMEOUT_S = 900


def _start(out, model_args: str, limit: int):
    env = {**os.environ, **OFFLINE_ENV, "OMP_NUM_THREADS": "1"}
    for k in ("MEDHORIZON_DATA", "MEDHORIZON_VIDEO_ROOT", "MEDHORIZON_ALLOW_VIDEO_ERRORS"):
        env.pop(k, None)
    cmd = [sys.executable, "-m", "medhorizon_tasks.commands.main", "run", "--model", "medhorizon_openai",
           "--model_args", model_args, "--tasks", TASK, "--limit", str(limit), "--output_path", str(out)]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _outputs(out):
    results = sorted(out.rglob("*_results.json"))
    samples = sorted(out.rglob(f"*_samples_{TASK}.jsonl"))
    return (json.loads(results[-1].read_text()) if results else None,
            [json.loads(x) for x in samples[-1].read_text().splitlines()] if samples else [], samples)


@pytest.fixture(scope="module")
def runs(synthetic, tmp_path_factory):
    root = tmp_path_factory.mktemp("openai_requests")
    mocks = {"refused": MockProvider(limit=3),
             "flaky": MockProvider([status(429, "Rate limit reached", {"Retry-After": "0"}), answer("B")] * 2,
                                   limit=4),
             "failures": MockProvider([answer("", "stop"), answer("The answer is", "length"), status(500, "boom"),
                                       sleep(6, answer("A"))], limit=4)}
    args = {"refused": "max_tokens=64", "flaky": "max_retries=3",
            "failures": "max_retries=2,timeout=2"}
    started = {}
    for name, mock in mocks.items():
        mock.__enter__()
        model_args = (f"model=gpt-5.4,base_url={mock.base_url},api_key=test,num_concurrent=1,retry_backoff_s=0,"
                      f"{args[name]}")
        started[name] = _start(root / name, model_args, 3 if name == "failures" else 2)
    out = {}
    try:
        for name, proc in started.items():
            stdout, stderr = proc.communicate(timeout=TIMEOUT_S)
            results, samples, files = _outputs(root / name)
            out[name] = {"rc": proc.returncode, "stderr": stderr, "results": results, "samples": samples,
                         "files": files, "requests": list(mocks[name].bodies)}
    finally:
        for name, proc in started.items():
            if proc.poll() is None:
                proc.kill()
        for mock in mocks.values():
            mock.close()
    return out


def test_a_refused_request_stops_the_run_at_the_first_request(runs):
    run = runs["refused"]
    assert len(run["requests"]) == 1, "one refused request, not one per item"
    assert run["requests"][0]["max_tokens"] == 64 and "temperature" not in run["requests"][0]
    assert run["rc"] == 1, run["stderr"][-3000:]
    assert "lmms-eval run FAILED" in run["stderr"]
    assert "HTTP 400: Unsupported parameter: 'max_tokens' is not supported with this model" in run["stderr"]
    scored = (run["results"] or {}).get("results", {}).get(TASK, {})
    assert scored.get("accuracy,none") is None and run["samples"] == [], "nothing is scored"


def test_a_rate_limited_request_is_retried_and_scored(runs):
    run = runs["flaky"]
    assert run["rc"] == 0, run["stderr"][-3000:]
    assert len(run["requests"]) == 4, "each request: one 429, then the answer"
    for body in run["requests"]:
        assert body["max_completion_tokens"] == 256 and "max_tokens" not in body and "temperature" not in body
    records = [s["accuracy"] for s in run["samples"]]
    assert [(r["status"], r["extracted"]) for r in records] == [("ok", "B"), ("ok", "B")]
    assert run["results"]["results"][TASK]["accuracy,none"] == sum(r["correct"] for r in records) / 2


def test_empty_cut_off_and_failed_replies_are_their_own_status_and_fail_the_run(runs, synthetic, capsys):
    run = runs["failures"]
    assert len(run["requests"]) == 4
    records = sorted((s["accuracy"] for s in run["samples"]), key=lambda r: r["status"])
    assert [r["status"] for r in records] == ["request_error", "truncated", "truncated"]
    assert all(r["extracted"] is None and r["correct"] is False for r in records)
    assert "no complete reply within the 2 s timeout" in records[0]["raw_output"], "the timeout was honoured"
    assert run["results"]["results"][TASK]["accuracy,none"] == 0.0
    assert run["rc"] == 1, run["stderr"][-3000:]
    reason = f"task {TASK}: 3 item(s) got no answer from the model (1 request_error, 2 truncated)"
    assert reason in run["stderr"]
    for r in records:
        assert f"item {r['uid']}: {r['status']}" in run["stderr"]
    assert main(["score", "--benchmark", "medhorizon", "--data", str(synthetic.data_path), "--predictions",
                 str(run["files"][-1]), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert (rep["overall"]["request_errors"], rep["overall"]["truncated"], rep["overall"]["invalid"]) == (1, 2, 0)
