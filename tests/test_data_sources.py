"""Where a command's data comes from: ``--synthetic`` (the embedded benchmark of ``--benchmark``), inferred from
the samples of a ``*_synthetic*`` task, and ``--data OWNER/NAME`` (a Hugging Face Hub dataset, read here from a
folder laid out like the hub cache, offline: nothing is downloaded)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.commands.data_args import RELEASE_ID, hub_id
from medhorizon_tasks.commands.main import main


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _answers(synthetic, right: int) -> list[dict]:
    """Predictions for every synthetic item, the first ``right`` of them the answer, the rest a wrong letter."""
    items = load_release(synthetic.data_path)
    return [{"uid": it.uid, "prediction": it.answer if i < right else next(c for c in "ABCD" if c != it.answer)}
            for i, it in enumerate(items)]


def _score(capsys, *argv) -> tuple[int, dict, str]:
    status = main(["score", *argv, "--json"])
    out = capsys.readouterr()
    return status, (json.loads(out.out) if status == 0 else {}), out.err


def test_score_synthetic_medhorizon(synthetic, tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MEDHORIZON_DATA", raising=False)
    preds = _write(tmp_path / "run.jsonl", _answers(synthetic, 22))
    status, rep, _ = _score(capsys, "--benchmark", "medhorizon", "--synthetic", "--predictions", str(preds))
    assert status == 0 and rep["overall"]["n"] == 88 and rep["overall"]["correct"] == 22


def test_the_synthetic_data_is_inferred_from_the_samples_of_a_synthetic_task(synthetic, tmp_path, capsys,
                                                                            monkeypatch):
    monkeypatch.delenv("MEDHORIZON_DATA", raising=False)
    items = load_release(synthetic.data_path)
    rows = [{"doc_id": i, "target": it.answer, "filtered_resps": [f"The answer is {it.answer}"],
             "accuracy": {"uid": it.uid, "mode": "visual"}} for i, it in enumerate(items)]
    samples = _write(tmp_path / "20260101_samples_medhorizon_synthetic_frames64.jsonl", rows)
    status, rep, err = _score(capsys, "--benchmark", "medhorizon", "--predictions", str(samples))
    assert status == 0 and rep["overall"]["n"] == 88 and rep["overall"]["correct"] == 88
    assert "of a synthetic task" in err
    # compare too: two runs, both synthetic samples
    other = _write(tmp_path / "20260102_samples_medhorizon_synthetic.jsonl", rows)
    assert main(["compare", str(samples), str(other), "--json"]) == 0
    compared = json.loads(capsys.readouterr().out)
    assert compared["n"] == 88 and set(compared["accuracy"].values()) == {1.0}
    # a plain predictions file names no task: no data is still an error, as before
    plain = _write(tmp_path / "plain.jsonl", _answers(synthetic, 1))
    status, _, err = _score(capsys, "--benchmark", "medhorizon", "--predictions", str(plain))
    assert status == 2 and "no MedHorizon data given" in err


def test_the_benchmark_is_inferred_from_the_samples_task(synthetic_build, surghi_sample, tmp_path, capsys,
                                                       monkeypatch):
    """Issue 26: `score` (and `compare`, `leaderboard make`) of a Sureon or SurgHiBench synthetic task's samples
    need neither --benchmark nor --data."""
    from medhorizon_tasks.benchmarks.sureon.items import load_items
    from medhorizon_tasks.data.synthetic.sureon import build_sureon_sample

    for env in ("MEDHORIZON_DATA", "SUREON_DATA", "SURGHI_DATA"):
        monkeypatch.delenv(env, raising=False)
    items = load_items(build_sureon_sample().data_path)
    rows = [{"uid": it.uid, "prediction": "A"} for it in items]
    sureon = _write(tmp_path / "20260101_samples_sureon_synthetic_visual.jsonl", rows)
    status, rep, err = _score(capsys, "--predictions", str(sureon))
    given = _score(capsys, "--benchmark", "sureon", "--synthetic", "--predictions", str(sureon))[1]
    assert status == 0 and rep == given and "mu" in rep and "of a synthetic task" in err
    blind = _write(tmp_path / "20260102_samples_sureon_synthetic_blind.jsonl", rows)
    assert main(["compare", str(sureon), str(blind), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == sum(it.kind != "sm" for it in items)

    truth = surghi_sample.annotations_path.read_text()
    surghi = tmp_path / "20260101_samples_surghi_synthetic.jsonl"
    surghi.write_text(truth)  # the annotations as predictions: every frame right
    status, rep, _ = _score(capsys, "--predictions", str(surghi))
    assert status == 0 and rep == _score(capsys, "--benchmark", "surghi", "--synthetic", "--predictions",
                                         str(surghi))[1]
    assert rep["datasets"]

    sub = tmp_path / "sub.json"
    assert main(["leaderboard", "make", "--predictions", str(sureon), "--model", "m", "--model-size", "1B",
                 "--mode", "visual", "--out", str(sub)]) == 0
    assert json.loads(sub.read_text())["metadata"]["benchmark"] == "sureon"


def test_without_a_benchmark_other_files_are_refused_and_compare_keeps_its_default(synthetic, tmp_path, capsys):
    plain = _write(tmp_path / "plain.jsonl", _answers(synthetic, 1))
    status, _, err = _score(capsys, "--data", str(synthetic.data_path), "--predictions", str(plain))
    assert status == 2 and "--benchmark is required" in err
    # two benchmarks' samples name no one benchmark
    a = _write(tmp_path / "1_samples_medhorizon_synthetic.jsonl", _answers(synthetic, 1))
    b = _write(tmp_path / "2_samples_sureon_synthetic_visual.jsonl", _answers(synthetic, 1))
    status, _, err = _score(capsys, "--predictions", str(a))
    assert status == 0
    assert main(["compare", str(a), str(plain), "--data", str(synthetic.data_path), "--json"]) == 0  # medhorizon
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "--data", str(synthetic.data_path), "--json"]) == 0  # medhorizon too
    assert json.loads(capsys.readouterr().out)["n"] == 88


def test_synthetic_and_data_together_are_refused(synthetic, tmp_path, capsys):
    preds = _write(tmp_path / "run.jsonl", _answers(synthetic, 1))
    status, _, err = _score(capsys, "--benchmark", "medhorizon", "--synthetic", "--data", str(synthetic.data_path),
                            "--predictions", str(preds))
    assert status == 2 and "give one" in err


def test_score_synthetic_sureon(synthetic_build, tmp_path, capsys):
    from medhorizon_tasks.benchmarks.sureon.items import load_items
    from medhorizon_tasks.data.synthetic.sureon import build_sureon_sample

    items = load_items(build_sureon_sample().data_path)
    preds = _write(tmp_path / "sureon.jsonl", [{"uid": it.uid, "prediction": "A"} for it in items])
    status, rep, _ = _score(capsys, "--benchmark", "sureon", "--synthetic", "--predictions", str(preds))
    # every MCQ / ordering item scored (SM summaries are judged apart), none missing
    assert status == 0 and rep["missing"] == [] and rep["mu"]["n"] == sum(it.kind != "sm" for it in items)


@pytest.mark.parametrize("benchmark", ["medhorizon", "sureon", "surghi"])
def test_leaderboard_version_of_the_synthetic_data(benchmark, synthetic_build, surghi_sample, capsys):
    from medhorizon_tasks.benchmarks.data import data_version
    from medhorizon_tasks.commands.data_args import synthetic_paths

    assert main(["leaderboard", "version", "--benchmark", benchmark, "--synthetic"]) == 0
    assert capsys.readouterr().out.strip() == data_version(benchmark, synthetic_paths(benchmark)[0])


def test_check_synthetic_uses_its_video_root(synthetic, capsys):
    assert main(["check", "--synthetic", "--no-videos", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert json.dumps(report).count(str(synthetic.video_root)) >= 1


def test_a_hub_id_is_told_from_a_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert hub_id(RELEASE_ID) == RELEASE_ID
    assert hub_id("results/run.jsonl") is None  # a missing file stays a missing file
    (tmp_path / "owner").mkdir()
    (tmp_path / "owner" / "name").mkdir()
    assert hub_id("owner/name") is None  # something on disk by that name wins
    assert hub_id("/abs/path") is None and hub_id("a/b/c") is None


def _hub_cache(root: Path, repo_id: str, files: dict[str, bytes]) -> Path:
    """A hub cache holding one snapshot of the dataset ``repo_id``, as ``snapshot_download`` leaves it."""
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = root / f"datasets--{repo_id.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    snap = repo / "snapshots" / commit
    snap.mkdir(parents=True)
    for name, data in files.items():
        (snap / name).write_bytes(data)
    return snap


def _cli(*argv: str, cache: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(cache), "HF_HOME": str(cache.parent / "hf")}
    env.pop("MEDHORIZON_DATA", None)
    return subprocess.run([sys.executable, "-m", "medhorizon_tasks.commands.main", *argv], capture_output=True,
                          text=True, env=env, timeout=300)


def test_data_names_the_release_on_the_hub(synthetic, tmp_path):
    cache = tmp_path / "hub"
    snap = _hub_cache(cache, RELEASE_ID, {"mlvbench_test.jsonl": synthetic.data_path.read_bytes(),
                                          "README.md": b"---\nlicense: cc-by-nc-4.0\n---\n"})
    res = _cli("stats", "--data", RELEASE_ID, "--json", cache=cache)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["n_items"] == 88
    preds = _write(tmp_path / "run.jsonl", _answers(synthetic, 5))
    res = _cli("score", "--benchmark", "medhorizon", "--data", RELEASE_ID, "--predictions", str(preds), "--json",
               cache=cache)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["overall"]["correct"] == 5
    # what was read is the snapshot's file
    assert (snap / "mlvbench_test.jsonl").read_bytes() == synthetic.data_path.read_bytes()


def test_a_hub_id_not_in_the_cache_offline_is_one_clear_error(tmp_path):
    cache = tmp_path / "hub"
    cache.mkdir()
    res = _cli("stats", "--data", "nobody/no-such-dataset", cache=cache)
    assert res.returncode == 2
    assert "nobody/no-such-dataset" in res.stderr and "Hugging Face Hub" in res.stderr
    assert "Traceback" not in res.stderr


def test_the_synthetic_data_is_inferred_from_vlmeval_result_files(synthetic, tmp_path, capsys, monkeypatch):
    """Issue 44: VLMEvalKit's result file of a synthetic dataset (``<model>_<dataset>_records.jsonl``) is read as
    lmms-eval's samples are: benchmark and synthetic data from its name, by score and compare alike."""
    monkeypatch.delenv("MEDHORIZON_DATA", raising=False)
    items = load_release(synthetic.data_path)
    records = [{"uid": it.uid, "benchmark": "medhorizon", "status": "ok", "correct": i < 30, "mode": "visual",
                "raw_output": it.answer if i < 30 else next(c for c in "ABCD" if c != it.answer)}
               for i, it in enumerate(items)]
    # a model name with underscores, and a dataset whose name another preset's ends with
    run = _write(tmp_path / "medhorizon_needle_MedHorizon_Synthetic_cap64_records.jsonl", records)
    status, rep, err = _score(capsys, "--predictions", str(run))
    assert status == 0 and rep["overall"]["n"] == 88 and rep["overall"]["correct"] == 30, err
    assert "of a synthetic task" in err
    other = _write(tmp_path / "medhorizon_random_MedHorizon_Synthetic_frames64_records.jsonl", records)
    assert main(["compare", str(run), str(other), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n"] == 88
    # a release dataset's results name no synthetic data: no data is still an error
    release = _write(tmp_path / "medhorizon_needle_MedHorizon_cap64_records.jsonl", records)
    status, _, err = _score(capsys, "--predictions", str(release))
    assert status == 2 and "no MedHorizon data given" in err


def test_vlmeval_result_file_names_give_their_preset():
    from medhorizon_tasks.commands.data_args import file_source, vlmeval_preset

    assert vlmeval_preset("out/m/my_model_Sureon_Synthetic_visual_noblur.tsv").name == "Sureon_Synthetic_visual_noblur"
    assert file_source("a_b_SurgHiBench_Synthetic.xlsx") == ("surghi", True)
    assert file_source("m_MedHorizon_cap64.tsv") == ("medhorizon", False)
    assert file_source("m_Theirs.tsv") is None and file_source("MedHorizon_cap64.tsv") is None
    assert file_source("2026_samples_sureon_synthetic_blind.jsonl") == ("sureon", True)
