"""A submission made from lmms-eval samples takes its input protocol from what the run recorded (issue 38,
item 11): `leaderboard make --frames 0` on the samples of a 64-frame run is refused, naming both."""

import json
import subprocess
import sys

import pytest

from medhorizon_tasks.benchmarks.data import load_benchmark_data
from medhorizon_tasks.core.errors import DataError
from medhorizon_tasks.leaderboard.submission import make_submission

CLI = [sys.executable, "-m", "medhorizon_tasks.commands.main"]


def _release(tmp_path):
    qa = [{"uid": k, "question": f"Q{k}?", "options": [f"o{k}{j}" for j in range(4)], "answer": "ABCD"[k % 4],
           "task_id": "PR"} for k in range(8)]
    path = tmp_path / "release.jsonl"
    path.write_text(json.dumps({"key": "v0", "dataset": "GraSP", "video_path": "v0.mp4", "num_frames": 1000,
                                "fps": 25.0, "duration_seconds": 40.0, "qa": qa}) + "\n")
    return path, qa


def _run(tmp_path, task: str, kwargs: dict, qa):
    """A samples file and the results file lmms-eval writes beside it, recording the task's kwargs."""
    stamp = "20250101_000000"
    samples = tmp_path / f"{stamp}_samples_{task}.jsonl"
    samples.write_text("".join(json.dumps({"doc_id": i, "filtered_resps": [q["answer"]],
                                           "accuracy": {"uid": str(q["uid"]), "mode": kwargs.get("mode", "visual")}})
                               + "\n" for i, q in enumerate(qa)))
    (tmp_path / f"{stamp}_results.json").write_text(json.dumps({
        "config": {"model": "m", "model_args": ""},
        "configs": {task: {"lmms_eval_specific_kwargs": {"default": kwargs}}}}))
    return samples


def test_make_refuses_a_frames_flag_that_contradicts_the_run(tmp_path):
    release, qa = _release(tmp_path)
    samples = _run(tmp_path, "medhorizon_frames64", {"mode": "visual", "frames": 64}, qa)
    base = [*CLI, "leaderboard", "make", "--benchmark", "medhorizon", "--data", str(release), "--predictions",
            str(samples), "--model", "M", "--model-size", "7B"]
    r = subprocess.run([*base, "--frames", "0"], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr and r.stdout == ""
    assert len(r.stderr.strip().splitlines()) == 1
    assert "--frames 0 contradicts the run" in r.stderr and "64 frames" in r.stderr
    # no flag: the run's own protocol; the same value: accepted
    for extra in ([], ["--frames", "64"]):
        r = subprocess.run([*base, *extra], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["metadata"]["input_protocol"] == {"fps": None, "cap": None, "frames": 64}


def test_the_recorded_protocol_of_each_kind_of_run(tmp_path):
    release, qa = _release(tmp_path)
    data = load_benchmark_data("medhorizon", release)
    cases = [({"mode": "visual", "fps": 1, "cap": 64}, {"fps": 1.0, "cap": 64, "frames": None}),
             ({"mode": "text"}, {"fps": None, "cap": None, "frames": 0})]
    for k, (kwargs, protocol) in enumerate(cases):
        folder = tmp_path / f"run{k}"
        folder.mkdir()
        samples = _run(folder, "medhorizon_x", kwargs, qa)
        assert make_submission(data, samples, model="M", size="7B")["metadata"]["input_protocol"] == protocol
    with pytest.raises(DataError, match="--cap 128 contradicts .* 1 FPS, cap 64"):
        make_submission(data, tmp_path / "run0" / "20250101_000000_samples_medhorizon_x.jsonl", model="M", size="7B",
                        cap=128)
    with pytest.raises(DataError, match="--fps 1 contradicts .* text only"):
        make_submission(data, tmp_path / "run1" / "20250101_000000_samples_medhorizon_x.jsonl", model="M", size="7B",
                        fps=1)
    # a plain predictions file records nothing: the flags are the protocol
    plain = tmp_path / "plain.jsonl"
    plain.write_text("".join(json.dumps({"uid": q["uid"], "prediction": q["answer"]}) + "\n" for q in qa))
    assert make_submission(data, plain, model="M", size="7B", frames=0)["metadata"]["input_protocol"]["frames"] == 0
