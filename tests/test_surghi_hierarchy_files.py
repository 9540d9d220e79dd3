"""One hierarchy file name, written and read everywhere (``surghi import``, ``build-dataset``, ``score``, the
leaderboard's data version, the lmms-eval / VLMEvalKit tasks, ``surghi zeroshot``), the old names still read; and
datasets annotated with phases only, scored on the phase metrics with the step metrics not applicable."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from medhorizon_tasks.benchmarks.data import load_benchmark_data
from medhorizon_tasks.benchmarks.surghi.frames import (
    HIERARCHY_FILE,
    hierarchy_beside,
    hierarchy_file_for,
    load_hierarchy_file,
    read_frame_rows,
)
from medhorizon_tasks.benchmarks.surghi.hierarchy import Hierarchy
from medhorizon_tasks.benchmarks.surghi.protocol import build_prompt
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.data import release_build as rb
from medhorizon_tasks.runs.zeroshot import load_inputs
from test_surghi_upstream import grasp_tree, multibypass_tree

TOY = {"phases": {"Prep": ["incise", "expose"], "Close": ["suture"]}}


def _rows(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _item(ds, video, frame, phase, step=None):
    row = {"dataset": ds, "video": video, "frame": frame, "phase": phase, "timestamp_s": float(frame),
           "video_path": f"{video}.mp4"}
    return row if step is None else {**row, "step": step}


def test_import_writes_hierarchies_json_beside_the_rows_and_two_imports_share_it(tmp_path, capsys):
    mb, gr = multibypass_tree(tmp_path / "mb"), grasp_tree(tmp_path / "gr")
    out = tmp_path / "data"
    out.mkdir()
    assert main(["surghi", "import", "--source", "multibypass140", "--data", str(mb), "--out",
                 str(out / "bypass.jsonl")]) == 0
    assert main(["surghi", "import", "--source", "grasp", "--data", str(gr), "--out", str(out / "grasp.jsonl")]) == 0
    capsys.readouterr()
    written = sorted(p.name for p in out.iterdir())
    assert written == ["bypass.jsonl", "grasp.jsonl", HIERARCHY_FILE]
    both = load_hierarchy_file(out / HIERARCHY_FILE)
    assert set(both) == {"BernBypass70", "StrasBypass70", "GraSP"}  # the second import kept the first's datasets
    # every reader of the bypass rows finds it by itself
    for data in (out / "bypass.jsonl", out / "grasp.jsonl"):
        assert hierarchy_beside(data) == hierarchy_file_for(data) == out / HIERARCHY_FILE
    bd = load_benchmark_data("surghi", out / "bypass.jsonl")
    assert bd.hierarchies["BernBypass70"][1] == "file"
    assert bd.version == load_benchmark_data("surghi", out / "bypass.jsonl", hierarchy=out / HIERARCHY_FILE).version
    assert load_inputs(out / "grasp.jsonl").hierarchies["GraSP"][1] == "file"  # surghi zeroshot
    preds = _rows(tmp_path / "p.jsonl", [{"dataset": "GraSP", "video": "CASE041", "frame": 0, "phase": "LPIL",
                                         "step": "Suction"}])
    assert main(["score", "--benchmark", "surghi", "--data", str(out / "grasp.jsonl"), "--predictions",
                 str(preds), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["hierarchies"]["GraSP"]["source"] == "file"
    assert rep["hierarchies"]["GraSP"]["tree_likeness"] == pytest.approx(0.8)  # the derived one, not the shipped 57%


def test_build_dataset_writes_the_same_name_and_its_rows_read_it(tmp_path):
    src = _rows(tmp_path / "items.jsonl", [_item("Toy", "v1", 0, "Prep", "incise"), _item("Toy", "v1", 1, "Close",
                                                                                            "suture")])
    (tmp_path / HIERARCHY_FILE).write_text(json.dumps({"Toy": TOY}))
    res = rb.build_dataset({"surghi": src}, tmp_path / "build")
    built = res.out / rb.BENCHMARK_FILES["surghi"]
    assert rb.HIERARCHY_FILE == f"surghi/{HIERARCHY_FILE}" and (res.out / rb.HIERARCHY_FILE).is_file()
    assert hierarchy_beside(built) == res.out / rb.HIERARCHY_FILE
    assert res.versions["surghi"] == load_benchmark_data("surghi", built).version \
        == load_benchmark_data("surghi", src).version
    # the hierarchy came from the file beside the source: "expose" is a step although no frame shows it
    assert "expose" in load_benchmark_data("surghi", built).hierarchies["Toy"][0].steps


@pytest.mark.parametrize("old", ["items.hierarchy.json", "hierarchy.json"])
def test_the_old_names_are_still_read_and_the_new_one_wins(tmp_path, old, monkeypatch):
    monkeypatch.delenv("SURGHI_HIERARCHY", raising=False)
    data = _rows(tmp_path / "items.jsonl", [_item("Toy", "v1", 0, "Prep", "incise")])
    assert hierarchy_beside(data) is None
    (tmp_path / old).write_text(json.dumps({"Toy": TOY}))
    assert hierarchy_file_for(data) == tmp_path / old
    assert load_benchmark_data("surghi", data).hierarchies["Toy"][1] == "file"
    (tmp_path / HIERARCHY_FILE).write_text(json.dumps({"Toy": TOY}))
    assert hierarchy_beside(data) == tmp_path / HIERARCHY_FILE
    monkeypatch.setenv("SURGHI_HIERARCHY", str(tmp_path / old))  # the task's override still wins there
    assert hierarchy_file_for(data) == tmp_path / old


def test_phase_only_datasets_score_on_the_phase_metrics_and_step_metrics_are_not_applicable(tmp_path, capsys):
    """Cholec80-like (phases only) beside a dataset with steps: phase accuracy / F1 per video, averaged; every
    step and cross-level metric null for it; Overall's step metrics are those of the other dataset."""
    ann = _rows(tmp_path / "ann.jsonl", [
        _item("Chole", "c1", 0, "Prep"), _item("Chole", "c1", 1, "Prep"), _item("Chole", "c1", 2, "Dissect"),
        _item("Chole", "c2", 0, "Dissect"), _item("Chole", "c2", 1, "Clip"),
        _item("Toy", "v1", 0, "Prep", "incise"), _item("Toy", "v1", 1, "Close", "suture")])
    preds = _rows(tmp_path / "preds.jsonl", [
        {"dataset": "Chole", "video": "c1", "frame": 0, "phase": "prep", "step": None},
        {"dataset": "Chole", "video": "c1", "frame": 1, "phase": "Dissect", "step": None},
        {"dataset": "Chole", "video": "c1", "frame": 2, "phase": "Dissect", "step": None},
        {"dataset": "Chole", "video": "c2", "frame": 0, "phase": "Dissect", "step": None},
        {"dataset": "Chole", "video": "c2", "frame": 1, "phase": "Prep", "step": None},
        {"dataset": "Toy", "video": "v1", "frame": 0, "phase": "Prep", "step": "incise"},
        {"dataset": "Toy", "video": "v1", "frame": 1, "phase": "Close", "step": "incise"}])
    assert main(["score", "--benchmark", "surghi", "--data", str(ann), "--predictions", str(preds),
                 "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    chole, toy = rep["datasets"]["Chole"], rep["datasets"]["Toy"]
    assert chole["phases_only"] is True and "phases_only" not in toy
    assert chole["phase_acc"] == pytest.approx((2 / 3 + 1 / 2) / 2)
    # c1: prep P=1 R=1/2 -> 2/3, dissect P=1/2 R=1 -> 2/3; c2: dissect P=R=1, clip 0, prep 0 (predicted only)
    assert chole["phase_f1"] == pytest.approx((2 / 3 + 1 / 3) / 2)
    for k in ("step_acc", "step_f1", "multi_level", "both_wrong", "both_right", "step_given_phase", "sibling",
              "cousin", "semantic_step"):
        assert chole[k] is None, k
    assert chole["n_invalid"] == 0 and rep["hierarchies"]["Chole"]["steps"] == 0
    assert rep["overall"]["phase_acc"] == pytest.approx(((2 / 3 + 1 / 2) / 2 + 1) / 2)
    assert rep["overall"]["step_acc"] == pytest.approx(0.5) == toy["step_acc"]
    assert rep["overall"]["multi_level"] == pytest.approx(math.sqrt(0.5))
    assert main(["score", "--benchmark", "surghi", "--data", str(ann), "--predictions", str(preds)]) == 0
    text = capsys.readouterr().out
    chole_line = next(line for line in text.splitlines() if line.startswith("Chole "))
    assert chole_line.split()[1:5] == ["58.3", "50.0", "n/a", "n/a"]
    assert "Chole: annotated with phases only: step and cross-level metrics not applicable (n/a); Overall's are " \
           "over Toy" in text


def test_a_phase_only_hierarchy_from_json_or_from_the_annotations(tmp_path):
    h = Hierarchy.from_json({"phases": {"Prep": [], "Dissect": []}})
    assert h.phases == ("prep", "dissect") and h.steps == () and math.isnan(h.tree_likeness())
    d = Hierarchy.from_annotations([("v", 0, "Prep", None), ("v", 1, "Clip", "")])
    assert d.phases == ("prep", "clip") and d.steps == ()
    row = read_frame_rows(_rows(tmp_path / "items.jsonl", [_item("C", "v", 3, "Prep")]), role="items")[0]
    prompt = build_prompt(row, h)
    assert "Steps" not in prompt and prompt.endswith('{"phase": "<phase>"}')
