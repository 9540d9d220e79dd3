"""The stats, plot and task-path commands."""

import json

from medhorizon_tasks.commands.main import main


def test_stats_on_the_synthetic_benchmark(synthetic, capsys):
    assert main(["stats", "--data", str(synthetic.data_path), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["n_localizable"] + rep["n_global_excluded"] + rep["n_without_windows_excluded"] == rep["n_items"] == 88
    assert 0 < rep["median"] <= rep["mean"] < 0.05
    assert set(rep["by_support"]) <= {"local", "proxy", "unspecified"} and "proxy" in rep["by_support"]
    assert main(["stats", "--data", str(synthetic.data_path)]) == 0
    table = capsys.readouterr().out
    assert "%" in table and "PR" in table and "REAL-Colon" in table


def test_plot_from_score_and_lmms_results(tmp_path, capsys):
    score = tmp_path / "model_a.json"
    score.write_text(json.dumps({"benchmark": "medhorizon", "overall": {"accuracy": 0.3},
                                 "by_family": {"fine_grained": {"accuracy": 0.25}, "semantic_reasoning": {"accuracy": 0.4}},
                                 "by_task": {"PR": {"accuracy": 0.5}, "IR": {"accuracy": 0.2}}}))
    lmms = tmp_path / "model_b.json"
    lmms.write_text(json.dumps({"results": {f"medhorizon_frames{n}": {"accuracy,none": a}
                                            for n, a in [(4, 0.2), (64, 0.3), (512, 0.25)]}}))
    assert main(["plot", str(score), str(lmms), "--out", str(tmp_path / "plots")]) == 0
    written = capsys.readouterr().out.split()
    assert any(p.endswith("per_task.png") for p in written) and any(p.endswith("frame_scaling.png") for p in written)
    for p in written:
        assert open(p, "rb").read(8) == b"\x89PNG\r\n\x1a\n"


def test_plot_rejects_an_unknown_file_shape(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text("[1, 2, 3]")
    assert main(["plot", str(bad), "--out", str(tmp_path)]) == 2
    assert "x.json" in capsys.readouterr().err


def test_task_path_holds_the_tasks(capsys):
    assert main(["task-path"]) == 0
    from pathlib import Path

    folder = Path(capsys.readouterr().out.strip())
    assert (folder / "medhorizon.yaml").exists() and (folder / "_medhorizon_template_yaml").exists()
