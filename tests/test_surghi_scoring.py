"""SurgHiBench inputs, scoring, `score --benchmark surghi`, the window plan, prompt and answer parser."""

import json
import math

import pytest

from medhorizon_tasks.benchmarks.surghi import Hierarchy
from medhorizon_tasks.benchmarks.surghi.frames import (
    FrameRow,
    load_hierarchy_file,
    read_frame_rows,
    resolve_hierarchies,
)
from medhorizon_tasks.benchmarks.surghi.protocol import build_prompt, parse_answer, predicted_labels
from medhorizon_tasks.benchmarks.surghi.scoring import Prediction, evaluate
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.core.errors import DataError
from medhorizon_tasks.core.sampling import FramePlan, VideoMeta, Window, plan_frames
from medhorizon_tasks.data.synthetic import probes
from medhorizon_tasks.data.synthetic.visual_code import encode_code

H_TREE = {"phases": {"Prep": ["Port placement", "Exposure"], "Close": ["Suture"]},
          "semantic_groups": {"ports": ["Port placement"]}}
H_DAG = {"phases": {"A": ["a1", "x"], "B": ["x", "b1"]}, "semantic_groups": {"g": ["a1", "b1"]}}


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _ann(ds, video, labels):
    return [{"dataset": ds, "video": video, "frame": i, "phase": p, "step": s} for i, (p, s) in enumerate(labels)]


# ------------------------------------------------------------------ rows

def test_rows_from_jsonl_and_csv_are_the_same(tmp_path):
    rows = _ann("T", "v1", [("Prep", "Exposure"), ("Close", "Suture")])
    j = _write_jsonl(tmp_path / "a.jsonl", rows)
    c = tmp_path / "a.csv"
    c.write_text("dataset,video,frame,phase,step,extra\n" + "".join(
        f"{r['dataset']},{r['video']},{r['frame']},{r['phase']},{r['step']},zz\n" for r in rows))
    assert read_frame_rows(j) == read_frame_rows(c)
    assert read_frame_rows(c)[1] == FrameRow("T", "v1", 1, "Close", "Suture")


def test_row_errors_name_line_and_field(tmp_path):
    bad = _write_jsonl(tmp_path / "bad.jsonl", [
        {"dataset": "T", "video": "v", "frame": 0, "phase": "Prep", "step": "Exposure"},
        {"dataset": "", "video": "v", "frame": -1, "phase": "Prep", "step": "Exposure"},
        {"dataset": "T", "video": "v", "frame": 0, "phase": "Prep", "step": "Exposure"},
        {"dataset": "T", "video": "v", "frame": 2.5, "phase": None, "step": "Exposure"},
        [1, 2],
    ])
    with pytest.raises(DataError) as e:
        read_frame_rows(bad)
    text = str(e.value)
    for needle in ("line 2: dataset: missing or empty", "line 2: frame: expected an integer >= 0, got -1",
                   "line 3: frame T/v/0 already given on line 1", "line 4: frame: expected an integer >= 0, got 2.5",
                   "line 4: phase: missing or empty", "line 5: expected an object"):
        assert needle in text
    # predictions may leave a label empty (it is then invalid), annotations may not
    ok = _write_jsonl(tmp_path / "p.jsonl", [{"dataset": "T", "video": "v", "frame": 0, "phase": None, "step": ""}])
    assert read_frame_rows(ok, role="predictions")[0].phase is None
    csv_bad = tmp_path / "bad.csv"
    csv_bad.write_text("dataset,video,step\nT,v,Prep\n")
    with pytest.raises(DataError, match="missing column.*frame.*phase"):
        read_frame_rows(csv_bad)
    # a dataset annotated with phases only may leave out the step column; one step missing among steps may not
    phases_only = tmp_path / "phases.csv"
    phases_only.write_text("dataset,video,frame,phase\nT,v,0,Prep\n")
    assert read_frame_rows(phases_only)[0].step is None
    mixed = _write_jsonl(tmp_path / "mixed.jsonl", [
        {"dataset": "T", "video": "v", "frame": 0, "phase": "Prep", "step": "Exposure"},
        {"dataset": "T", "video": "v", "frame": 1, "phase": "Prep"},
        {"dataset": "U", "video": "v", "frame": 1, "phase": "Prep"}])
    with pytest.raises(DataError) as e:
        read_frame_rows(mixed)
    assert e.value.problems == ["line 2: step: missing or empty (other rows of dataset T have a step; a dataset "
                                "is annotated with phases only when none of its rows has one)"]


def test_hierarchy_file_single_or_per_dataset_and_resolution(tmp_path):
    single = tmp_path / "h.json"
    single.write_text(json.dumps(H_TREE))
    per = tmp_path / "hs.json"
    per.write_text(json.dumps({"T": H_TREE, "D": H_DAG}))
    assert isinstance(load_hierarchy_file(single), Hierarchy)
    both = load_hierarchy_file(per)
    assert set(both) == {"T", "D"} and both["D"].tree_likeness() == pytest.approx(2 / 3)
    rows = [FrameRow("T", "v", 0, "Prep", "Exposure"), FrameRow("MIPO", "v", 0, "Approach", "Approach"),
            FrameRow("Other", "v", 0, "p", "s1"), FrameRow("Other", "v", 1, "q", "s1")]
    got = resolve_hierarchies(rows, both)
    # a dataset the package ships a hierarchy for gets its annotations' own unless the shipped one is asked for
    assert {k: src for k, (_, src) in got.items()} == {
        "T": "file", "MIPO": "derived from annotations", "Other": "derived from annotations"}
    asked = resolve_hierarchies(rows, load_hierarchy_file("shipped:MIPO"))
    assert {k: src for k, (_, src) in asked.items()} == {
        "T": "derived from annotations", "MIPO": "shipped", "Other": "derived from annotations"}
    assert got["Other"][0].parent_phases("s1") == {"p", "q"}  # co-occurrence makes a DAG
    assert resolve_hierarchies(rows, load_hierarchy_file(single))["Other"][1] == "file"
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"T": {"phases": {"P": "not a list"}}}))
    with pytest.raises(DataError, match=r"T: phases\['P'\]: expected a list of step names"):
        load_hierarchy_file(broken)


# ------------------------------------------------------------------ scoring

def test_evaluate_counts_missing_extra_invalid_and_canonicalises():
    tree, dag = Hierarchy.from_json(H_TREE, name="T"), Hierarchy.from_json(H_DAG, name="D")
    ann = [FrameRow("T", "v1", i, p, s) for i, (p, s) in
           enumerate([("Prep", "Port placement"), ("Prep", "Exposure"), ("Close", "Suture"), ("Close", "Suture")])]
    ann += [FrameRow("D", "w1", i, p, s) for i, (p, s) in enumerate([("A", "x"), ("B", "x")])]
    preds = {
        ("T", "v1", 0): Prediction("PREP", "port_placement"),   # canonicalised: right
        ("T", "v1", 1): Prediction("prep", "Suture"),           # cousin (Suture is under Close)
        ("T", "v1", 2): Prediction("Close", "Gibberish"),       # invalid step
        # frame 3 missing
        ("T", "v1", 9): Prediction("Prep", "Exposure"),         # extra
        ("D", "w1", 0): Prediction("A", "x"),
        ("D", "w1", 1): Prediction("A", "x"),                   # phase wrong; x is under B too: sibling
    }
    res = evaluate(ann, preds, {"T": (tree, "file"), "D": (dag, "file")})
    rep = res.report()
    t, d = rep["datasets"]["T"], rep["datasets"]["D"]
    assert t["phase_acc"] == pytest.approx(3 / 4) and t["step_acc"] == pytest.approx(1 / 4)
    assert t["sibling"] == pytest.approx(1 / 4) and t["cousin"] == pytest.approx(3 / 4)
    assert (t["n_missing"], t["n_extra"], t["n_invalid"]) == (1, 1, 3)  # missing frame: 2 invalid labels
    assert d["phase_acc"] == pytest.approx(1 / 2) and d["step_acc"] == 1.0 and d["sibling"] == 1.0
    assert rep["overall"]["phase_acc"] == pytest.approx((3 / 4 + 1 / 2) / 2)
    assert rep["overall"]["multi_level"] == pytest.approx((math.sqrt(3 / 16) + math.sqrt(1 / 2)) / 2)
    assert rep["overall"]["n_missing"] == 1 and rep["hierarchies"]["D"]["tree_likeness"] == pytest.approx(2 / 3)


def test_score_cli_json_shape_and_csv_predictions(tmp_path, capsys):
    ann = _write_jsonl(tmp_path / "ann.jsonl",
                       _ann("T", "v1", [("Prep", "Exposure")] * 2 + [("Close", "Suture")] * 2)
                       + _ann("D", "w1", [("A", "a1"), ("B", "x"), ("B", "b1")]))
    hier = tmp_path / "h.json"
    hier.write_text(json.dumps({"T": H_TREE, "D": H_DAG}))
    pred = tmp_path / "pred.csv"
    pred.write_text("dataset,video,frame,phase,step\n"
                    "T,v1,0,Prep,Exposure\nT,v1,1,Prep,port placement\nT,v1,2,Close,Suture\nT,v1,3,Prep,Exposure\n"
                    "D,w1,0,A,a1\nD,w1,1,A,x\nD,w1,2,B,a1\n")
    assert main(["score", "--benchmark", "surghi", "--predictions", str(pred), "--data", str(ann),
                 "--hierarchy", str(hier), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    keys = {"phase_acc", "phase_f1", "step_acc", "step_f1", "multi_level", "both_wrong", "both_right",
            "step_given_phase", "sibling", "cousin", "semantic_step", "n_videos"}
    assert rep["benchmark"] == "surghi" and set(rep["datasets"]) == {"T", "D"}
    assert keys <= set(rep["datasets"]["T"]) and keys <= set(rep["overall"])
    t, d = rep["datasets"]["T"], rep["datasets"]["D"]
    assert (t["phase_acc"], t["step_acc"], t["step_given_phase"]) == (0.75, 0.5, pytest.approx(2 / 3))
    # frame 1: port placement is under the right phase (sibling); frame 3: Exposure is not under Close (cousin)
    assert (t["sibling"], t["cousin"], t["both_wrong"]) == (0.75, 0.25, 0.25)
    assert d["phase_acc"] == pytest.approx(2 / 3) and d["step_acc"] == pytest.approx(2 / 3)
    assert d["semantic_step"] == 1.0  # frame 2: a1 ~ b1 (group g)
    assert all(0 <= v <= 1 for r in (t, d, rep["overall"]) for k, v in r.items() if k in keys - {"n_videos"})
    # the table form names the datasets and Overall
    assert main(["score", "--benchmark", "surghi", "--predictions", str(pred), "--data", str(ann),
                 "--hierarchy", str(hier)]) == 0
    out = capsys.readouterr().out
    assert "Overall" in out and "tree-likeness 66.7%" in out
    # unknown dataset with no hierarchy: derived from the annotations, and said so
    assert main(["score", "--benchmark", "surghi", "--predictions", str(pred), "--data", str(ann)]) == 0
    assert "derived from annotations" in capsys.readouterr().out
    assert main(["score", "--benchmark", "surghi", "--predictions", str(pred), "--data", str(ann), "--hierarchy",
                 str(hier), "--json"]) == 0  # --data names the annotations too, as in `leaderboard`
    assert json.loads(capsys.readouterr().out) == rep
    assert main(["score", "--benchmark", "surghi", "--predictions", str(pred)]) == 2
    assert "needs --data" in capsys.readouterr().err


# ------------------------------------------------------------------ protocol

def test_window_plan_is_centred_and_cut_by_the_video():
    m = VideoMeta(100, 4.0)  # 25 s
    p = plan_frames(m, Window(10.0, 2.0))
    assert p.timestamps == (8.0, 9.0, 10.0, 11.0, 12.0)
    assert plan_frames(m, Window(0.5, 2.0)).timestamps == (0.5, 1.5, 2.5)
    assert plan_frames(m, Window(24.0, 2.0)).timestamps == (22.0, 23.0, 24.0)
    with pytest.raises(ValueError, match="after the end"):
        plan_frames(m, Window(40.0))
    # variable frame rate: the frame nearest to each wanted time (ties to the earlier one)
    vfr = VideoMeta(6, 4.0, (0.0, 0.3, 1.1, 1.9, 2.0, 3.1))
    assert plan_frames(vfr, Window(1.0, 1.0)).indices == (0, 2, 4)  # 0 s -> 0.0, 1 s -> 1.1, 2 s -> 2.0
    assert plan_frames(vfr, Window(2.5, 0.0)).indices == (4,)  # 2.5 s: 2.0 (0.5 away) beats 3.1 (0.6 away)


@pytest.mark.parametrize("text, expected", [
    ('{"phase": "Prep", "step": "Exposure"}', ("prep", "exposure")),
    ('```json\n{"phase": "PREP",\n "step": "exposure",}\n```', ("prep", "exposure")),
    ("{'phase': 'close', 'step': 'suture'}", ("close", "suture")),
    ('<think>{"phase": "close"}</think>\nPhase: Prep\nStep: **Port placement**', ("prep", "port placement")),
    ('It is the exposure step. {"step": "the Exposure step", "phase": "prep phase"}', ("prep", "exposure")),
    ("I cannot tell.", (None, None)),
    ('{"phase": "Nonsense", "step": 3}', ("nonsense", "3")),
])
def test_answers_are_parsed_and_mapped_onto_the_lists(text, expected):
    assert predicted_labels(text, Hierarchy.from_json(H_TREE)) == expected


def test_parse_answer_prefers_the_last_json_object():
    assert parse_answer('{"phase": "a", "step": "b"} ... final: {"phase": "c", "step": "d"}').phase == "c"
    assert parse_answer(None).status == "none"


def test_prompt_lists_labels_and_the_probes_answer_it():
    h = Hierarchy.from_json(H_DAG)
    row = FrameRow("D", "w", 3, "B", "x", 3.0, "w.mp4")
    plan = FramePlan((8, 12, 16), (2.0, 3.0, 4.0), "window")
    prompt = build_prompt(row, h, plan)
    assert "Label frame 2." in prompt and "- x\n" in prompt
    assert probes.label_lists(prompt) == (["a", "b"], ["a1", "x", "b1"])
    # the needle reads phase_index << 5 | step_index from the frames: phase b (1), step x (1)
    code = (1 << 5) | 1
    frames = [encode_code(code >> 2, code & 3, 48, 64)] * 2
    for seed in range(6):  # every answer style parses back to the code's labels
        assert predicted_labels(probes.needle_answer(frames, prompt, seed), h) == ("b", "x")
    assert probes.needle_answer([], prompt) == probes.REFUSAL
    guess = predicted_labels(probes.random_answer(prompt, 1), h)
    assert guess[0] in h.phases and guess[1] in h.steps


def test_a_json_object_where_a_name_belongs_is_refused_naming_row_and_field(tmp_path, capsys):
    """Issue 32: ``{"dataset": {"name": "T"}}`` was read as the dataset named "{'name': 'T'}"; through
    ``score``: exit 2, one message naming the line and the field, no traceback."""

    rows = [{"dataset": "T", "video": "v", "frame": 0, "phase": "Prep", "step": "Exposure"},
            {"dataset": {"name": "T"}, "video": "v", "frame": 1, "phase": "Prep", "step": "Exposure"},
            {"dataset": "T", "video": ["v"], "frame": 2, "phase": True, "step": "Exposure"}]
    annotations = _write_jsonl(tmp_path / "gt.jsonl", rows)
    predictions = _write_jsonl(tmp_path / "pred.jsonl", [{**rows[0], "phase": "Prep"}])
    assert main(["score", "--benchmark", "surghi", "--annotations", str(annotations), "--predictions",
                 str(predictions)]) == 2
    err = capsys.readouterr().err
    assert "line 2: dataset: expected a name, got an object {'name': 'T'}" in err
    assert "line 3: video: expected a name, got a list ['v']" in err and "line 3: phase: expected a name" in err
    assert "Traceback" not in err
