"""The new rows through the real lmms-eval CLI (``medhorizon-tasks run``), started together:

* ``gemma4``: ``--model medhorizon_gemma4`` on a tiny randomly initialised Gemma 4 checkpoint built here
  (tests/tiny_vlm.py) with transformers' real processor; a spy (tests/generate_spy) records what ``generate``
  receives: one video of the planned frames, each after its planned ``mm:ss``, no image tokens;
* ``vllm``: ``--model medhorizon_openai --model_args ...,frames_as=video`` against the mock vLLM server
  (tests/openai_mock.py, ``vllm=True``), which parses the frame-sequence data URL as vLLM does: every planned frame
  arrives, at its planned time, with ``do_sample_frames`` off, two requests in flight.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import tiny_vlm
from medhorizon_tasks.adapters.lmms_eval.runner import OFFLINE_ENV
from medhorizon_tasks.benchmarks.medhorizon.protocol import FrameSetting, load_frames
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from openai_mock import MockProvider

pytestmark = pytest.mark.e2e

TASK = "medhorizon_synthetic_frames8"
SPY = Path(__file__).parent / "generate_spy"
TIMEOUT_S = 900


def _start(model, model_args, out: Path, limit: int, env: dict):
    cmd = [sys.executable, "-m", "medhorizon_tasks.commands.main", "run", "--model", model, "--model_args",
           model_args, "--tasks", TASK, "--limit", str(limit), "--gen_kwargs", "max_new_tokens=1",
           "--output_path", str(out), "--log_samples"]
    out.mkdir(parents=True, exist_ok=True)
    full_env = {**os.environ, **OFFLINE_ENV, "OMP_NUM_THREADS": "1", **env}
    for k in ("MEDHORIZON_DATA", "MEDHORIZON_VIDEO_ROOT", "MEDHORIZON_ALLOW_VIDEO_ERRORS"):
        full_env.pop(k, None)
    log = open(out / "run.log", "w")
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=full_env), out / "run.log"


def _samples(out: Path, log: Path) -> list[dict]:
    files = sorted(out.rglob(f"*_samples_{TASK}.jsonl"))
    assert files, f"no samples; log:\n{log.read_text()[-4000:]}"
    return [json.loads(line) for line in files[-1].read_text().splitlines()]


@pytest.fixture(scope="module")
def runs(synthetic, tmp_path_factory):
    root = tmp_path_factory.mktemp("rows_e2e")
    gemma = tiny_vlm.build_gemma4(root / "tiny_gemma4")
    spy = root / "gemma4_generate.jsonl"
    mock = MockProvider(limit=4, vllm=True).__enter__()
    started = {
        "gemma4": _start("medhorizon_gemma4", f"pretrained={gemma},device=cpu,device_map=cpu,max_soft_tokens=70",
                         root / "gemma4", 1, {"PYTHONPATH": os.pathsep.join([str(SPY), os.environ.get("PYTHONPATH",
                                                                                                       "")]),
                                              "MEDHORIZON_GENERATE_SPY": str(spy)}),
        "vllm": _start("medhorizon_openai", f"model=org/tiny-vlm,base_url={mock.base_url},api_key=test,"
                       "frames_as=video,num_concurrent=2,max_retries=1", root / "vllm", 2, {}),
    }
    try:
        for proc, _ in started.values():
            proc.wait(timeout=TIMEOUT_S)
    finally:
        mock.close()
        for proc, _ in started.values():
            if proc.poll() is None:
                proc.kill()
    out = {name: {"samples": _samples(log.parent, log), "log": log} for name, (_, log) in started.items()}
    out["gemma4"]["generate"] = [json.loads(x) for x in spy.read_text().splitlines()] if spy.exists() else []
    out["gemma4"]["path"] = gemma
    out["vllm"]["bodies"], out["vllm"]["videos"] = list(mock.bodies), list(mock.videos)
    return out


def _plan(synthetic, sample):
    items = {it.uid: it for it in load_release(synthetic.data_path)}
    return load_frames(items[sample["accuracy"]["uid"]], FrameSetting(frames=8), synthetic.video_root)


def test_gemma4_reads_one_video_at_the_planned_times(runs, synthetic):
    run = runs["gemma4"]
    assert len(run["samples"]) == 1 and len(run["generate"]) == 1, run["log"].read_text()[-3000:]
    kwargs = run["generate"][0]["kwargs"]
    plan, _ = _plan(synthetic, run["samples"][0])
    assert kwargs["pixel_values_videos"]["shape"][0] == len(plan.timestamps) == 8
    from transformers import AutoTokenizer

    prompt = AutoTokenizer.from_pretrained(run["path"]).decode(kwargs["input_ids"]["values"][0])
    stamps = [f"{int(t // 60):02d}:{int(t % 60):02d}" for t in plan.timestamps]
    assert re.findall(r"(\d\d:\d\d) <\|boi\|>(?:<\|video\|>)+<\|eoi\|>", prompt) == stamps
    assert "<|image|>" not in prompt, "no image tokens: the frames are the model's video input"


def test_vllm_server_gets_every_planned_frame_at_its_time(runs, synthetic):
    run = runs["vllm"]
    assert len(run["samples"]) == 2 and len(run["bodies"]) == 2, run["log"].read_text()[-3000:]
    for body, videos in zip(run["bodies"], run["videos"]):
        (video,) = videos
        assert video["do_sample_frames"] is False and body["media_io_kwargs"]["video"]["num_frames"] == -1
        assert [p["type"] for p in body["messages"][0]["content"]] == ["video_url", "text"]
    received = [videos[0] for videos in run["videos"]]
    plans = []
    for sample in run["samples"]:
        plan, frames = _plan(synthetic, sample)
        plans.append(list(plan.timestamps))
        assert len(frames) == 8
        assert sample["accuracy"]["status"] == "ok" and sample["accuracy"]["extracted"] == "B"
    for video in received:  # each request: its item's plan (items of one video share it), at the planned times
        assert len(video["frames"]) == 8
        assert any(video["times"] == pytest.approx(times, abs=1e-3) for times in plans)
    assert sorted(round(v["times"][-1], 3) for v in received) == sorted(round(t[-1], 3) for t in plans)
