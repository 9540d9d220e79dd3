"""``surghi zeroshot`` through the real command on the synthetic sample: a tiny randomly initialised transformers
CLIP and a tiny open_clip model (one prediction per annotated frame, scored as ``score`` scores it, a valid
submission); a probe encoder that reads the sample's visual code (100% at both levels with cosine and with
Lorentz; a video probe that sees exactly the centred clip); two processes under ``accelerate launch`` and a
SIGKILLed run, rerun, both byte-identical to one uninterrupted process; phase-only items; a missing video."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from medhorizon_tasks.commands.main import main
from medhorizon_tasks.data.synthetic.probe_encoder import probe_prompts
from test_zeroshot import _surgclip_centred
from tiny_encoders import build_hf_clip, register_open_clip

pytestmark = pytest.mark.e2e

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "CUDA_VISIBLE_DEVICES": "",
           "PYTHONPATH": str(Path(__file__).parent)}
CLI = [sys.executable, "-m", "medhorizon_tasks.commands.main", "surghi", "zeroshot"]


def _env(sample) -> dict:
    return {**os.environ, **OFFLINE, "MEDHORIZON_SYNTHETIC_DIR": str(sample.root.parent)}


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def _annotations(sample) -> list[dict]:
    return _lines(sample.annotations_path)


def _score(capsys, predictions: Path, annotations: Path) -> dict:
    assert main(["score", "--benchmark", "surghi", "--predictions", str(predictions), "--data",
                 str(annotations), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _segment(sample, video: str, t: float) -> dict:
    manifest = json.loads(sample.manifest_path.read_text())
    segs = next(v["segments"] for v in manifest["videos"] if v["video"] == video)
    return next(s for s in segs if s["start"] <= t < s["end"])


@pytest.fixture(scope="module")
def probe_files(surghi_sample, tmp_path_factory):
    """The probe's prompts file, and items of the sample's coded frames only (a frame drawn without a code
    carries no evidence of its label), with the sample's hierarchies beside them."""
    folder = tmp_path_factory.mktemp("zs_probe")
    hierarchies = json.loads(surghi_sample.hierarchy_path.read_text())
    (folder / "prompts.json").write_text(json.dumps(probe_prompts(hierarchies)))
    coded = [r for r in _annotations(surghi_sample) if _segment(surghi_sample, r["video"], r["frame"])["coded"]]
    (folder / "coded.jsonl").write_text("".join(json.dumps(r) + "\n" for r in coded))
    (folder / "hierarchies.json").write_text(surghi_sample.hierarchy_path.read_text())
    return folder / "prompts.json", folder / "coded.jsonl", coded


# ------------------------------------------------------------------ tiny real models

@pytest.fixture(scope="module")
def hf_run(surghi_sample, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("zs_hf")
    model = build_hf_clip(tmp / "tiny-clip")
    out = tmp / "out"
    proc = subprocess.run([*CLI, "--encoder", f"hf:{model}", "--data", "surghi_synthetic", "--out", str(out),
                           "--batch-size", "24", "--model-name", "tiny-clip"],
                          env=_env(surghi_sample), capture_output=True, text=True, timeout=900)
    return proc, out


def test_a_tiny_transformers_clip_labels_every_annotated_frame_and_is_scored_as_score_scores_it(
        hf_run, surghi_sample, capsys):
    proc, out = hf_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    ann = _annotations(surghi_sample)
    preds = _lines(out / "predictions.jsonl")
    assert [(p["dataset"], p["video"], p["frame"]) for p in preds] == [(a["dataset"], a["video"], a["frame"])
                                                                       for a in ann]
    hierarchies = json.loads(surghi_sample.hierarchy_path.read_text())
    for p in preds:
        h = hierarchies[p["dataset"]]["phases"]
        assert p["phase"] in h and any(p["step"] in steps for steps in h.values()) and "error" not in p
    rep = json.loads((out / "report.json").read_text())
    scored = _score(capsys, out / "predictions.jsonl", surghi_sample.annotations_path)
    assert rep["datasets"] == scored["datasets"] and rep["overall"] == scored["overall"]
    assert rep["overall"]["n_videos"] == 6 and rep["overall"]["n_missing"] == rep["overall"]["n_errors"] == 0
    z = rep["zeroshot"]
    assert z["frames"] == {"evaluated": 120, "distinct": 360, "decoded": 360, "encoded": 360, "clips_encoded": 0,
                           "encoded_per_distinct_frame": 1.0}
    assert z["setting"]["frames"] == 16 and z["setting"]["similarity"] == "cosine" and z["precision"] == "float32"
    assert {p["source"] for lv in z["prompts"].values() for p in lv.values()} == \
        {"label template '{label}', not the paper's"}
    text = (out / "report.txt").read_text()
    for title in ("Table 2. Task 1", "Table 3. Task 2", "Table 4. Task 3", "SynthTree  tiny-clip"):
        assert title in text
    assert proc.stdout.strip() == text.strip()
    for s in _lines(out / "scores.jsonl"):
        phases, steps = s["phases_top"], s["steps_top"]
        assert len(steps) == 5 and len(phases) == len(hierarchies[s["dataset"]]["phases"])
        assert [v for _, v in steps] == sorted((v for _, v in steps), reverse=True)
    assert [s["phases_top"][0][0] for s in _lines(out / "scores.jsonl")] == [p["phase"] for p in preds]
    sub = json.loads((out / "submission.json").read_text())
    assert sub["metadata"]["model"] == "tiny-clip" and sub["metadata"]["input_protocol"]["frames"] == 16
    assert main(["leaderboard", "validate", str(out / "submission.json"), "--data",
                 str(surghi_sample.annotations_path)]) == 0


def test_a_tiny_open_clip_model_registered_here_runs_through_the_command(surghi_sample, tmp_path, capsys):
    name = register_open_clip(tmp_path / "configs")
    out = tmp_path / "out"
    assert main(["surghi", "zeroshot", "--encoder", f"open_clip:{name}", "--data", str(surghi_sample.annotations_path),
                 "--video-root", str(surghi_sample.video_root), "--out", str(out), "--quiet", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    preds = _lines(out / "predictions.jsonl")
    assert len(preds) == len(_annotations(surghi_sample)) == 120 and all(p["phase"] and p["step"] for p in preds)
    assert rep["overall"]["n_videos"] == 6 and 0 <= rep["overall"]["multi_level"] <= 1
    assert rep["zeroshot"]["encoder"] == f"open_clip:{name}" and rep["zeroshot"]["frames"]["encoded"] == 360
    assert _score(capsys, out / "predictions.jsonl", surghi_sample.annotations_path)["overall"] == rep["overall"]


# ------------------------------------------------------------------ the probe

@pytest.mark.parametrize("similarity", ["cosine", "lorentz"])
def test_the_probe_scores_100_percent_at_both_levels_on_what_it_can_see(probe_files, surghi_sample, tmp_path,
                                                                       similarity, capsys):
    prompts, coded, rows = probe_files
    out = tmp_path / "out"
    assert main(["surghi", "zeroshot", "--encoder", "synthetic_probe", "--data", str(coded), "--video-root",
                 str(surghi_sample.video_root), "--prompts", str(prompts), "--frames", "1", "--similarity", similarity,
                 "--curvature", "0.815", "--out", str(out), "--quiet", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    for name, row in [*rep["datasets"].items(), ("Overall", rep["overall"])]:
        for k in ("phase_acc", "step_acc", "phase_f1", "step_f1", "both_right", "sibling", "semantic_step"):
            assert row[k] == 1.0, (name, k)
    assert rep["zeroshot"]["setting"]["similarity"] == similarity
    assert rep["zeroshot"]["setting"]["curvature"] == (0.815 if similarity == "lorentz" else None)
    preds = _lines(out / "predictions.jsonl")
    assert [(p["phase"], p["step"]) for p in preds] == [(r["phase"], r["step"]) for r in rows]


def test_a_video_probe_sees_the_clip_centred_on_each_frame_shifted_at_the_ends(probe_files, surghi_sample, tmp_path,
                                                                              capsys):
    """The video probe reads the middle (T // 2) frame of each 16-frame clip: inside a video that is the evaluated
    frame; within 8 s of either end the clip is shifted (surgclip's rule), so it reads another second, computed
    here from the manifest."""
    prompts, _, _ = probe_files
    out = tmp_path / "out"
    assert main(["surghi", "zeroshot", "--encoder", "synthetic_probe", "--encoder-arg", "kind=video", "--data",
                 str(surghi_sample.annotations_path), "--video-root", str(surghi_sample.video_root), "--prompts",
                 str(prompts), "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    hierarchies = json.loads(surghi_sample.hierarchy_path.read_text())
    shifted = 0
    for ann, pred in zip(_annotations(surghi_sample), _lines(out / "predictions.jsonl")):
        middle = _surgclip_centred(ann["frame"], 60, 16)[8]
        shifted += middle != ann["frame"]
        seg = _segment(surghi_sample, ann["video"], middle)
        phases = list(hierarchies[ann["dataset"]]["phases"])
        steps = list(dict.fromkeys(s for ss in hierarchies[ann["dataset"]]["phases"].values() for s in ss))
        want = (seg["phase"], seg["step"]) if seg["coded"] else (phases[0], steps[0])  # no code: ties, first class
        assert (pred["phase"], pred["step"]) == want, (ann, middle)
    assert shifted == 6 * 5  # frames 1, 4 and 7 at the start, 55 and 58 at the end of every video
    report = json.loads((out / "report.json").read_text())["zeroshot"]["frames"]
    clips = {tuple(_surgclip_centred(a, 60, 16)) for a in range(1, 60, 3)}  # 1-7 share one clip, 52-58 another
    assert report["clips_encoded"] == 6 * len(clips) == 6 * 16 and report["decoded"] == report["distinct"] == 360


# ------------------------------------------------------------------ processes, interruption

@pytest.fixture(scope="module")
def reference(probe_files, surghi_sample, tmp_path_factory):
    """One uninterrupted process with the probe (default protocol)."""
    prompts, _, _ = probe_files
    out = tmp_path_factory.mktemp("zs_ref") / "out"
    assert main(["surghi", "zeroshot", "--encoder", "synthetic_probe", "--data", str(surghi_sample.annotations_path),
                 "--video-root", str(surghi_sample.video_root), "--prompts", str(prompts), "--out", str(out),
                 "--quiet"]) == 0
    return out


def test_two_processes_under_accelerate_launch_give_byte_identical_outputs(reference, probe_files, surghi_sample,
                                                                           tmp_path):
    prompts, _, _ = probe_files
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--num_processes", "2", "--multi_gpu",
           "--main_process_port", str(29600 + os.getpid() % 300), "-m", "medhorizon_tasks.commands.main", "surghi",
           "zeroshot", "--encoder", "synthetic_probe", "--data", "surghi_synthetic", "--prompts", str(prompts),
           "--out", str(out), "--quiet"]
    proc = subprocess.run(cmd, env={**_env(surghi_sample), "ACCELERATE_USE_CPU": "1"}, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name in ("predictions.jsonl", "scores.jsonl", "report.json", "report.txt"):
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name
    journals = {p.name: len(p.read_text().splitlines()) for p in (out / "journal").glob("rank-*.jsonl")}
    assert journals == {"rank-0.jsonl": 3, "rank-1.jsonl": 3}  # each process labelled its three videos
    for rank in (0, 1):  # each rank took half of the node's cores and decode memory, and said so once
        assert proc.stderr.count(f"medhorizon: rank {rank} of 2 on this node: ") == 1, proc.stderr[-3000:]
    assert proc.stdout.count("Table 2. Task 1") == 1  # one process wrote and printed the outputs


def test_a_sigkilled_run_rerun_redoes_only_the_unfinished_videos_and_gives_identical_outputs(
        reference, probe_files, surghi_sample, tmp_path):
    prompts, _, _ = probe_files
    out = tmp_path / "out"
    cmd = [*CLI, "--encoder", "synthetic_probe", "--encoder-arg", "delay=0.4", "--batch-size", "16", "--data",
           "surghi_synthetic", "--prompts", str(prompts), "--out", str(out), "--quiet"]
    proc = subprocess.Popen(cmd, env=_env(surghi_sample), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    journal = out / "journal" / "rank-0.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if journal.is_file() and len(journal.read_bytes().splitlines()) >= 2:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed: " + proc.stderr.read().decode()[-2000:]
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = len(journal.read_bytes().splitlines())
    assert 2 <= done < 6 and not (out / "predictions.jsonl").exists()
    rerun = subprocess.run(cmd, env=_env(surghi_sample), capture_output=True, text=True, timeout=900)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    for name in ("predictions.jsonl", "scores.jsonl"):
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name
    last = json.loads((out / "run.json").read_text())["last_run"]
    assert last["videos_reused"] == done and last["videos_labelled"] == 6 - done
    assert len(journal.read_bytes().splitlines()) == 6  # nothing journaled twice
    again = subprocess.run(cmd, env=_env(surghi_sample), capture_output=True, text=True, timeout=900)
    assert again.returncode == 0 and "outputs in" in again.stderr and "up to date" in again.stderr
    assert "Table 2. Task 1" in again.stdout


# ------------------------------------------------------------------ phases only, a missing video

def test_items_with_phases_only_are_labelled_and_scored_on_phases(probe_files, surghi_sample, tmp_path, capsys):
    prompts, _, rows = probe_files
    items = tmp_path / "phases.jsonl"
    items.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "step"}) + "\n" for r in rows))
    (tmp_path / "hierarchies.json").write_text(surghi_sample.hierarchy_path.read_text())
    phase_prompts = {ds: {"phases": p["phases"]} for ds, p in json.loads(prompts.read_text()).items()}
    (tmp_path / "prompts.json").write_text(json.dumps(phase_prompts))
    out = tmp_path / "out"
    assert main(["surghi", "zeroshot", "--encoder", "synthetic_probe", "--data", str(items), "--video-root",
                 str(surghi_sample.video_root), "--prompts", str(tmp_path / "prompts.json"), "--frames", "1",
                 "--out", str(out), "--quiet", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert all(p["step"] is None for p in _lines(out / "predictions.jsonl"))
    for ds in ("SynthTree", "SynthDAG"):
        assert rep["datasets"][ds]["phases_only"] and rep["datasets"][ds]["phase_acc"] == 1.0
        assert rep["datasets"][ds]["step_acc"] is None and set(rep["zeroshot"]["prompts"][ds]) == {"phases"}
    assert "n/a" in (out / "report.txt").read_text()


def test_a_missing_video_is_an_error_of_its_own_never_an_answer(probe_files, surghi_sample, tmp_path, capsys,
                                                                monkeypatch):
    prompts, coded, _ = probe_files
    root = tmp_path / "videos"
    for p in surghi_sample.video_root.rglob("*.mp4"):
        if p.stem != "synthdag_02":
            (root / p.relative_to(surghi_sample.video_root)).parent.mkdir(parents=True, exist_ok=True)
            os.link(p, root / p.relative_to(surghi_sample.video_root))
    args = ["surghi", "zeroshot", "--encoder", "synthetic_probe", "--data", str(coded), "--video-root", str(root),
            "--prompts", str(prompts), "--frames", "1", "--out", str(tmp_path / "out"), "--quiet"]
    assert main(args) == 2
    assert "surghi pre-flight: 1 of 6 videos cannot be used" in capsys.readouterr().err
    monkeypatch.setenv("MEDHORIZON_ALLOW_VIDEO_ERRORS", "1")
    assert main(args + ["--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    failed = [p for p in _lines(tmp_path / "out" / "predictions.jsonl") if p.get("error")]
    assert failed and {p["video"] for p in failed} == {"synthdag_02"}
    assert all(p["phase"] is None and p["step"] is None and "video file not found" in p["error"] for p in failed)
    assert rep["datasets"]["SynthDAG"]["n_errors"] == len(failed) and rep["datasets"]["SynthTree"]["phase_acc"] == 1.0
    assert rep["zeroshot"]["video_errors"]["videos"] == 1
    assert _score(capsys, tmp_path / "out" / "predictions.jsonl", coded)["datasets"]["SynthDAG"]["n_errors"] == \
        len(failed)


# ------------------------------------------------------------------ the README's plug-in example

def test_the_readme_example_encoder_runs_as_written(surghi_sample, tmp_path, capsys, monkeypatch):
    import torch

    from tiny_video_model import TinyVideoModel

    readme = (Path(__file__).resolve().parents[1] / "docs" / "surghibench.md").read_text()
    code = readme.split("```python\n# my_encoders.py\n", 1)[1].split("```", 1)[0]
    assert 15 <= len([x for x in code.splitlines() if x.strip()]) <= 25  # "a 20-line example"
    (tmp_path / "my_encoders.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    torch.save(TinyVideoModel(), tmp_path / "hypersurg.pt")
    out = tmp_path / "out"
    assert main(["surghi", "zeroshot", "--encoder", "my_encoders:MyVideoEncoder", "--encoder-arg",
                 f"checkpoint={tmp_path / 'hypersurg.pt'}", "--encoder-arg", "size=32", "--data",
                 str(surghi_sample.annotations_path), "--video-root", str(surghi_sample.video_root), "--out", str(out),
                 "--quiet", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert len(_lines(out / "predictions.jsonl")) == 120 and rep["overall"]["n_videos"] == 6
    z = rep["zeroshot"]
    assert z["kind"] == "video" and z["setting"]["similarity"] == "lorentz" and z["setting"]["curvature"] == 0.815
    assert z["frames"]["clips_encoded"] == 6 * 16 and z["frames"]["decoded"] == 360


def test_nearly_constant_predictions_are_warned_with_their_share(hf_run, surghi_sample):
    """Issue 38 item 12: a randomly initialised CLIP gives one label to most frames of a dataset with several;
    the report says so, with the share, for each dataset and level where that happens (and only there)."""
    from collections import Counter

    proc, out = hf_run
    assert proc.returncode == 0, proc.stderr[-3000:]
    ann = _annotations(surghi_sample)
    preds = _lines(out / "predictions.jsonl")
    expected = []
    for level in ("phase", "step"):
        for ds in sorted({a["dataset"] for a in ann}):
            got = Counter(p[level] for p in preds if p["dataset"] == ds)
            truth = Counter(a[level] for a in ann if a["dataset"] == ds)
            label, k = got.most_common(1)[0]
            n, top = sum(got.values()), truth.most_common(1)[0][1] / sum(truth.values())
            line = f"warning: {ds} {level}s: {k} of {n} frames ({100 * k / n:.0f}%) are labelled {label!r}"
            expected.append((line, k / n > 0.5 and k / n > top))
    assert any(warned for _, warned in expected), "the tiny random CLIP gives nearly constant labels"
    for line, warned in expected:
        assert (line in proc.stdout) == warned, line
    assert "the predictions are nearly constant" in (out / "report.txt").read_text()


def test_constant_warnings_only_where_one_label_outweighs_the_annotations():
    from medhorizon_tasks.benchmarks.surghi.frames import FrameRow
    from medhorizon_tasks.runs.zeroshot_outputs import constant_block, constant_warnings

    rows = [FrameRow("D", "v", i, "P1" if i < 6 else "P2", "s") for i in range(10)]
    mostly = [{"phase": "P1" if i < 9 else "P2", "step": "s"} for i in range(10)]
    block = constant_block(rows, mostly)
    assert block == {"D": {"phases": {"label": "P1", "frames": 9, "of": 10, "share": 0.9, "annotated_share": 0.6}}}
    (line,) = constant_warnings(block)
    assert line.startswith("warning: D phases: 9 of 10 frames (90%) are labelled 'P1'") and "covers 60%" in line
    # as often as the annotations have it: a right answer, not a constant one; one step class: nothing to say
    assert constant_warnings(constant_block(rows, [{"phase": r.phase, "step": "s"} for r in rows])) == []
