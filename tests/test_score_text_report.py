"""The text report of `score` names the model and input, lists what failed by uid, prints clean numbers."""

import json

import pytest

from medhorizon_tasks.benchmarks.medhorizon import scoring
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.commands.main import main


def _samples_run(tmp_path, synthetic, kwargs):
    """An lmms-eval output folder: <stamp>_results.json and <stamp>_samples_<task>.jsonl (as 0.7.3 writes them)."""
    items = load_release(synthetic.data_path)
    folder = tmp_path / "out" / "qwen"
    folder.mkdir(parents=True)
    task = "medhorizon_synthetic"
    results = {"results": {task: {"alias": task, "accuracy,none": 0.5}},
               "config": {"model": "qwen2_5_vl", "model_args": "pretrained=Qwen/Qwen2.5-VL-7B-Instruct,device=cpu"},
               "configs": {task: {"task": task, "lmms_eval_specific_kwargs": {"default": kwargs, **kwargs}}}}
    (folder / "20261201_101010_results.json").write_text(json.dumps(results))
    lines = []
    for i, it in enumerate(items[:-2]):  # the last two items were never answered
        raw = it.answer if i % 2 else "I cannot determine the answer from the frames."
        rec = scoring.score_item(it, raw, "visual")
        if i == 0:
            rec = scoring.error_record(it, "visual", f"item {it.uid}: video file not found (video: x.mp4)")
        lines.append(json.dumps({"doc_id": i, "resps": [[raw]], "filtered_resps": [raw], "accuracy": rec}))
    samples = folder / f"20261201_101010_samples_{task}.jsonl"
    samples.write_text("\n".join(lines) + "\n")
    return samples, items


@pytest.mark.parametrize("kwargs,expected", [({"mode": "visual", "fps": 1, "cap": 64, "max_side": 448}, "1 FPS, cap 64"),
                                             ({"mode": "visual", "fps": 1, "frames": 32}, "32 frames"),
                                             ({"mode": "oracle", "fps": 1, "cap": 64}, "GT evidence")])
def test_model_and_input_come_from_the_run_and_failures_are_listed_by_uid(synthetic, tmp_path, capsys, kwargs,
                                                                          expected):
    samples, items = _samples_run(tmp_path, synthetic, kwargs)
    assert main(["score", "--benchmark", "medhorizon", "--data", str(synthetic.data_path),
                 "--predictions", str(samples)]) == 0
    out = capsys.readouterr().out
    row = next(line for line in out.splitlines() if line.startswith("qwen2_5_vl"))
    assert row.startswith("qwen2_5_vl (Qwen2.5-VL-7B-Instruct)") and f"| {expected}" in row and "?" not in row
    first = items[0].uid
    assert f"video errors (scored wrong) (1):\n  item {first}: video file not found (video: x.mp4)\n" in out
    assert f"item {first}: item {first}" not in out
    assert f"no prediction (scored wrong) (2):\n  item {items[-2].uid}\n  item {items[-1].uid}" in out


def test_score_json_has_no_floating_point_dust(synthetic, tmp_path, capsys):
    # 9 items, all wrong: the Wilson interval's lower end used to print as 2.7755575615628914e-17
    records = [json.loads(x) for x in synthetic.data_path.read_text().splitlines()]
    kept, n = [], 0
    for rec in records:
        rec["qa"] = rec["qa"][: 9 - n]
        kept.append(rec)
        n += len(rec["qa"])
        if n == 9:
            break
    data = tmp_path / "nine.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in kept))
    items = load_release(data)
    assert len(items) == 9
    preds = tmp_path / "p.jsonl"
    wrong = {"A": "B", "B": "C", "C": "D", "D": "A"}
    preds.write_text("".join(json.dumps({"uid": it.uid, "prediction": wrong[it.answer]}) + "\n" for it in items))
    assert main(["score", "--benchmark", "medhorizon", "--data", str(data), "--predictions", str(preds), "--json"]) == 0
    text = capsys.readouterr().out
    assert "e-1" not in text and "e-0" not in text
    assert json.loads(text)["overall"]["ci95"][0] == 0.0


def test_plural_counts_in_the_cache_report(tmp_path, capsys):
    assert main(["cache", "info", "--cache", str(tmp_path / "c")]) == 0
    assert "0 entries" in capsys.readouterr().out
    from medhorizon_tasks.core.text import plural

    assert (plural(1, "entry"), plural(2, "entry"), plural(1, "video"), plural(3, "video")) == \
           ("1 entry", "2 entries", "1 video", "3 videos")


def test_demo_without_lmms_eval_names_the_extra_before_any_work(monkeypatch, capsys):
    import importlib.util

    import medhorizon_tasks.commands.jobs.demo as demo

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "lmms_eval" else real(name, *a))
    monkeypatch.setattr(demo, "build_synthetic", lambda *a, **k: pytest.fail("the synthetic set was built"))
    assert main(["demo", "--out", "unused"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'medhorizon-tasks[lmms]'" in err


def test_help_says_what_the_tool_does(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "The ``medhorizon-tasks`` command" not in out
    assert "MedHorizon, Sureon and SurgHiBench" in out and "run" in out and "check" in out


def test_a_records_file_is_scored_from_its_raw_outputs_not_its_gold_answers(synthetic, tmp_path, capsys):
    """`score --out` records fed back to `score` (or `compare`): its `answer` field is the gold answer, so
    reading it as the prediction would print 100%; the records' raw outputs and video errors are used."""
    items = load_release(synthetic.data_path)
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"uid": it.uid, "prediction": "I cannot tell from these frames."}) + "\n"
                             for it in items))
    records = tmp_path / "records.jsonl"
    assert main(["score", "--benchmark", "medhorizon", "--data", str(synthetic.data_path), "--predictions",
                 str(preds), "--out", str(records), "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["overall"]["accuracy"] == 0.0
    assert main(["score", "--benchmark", "medhorizon", "--data", str(synthetic.data_path), "--predictions",
                 str(records), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["overall"] == first["overall"]
