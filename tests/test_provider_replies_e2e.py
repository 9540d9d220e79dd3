"""Provider replies that are not answers, through the real ``medhorizon-tasks run`` (lmms-eval CLI) and
``medhorizon_resume``, against the local mock provider (tests/openai_mock.py) playing a script of replies:

1. the first run: an answer, a mid-run 400 "flagged ... usage policy", a reply stopped by the content filter
   whose partial text holds a letter, a 408 then an answer, a 409 then an answer, and a reply trickled over 8 s
   with ``timeout=2`` (twice). Two items ``refused``, one ``request_error``, three scored; the run went on
   after the refusal and exits 1, listing them;
2. a resumed run with other transport settings (``max_retries``, ``timeout``, ``num_concurrent``,
   ``retry_backoff_s``, ``api_key``): only the request error is asked again; the refused items are not (exit
   1: they are still refused);
3. a resumed run with ``retry_refused=true``: the two refused items are asked again and answered: exit 0.
"""

import json
import os
import subprocess
import sys

import pytest

from medhorizon_tasks.adapters.lmms_eval.runner import OFFLINE_ENV
from medhorizon_tasks.core.responses import response_failure
from openai_mock import MockProvider, answer, status, trickle

pytestmark = pytest.mark.e2e

TASK = "medhorizon_synthetic"
TIMEOUT_S = 900
FLAGGED = "Invalid prompt: your prompt was flagged as potentially violating our usage policy."


def _run(out, model_args: str, limit: int = 6):
    env = {**os.environ, **OFFLINE_ENV, "OMP_NUM_THREADS": "1"}
    for k in ("MEDHORIZON_DATA", "MEDHORIZON_VIDEO_ROOT", "MEDHORIZON_ALLOW_VIDEO_ERRORS"):
        env.pop(k, None)
    cmd = [sys.executable, "-m", "medhorizon_tasks.commands.main", "run", "--model", "medhorizon_resume",
           "--model_args", model_args, "--tasks", TASK, "--limit", str(limit), "--output_path", str(out)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
    samples = sorted(out.rglob(f"*_samples_{TASK}.jsonl"))
    records = [json.loads(x)["accuracy"] for x in samples[-1].read_text().splitlines()] if samples else []
    return proc, records


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("provider_replies")
    journal = root / "gpt.journal"
    script = [answer("B"), status(400, FLAGGED, error_code="invalid_prompt"),
              answer("The answer is B", "content_filter"), status(408, "Request Timeout"), answer("B"),
              status(409, "Conflict"), answer("B"), trickle(8, answer("B")), trickle(8, answer("B"))]
    out, seen = {}, 0
    # one provider for the three runs: its address is part of the model's identity (another server may serve
    # another model under the same name), the transport settings are not
    with MockProvider(script, limit=12) as mock:
        base = f"inner=medhorizon_openai,journal={journal},model=gpt-5.4,base_url={mock.base_url}"
        for name, args in (("first", "api_key=a,num_concurrent=1,retry_backoff_s=0,max_retries=2,timeout=2"),
                           ("resumed", "api_key=b,num_concurrent=2,retry_backoff_s=1,max_retries=5,timeout=30"),
                           ("retried", "api_key=b,retry_refused=true")):
            proc, records = _run(root / name, f"{base},{args}")
            out[name], seen = (proc, records, mock.bodies[seen:]), len(mock.bodies)
    return out


def _statuses(records):
    return sorted(r["status"] for r in records)


def test_a_refused_item_is_its_own_status_and_the_run_goes_on(runs):
    proc, records, bodies = runs["first"]
    assert len(bodies) == 9, "every item asked: the refusals stopped nothing; 408, 409 and the trickle retried"
    assert _statuses(records) == ["ok", "ok", "ok", "refused", "refused", "request_error"], proc.stderr[-3000:]
    refused = [r for r in records if r["status"] == "refused"]
    assert all(r["extracted"] is None and r["correct"] is False for r in refused)
    assert any(FLAGGED in r["raw_output"] for r in refused)
    assert any("finish_reason=content_filter" in r["raw_output"] and r["raw_output"].endswith("The answer is B")
               for r in refused), "the partial text is kept for the record, never scored"
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "6 item(s)" not in proc.stderr and "3 item(s) got no answer from the model (2 refused, 1 request_error)" \
        in proc.stderr
    for r in refused:
        assert f"item {r['uid']}: refused" in proc.stderr


def test_the_timeout_is_the_deadline_of_a_trickled_reply(runs):
    _, records, _ = runs["first"]
    [error] = [r for r in records if r["status"] == "request_error"]
    assert response_failure(error["raw_output"]).reason == "after 2 attempt(s): no complete reply within the 2 s timeout"


def test_a_resumed_run_asks_neither_answers_nor_refusals_again_whatever_its_transport_settings(runs):
    proc, records, bodies = runs["resumed"]
    assert len(bodies) == 1, "only the request error is asked again"
    assert _statuses(records) == ["ok", "ok", "ok", "ok", "refused", "refused"], proc.stderr[-3000:]
    assert proc.returncode == 1 and "2 item(s) got no answer from the model (2 refused)" in proc.stderr
    assert "written by another model identity" not in proc.stderr
    assert "retry_refused=true asks them again" in proc.stderr


def test_retry_refused_asks_the_refused_items_again(runs):
    proc, records, bodies = runs["retried"]
    assert len(bodies) == 2
    assert _statuses(records) == ["ok"] * 6
    assert proc.returncode == 0, proc.stderr[-3000:]
