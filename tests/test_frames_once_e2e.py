"""A run decodes each distinct (video, plan, size) once: the real lmms-eval CLI over the synthetic benchmark
(several questions per video), the decoder spied on in the run's own process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

from medhorizon_tasks.adapters.lmms_eval.runner import OFFLINE_ENV

# The run's process: the decoder behind every task's frames (core.video.prepared.decode_plan) counted, then
# lmms-eval's own CLI.
DRIVER = r"""
import atexit, json, os, sys
import medhorizon_tasks.core.video.prepared as prepared
calls = []
real = prepared.decode_plan
def spy(path, plan, **kw):
    calls.append([str(path), plan.key, list(kw.get("size") or ())])
    return real(path, plan, **kw)
prepared.decode_plan = spy
atexit.register(lambda: open(os.environ["SPY_OUT"], "w").write(json.dumps(calls)))
sys.argv = ["lmms_eval", *sys.argv[1:]]
from lmms_eval.__main__ import cli_evaluate
cli_evaluate()
"""


def _run(tmp_path, name: str, extra_env: dict | None = None):
    spy = tmp_path / f"{name}.json"
    record = tmp_path / f"{name}.jsonl"
    env = {**os.environ, **OFFLINE_ENV, "SPY_OUT": str(spy), **(extra_env or {})}
    env.pop("MEDHORIZON_FRAME_CACHE", None)  # the on-disk cache is opt-in: not what is tested here
    proc = subprocess.run([sys.executable, "-c", DRIVER, "--model", "medhorizon_needle", "--model_args",
                           f"record_path={record}", "--tasks", "medhorizon_synthetic",
                           "--output_path", str(tmp_path / name)],
                          env=env, capture_output=True, text=True, timeout=900)
    assert list((tmp_path / name).rglob("*_results.json")), proc.stderr[-3000:]
    return json.loads(spy.read_text()), [json.loads(x) for x in record.read_text().splitlines()]


def test_a_run_decodes_each_distinct_plan_once(synthetic, tmp_path):
    calls, seen = _run(tmp_path, "once")
    per_plan = Counter((path, key, tuple(size)) for path, key, size in calls)
    videos = {path for path, _, _ in calls}
    assert len(seen) > len(per_plan) > 1, "several questions per plan: the test would not tell otherwise"
    assert len(videos) > 1
    assert set(per_plan.values()) == {1}, f"decodes per distinct plan: {len(calls) / len(per_plan):.2f}"
    # the model still got every question's frames
    assert all(r["n_images"] > 0 for r in seen)

    # with the store turned off, the same run decodes once per question (what the store saves)
    off_calls, off_seen = _run(tmp_path, "off", {"MEDHORIZON_PLAN_STORE_MB": "0"})
    assert len(off_calls) >= len(off_seen) > len(per_plan)
    digests = {(r["doc_id"], tuple(r["images"])) for r in seen}
    assert digests == {(r["doc_id"], tuple(r["images"])) for r in off_seen}, "the same frames either way"
