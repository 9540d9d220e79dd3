"""``medhorizon-tasks diagnose attention`` end to end: the real CLI, the real lmms-eval model classes (the
Qwen bridges on tiny random checkpoints, tests/tiny_vlm.py), the embedded synthetic benchmark.

Three runs, started together: the diagnostic on Qwen3-VL (8 frames, 2 items), a plain lmms-eval run of
the same bridge on the same task (the answers must be the same), and the diagnostic on Qwen2.5-VL (4
frames, 1 item, the last layer only)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tiny_vlm
from medhorizon_tasks.adapters.lmms_eval.runner import OFFLINE_ENV, lmms_eval_command
from medhorizon_tasks.benchmarks.medhorizon.release import load_release

pytestmark = pytest.mark.e2e

CPU = "device=cpu,device_map=cpu,frame_min_pixels=3136,frame_max_pixels=50176"
TIMEOUT_S = 1200


def _diagnose(model, path, out, frames, limit, *extra):
    return [sys.executable, "-m", "medhorizon_tasks.commands.main", "diagnose", "attention", "--model", model,
            "--model_args", f"pretrained={path},{CPU}", "--synthetic", "--frames", str(frames), "--limit", str(limit),
            "--out", str(out), *extra]


@pytest.fixture(scope="module")
def runs(synthetic, tmp_path_factory):
    root = tmp_path_factory.mktemp("attention")
    q3 = tiny_vlm.build_qwen3_vl(root / "q3")
    q25 = tiny_vlm.build_qwen2_5_vl(root / "q25")
    env = {**os.environ, **OFFLINE_ENV, "OMP_NUM_THREADS": "1"}
    cmds = {
        "qwen3": _diagnose("medhorizon_qwen3_vl", q3, root / "qwen3", 8, 2),
        "plain": lmms_eval_command("medhorizon_qwen3_vl", ["medhorizon_synthetic_frames8"], root / "plain",
                                   model_args=f"pretrained={q3},{CPU}", limit=2),
        "qwen2_5": _diagnose("medhorizon_qwen2_5_vl", q25, root / "qwen2_5", 4, 1, "--layers", "-1"),
    }
    procs = {}
    for name, cmd in cmds.items():
        (root / name).mkdir(exist_ok=True)
        log = open(root / f"{name}.log", "w")
        procs[name] = (subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env), log)
    for proc, log in procs.values():
        try:
            proc.wait(timeout=TIMEOUT_S)
        finally:
            if proc.poll() is None:
                proc.kill()
            log.close()
    return root


def _samples(folder: Path) -> dict:
    files = sorted(folder.rglob("*_samples_medhorizon_synthetic_frames*.jsonl"))
    assert files, f"no samples under {folder}"
    rows = [json.loads(line) for line in files[-1].read_text().splitlines()]
    return {r["doc_id"]: r for r in rows}


def _result(root: Path, name: str) -> dict:
    path = root / name / "attention.json"
    assert path.exists(), (root / f"{name}.log").read_text()[-3000:]
    return json.loads(path.read_text())


def test_writes_json_csv_and_figure(runs):
    for name in ("qwen3", "qwen2_5"):
        assert (runs / name / "attention.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        header = (runs / name / "attention.csv").read_text().splitlines()[0].split(",")
        assert header[:5] == ["model", "level", "group", "n", "units_for_50"] and "evidence_mass_ci95_lo" in header


def test_one_record_per_item_with_units_of_two_frames(runs, synthetic):
    result = _result(runs, "qwen3")
    items = {it.uid: it for it in load_release(synthetic.data_path)}
    assert result["frames"] == 8 and len(result["items"]) == 2
    for rec in result["items"]:
        assert rec["uid"] in items and rec["task"] == items[rec["uid"]].task
        assert rec["units"] == 4 and rec["unit_frames"] == [[0, 1], [2, 3], [4, 5], [6, 7]]
        assert sum(rec["unit_scores"]) == pytest.approx(1.0)
        assert rec["layers"] == [0, 1] and 0 < rec["units_for_90"] <= 1
        assert rec["curve"][0] == 0 and rec["curve"][-1] == pytest.approx(1.0)
    overall = [r for r in result["summary"] if r["level"] == "overall"]
    assert len(overall) == 1 and overall[0]["n"] == 2
    assert result["published"]["rows"][0]["printed"] == "76.7%"


def test_qwen2_5_measures_the_chosen_layer(runs):
    result = _result(runs, "qwen2_5")
    (rec,) = result["items"]
    assert rec["layers"] == [1] and rec["units"] == 2 and rec["frames"] == 4


def test_scored_answers_equal_a_plain_run(runs):
    diag = _samples(runs / "qwen3" / "lmms_eval")
    plain = _samples(runs / "plain")
    assert sorted(diag) == sorted(plain) and len(plain) == 2
    for doc_id in plain:
        assert diag[doc_id]["filtered_resps"] == plain[doc_id]["filtered_resps"]
        assert diag[doc_id]["accuracy"] == plain[doc_id]["accuracy"]   # the scored record, uid included
    answers = {r["uid"]: r["answer"] for r in _result(runs, "qwen3")["items"]}
    assert {plain[d]["accuracy"]["uid"]: plain[d]["filtered_resps"] for d in plain} == answers


def test_plot_redraws_the_figure_from_the_json(runs, tmp_path):
    from medhorizon_tasks.plots import plot_files

    (png,) = plot_files([runs / "qwen3" / "attention.json"], tmp_path)
    assert png.name == "attention.png" and png.stat().st_size > 10_000
