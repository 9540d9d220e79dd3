"""A run that tells the truth, through the real lmms-eval CLI: no --include_path needed, a pre-flight that
stops a run before the model loads, and a launcher whose exit status says whether the run counts.

lmms-eval exits 0 when an evaluation fails; these tests assert on the files and on the launcher's status.
"""

import json
import os
import subprocess
import sys

import pytest

from medhorizon_tasks.adapters.lmms_eval.runner import OFFLINE_ENV

pytestmark = pytest.mark.e2e


def _env(**extra):
    env = {**os.environ, **OFFLINE_ENV}
    for k in ("MEDHORIZON_DATA", "MEDHORIZON_VIDEO_ROOT", "MEDHORIZON_ALLOW_VIDEO_ERRORS", "MEDHORIZON_NO_AUTO_TASKS"):
        env.pop(k, None)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _lmms_eval(args, env, timeout=600):
    return subprocess.run([sys.executable, "-m", "lmms_eval", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def _launcher(args, env, timeout=900):
    return subprocess.run([sys.executable, "-m", "medhorizon_tasks.commands.main", "run", *args], env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_plain_lmms_eval_finds_the_tasks_and_the_launcher_says_ok(synthetic, tmp_path):
    """`medhorizon-tasks run` = the plain lmms-eval CLI, with no --include_path: its tasks are found."""
    out = tmp_path / "out"
    proc = _launcher(["--model", "medhorizon_needle", "--tasks", "medhorizon_synthetic", "--limit", "8",
                      "--output_path", str(out)], _env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "lmms-eval run OK" in proc.stderr
    results = list(out.rglob("*_results.json"))
    assert len(results) == 1
    res = json.loads(results[0].read_text())["results"]["medhorizon_synthetic"]
    assert 0.0 <= res["accuracy,none"] <= 1.0
    samples = list(out.rglob("*_samples_medhorizon_synthetic.jsonl"))
    assert len(samples) == 1 and len(samples[0].read_text().splitlines()) == 8, "--log_samples was added"
    log = next(out.glob("medhorizon_run_*.log")).read_text()
    assert "--include_path" not in log.splitlines()[0]


def test_tasks_list_shows_the_tasks_and_the_opt_out_hides_them():
    proc = _lmms_eval(["--tasks", "list"], _env())
    listed = proc.stdout + proc.stderr
    for name in ("medhorizon", "medhorizon_synthetic", "sureon_visual", "surghi_synthetic"):
        assert f" - {name}\n" in listed, name
    hidden = _lmms_eval(["--tasks", "list"], _env(MEDHORIZON_NO_AUTO_TASKS=1))
    assert " - medhorizon_synthetic\n" not in hidden.stdout + hidden.stderr


def test_a_missing_video_stops_the_run_before_the_model_loads(broken_release, tmp_path):
    data, root, uids = broken_release
    # No such checkpoint exists: had the run got as far as loading the model, it would say so. (An unknown model
    # name is refused before the pre-flight: tests/test_names_and_model_args.py.)
    proc = _lmms_eval(["--model", "medhorizon_qwen2_5_vl", "--model_args", "pretrained=/no_such_model_xyz",
                       "--tasks", "medhorizon", "--output_path", str(tmp_path)],
                      _env(MEDHORIZON_DATA=data, MEDHORIZON_VIDEO_ROOT=root))
    err = proc.stdout + proc.stderr
    assert proc.returncode == 2
    assert "medhorizon pre-flight: 1 of 3 videos cannot be used" in err and "video file not found" in err
    assert "MEDHORIZON_ALLOW_VIDEO_ERRORS=1" in err
    assert "no_such_model_xyz" not in err.replace("pretrained=/no_such_model_xyz", "")
    assert not list(tmp_path.rglob("*_results.json"))


def test_a_wrong_video_root_stops_the_run_with_the_fix(broken_release, tmp_path):
    data, _, _ = broken_release
    proc = _lmms_eval(["--model", "medhorizon_qwen2_5_vl", "--model_args", "pretrained=/no_such_model_xyz",
                       "--tasks", "medhorizon_oracle", "--output_path", str(tmp_path)],
                      _env(MEDHORIZON_DATA=data, MEDHORIZON_VIDEO_ROOT=tmp_path / "wrong"))
    err = proc.stdout + proc.stderr
    assert proc.returncode == 2
    assert "video root" in err and "does not exist" in err and "MEDHORIZON_VIDEO_ROOT" in err
    assert "no_such_model_xyz" not in err.replace("pretrained=/no_such_model_xyz", ""), "stopped before the model"
    assert not list(tmp_path.rglob("*_results.json"))


@pytest.mark.parametrize("case", ["unset", "broken_path"])
def test_the_launcher_refuses_a_forgotten_or_broken_data_variable(case, tmp_path):
    env = _env() if case == "unset" else _env(MEDHORIZON_DATA=tmp_path / "no_such_release.jsonl")
    proc = _launcher(["--model", "medhorizon_random", "--tasks", "medhorizon_text", "--output_path",
                      str(tmp_path / "out")], env)
    assert proc.returncode == 2, proc.stderr[-2000:]
    expected = "MEDHORIZON_DATA is not set" if case == "unset" else "file not found"
    assert expected in proc.stderr
    [failed] = [line for line in proc.stderr.splitlines() if "run FAILED" in line]
    assert "stopped before the model was loaded: " in failed and expected in failed, "the reason on one line"
    assert "Traceback" not in proc.stderr


def test_the_launcher_fails_an_evaluation_error_with_its_reason(synthetic, tmp_path):
    # the model cannot be built (the attention wrapper measures no probe; args it cannot take are refused before
    # lmms-eval starts, tests/test_names_and_model_args.py): lmms-eval logs the error and exits 0
    proc = _launcher(["--model", "medhorizon_attention", "--model_args",
                      f"inner=medhorizon_needle,out={tmp_path / 'a.jsonl'}", "--tasks",
                      "medhorizon_synthetic_text", "--limit", "2", "--output_path", str(tmp_path / "out")], _env())
    assert proc.returncode == 1, proc.stderr[-2000:]
    line = next(x for x in proc.stderr.splitlines() if "lmms-eval run FAILED" in x)
    assert "wrote no results" in line and "ValueError" in line


def test_the_launcher_fails_a_run_with_video_errors_unless_allowed(broken_release, tmp_path):
    data, root, uids = broken_release
    # Only the good and the corrupt video: the corrupt one indexes fine, so the pre-flight lets the run through,
    # and decoding fails for the cap-64 plans of its items.
    records = [json.loads(x) for x in data.read_text().splitlines()]
    kept = [r for r in records if not {str(q["uid"]) for q in r["qa"]} & uids["missing"]]
    data2 = tmp_path / "release.jsonl"
    data2.write_text("".join(json.dumps(r) + "\n" for r in kept))
    args = ["--model", "medhorizon_needle", "--tasks", "medhorizon", "--output_path"]
    proc = _launcher([*args, str(tmp_path / "a")], _env(MEDHORIZON_DATA=data2, MEDHORIZON_VIDEO_ROOT=root))
    n_bad = len(uids["corrupt"])
    assert proc.returncode == 1, proc.stderr[-2000:]
    line = next(x for x in proc.stderr.splitlines() if "lmms-eval run FAILED" in x)
    assert f"task medhorizon: {n_bad} item(s) had video errors" in line and "corrupt" in line
    assert "MEDHORIZON_ALLOW_VIDEO_ERRORS=1" in line
    assert list((tmp_path / "a").rglob("*_results.json")), "the results are still written, only not counted"
    allowed = _launcher([*args, str(tmp_path / "b")],
                        _env(MEDHORIZON_DATA=data2, MEDHORIZON_VIDEO_ROOT=root, MEDHORIZON_ALLOW_VIDEO_ERRORS=1))
    assert allowed.returncode == 0, allowed.stderr[-2000:]
    assert f"note: task medhorizon: {n_bad} item(s) had video errors" in allowed.stderr


def test_a_wrapper_that_mishandles_frame_lists_is_refused_at_start_naming_the_bridge(tmp_path):
    proc = _lmms_eval(["--model", "qwen2_5_vl", "--model_args", "pretrained=/nonexistent", "--tasks",
                       "medhorizon_synthetic", "--output_path", str(tmp_path)], _env())
    err = proc.stdout + proc.stderr
    assert proc.returncode == 2
    assert "medhorizon_qwen2_5_vl" in err and "MEDHORIZON_ALLOW_FRAME_LIST=1" in err
    assert "/nonexistent" not in err.replace("pretrained=/nonexistent", ""), "stopped before the model loaded"
