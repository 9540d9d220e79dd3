"""The native-video bridges through the REAL lmms-eval CLI, offline.

Three CLI runs, started together in one module fixture:

* ``medhorizon_qwen2_5_vl`` and ``medhorizon_qwen3_vl`` on tiny randomly
  initialised checkpoints (tests/tiny_vlm.py), ``--limit 1``, with a test-only
  ``sitecustomize`` (tests/generate_spy/) on the subprocess's PYTHONPATH that
  records what ``generate()`` receives; each run also answers one item of the
  Sureon task (Sureon's Qwen3VL-8B-I, Qwen3VL-32B-T and MedGRPO rows:
  tests/sureon_spy.py);
* ``medhorizon_openai`` against a loopback HTTP server (127.0.0.1) that
  records each chat-completions request body, ``--limit 2``.

What the model must receive is computed here from the item's frame plan
(``load_frames``), independently of the bridges.
"""

import base64
import io
import json
import math
import os
import re
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

import sureon_spy
import tiny_vlm
from medhorizon_tasks.adapters.lmms_eval.runner import OFFLINE_ENV, lmms_eval_command
from medhorizon_tasks.benchmarks.medhorizon.protocol import FrameSetting, load_frames
from medhorizon_tasks.benchmarks.medhorizon.release import load_release

pytestmark = pytest.mark.e2e

TASK = "medhorizon_synthetic"
SPY = Path(__file__).parent / "generate_spy"
# Small per-frame budgets keep the tiny models' runs short; they also exercise the budget model args.
QWEN_BUDGET = "frame_min_pixels=3136,frame_max_pixels=50176"
QWEN_IMAGES = "min_pixels=3136,max_pixels=50176"  # the image processor's (Sureon's frames are images)
TIMEOUT_S = 900


class _ChatServer(BaseHTTPRequestHandler):
    """OpenAI chat completions: records the body, answers with the number of images it got."""

    bodies: list = []

    def do_POST(self):  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).bodies.append({"path": self.path, "body": body})
        n_images = sum(part.get("type") == "image_url" for m in body["messages"] for part in m["content"])
        reply = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": f"images={n_images}"}}],
                            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


def _start(model, model_args, out: Path, limit: int, env: dict, tasks=(TASK,)) -> tuple[subprocess.Popen, Path]:
    cmd = lmms_eval_command(model, list(tasks), out, model_args=model_args, limit=limit)
    cmd += ["--gen_kwargs", "max_new_tokens=1"]
    out.mkdir(parents=True, exist_ok=True)
    log = out / "lmms_eval.log"
    full_env = {**os.environ, **OFFLINE_ENV, "OMP_NUM_THREADS": "1", **env}  # three runs share the cores
    with open(log, "w") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=full_env)
    return proc, log


def _outputs(out: Path, log: Path) -> tuple[dict, list[dict]]:
    """(results JSON, samples) that lmms-eval wrote (it exits 0 on failure: the files are the verdict)."""
    results = sorted(out.rglob("*_results.json"))
    assert results, f"no results from lmms-eval; log {log}:\n{log.read_text()[-4000:]}"
    samples = results[-1].with_name(results[-1].name.replace("_results.json", f"_samples_{TASK}.jsonl"))
    assert samples.exists(), f"no samples file; log {log}"
    return (json.loads(results[-1].read_text()),
            [json.loads(line) for line in samples.read_text().splitlines()])


@pytest.fixture(scope="module")
def runs(synthetic, tmp_path_factory):
    root = tmp_path_factory.mktemp("bridges")
    q25 = tiny_vlm.build_qwen2_5_vl(root / "tiny_qwen2_5_vl")
    q3 = tiny_vlm.build_qwen3_vl(root / "tiny_qwen3_vl")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ChatServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    spy_env = lambda name: {"PYTHONPATH": os.pathsep.join([str(SPY), os.environ.get("PYTHONPATH", "")]),  # noqa: E731
                            "MEDHORIZON_GENERATE_SPY": str(root / f"{name}_generate.jsonl")}
    cpu = "device=cpu,device_map=cpu"
    both = (TASK, sureon_spy.TASK)
    started = {
        "qwen2_5": _start("medhorizon_qwen2_5_vl", f"pretrained={q25},{cpu},{QWEN_BUDGET},{QWEN_IMAGES}",
                          root / "qwen2_5", 1, spy_env("qwen2_5"), both),
        "qwen3": _start("medhorizon_qwen3_vl", f"pretrained={q3},{cpu},{QWEN_BUDGET},{QWEN_IMAGES}", root / "qwen3", 1,
                        spy_env("qwen3"), both),
        "openai": _start("medhorizon_openai", f"model=tiny-test,base_url={base_url},api_key=test,image_format=png,"
                         "num_concurrent=2,max_retries=1", root / "openai", 2, {}),
    }
    try:
        for proc, _ in started.values():
            proc.wait(timeout=TIMEOUT_S)
    finally:
        server.shutdown()
        for proc, _ in started.values():
            if proc.poll() is None:
                proc.kill()
    out = {}
    for name, (_, log) in started.items():
        results, samples = _outputs(log.parent, log)
        spy = root / f"{name}_generate.jsonl"
        calls = [json.loads(line) for line in spy.read_text().splitlines()] if spy.exists() else []
        out[name] = {"results": results, "samples": samples, "generate": calls, "log": log}
    out["openai"]["requests"] = list(_ChatServer.bodies)
    out["paths"] = {"qwen2_5": q25, "qwen3": q3}
    for name in ("qwen2_5", "qwen3"):  # the Sureon item's call apart from the MedHorizon item's
        run = out[name]
        run["generate"], run["sureon_generate"] = sureon_spy.split_calls(run["generate"], out["paths"][name])
        run["sureon_samples"] = sureon_spy.samples(run["log"].parent)
    return out


def _plan(synthetic, sample):
    """The frame plan and frames of the item a sample answered, as the task's protocol decodes them."""
    items = {it.uid: it for it in load_release(synthetic.data_path)}
    return load_frames(items[sample["accuracy"]["uid"]], FrameSetting(), synthetic.video_root)


def _qwen_size(height, width, n_frames, factor):
    """qwen-vl-utils' per-frame size for a video of n_frames at QWEN_BUDGET (its fetch_video rule)."""
    from qwen_vl_utils.vision_process import smart_resize

    min_px, max_px = 3136, 50176
    ceiling = max(min(max_px, 128000 * 0.9 * factor * factor / n_frames * 2), int(min_px * 1.05))
    return smart_resize(height, width, factor=factor, min_pixels=min_px, max_pixels=ceiling)


def _one_generate_call(run):
    assert run["results"]["results"][TASK]["accuracy,none"] is not None
    assert len(run["samples"]) == 1
    assert len(run["generate"]) == 1, "one item, one generate() call"
    return run["generate"][0]["kwargs"], run["samples"][0]


def _decoded(path, input_ids) -> str:
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path).decode(input_ids)


# ------------------------------------------------------------------ Qwen2.5-VL


def test_qwen2_5_vl_gets_one_video_not_images(runs, synthetic):
    kwargs, sample = _one_generate_call(runs["qwen2_5"])
    plan, frames = _plan(synthetic, sample)
    n = len(plan)
    assert n > 2
    assert "pixel_values" not in kwargs and "image_grid_thw" not in kwargs
    assert "pixel_values_videos" in kwargs
    h, w = _qwen_size(frames.shape[1], frames.shape[2], n + n % 2, 28)
    assert kwargs["video_grid_thw"]["values"] == [[math.ceil(n / 2), h // 14, w // 14]]
    assert kwargs["pixel_values_videos"]["shape"] == [math.ceil(n / 2) * (h // 14) * (w // 14), 3 * 2 * 14 * 14]


def test_qwen2_5_vl_second_per_grid_is_the_real_spacing(runs, synthetic):
    kwargs, sample = _one_generate_call(runs["qwen2_5"])
    plan, _ = _plan(synthetic, sample)
    span = plan.timestamps[-1] - plan.timestamps[0]
    assert span / (len(plan) - 1) > 1  # sparser than the 2 fps qwen-vl-utils assumes for a frame list
    assert kwargs["second_per_grid_ts"]["values"] == pytest.approx([2 * span / (len(plan) - 1)])


def test_qwen2_5_vl_prompt_has_the_video_tokens_and_the_question(runs, synthetic):
    kwargs, sample = _one_generate_call(runs["qwen2_5"])
    text = _decoded(runs["paths"]["qwen2_5"], kwargs["input_ids"]["values"][0])
    t, gh, gw = kwargs["video_grid_thw"]["values"][0]
    assert text.count("<|video_pad|>") == t * gh * gw // 4
    assert "<|image_pad|>" not in text
    assert text.count("<|vision_start|>") == 1
    assert sample["input"] in text


# ------------------------------------------------------------------ Qwen3-VL


def test_qwen3_vl_gets_one_video_not_images(runs, synthetic):
    kwargs, sample = _one_generate_call(runs["qwen3"])
    plan, frames = _plan(synthetic, sample)
    n = len(plan)
    assert "pixel_values" not in kwargs and "image_grid_thw" not in kwargs
    assert "pixel_values_videos" in kwargs
    h, w = _qwen_size(frames.shape[1], frames.shape[2], n + n % 2, 32)
    assert kwargs["video_grid_thw"]["values"] == [[math.ceil(n / 2), h // 16, w // 16]]


def test_qwen3_vl_time_labels_are_the_planned_times(runs, synthetic):
    kwargs, sample = _one_generate_call(runs["qwen3"])
    plan, _ = _plan(synthetic, sample)
    text = _decoded(runs["paths"]["qwen3"], kwargs["input_ids"]["values"][0])
    times = list(plan.timestamps) + ([plan.timestamps[-1]] if len(plan) % 2 else [])
    # Qwen3-VL labels each two-frame temporal patch with the mean time of its two frames
    expected = [f"{(times[i] + times[i + 1]) / 2:.1f}" for i in range(0, len(times), 2)]
    assert re.findall(r"<(\d+\.\d) seconds>", text) == expected
    assert len(expected) == math.ceil(len(plan) / 2) > 1


def test_qwen3_vl_token_layout_is_the_released_one(runs, synthetic):
    kwargs, sample = _one_generate_call(runs["qwen3"])
    text = _decoded(runs["paths"]["qwen3"], kwargs["input_ids"]["values"][0])
    t, gh, gw = kwargs["video_grid_thw"]["values"][0]
    frame = "<|vision_start|>" + "<|video_pad|>" * (gh * gw // 4) + "<|vision_end|>"
    assert re.sub(r"<\d+\.\d seconds>", "", text).count(frame) == t
    assert "<|vision_start|><" not in text.replace(frame, ""), "no vision_start around the time labels"
    assert "<|image_pad|>" not in text
    assert sample["input"] in text


# ------------------------------------------------------------------ Sureon (appendix D.1, Fig. 17)

QWEN_IMAGE = r"<\|vision_start\|>(?:<\|image_pad\|>)+<\|vision_end\|>"


@pytest.mark.parametrize("name", ["qwen2_5", "qwen3"])  # MedGRPO's row; Qwen3VL-8B-I's and Qwen3VL-32B-T's
def test_sureon_frames_are_images_each_right_after_its_timestamp_line(runs, name):
    kwargs, times = sureon_spy.check_interleaved(runs[name], QWEN_IMAGE, ("<|video_pad|>",))
    assert kwargs["image_grid_thw"]["shape"] == [len(times), 3], "one image per planned frame"
    assert "pixel_values_videos" not in kwargs and "video_grid_thw" not in kwargs


# ------------------------------------------------------------------ OpenAI-compatible


def test_openai_gets_timed_frames_before_the_question(runs, synthetic):
    run = runs["openai"]
    assert len(run["samples"]) == 2 and len(run["requests"]) == 2
    by_question = {r["body"]["messages"][0]["content"][-1]["text"]: r for r in run["requests"]}
    for sample in run["samples"]:
        request = by_question[sample["input"]]
        assert request["path"] == "/v1/chat/completions"
        body = request["body"]
        assert body["model"] == "tiny-test" and body["max_tokens"] == 1
        plan, frames = _plan(synthetic, sample)
        parts = body["messages"][0]["content"]
        assert len(parts) == 2 * len(plan) + 1
        labels, images = parts[0:-1:2], parts[1:-1:2]
        assert [p["text"] for p in labels] == [f"<{t:.1f} seconds>" for t in plan.timestamps]
        for part, frame in zip(images, frames):
            head, data = part["image_url"]["url"].split(",", 1)
            assert head == "data:image/png;base64"
            assert np.array_equal(np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")), frame)
        assert sample["filtered_resps"] == f"images={len(plan)}", "each answer reaches its own item"

