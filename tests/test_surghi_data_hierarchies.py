"""Hierarchies as the data has them (issue 27, item 6; SurgHiBench Table 1): by default each dataset's hierarchy is
derived from its own annotations (a step belongs to every phase it occurs in), its tree-likeness printed beside the
paper's value for that dataset, with a warning when they differ; the shipped one only when asked for by name."""

import json

import pytest

from medhorizon_tasks.benchmarks.surghi import scoring
from medhorizon_tasks.benchmarks.surghi.frames import (
    FrameRow,
    hierarchy_lines,
    load_hierarchy_file,
    resolve_hierarchies,
)
from medhorizon_tasks.benchmarks.surghi.vocab import GRASP, MULTIBYPASS140
from medhorizon_tasks.benchmarks.surghi.zeroshot import DEFAULT_CURVATURE, Setting
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.core.errors import DataError

S, G = "StrasBypass70", "GraSP"


def _rows(dataset, video, labels):
    return [FrameRow(dataset, video, k, p, s) for k, (p, s) in enumerate(labels)]


# StrasBypass70: 4 steps, "coagulation" under two phases -> 3 of 4 steps in one phase: 75% (the paper: 74%)
STRAS = _rows(S, "SBP01", [("preparation", "cavity_exploration"), ("preparation", "coagulation"), ("gastric_pouch_creation", "coagulation"),
                           ("gastric_pouch_creation", "horizontal_stapling"),
                           ("gastric_pouch_creation", "vertical_stapling")])
# GraSP: 3 steps, two of them under two phases -> 1 of 3: 33.3% (the paper: 33%)
GRASP_ROWS = _rows(G, "CASE041", [("LPIL", "Idle"), ("RPIL", "Idle"), ("LPIL", "Suction"), ("RPIL", "Suction"),
                                  ("LPIL", "Id_Illiac_Vein_Artery")]) + \
    _rows(G, "CASE047", [("Idle", "Idle"), ("LPIL", "Suction")])


def test_derived_hierarchies_of_two_synthetic_datasets_report_their_annotations_tree_likeness():
    got = resolve_hierarchies(STRAS + GRASP_ROWS)
    assert {ds: src for ds, (_, src) in got.items()} == {S: "derived from annotations", G: "derived from annotations"}
    stras, grasp = got[S][0], got[G][0]
    assert stras.tree_likeness() == pytest.approx(3 / 4) and grasp.tree_likeness() == pytest.approx(1 / 3)
    assert stras.parent_phases("coagulation") == {"preparation", "gastric pouch creation"}
    assert grasp.parent_phases("suction") == {"lpil", "rpil"}
    # the shipped vocabulary's semantic groups, for the steps that occur
    assert stras.semantic_group("horizontal stapling") == stras.semantic_group("vertical stapling") == "stapling"
    # the shipped hierarchies would have said 89% and 57%: not the data's
    assert round(MULTIBYPASS140.tree_likeness(), 2) == 0.89 and round(GRASP.tree_likeness(), 2) == 0.57

    rep = scoring.evaluate(STRAS + GRASP_ROWS, {}, got).report()
    assert rep["hierarchies"][S] == {"source": "derived from annotations", "phases": 2, "steps": 4,
                                     "tree_likeness": 0.75, "paper_tree_likeness": "74%", "differs_from_paper": True}
    assert rep["hierarchies"][G]["tree_likeness"] == pytest.approx(1 / 3)
    assert (rep["hierarchies"][G]["paper_tree_likeness"], rep["hierarchies"][G]["differs_from_paper"]) == ("33%", False)
    lines = hierarchy_lines(rep["hierarchies"])
    assert lines[:2] == ["hierarchy StrasBypass70: derived from annotations, 2 phases, 4 steps, tree-likeness 75.0% "
                         "(paper, Table 1: 74%)",
                         "hierarchy GraSP: derived from annotations, 3 phases, 3 steps, tree-likeness 33.3% "
                         "(paper, Table 1: 33%)"]
    warnings = [line for line in lines if line.startswith("warning")]
    assert len(warnings) == 1 and warnings[0].startswith("warning: StrasBypass70: the hierarchy used (derived from "
                                                         "annotations) has tree-likeness 75.0%, the paper's Table 1 74%")
    assert "\n".join(lines) in scoring.format_report(rep)


def test_a_shipped_hierarchy_only_when_asked_for_by_name(tmp_path, capsys):
    one = resolve_hierarchies(STRAS + GRASP_ROWS, load_hierarchy_file("shipped:GraSP"))
    assert (one[G][1], one[S][1]) == ("shipped", "derived from annotations") and one[G][0] is GRASP
    every = resolve_hierarchies(STRAS + GRASP_ROWS, load_hierarchy_file("shipped"))
    assert every[S] == (MULTIBYPASS140, "shipped") and every[G] == (GRASP, "shipped")
    with pytest.raises(DataError, match="unknown SurgHiBench dataset 'Cholec'"):
        load_hierarchy_file("shipped:Cholec")
    # through `score`: the paper's value beside, and the warning
    ann, preds = tmp_path / "ann.jsonl", tmp_path / "pred.jsonl"
    lines = [json.dumps({"dataset": r.dataset, "video": r.video, "frame": r.frame, "phase": r.phase, "step": r.step})
             for r in STRAS]
    ann.write_text("\n".join(lines) + "\n")
    preds.write_text("\n".join(lines) + "\n")
    assert main(["score", "--benchmark", "surghi", "--annotations", str(ann), "--predictions", str(preds)]) == 0
    out = capsys.readouterr().out
    assert "tree-likeness 75.0% (paper, Table 1: 74%)" in out and "warning: StrasBypass70" in out
    assert main(["score", "--benchmark", "surghi", "--annotations", str(ann), "--predictions", str(preds),
                 "--hierarchy", "shipped:StrasBypass70"]) == 0
    out = capsys.readouterr().out
    assert "hierarchy StrasBypass70: shipped, 11 phases, 46 steps, tree-likeness 89.1% (paper, Table 1: 74%)" in out


def test_hypersurg_curvature_is_the_default():
    """Supplement A.4: "At convergence: tau=0.035, c=0.815"."""
    assert DEFAULT_CURVATURE == 0.815
    assert Setting(similarity="lorentz").to_json()["curvature"] == 0.815
