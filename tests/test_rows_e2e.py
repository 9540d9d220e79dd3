"""The new rows through the real lmms-eval CLI (``medhorizon-tasks run``), all started together by one fixture:

* ``gemma4``: ``--model medhorizon_gemma4`` on a tiny randomly initialised Gemma 4 checkpoint built here
  (tests/tiny_vlm.py) with transformers' real processor; a spy (tests/generate_spy) records what ``generate``
  receives: one video of the planned frames, each after its planned ``mm:ss``, no image tokens;
* ``molmo2``: ``medhorizon_molmo2`` on a tiny random Molmo2 with its real processor: one video of the planned
  frames, each after its planned time in seconds, no image tokens;
* ``gemma3``: ``medhorizon_gemma3`` (MedGemma 1.5's row) on a tiny random Gemma 3 with its real processor: one image
  per planned frame, each right after its ``<t seconds>`` label, then the question;
* ``minicpm_v``, ``videochat_flash``, ``hulu_med``: model folders loaded by lmms-eval's real wrappers through
  transformers' real remote-code path (``trust_remote_code``, tests/tiny_remote_code.py), whose Python files are
  recording stand-ins of each model's documented interface (tests/remote_code/): they record every frame the
  model gets (count, shape, digest), the times where the model takes times (VideoChat-Flash's time message,
  Hulu-Med's ``timestamps``; MiniCPM-V takes none) and the prompt, and answer "B". lmms-eval's
  ``videochat_flash`` wrapper asserts a GPU and calls ``.half().cuda()``: on this CPU run the spy answers one
  device to that wrapper's own ``torch.cuda.device_count()`` call (tests/generate_spy) and the stand-in's
  ``cuda()`` is a no-op. Hulu-Med runs with ``use_flash_attention_2=False`` (no flash-attn on a CPU);
* ``gemma4``, ``molmo2`` and ``gemma3`` also answer one item of the Sureon task in the same run (Sureon's Gemma 4,
  Molmo2 and MedGemma 1.5 rows): each frame an image right after its ``Frame k at t s:`` line (tests/sureon_spy.py);
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

import sureon_spy
import tiny_remote_code
import tiny_vlm
from medhorizon_tasks.adapters.lmms_eval.runner import OFFLINE_ENV
from medhorizon_tasks.benchmarks.medhorizon.protocol import FrameSetting, load_frames
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from openai_mock import MockProvider

pytestmark = pytest.mark.e2e

TASK = "medhorizon_synthetic_frames8"
SPY = Path(__file__).parent / "generate_spy"
TIMEOUT_S = 900


def _start(model, model_args, out: Path, limit: int, env: dict, tasks: str = TASK):
    cmd = [sys.executable, "-m", "medhorizon_tasks.commands.main", "run", "--model", model, "--model_args",
           model_args, "--tasks", tasks, "--limit", str(limit), "--gen_kwargs", "max_new_tokens=1",
           "--output_path", str(out), "--log_samples"]
    out.mkdir(parents=True, exist_ok=True)
    full_env = {**os.environ, **OFFLINE_ENV, "OMP_NUM_THREADS": "1", **env}
    for k in ("MEDHORIZON_DATA", "MEDHORIZON_VIDEO_ROOT", "MEDHORIZON_ALLOW_VIDEO_ERRORS"):
        full_env.pop(k, None)
    log = open(out / "run.log", "w")
    return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=full_env), out / "run.log"


def _samples(out: Path) -> list[dict]:
    """The run's logged samples ([] without a samples file: each test then fails with the run's log)."""
    files = sorted(out.rglob(f"*_samples_{TASK}.jsonl"))
    return [json.loads(line) for line in files[-1].read_text().splitlines()] if files else []


def _spy_env(spy: Path, **extra) -> dict:
    """The generate spy (tests/generate_spy) on the run's PYTHONPATH, recording into ``spy``."""
    return {"PYTHONPATH": os.pathsep.join([str(SPY), os.environ.get("PYTHONPATH", "")]),
            "MEDHORIZON_GENERATE_SPY": str(spy), **extra}


def _remote_env(root: Path, name: str, **extra) -> dict:
    """Remote code copied into a private modules cache; the stand-ins record into ``<name>_remote.jsonl``."""
    return {tiny_remote_code.SPY_ENV: str(root / f"{name}_remote.jsonl"),
            "HF_MODULES_CACHE": str(root / f"{name}_modules"), **extra}


@pytest.fixture(scope="module")
def runs(synthetic, tmp_path_factory):
    root = tmp_path_factory.mktemp("rows_e2e")
    folders = {"gemma4": tiny_vlm.build_gemma4(root / "tiny_gemma4"),
               "molmo2": tiny_vlm.build_molmo2(root / "tiny_molmo2"),
               "gemma3": tiny_vlm.build_gemma3(root / "tiny_gemma3"),
               "minicpm_v": tiny_remote_code.build_minicpm_v(root / "tiny_minicpm_v"),
               "videochat_flash": tiny_remote_code.build_videochat_flash(root / "tiny_videochat_flash"),
               "hulu_med": tiny_remote_code.build_hulu_med(root / "tiny_hulu_med")}
    cpu = "device=cpu,device_map=cpu"
    both = f"{TASK},{sureon_spy.TASK}"
    mock = MockProvider(limit=4, vllm=True).__enter__()
    started = {
        "gemma4": _start("medhorizon_gemma4", f"pretrained={folders['gemma4']},{cpu},max_soft_tokens=70",
                         root / "gemma4", 1, _spy_env(root / "gemma4_generate.jsonl"), both),
        "molmo2": _start("medhorizon_molmo2", f"pretrained={folders['molmo2']},{cpu}", root / "molmo2", 1,
                         _spy_env(root / "molmo2_generate.jsonl"), both),
        "gemma3": _start("medhorizon_gemma3", f"pretrained={folders['gemma3']},{cpu}", root / "gemma3", 1,
                         _spy_env(root / "gemma3_generate.jsonl"), both),
        "minicpm_v": _start("medhorizon_minicpm_v", f"pretrained={folders['minicpm_v']},device=cpu", root / "minicpm_v",
                            1, _remote_env(root, "minicpm_v")),
        "videochat_flash": _start(
            "medhorizon_videochat_flash", f"pretrained={folders['videochat_flash']},device=cpu,device_map=auto",
            root / "videochat_flash", 1,
            _remote_env(root, "videochat_flash", **_spy_env(root / "videochat_flash_generate.jsonl"),
                        MEDHORIZON_SPY_CUDA_COUNT_FOR="lmms_eval.models.simple.videochat_flash")),
        "hulu_med": _start("medhorizon_hulu_med", f"pretrained={folders['hulu_med']},device=cpu,device_map=auto,"
                           "use_flash_attention_2=False", root / "hulu_med", 1, _remote_env(root, "hulu_med")),
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
    out = {name: {"samples": _samples(log.parent), "log": log} for name, (_, log) in started.items()}
    for name in ("gemma4", "molmo2", "gemma3"):
        spy = root / f"{name}_generate.jsonl"
        calls = [json.loads(x) for x in spy.read_text().splitlines()] if spy.exists() else []
        # the Sureon item's call apart from the MedHorizon item's
        out[name]["generate"], out[name]["sureon_generate"] = sureon_spy.split_calls(calls, folders[name])
        out[name]["sureon_samples"] = sureon_spy.samples(root / name)
    for name in ("minicpm_v", "videochat_flash", "hulu_med"):
        out[name]["remote"] = tiny_remote_code.spy_lines(root / f"{name}_remote.jsonl")
    for name, folder in folders.items():
        out[name]["path"] = folder
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


def _decoded(run, name="generate") -> tuple[dict, str]:
    """The one ``generate`` call's arguments and its prompt as the run's tokenizer decodes it."""
    from transformers import AutoTokenizer

    assert len(run["samples"]) == 1 and len(run[name]) == 1, run["log"].read_text()[-3000:]
    kwargs = run[name][0]["kwargs"]
    tokenizer = AutoTokenizer.from_pretrained(run["path"])
    return kwargs, tokenizer.decode(kwargs["input_ids"]["values"][0], clean_up_tokenization_spaces=False)


def test_molmo2_reads_one_video_at_the_planned_times(runs, synthetic):
    run = runs["molmo2"]
    kwargs, prompt = _decoded(run)
    assert run["generate"][0]["model"] == "Molmo2ForConditionalGeneration"
    plan, _ = _plan(synthetic, run["samples"][0])
    assert len(plan.timestamps) == 8
    assert [grid[0] for grid in kwargs["video_grids"]["values"]] == [8], "one video of the 8 planned frames"
    assert re.findall(r"(\d+\.\d) <frame_start>", prompt) == [f"{t:.1f}" for t in plan.timestamps]
    assert prompt.count("<frame_start>") == prompt.count("<frame_end>") == 8
    assert "pixel_values" not in kwargs and kwargs["pixel_values_videos"]["shape"][0] == 8, "8 frames, no images"
    assert "<|image|>" not in prompt and "<im_start>" not in prompt, "no image tokens: the frames are a video"
    assert run["samples"][0]["input"].strip()[-40:] in prompt.rsplit("<frame_end>", 1)[1]


def test_gemma3_reads_each_frame_after_its_time(runs, synthetic):
    run = runs["gemma3"]
    kwargs, prompt = _decoded(run)
    assert run["generate"][0]["model"] == "Gemma3ForConditionalGeneration"
    plan, _ = _plan(synthetic, run["samples"][0])
    assert kwargs["pixel_values"]["shape"][0] == len(plan.timestamps) == 8, "one image per planned frame"
    image = "<start_of_image>" + "<image_soft_token>" * tiny_vlm.GEMMA3_IMAGE_TOKENS + "<end_of_image>"
    labels = re.findall(r"<(\d+\.\d) seconds>\n\n" + re.escape(image), prompt)
    assert labels == [f"{t:.1f}" for t in plan.timestamps], "each frame right after its planned time"
    assert prompt.count("<start_of_image>") == 8
    question = prompt.rsplit("<end_of_image>", 1)[1]
    assert run["samples"][0]["input"].strip() in question, "the question after the frames"


def _frames_of(synthetic, sample) -> tuple:
    plan, frames = _plan(synthetic, sample)
    return plan, tiny_remote_code.frame_digests(frames)


def _scored(run):
    assert len(run["samples"]) == 1, run["log"].read_text()[-3000:]
    sample = run["samples"][0]
    assert sample["accuracy"]["status"] == "ok" and sample["accuracy"]["extracted"] == tiny_remote_code.ANSWER
    return sample


def _events(run, event) -> list[dict]:
    return [e for e in run["remote"] if e["event"] == event]


def test_minicpm_v_remote_code_gets_the_planned_frames_and_no_times(runs, synthetic):
    run = runs["minicpm_v"]
    sample = _scored(run)
    (chat,) = _events(run, "chat")
    plan, digests = _frames_of(synthetic, sample)
    assert chat["frames"]["count"] == len(plan.timestamps) == 8 and chat["frames"]["sha1"] == digests
    assert chat["image_is_none"] and chat["roles"] == ["user"]
    question = sample["input"].replace("<image>", "")
    assert chat["texts"] == [question], "the frames, then the question alone"
    # the whole prompt: one placeholder per frame, then the question; no time labels added
    assert chat["prompt"] == ("<|im_start|>user\n" + "(<image>./</image>)\n" * 8 + question
                              + "<|im_end|>\n<|im_start|>assistant\n")
    assert chat["use_image_id"] is False and chat["max_slice_nums"] == 2
    assert chat["sampling"] is False and chat["max_new_tokens"] == 1


def test_videochat_flash_remote_code_gets_the_planned_frames_and_times(runs, synthetic):
    run = runs["videochat_flash"]
    sample = _scored(run)
    assert not _events(run, "load_video"), "the remote loader never opens a file for planned frames"
    (chat,) = _events(run, "chat")
    plan, digests = _frames_of(synthetic, sample)
    assert chat["frames"]["count"] == len(plan.timestamps) == 8 == chat["max_num_frames"]
    assert chat["frames"]["sha1"] == digests and chat["local_num_frames"] == 4
    sec = ", ".join(str(round(t, 1)) for t in plan.timestamps)
    assert re.fullmatch(rf"The video lasts for \d+\.\d\d seconds, and 8 frames are uniformly sampled at {sec} "
                        r"seconds\.", chat["time_msg"]), chat["time_msg"]
    assert chat["prompt"] == f"<image>\n{chat['time_msg']} {sample['input']}"
    assert chat["generation_config"]["max_new_tokens"] == 1 and chat["generation_config"]["do_sample"] is False
    assert chat["dtype"] == "torch.float16", "the wrapper's .half() ran on the loaded model"


def test_hulu_med_remote_code_gets_one_video_with_its_timestamps(runs, synthetic):
    run = runs["hulu_med"]
    sample = _scored(run)
    (processor,) = _events(run, "processor")
    plan, digests = _frames_of(synthetic, sample)
    video, text = processor["parts"]
    assert video["type"] == "video" and video["frames"]["count"] == video["num_frames"] == 8 == len(plan.timestamps)
    assert video["frames"]["sha1"] == digests
    assert video["timestamps"] == pytest.approx(list(plan.timestamps), abs=1e-6)
    assert re.findall(r"Time (\d+\.\d)s:", processor["prompt"]) == [f"{t:.1f}" for t in plan.timestamps]
    assert text == {"type": "text", "text": sample["input"]}
    (generate,) = _events(run, "generate")
    assert generate["modals"] == ["video"] and generate["image_tokens"] == 8
    assert generate["pixel_values"]["dtype"] == "torch.bfloat16" and generate["pixel_values"]["shape"][0] == 8
    assert [e["use_think"] for e in _events(run, "batch_decode")] == [False]


# ------------------------------------------------------------------ Sureon (appendix D.1, Fig. 17)

SUREON_IMAGES = {  # each model's image tokens, and the marks of its video input that must not appear
    "gemma4": (r"<\|boi\|>(?:<\|image\|>)+<\|eoi\|>", ("<|video|>",)),
    "molmo2": (r"<low_res_im_start>(?:<im_patch>|<im_col>)+<im_end>(?:<im_start>(?:<im_patch>|<im_col>)+<im_end>)*",
               ("<frame_start>",)),
    "gemma3": ("<start_of_image>(?:<image_soft_token>)+<end_of_image>", (" seconds>",)),
}


@pytest.mark.parametrize("name", sorted(SUREON_IMAGES))  # Sureon's Gemma 4, Molmo2 and MedGemma 1.5 rows
def test_sureon_frames_are_images_each_right_after_its_timestamp_line(runs, name):
    image, video_marks = SUREON_IMAGES[name]
    kwargs, times = sureon_spy.check_interleaved(runs[name], image, video_marks)
    assert "pixel_values_videos" not in kwargs
    if name == "molmo2":
        assert kwargs["image_grids"]["shape"][0] == len(times), "one image per planned frame"
    else:
        assert kwargs["pixel_values"]["shape"][0] == len(times), "one image per planned frame"
