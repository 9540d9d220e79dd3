"""SurgHiBench core: hierarchy (tree / DAG), canonicalisation, shipped vocabularies, Tasks 1-3."""

import math

import pytest

from medhorizon_tasks.benchmarks.surghi import (
    GRASP,
    KNOWN_HIERARCHIES,
    METRIC_KEYS,
    MIPO,
    MULTIBYPASS140,
    Hierarchy,
    canonical,
    dataset_metrics,
    get_hierarchy,
    overall,
    video_metrics,
)
from medhorizon_tasks.core.errors import DataError

KEYS = {*METRIC_KEYS, "n_videos", "n_invalid"}

# TREE: A -> {a1, a2}, B -> {b1}; semantic group g = {a1, b1}
TREE = Hierarchy.from_json({"phases": {"A": ["a1", "a2"], "B": ["b1"]}, "semantic_groups": {"g": ["a1", "b1"]}})
# DAG: A -> {a1, x}, B -> {x, b1}; x belongs to both phases
DAG = Hierarchy.from_json({"phases": {"A": ["a1", "x"], "B": ["x", "b1"]}})


# ------------------------------------------------------------------ hierarchy
def test_tree_and_dag_structure():
    assert TREE.phases == ("a", "b") and TREE.steps == ("a1", "a2", "b1")
    assert TREE.parent_phases("A1") == {"a"}
    assert DAG.parent_phases("x") == {"a", "b"}
    assert DAG.child_steps("B") == {"x", "b1"}
    assert TREE.tree_likeness() == 1.0
    assert DAG.tree_likeness() == pytest.approx(2 / 3)
    assert TREE.semantic_group("a1") == TREE.semantic_group("B1") == "g"
    assert TREE.semantic_group("a2") == "a2"  # ungrouped step is its own group
    with pytest.raises(KeyError):
        TREE.parent_phases("nope")


def test_canonicalisation_and_aliases():
    assert canonical("  Gastric_Pouch-Creation ") == canonical("gastric   pouch creation") == "gastric pouch creation"
    assert canonical("Fat Pad Dissection", {"fat_pad_dissection": "crura_dissection"}) == "crura dissection"
    h = MULTIBYPASS140
    assert h.canonical_step("s4_crura_dissection") == "crura dissection"
    assert h.canonical_step("Fat pad dissection") == "crura dissection"
    assert h.canonical_step("Lesser Curvature Dissection") == "his angle dissection"
    assert h.canonical_step("Dye injection") == "ink injection"
    assert h.canonical_step("S43_CALIBRATION") == h.canonical_step("suture of small bowel lesion") == "calibration"
    # the same surface name resolves per level
    assert h.canonical_phase("Petersen space closure") == "closure petersen space"
    assert h.canonical_step("Petersen space closure") == "petersen space closing"
    assert GRASP.canonical_phase("Right pelvic isolated lymphadenectomy") == "rpil"
    assert GRASP.canonical_step("Cut between the prostate and bladder neck") == "cut bladder"
    assert h.is_step("NullStep") and not h.is_phase("other_intervention")


def test_from_annotations_dag_and_tree_likeness():
    rows = [("v1", 0, "A", "a1"), ("v1", 1, "A", "x"), ("v1", 2, "B", "x"),
            ("v2", 0, "b", "B1"), ("v2", 1, "B", "b_1")]
    h = Hierarchy.from_annotations(rows, semantic_groups={"g": ["a1", "b1"]})
    assert h.phases == ("a", "b")
    assert h.membership == {"a1": {"a"}, "x": {"a", "b"}, "b1": {"b"}, "b 1": {"b"}}
    assert h.tree_likeness() == pytest.approx(3 / 4)
    with pytest.raises(DataError) as e:
        Hierarchy.from_annotations([("v", 0, "A", ""), ("v", 1, None, "a1"), ("v", 2)])
    assert len(e.value.problems) == 3 and "step is empty" in e.value.problems[0]


def test_from_json_validation_names_fields():
    with pytest.raises(DataError) as e:
        Hierarchy.from_json({"phases": {"A": ["a1", 3], "B": "b1"}, "semantic_groups": {"g": ["zz"]}, "bogus": 1})
    text = "\n".join(e.value.problems)
    assert "phases['A'][1]" in text and "phases['B']: expected a list" in text
    assert "semantic_groups['g']: 'zz' is not a step" in text and "bogus: unknown field" in text
    with pytest.raises(DataError, match="phases: missing"):
        Hierarchy.from_json({})
    with pytest.raises(DataError, match="already in group"):
        Hierarchy.from_json({"phases": {"A": ["a1"]}, "semantic_groups": {"g": ["a1"], "h": ["A1"]}})
    assert Hierarchy.from_json(DAG.to_json()) == DAG


def test_shipped_hierarchies():
    assert get_hierarchy("StrasBypass70") is get_hierarchy("bern_bypass_70") is MULTIBYPASS140
    assert (len(MULTIBYPASS140.phases), len(MULTIBYPASS140.steps)) == (11, 46)  # other_intervention excluded
    assert (len(GRASP.phases), len(GRASP.steps)) == (11, 21)
    assert (len(MIPO.phases), len(MIPO.steps)) == (5, 8) and MIPO.tree_likeness() == 1.0  # paper: 100%
    assert MULTIBYPASS140.tree_likeness() == pytest.approx(41 / 46)
    assert MULTIBYPASS140.parent_phases("null_step") == set(MULTIBYPASS140.phases)
    assert MULTIBYPASS140.semantic_group("jejunojejunal_stapling") == MULTIBYPASS140.semantic_group("Vertical stapling")
    assert set(KNOWN_HIERARCHIES) >= {"multibypass140", "strasbypass70", "bernbypass70", "grasp", "mipo"}


# ------------------------------------------------------------------ metrics
TREE_VIDEO = (["A", "A", "B", "B"], ["a1", "a2", "b1", "b1"], ["A", "B", "B", "zzz"], ["a1", "a1", "a1", "bogus"])


def test_video_metrics_tree_hand_computed():
    m = video_metrics(*TREE_VIDEO, TREE)
    assert set(m) == KEYS
    exp = {"phase_acc": 0.5, "step_acc": 0.25, "multi_level": math.sqrt(0.5 * 0.25),
           "both_right": 0.25, "both_wrong": 0.5, "step_given_phase": 0.5,
           "sibling": 0.5, "cousin": 0.5, "semantic_step": 0.5,
           # phase: A P=1 R=.5 F=2/3; B P=.5 R=.5 F=.5 (invalid pred costs B recall, not in label set)
           "phase_f1": (2 / 3 + 0.5) / 2,
           # step labels {a1,a2,b1}: a1 P=1/3 R=1 F=.5; a2, b1 F=0
           "step_f1": 0.5 / 3}
    for k, v in exp.items():
        assert m[k] == pytest.approx(v), k
    assert m["n_invalid"] == 2 and m["n_videos"] == 1


def test_video_metrics_dag_sibling_uses_ground_truth_phase():
    # frame 1: gt (B, x), pred a1: a1 shares phase A with x, but is not in the frame's phase B -> cousin
    m = video_metrics(["A", "B", "B"], ["x", "x", "b1"], ["A", "A", "B"], ["a1", "a1", "x"], DAG)
    assert m["sibling"] == pytest.approx(2 / 3) and m["cousin"] == pytest.approx(1 / 3)
    assert m["step_acc"] == 0 and m["semantic_step"] == 0 and m["phase_acc"] == pytest.approx(2 / 3)
    assert m["step_given_phase"] == 0 and m["both_wrong"] == pytest.approx(1 / 3)


def test_multi_level_paper_example():
    gp = ["A"] * 10
    gs = ["a1"] * 10
    pp = ["A"] * 3 + ["B"] * 7
    ps = ["a1"] + ["a2"] * 9
    m = video_metrics(gp, gs, pp, ps, TREE)
    assert (m["phase_acc"], m["step_acc"]) == (pytest.approx(0.3), pytest.approx(0.1))
    assert round(100 * m["multi_level"], 1) == 17.3


def test_dataset_metrics_averages_videos_and_excludes_undefined_step_given_phase():
    v2 = (["A", "A"], ["a1", "a2"], ["B", "B"], ["a2", "a2"])  # no phase right: Step|Phase undefined
    d = dataset_metrics({"v1": TREE_VIDEO, "v2": v2}, TREE)
    assert set(d) == KEYS and d["n_videos"] == 2 and d["n_invalid"] == 2
    assert d["phase_acc"] == pytest.approx(0.25) and d["step_acc"] == pytest.approx(0.375)
    assert d["multi_level"] == pytest.approx(math.sqrt(0.25 * 0.375))  # of averaged accuracies
    assert d["step_given_phase"] == pytest.approx(0.5)  # v2 excluded
    assert d["sibling"] == pytest.approx((0.5 + 1.0) / 2)
    assert math.isnan(video_metrics(*v2, TREE)["step_given_phase"])
    assert math.isnan(dataset_metrics({"v2": v2}, TREE)["step_given_phase"])


def test_bad_inputs_are_data_errors():
    with pytest.raises(DataError, match="differ in length"):
        video_metrics(["A"], ["a1"], ["A", "A"], ["a1"], TREE)
    with pytest.raises(DataError) as e:
        dataset_metrics({"v1": (["Q"], ["a1"], ["A"], ["a1"]), "v2": (["A"], ["qq"], ["A"], ["a1"])}, TREE)
    assert len(e.value.problems) == 2 and "video v1: frame 0: ground-truth phase 'Q'" in e.value.problems[0]


def test_overall_is_unweighted_mean_over_datasets():
    big = dataset_metrics({f"v{i}": TREE_VIDEO for i in range(5)}, TREE)
    small = dataset_metrics({"w": (["A"], ["a1"], ["A"], ["a1"])}, TREE)
    o = overall({"big": big, "small": small})
    assert set(o) == KEYS
    for k in METRIC_KEYS:
        assert o[k] == pytest.approx((big[k] + small[k]) / 2), k
    assert o["n_videos"] == 6 and o["n_invalid"] == 10
    # paper Table 2 Overall CLIP multi-level: mean of dataset multi-levels (8.9), not sqrt of means
    rows = {n: dict.fromkeys(METRIC_KEYS, 0.0) | {"n_videos": 1, "multi_level": ml}
            for n, ml in {"MIPO": .166, "Stras": .078, "Bern": .061, "GraSP": .052}.items()}
    assert round(100 * overall(rows)["multi_level"], 1) == 8.9
    rows["GraSP"]["step_given_phase"] = float("nan")
    assert overall(rows)["step_given_phase"] == 0.0  # NaN dataset skipped


# DAG with semantic groups: A -> {a1, x}, B -> {x, b1}; group g = {a1, b1}
DAG_G = Hierarchy.from_json({"phases": {"A": ["a1", "x"], "B": ["x", "b1"]}, "semantic_groups": {"g": ["a1", "b1"]}})


def test_video_metrics_dag_every_metric_hand_computed():
    #        frame: 1         2          3          4          5
    gp, gs = ["A", "B", "B", "A", "A"], ["x", "x", "b1", "a1", "a1"]
    pp, ps = ["A", "B", "A", "B", "A"], ["x", "b1", "a1", "x", "a1"]
    # 1 exact; 2 phase right, b1 in B -> sibling; 3 both wrong, a1 not in B -> cousin, but a1 ~ b1 (group g);
    # 4 both wrong, x is in A (the DAG) -> sibling; 5 exact
    m = video_metrics(gp, gs, pp, ps, DAG_G)
    exp = {"phase_acc": 3 / 5, "step_acc": 2 / 5, "multi_level": math.sqrt(3 / 5 * 2 / 5),
           "both_right": 2 / 5, "both_wrong": 2 / 5, "step_given_phase": 2 / 3,
           "sibling": 4 / 5, "cousin": 1 / 5, "semantic_step": 3 / 5,
           # A: P=2/3 R=2/3; B: P=1/2 R=1/2
           "phase_f1": (2 / 3 + 1 / 2) / 2,
           # x: P=1/2 R=1/2; b1: 0; a1: P=1/2 R=1/2
           "step_f1": (1 / 2 + 0 + 1 / 2) / 3}
    for k, v in exp.items():
        assert m[k] == pytest.approx(v), k
    assert m["n_invalid"] == 0
    # with x only under B (a tree), frame 4's x is no longer in its ground-truth phase A: a cousin
    tree = Hierarchy.from_json({"phases": {"A": ["a1"], "B": ["x", "b1"]}, "semantic_groups": {"g": ["a1", "b1"]}})
    assert video_metrics(gp, gs, pp, ps, tree)["sibling"] == pytest.approx(3 / 5)
