"""`score --benchmark sureon` and `blind-audit` on a small items file."""

import json

from medhorizon_tasks.commands.main import main

OPTS = ["Grasper", "Hook", "Clipper", "Scissors", "Irrigator", "Bipolar", "Stapler"]
ITEMS = [
    {"uid": "a1", "category": "AD", "question": "Which tool?", "video_path": "v/1.mp4", "start_s": 0, "end_s": 30,
     "options": OPTS, "answer": "B"},
    {"uid": "a2", "category": "LAR", "question": "Why?", "video_path": "v/1.mp4", "start_s": 10, "end_s": 40,
     "options": OPTS, "answer": "G"},
    {"uid": "t1", "category": "TO", "question": "Order?", "video_path": "v/2.mp4", "start_s": 0, "end_s": 60,
     "events": ["clip", "cut", "retract"], "answer": ["retract", "clip", "cut"]},
    {"uid": "s1", "category": "SM", "question": "Summarise.", "video_path": "v/2.mp4", "start_s": 0, "end_s": 60,
     "reference": "retract; clip; cut"},
]


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_score_sureon_json_shape_and_gain(tmp_path, capsys):
    data = _write(tmp_path / "items.jsonl", ITEMS)
    visual = _write(tmp_path / "visual.jsonl", [{"uid": "a1", "prediction": "The answer is B"},
                                                {"uid": "a2", "prediction": "(g)"},
                                                {"uid": "t1", "prediction": "retract > clip > cut"},
                                                {"uid": "s1", "prediction": "retract, clip, cut"}])
    blind = _write(tmp_path / "blind.jsonl", [{"uid": "a1", "prediction": "A"}, {"uid": "a2", "prediction": "G"},
                                              {"uid": "t1", "prediction": "clip > cut > retract"},
                                              {"uid": "s1", "prediction": "no idea"}])
    assert main(["score", "--benchmark", "sureon", "--data", str(data), "--predictions", str(visual),
                 "--blind", str(blind), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert list(rep) == ["benchmark", "mu", "perception", "reasoning", "by_category", "sm", "video_errors",
                         "failed_responses", "missing", "blind_missing", "blind_failed_responses", "mg"]
    assert rep["video_errors"] == rep["missing"] == rep["blind_missing"] == []
    assert rep["failed_responses"] == rep["blind_failed_responses"] == []
    assert rep["mu"]["accuracy"] == 1.0 and rep["mu"]["n"] == 3, "SM is kept out of mu"
    assert rep["perception"]["n"] == 1 and rep["reasoning"]["n"] == 2
    assert rep["sm"]["not_judged"] == 1
    assert abs(rep["mg"]["overall"] - (1.0 - 1 / 3)) < 1e-12
    assert set(rep["by_category"]) == {"AD", "LAR", "TO"}


def test_blind_audit_flags_items_recovered_in_three_of_five_runs(tmp_path, capsys):
    data = _write(tmp_path / "items.jsonl", ITEMS)
    runs = []
    for r in range(5):
        rows = [{"uid": "a1", "prediction": "B" if r < 3 else "C"}, {"uid": "a2", "prediction": "G" if r < 2 else "A"},
                {"uid": "t1", "prediction": "clip > cut > retract"}, {"uid": "s1", "prediction": "x"}]
        runs.append(str(_write(tmp_path / f"blind{r}.jsonl", rows)))
    assert main(["blind-audit", *runs, "--data", str(data), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["items"]["a1"]["flagged"] and not res["items"]["a2"]["flagged"]
    assert res["items"]["a1"]["S"] == 0.6 and res["n_flagged"] == 1
    assert main(["blind-audit", *runs, "--data", str(data)]) == 0
    assert "flagged: a1" in capsys.readouterr().out
