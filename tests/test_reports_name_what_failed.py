"""Reports never hide what did not count as an answer: video errors, missing predictions, empty files."""

import json

import pytest

from medhorizon_tasks.benchmarks.sureon import scoring as sureon
from medhorizon_tasks.benchmarks.sureon.items import load_items
from medhorizon_tasks.benchmarks.surghi.frames import FrameRow, resolve_hierarchies
from medhorizon_tasks.benchmarks.surghi.scoring import Prediction, evaluate, format_report
from medhorizon_tasks.commands.main import main


def _items(tmp_path, n=4):
    rows = [{"uid": f"a{i}", "category": "AD", "question": "What happens?", "video_path": "v.mp4",
             "start_s": 0.0, "end_s": 8.0, "options": list("abcdefg"), "answer": "A"} for i in range(n)]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_sureon_report_lists_video_errors_and_missing_predictions(tmp_path):
    items = load_items(_items(tmp_path))
    preds = {"a0": {"raw": "A", "mode": "visual", "error": None},
             "a1": {"raw": None, "mode": "visual", "error": "item a1: video file not found (video: v.mp4)"},
             "a2": {"raw": "no idea", "mode": "visual", "error": None}}
    rep = sureon.report(sureon.score_predictions(items, preds), n_resamples=200)
    assert rep["mu"]["accuracy"] == 0.25
    assert (rep["mu"]["invalid"], rep["mu"]["missing"], rep["mu"]["errors"]) == (1, 1, 1)
    assert rep["video_errors"] == [{"uid": "a1", "error": "item a1: video file not found (video: v.mp4)"}]
    assert rep["missing"] == ["a3"]
    text = sureon.format_report(rep)
    assert "counted wrong in mu: 1 invalid, 1 missing, 1 errors" in text
    assert "video errors (1):\n  item a1: video file not found (video: v.mp4)\n" in text
    assert "no prediction (scored wrong) (1):\n  item a3" in text


@pytest.mark.parametrize("benchmark", ["medhorizon", "sureon"])
def test_score_on_an_empty_predictions_file_is_an_error(tmp_path, capsys, benchmark, synthetic):
    data = synthetic.data_path if benchmark == "medhorizon" else _items(tmp_path)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n\n")
    assert main(["score", "--benchmark", benchmark, "--data", str(data), "--predictions", str(empty)]) == 2
    err = capsys.readouterr().err
    assert "empty.jsonl" in err and "no predictions" in err


def _surghi(rows_spec):
    return [FrameRow("SynthTree", "v1", i, p, s) for i, (p, s) in enumerate(rows_spec)]


def test_surghi_frames_whose_video_failed_are_scored_wrong_whatever_their_labels():
    ann = _surghi([("p1", "s1"), ("p1", "s2"), ("p2", "s3"), ("p2", "s4")])
    hier = resolve_hierarchies(ann)
    preds = {r.key: Prediction(r.phase, r.step, error="item x: video file not found") for r in ann}
    rep = evaluate(ann, preds, hier).report()
    ds = rep["datasets"]["SynthTree"]
    assert ds["n_errors"] == 4
    assert ds["phase_acc"] == 0.0 and ds["step_acc"] == 0.0
    assert rep["overall"]["n_errors"] == 4


def test_surghi_predictions_for_an_unknown_dataset_are_counted_and_named():
    ann = _surghi([("p1", "s1"), ("p1", "s2"), ("p2", "s3")])
    hier = resolve_hierarchies(ann)
    preds = {("synthtree", r.video, r.frame): Prediction(r.phase, r.step) for r in ann}
    rep = evaluate(ann, preds, hier).report()
    assert rep["overall"]["n_extra"] == 3
    assert rep["datasets"]["SynthTree"]["n_missing"] == 3
    assert rep["unknown_datasets"] == {"synthtree": {"n_extra": 3, "did_you_mean": "SynthTree"}}
    assert "did you mean 'SynthTree'" in format_report(rep)
