"""``medhorizon-tasks select`` through the real command on the synthetic benchmark: the probe scorer that reads the
visual code (AKS and WFS-SB recall and needle accuracy far above uniform's at 16 frames), a tiny randomly
initialised open_clip model, two processes under ``accelerate launch`` and a SIGKILLed run, rerun, both
byte-identical to one uninterrupted process; the task variants show the selected frames to the needle probe
through lmms-eval (medhorizon_synthetic_aks128) and VLMEvalKit (MedHorizon_Synthetic_vilamp_select128)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.commands.main import main
from tiny_encoders import register_open_clip

pytestmark = pytest.mark.e2e

OFFLINE = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "CUDA_VISIBLE_DEVICES": "",
           "PYTHONPATH": str(Path(__file__).parent)}
CLI = [sys.executable, "-m", "medhorizon_tasks.commands.main", "select"]
PROBE = ["--synthetic", "--scorer", "synthetic_probe", "--selector", "aks,wfs_sb,vilamp", "--budget", "16",
         "--recall", "--quiet"]
FILES = ["selection-aks-16.jsonl", "selection-wfs_sb-16.jsonl", "selection-vilamp-16.jsonl",
         "selection-uniform-16.jsonl", "select.json"]


def _env(synthetic) -> dict:
    return {**os.environ, **OFFLINE, "MEDHORIZON_SYNTHETIC_DIR": str(synthetic.root)}


def _lines(path: Path) -> list[dict]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def _recall(stdout: str) -> dict[str, tuple[float, float]]:
    """``{selection: (item recall %, needle accuracy %)}`` from the printed lines."""
    out = {}
    for m in re.finditer(r"^(\S+): evidence recall: item ([\d.]+)%.*needle accuracy ([\d.]+)%", stdout, re.M):
        out[m.group(1)] = (float(m.group(2)), float(m.group(3)))
    return out


@pytest.fixture(scope="module")
def reference(synthetic, tmp_path_factory):
    out = tmp_path_factory.mktemp("select_ref") / "out"
    proc = subprocess.run([*CLI, *PROBE, "--out", str(out)], env=_env(synthetic), capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, proc


def test_the_probe_scorer_puts_aks_and_wfs_far_above_uniform_in_recall_and_needle_accuracy(reference, synthetic):
    out, proc = reference
    got = _recall(proc.stdout)
    assert set(got) == {"aks-16", "wfs_sb-16", "vilamp-16", "uniform-16"}, proc.stdout
    uniform = got["uniform-16"]
    assert uniform[0] < 60 and uniform[1] < 60
    for name in ("aks-16", "wfs_sb-16", "vilamp-16"):
        assert got[name][0] >= uniform[0] + 40 and got[name][1] >= uniform[1] + 40, (name, got)
    items = load_release(synthetic.data_path)
    for name in FILES[:-1]:
        rows = _lines(out / name)
        assert [r["uid"] for r in rows] == [it.uid for it in items]
        assert all(r["scorer"] == "synthetic_probe" and r["fps"] == 1.0 and r["budget"] == 16 for r in rows)
        assert all(0 < len(r["indices"]) <= 16 and r["indices"] == sorted(r["indices"]) for r in rows)
    rows = {name: _lines(out / f"selection-{name}.jsonl") for name in ("aks-16", "wfs_sb-16", "vilamp-16")}
    # the rows say how each selector was run: ViLAMP's 600-candidate cap, and WFS-SB's relevance min-max normalised
    # because the probe's cosine is not a probability (AKS normalises inside itself, ViLAMP thresholds raw cosines)
    assert all(r["selector_settings"]["max_candidates"] == 600 for r in rows["vilamp-16"])
    assert all(r["scorer_output"] == "cosine" for rs in rows.values() for r in rs)
    assert {r["relevance"] for r in rows["wfs_sb-16"]} == {"minmax"}
    assert {r["relevance"] for r in rows["aks-16"] + rows["vilamp-16"]} == {"raw"}
    assert re.search(r"^wfs_sb-16: .*\[relevance min-max normalised per video: the scorer's cosine is not a "
                     r"probability\]$", proc.stdout, re.M), proc.stdout
    assert "normalised" not in "".join(x for x in proc.stdout.splitlines() if x.startswith(("aks-16", "vilamp-16")))
    summary = json.loads((out / "select.json").read_text())
    assert summary["selections"]["aks-16"]["recall"]["item_recall"] == pytest.approx(got["aks-16"][0] / 100,
                                                                                     abs=5e-4)
    assert summary["identity"]["model"] == "synthetic_probe"
    assert any(s.startswith("aks-16:aks(budget=16") for s in summary["identity"]["selectors"])


def test_one_selector_prints_its_recall_line_and_a_budget_curve_is_plotted(synthetic, tmp_path, capsys,
                                                                          monkeypatch):
    monkeypatch.setenv("MEDHORIZON_SYNTHETIC_DIR", str(synthetic.root))
    out = tmp_path / "out"
    assert main(["select", "--synthetic", "--selector", "uniform", "--scorer", "synthetic_probe", "--budget", "4,16",
                 "--recall", "--out", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert re.search(r"^uniform-4: evidence recall: item [\d.]+%", text, re.M), text
    assert re.search(r"^uniform-16: evidence recall: item [\d.]+%", text, re.M), text
    assert (out / "recall.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    curve = json.loads((out / "select.json").read_text())["selections"]
    assert curve["uniform-4"]["recall"]["item_recall"] <= curve["uniform-16"]["recall"]["item_recall"]
    # one uniform plan: `select`'s uniform-N is the medhorizon_frames<N> tasks' plan that `stats --recall` measures
    # (before, at 4 frames: 7.0% here against 5.3% there)
    assert main(["stats", "--synthetic", "--recall", "--json"]) == 0
    stats = {r["budget"]: r["item_recall"] for r in json.loads(capsys.readouterr().out)["evidence_recall"]["uniform"]}
    assert stats[4] == pytest.approx(curve["uniform-4"]["recall"]["item_recall"], abs=1e-9)
    assert stats[16] == pytest.approx(curve["uniform-16"]["recall"]["item_recall"], abs=1e-9)
    assert re.search(rf"^uniform-4: evidence recall: item {100 * stats[4]:.1f}%", text, re.M), text


def test_a_hand_edited_selection_is_written_again_not_up_to_date(synthetic, tmp_path, capsys, monkeypatch):
    """Rerunning the same `select` after a selection file was edited by hand said "up to date" and kept the edit."""
    monkeypatch.setenv("MEDHORIZON_SYNTHETIC_DIR", str(synthetic.root))
    out = tmp_path / "out"
    cmd = ["select", "--synthetic", "--selector", "uniform", "--scorer", "synthetic_probe", "--budget", "4",
           "--out", str(out), "--quiet"]
    assert main(cmd) == 0
    capsys.readouterr()
    target = out / "selection-uniform-4.jsonl"
    written = target.read_bytes()
    rows = _lines(target)
    rows[0]["indices"] = [0]
    target.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(cmd) == 0
    err = capsys.readouterr().err
    assert "up to date" not in err
    assert "selection-uniform-4.jsonl in" in err and "changed or went missing since this run wrote it" in err, err
    assert target.read_bytes() == written
    (out / "select.json").unlink()
    assert main(cmd) == 0
    assert "select.json in" in capsys.readouterr().err and (out / "select.json").is_file()
    assert main(cmd) == 0
    assert "up to date" in capsys.readouterr().err  # untouched outputs: nothing written again


def test_a_tiny_open_clip_model_scores_the_candidates(synthetic, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("MEDHORIZON_SYNTHETIC_DIR", str(synthetic.root))
    name = register_open_clip(tmp_path / "configs")
    out = tmp_path / "out"
    assert main(["select", "--synthetic", "--selector", "aks,vilamp", "--scorer", f"open_clip:{name}", "--budget",
                 "8", "--recall", "--out", str(out), "--quiet", "--batch-size", "64"]) == 0
    text = capsys.readouterr().out
    assert "aks-8: evidence recall: item" in text and "vilamp-8: evidence recall: item" in text
    rows = _lines(out / "selection-aks-8.jsonl")
    assert len(rows) == len(load_release(synthetic.data_path))
    assert all(r["scorer"] == f"open_clip:{name}" and 0 < len(r["indices"]) <= 8 for r in rows)
    vil = _lines(out / "selection-vilamp-8.jsonl")
    assert all(len(r["indices"]) == 8 for r in vil)  # ViLAMP's spread always fills the budget


def test_two_processes_under_accelerate_launch_give_byte_identical_outputs(reference, synthetic, tmp_path):
    ref, _ = reference
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "accelerate.commands.launch", "--num_processes", "2", "--multi_gpu",
           "--main_process_port", str(29300 + os.getpid() % 300), "-m", "medhorizon_tasks.commands.main", "select",
           *PROBE, "--out", str(out)]
    proc = subprocess.run(cmd, env={**_env(synthetic), "ACCELERATE_USE_CPU": "1"}, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for name in FILES:
        assert (out / name).read_bytes() == (ref / name).read_bytes(), name
    journals = {p.name: len(p.read_text().splitlines()) for p in (out / "journal").glob("rank-*.jsonl")}
    assert journals == {"rank-0.jsonl": 8, "rank-1.jsonl": 8}  # each process selected its eight videos
    assert proc.stdout.count("aks-16: evidence recall") == 1  # one process wrote and printed the outputs


def test_a_sigkilled_run_rerun_redoes_only_the_unfinished_videos_and_gives_identical_selections(
        reference, synthetic, tmp_path):
    ref, _ = reference
    out = tmp_path / "out"
    cmd = [*CLI, *PROBE, "--scorer-arg", "delay=0.5", "--out", str(out)]
    proc = subprocess.Popen(cmd, env=_env(synthetic), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
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
    assert 2 <= done < 16 and not (out / "select.json").exists()
    rerun = subprocess.run(cmd, env=_env(synthetic), capture_output=True, text=True, timeout=900)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    for name in FILES[:-1]:
        assert (out / name).read_bytes() == (ref / name).read_bytes(), name
    assert f"{16 - done} video(s) selected by this process, {done} from the journal" in rerun.stderr
    assert len(journal.read_bytes().splitlines()) == 16  # nothing journaled twice
    again = subprocess.run(cmd, env=_env(synthetic), capture_output=True, text=True, timeout=900)
    assert again.returncode == 0 and "up to date" in again.stderr and "aks-16: evidence recall" in again.stdout


# ------------------------------------------------------------------ the task variants show the selection

def test_the_aks128_task_shows_the_selected_frames_through_lmms_eval(synthetic, tmp_path, monkeypatch):
    from medhorizon_tasks.adapters.lmms_eval.runner import run_lmms_eval
    from medhorizon_tasks.benchmarks.medhorizon import scoring
    from medhorizon_tasks.benchmarks.medhorizon.protocol import FrameSetting, load_frames
    from medhorizon_tasks.data.synthetic.probes import image_digest

    monkeypatch.setenv("MEDHORIZON_SYNTHETIC_DIR", str(synthetic.root))
    sel = tmp_path / "sel"
    assert main(["select", "--synthetic", "--selector", "aks", "--scorer", "synthetic_probe", "--budget", "128",
                 "--out", str(sel), "--quiet"]) == 0
    record = tmp_path / "received.jsonl"
    task = "medhorizon_synthetic_aks128"
    run = run_lmms_eval("medhorizon_needle", [task], tmp_path / "lmms", model_args=f"record_path={record}",
                        env={"MEDHORIZON_SELECTION": str(sel)})
    items = {it.uid: it for it in load_release(synthetic.data_path)}
    rows = {r["uid"]: r for r in _lines(sel / "selection-aks-128.jsonl")}
    samples = [json.loads(x) for x in run.samples[task].read_text().splitlines()]
    uid_of = {s["doc_id"]: s["accuracy"]["uid"] for s in samples}
    received = [json.loads(x) for x in record.read_text().splitlines()]
    assert len(received) == len(items)
    monkeypatch.setenv("MEDHORIZON_SELECTION", str(sel))
    setting = FrameSetting.from_kwargs({"mode": "visual", "frames": 128, "strategy": "selected", "selector": "aks"})
    for r in received[:10]:
        item = items[uid_of[r["doc_id"]]]
        plan, frames = load_frames(item, setting, synthetic.video_root)
        assert list(plan.indices) == rows[item.uid]["indices"]
        assert r["images"] == [image_digest(f) for f in frames]
        assert "Frame timestamps in seconds: " + ", ".join(f"{t:.1f}" for t in plan.timestamps) in r["prompt"]
    preds = scoring.read_predictions(run.samples[task], list(items))
    recs = scoring.score_predictions(list(items.values()), preds)
    assert sum(r["correct"] for r in recs) == len(recs)  # the probe scorer's AKS frames hold every needle
    assert run.results["results"][task]["accuracy,none"] == 1.0


def test_the_vilamp_selection_reaches_the_needle_through_vlmevalkit(synthetic, tmp_path, monkeypatch):
    from medhorizon_tasks.adapters.lmms_eval.runner import OFFLINE_ENV
    from medhorizon_tasks.benchmarks.medhorizon.protocol import FrameSetting, load_frames
    from medhorizon_tasks.data.synthetic.probes import image_digest

    monkeypatch.setenv("MEDHORIZON_SYNTHETIC_DIR", str(synthetic.root))
    sel = tmp_path / "sel"
    assert main(["select", "--synthetic", "--selector", "vilamp", "--scorer", "synthetic_probe", "--budget", "128",
                 "--out", str(sel), "--quiet"]) == 0
    name = "MedHorizon_Synthetic_vilamp_select128"
    out = tmp_path / "vlm"
    (out / "lmu").mkdir(parents=True)
    seen = out / "seen.jsonl"
    (out / "config.json").write_text(json.dumps({
        "model": {"medhorizon_needle": {"class": "MedHorizonNeedleProbe", "record_path": str(seen)}},
        "data": {name: {}}}))
    env = {**os.environ, **OFFLINE_ENV, "LMUData": str(out / "lmu"), "MEDHORIZON_SELECTION": str(sel),
           "MEDHORIZON_SYNTHETIC_DIR": str(synthetic.root), "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    proc = subprocess.run([sys.executable, str(Path(__file__).parent / "vlmeval_launch.py"), "--config",
                           str(out / "config.json"), "--work-dir", str(out / "work")], env=env, capture_output=True,
                          text=True, timeout=3000, cwd=out)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    report = json.loads((out / "work" / "medhorizon_needle" / f"medhorizon_needle_{name}_report.json").read_text())
    # the probe on ViLAMP's keyframes scores in VLMEvalKit what it scored on them in `select` (not every needle:
    # on the videos over 600 s its 600-candidate cap can step over a short evidence window)
    selected = json.loads((sel / "select.json").read_text())["selections"]["vilamp-128"]
    assert report["overall"]["accuracy"] == pytest.approx(selected["needle_accuracy"])
    assert 0.5 < selected["needle_accuracy"] < 1.0 and selected["fallbacks"]
    items = {it.uid: it for it in load_release(synthetic.data_path)}
    rows = {r["uid"]: r for r in _lines(sel / "selection-vilamp-128.jsonl")}
    records = _lines(seen)
    assert len(records) == len(items)
    monkeypatch.setenv("MEDHORIZON_SELECTION", str(sel))
    setting = FrameSetting.from_kwargs({"mode": "visual", "frames": 128, "strategy": "selected",
                                        "selector": "vilamp"})
    for it, rec in list(zip(items.values(), records))[::11]:
        plan, frames = load_frames(it, setting, synthetic.video_root)
        assert list(plan.indices) == rows[it.uid]["indices"]
        assert rec["images"] == [image_digest(f) for f in frames], it.uid


@pytest.mark.parametrize("blip", ["blip", "blip2"])
def test_a_tiny_blip_matching_head_scores_every_frame_question_pair(synthetic, tmp_path, capsys, blip):
    """AKS's scorer (BLIP ITM) and WFS-SB's (BLIP-2 ITM, through transformers' Blip2ForImageTextRetrieval): their
    match probabilities go to WFS-SB raw, and the rows say so."""
    from tiny_encoders import build_hf_blip2_itm, build_hf_blip_itm

    model = (build_hf_blip2_itm if blip == "blip2" else build_hf_blip_itm)(tmp_path / f"tiny-{blip}")
    records = [json.loads(x) for x in synthetic.data_path.read_text().splitlines()]
    short = sorted(records, key=lambda r: r["num_frames"] / r["fps"])[:2]
    data = tmp_path / "short.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in short))
    out = tmp_path / "out"
    assert main(["select", "--data", str(data), "--video-root", str(synthetic.video_root), "--selector", "aks,wfs_sb",
                 "--scorer", f"hf-itm:{model}", "--budget", "8", "--recall", "--out", str(out), "--quiet",
                 "--batch-size", "64"]) == 0
    assert "aks-8: evidence recall: item" in capsys.readouterr().out
    rows = _lines(out / "selection-wfs_sb-8.jsonl")
    assert len(rows) == sum(len(r["qa"]) for r in short)
    assert all(r["scorer"] == f"hf-itm:{model}" and len(r["indices"]) == 8 for r in rows)
    assert all(r["scorer_output"] == "probability" and r["relevance"] == "raw" for r in rows)
