"""A run set beside a paper's row only on the paper's data: synthetic sets, samples and subsets refused (score,
leaderboard); items without a prediction flagged; every departure from the paper's protocol (Sureon without the
blurring pass) a label on the run in score's text and JSON, the leaderboard and the plots."""

from __future__ import annotations

import json

import pytest

from medhorizon_tasks.benchmarks.sureon import scoring as sureon_scoring
from medhorizon_tasks.benchmarks.sureon.items import load_items as load_sureon
from medhorizon_tasks.benchmarks.sureon.protocol import blur_enabled, departures
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.plots.results_files import build_files
from published_release import published_items, write_release
from test_sureon_cli import ITEMS as SUREON_ITEMS


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _score(capsys, *args) -> tuple[int, str]:
    status = main(["score", *args])
    return status, capsys.readouterr().out


# ------------------------------------------------------------------ MedHorizon

def test_a_run_on_the_synthetic_set_is_never_set_beside_table_2(synthetic, tmp_path, capsys):
    """The issue's case: GPT-5.4 on the 88-item synthetic set, 85 items without a prediction."""
    items = [json.loads(x) for x in synthetic.data_path.read_text().splitlines()]
    uids = [qa["uid"] for rec in items for qa in rec["qa"]][:3]
    preds = _jsonl(tmp_path / "p.jsonl", [{"uid": u, "prediction": "A"} for u in uids])
    common = ["--benchmark", "medhorizon", "--data", str(synthetic.data_path), "--predictions", str(preds),
              "--paper-row", "GPT-5.4"]
    status, out = _score(capsys, *common, "--json")
    rep = json.loads(out)
    assert status == 0 and rep["paper"] == []
    (refused,) = rep["paper_refused"]
    assert refused["table"] == "Table 2" and refused["model"] == "GPT-5.4"
    assert refused["refused"] == ["the data are the embedded synthetic benchmark (88 items over 16 videos), not the "
                                  "release"]
    status, out = _score(capsys, *common)
    assert 'The paper\'s numbers are not set beside this run (Table 2, row "GPT-5.4"' in out
    assert "published in CI" not in out.lower()


def test_the_published_release_with_items_missing_is_flagged(tmp_path, capsys):
    items = published_items()
    data = write_release(tmp_path / "release.jsonl", items)
    preds = _jsonl(tmp_path / "p.jsonl", [{"uid": it["uid"], "prediction": it["answer"]} for it in items[85:]])
    status, out = _score(capsys, "--benchmark", "medhorizon", "--data", str(data), "--predictions", str(preds),
                         "--paper-row", "GPT-5.4", "--json")
    (paper,) = json.loads(out)["paper"]
    assert paper["flags"] == ["85 of 1,253 items have no prediction (scored wrong): not the model's number on "
                              "the paper's data"]
    status, out = _score(capsys, "--benchmark", "medhorizon", "--data", str(data), "--predictions", str(preds),
                         "--paper-row", "GPT-5.4")
    assert "NOT the paper's number as printed: 85 of 1,253 items have no prediction" in out
    # every item answered: nothing to flag
    full = _jsonl(tmp_path / "all.jsonl", [{"uid": it["uid"], "prediction": it["answer"]} for it in items])
    status, out = _score(capsys, "--benchmark", "medhorizon", "--data", str(data), "--predictions", str(full),
                         "--paper-row", "GPT-5.4", "--json")
    assert json.loads(out)["paper"][0]["flags"] == []


# ------------------------------------------------------------------ SurgHiBench leaderboard of the sample

def test_a_leaderboard_of_the_synthetic_surghi_sample_sets_no_entry_beside_the_paper(surghi_sample, tmp_path,
                                                                                       capsys):
    ann = str(surghi_sample.annotations_path)
    sub = tmp_path / "hypersurg.json"
    assert main(["leaderboard", "make", "--benchmark", "surghi", "--data", ann, "--predictions", ann, "--model",
                 "HyperSurg", "--model-size", "unknown", "--fps", "1", "--frames", "16", "--out", str(sub)]) == 0
    capsys.readouterr()
    board = tmp_path / "board"
    assert main(["leaderboard", "build", str(sub), "--data", f"surghi={ann}", "--out", str(board), "--n-resamples",
                 "50"]) == 0
    out = capsys.readouterr().out
    assert "Published values beside these entries" not in out
    md = (board / "leaderboard.md").read_text()
    assert "Published values beside these entries" not in md and "Difference" not in md
    assert ("Not comparable with the SurgHiBench paper's published rows: the paper's Overall is the mean over "
            "BernBypass70, GraSP, MIPO, StrasbyPass70; this run's datasets are SynthDAG, SynthTree.") in md
    assert main(["leaderboard", "build", str(sub), "--data", f"surghi={ann}", "--out", str(board), "--n-resamples",
                 "50", "--paper-row", "HyperSurg=HyperSurg"]) == 2
    err = capsys.readouterr().err
    assert "--paper-row HyperSurg=HyperSurg: not set beside the paper's SurgHiBench Table 2: the paper's Overall" in err


# ------------------------------------------------------------------ Sureon without the blurring pass

def _sureon_340(tmp_path):
    """The paper's benchmark in shape: 340 questions, 299 accuracy-scored (abstract, appendix D.1)."""
    pad = [{**SUREON_ITEMS[0], "uid": f"p{k}"} for k in range(296)]
    sm = [{**SUREON_ITEMS[3], "uid": f"s{k + 2}"} for k in range(40)]
    return _jsonl(tmp_path / "items.jsonl", SUREON_ITEMS + pad + sm)


def _samples(path, items, blur: bool):
    """An lmms-eval samples file of sureon_visual whose per-item records are the ones the task hook writes
    (``scoring.record_for`` with ``protocol.departures``)."""
    rows = []
    for k, it in enumerate(items):
        raw = {"mcq": it.answer, "to": " > ".join(it.answer) if isinstance(it.answer, (list, tuple)) else None,
               "sm": "clip; cut"}[it.kind]
        rec = sureon_scoring.record_for(it, raw, "visual", None, departures=departures("visual", blur))
        rows.append({"doc_id": k, "resps": [[raw]], "filtered_resps": [raw], "accuracy": rec})
    return _jsonl(path, rows)


def test_a_run_without_the_blurring_pass_is_labelled_everywhere(tmp_path, capsys, monkeypatch):
    data = _sureon_340(tmp_path)
    items = load_sureon(data)
    monkeypatch.setenv("SUREON_BLUR", "0")
    assert not blur_enabled(None)
    noblur = _samples(tmp_path / "20260101_000000_samples_sureon_visual.jsonl", items, blur_enabled(None))
    blurred = _samples(tmp_path / "blurred.jsonl", items, True)

    status, out = _score(capsys, "--benchmark", "sureon", "--data", str(data), "--predictions", str(noblur),
                         "--paper-row", "Qwen3-VL-8B-Instruct", "--json")
    rep = json.loads(out)
    assert status == 0 and rep["departures"] == ["no blur"]
    assert [p["table"] for p in rep["paper"]] == ["Table 3", "Table 14", "Table 15", "Table 16", "Table 17"]
    assert all(p["flags"] == ["not the paper's protocol: no blur"] for p in rep["paper"])
    status, out = _score(capsys, "--benchmark", "sureon", "--data", str(data), "--predictions", str(noblur),
                         "--paper-row", "Qwen3-VL-8B-Instruct")
    assert out.startswith("Sureon [no blur: not the paper's protocol]")
    assert "NOT the paper's number as printed: not the paper's protocol: no blur" in out
    status, out = _score(capsys, "--benchmark", "sureon", "--data", str(data), "--predictions", str(blurred),
                         "--paper-row", "Qwen3-VL-8B-Instruct", "--json")
    rep_blurred = json.loads(out)
    assert "departures" not in rep_blurred and all(p["flags"] == [] for p in rep_blurred["paper"])

    # the leaderboard: the submission carries it, the board shows it beside the model and the paper's row
    subs = []
    for name, preds in (("Qwen3-VL-8B-Instruct", noblur), ("Blurred", blurred)):
        sub = tmp_path / f"{name}.json"
        assert main(["leaderboard", "make", "--benchmark", "sureon", "--data", str(data), "--predictions",
                     str(preds), "--model", name, "--model-size", "8B", "--frames", "8", "--out", str(sub)]) == 0
        subs.append(str(sub))
    assert json.loads((tmp_path / "Qwen3-VL-8B-Instruct.json").read_text())["metadata"]["departures"] == ["no blur"]
    assert "departures" not in json.loads((tmp_path / "Blurred.json").read_text())["metadata"]
    capsys.readouterr()
    board = tmp_path / "board"
    assert main(["leaderboard", "build", *subs, "--data", f"sureon={data}", "--out", str(board), "--n-resamples",
                 "50"]) == 0
    out = capsys.readouterr().out
    paper_part = out.split("Published values beside these entries:")[1]
    assert "Qwen3-VL-8B-Instruct [no blur]" in paper_part
    md = (board / "leaderboard.md").read_text()
    assert "| Qwen3-VL-8B-Instruct \\[no blur\\] |" in md and "| Blurred |" in md  # Markdown escapes [ ]
    assert "Qwen3-VL-8B-Instruct [no blur]" in (board / "leaderboard.html").read_text()

    # the plots: the series is named with it
    (tmp_path / "noblur_report.json").write_text(json.dumps(rep))
    (tmp_path / "blurred_report.json").write_text(json.dumps(rep_blurred))
    figures = build_files([tmp_path / "noblur_report.json", tmp_path / "blurred_report.json"])
    legend = [t.get_text() for lg in figures["per_category_sureon"].legends for t in lg.get_texts()]
    assert "noblur_report [no blur]" in legend and "blurred_report" in legend


@pytest.mark.parametrize("mode,blur,want", [("visual", False, ["no blur"]), ("visual", True, []),
                                            ("blind", False, [])])
def test_departures_of_a_sureon_setting(mode, blur, want):
    assert departures(mode, blur) == want
