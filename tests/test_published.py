"""The papers' published tables as data (benchmarks/published.py) and `score` showing a run beside its row."""

import json
import math

import pytest

from medhorizon_tasks.benchmarks.published import (
    compare,
    find_row,
    published_rows,
    published_tables,
    row_names,
    run_values,
)
from medhorizon_tasks.commands.main import main
from published_release import TASKS, published_items, write_release
from test_sureon_cli import ITEMS as SUREON_ITEMS

# ------------------------------------------------------------------ the data, checked against itself


def test_every_table_is_there_with_its_section():
    ids = {b: [t for t, _ in published_tables(b)] for b in ("medhorizon", "sureon", "surghi")}
    assert ids == {"medhorizon": ["Table 2", "Fig. 7", "Fig. 8", "Fig. 9", "Fig. 10"],
                   "sureon": ["Table 3", "Table 4", "Table 5", "Table 14", "Table 15", "Table 16", "Table 17",
                              "Table 18"],
                   "surghi": ["Table 2", "Table 3", "Table 4", "Table 8", "Table 9", "Table 10"]}
    assert len(published_rows("medhorizon", "Table 2")) == 25
    assert len(published_rows("sureon", "Table 3")) == 2 + 11 * 3 and len(published_rows("sureon", "Table 14")) == 12
    assert all(len(published_rows("surghi", t)) == 15 for t in ("Table 2", "Table 3", "Table 4"))
    row = find_row("medhorizon", "Gemini-3.1-Pro-Preview")
    assert (row.section, row.printed["overall"], row.printed["LA"]) == ("4.1 Overall Performance", "41.1", "0.0")
    with pytest.raises(ValueError, match="Table 9"):
        published_rows("medhorizon", "Table 9")


def test_medhorizon_overall_is_the_item_weighted_mean_of_its_tasks():
    """Each Ov. equals the pooled accuracy its printed task accuracies imply with the appendix 6.3 counts."""
    for row in published_rows("medhorizon", "Table 2"):
        correct = sum(round(row.value(t) * n / 100) for t, n in TASKS.items())
        assert abs(100 * correct / 1253 - row.value("overall")) <= 0.05 + 1e-9, row.model


def test_sureon_mg_rows_are_visual_minus_blind_and_table_14_repeats_mu():
    models = [r.model for r in published_rows("sureon", "Table 3") if r.setting["eval"] == "MG"]
    assert len(models) == 11
    for m in models:
        v, b, g = (find_row("sureon", m, table="Table 3", eval=e) for e in ("visual", "blind", "MG"))
        for col in v.columns:
            assert abs(v.value(col.key) - b.value(col.key) - g.value(col.key)) <= 0.1 + 1e-9, (m, col.key)
    for row in published_rows("sureon", "Table 14"):
        t3 = find_row("sureon", row.model, table="Table 3", eval="visual")
        assert t3.printed["mu"] == row.printed["mu"], row.model
        lo, hi = map(float, row.ci95["mu"])
        assert lo < row.value("mu") < hi
    assert find_row("sureon", "Random", eval="visual").printed["SM"] == "—"
    assert find_row("sureon", "Random", eval="visual").value("SM") is None


def test_surghi_sibling_and_cousin_add_up_and_multi_level_is_the_geometric_mean():
    for row in published_rows("surghi", "Table 4"):
        assert row.value("sibling") + row.value("cousin") == pytest.approx(100.0), (row.model, row.setting)
    for row in published_rows("surghi", "Table 2"):
        if row.setting["dataset"] != "Overall":  # Overall is the mean of the datasets' multi-level
            geo = math.sqrt(row.value("phase_acc") * row.value("step_acc"))
            assert abs(geo - row.value("multi_level")) <= 1.0, (row.model, row.setting)
    assert row_names("surghi", "Table 2") == ["CLIP", "SurgCLIP∗(β)", "HyperSurg"]


@pytest.mark.parametrize("benchmark,name,table,setting,model", [
    ("medhorizon", "Qwen/Qwen3-VL-8B-Instruct", None, {}, "Qwen3-VL-8B"),      # a checkpoint (registry)
    ("medhorizon", "qwen3_vl_8b", None, {}, "Qwen3-VL-8B"),                    # a registry row
    ("medhorizon", "gpt-5.4-mini", None, {}, "GPT-5.4-mini"),
    ("medhorizon", "Lingshu-7B", None, {}, "Lingshu-7B"),
    ("sureon", "Qwen/Qwen3-VL-8B-Instruct", "Table 3", {"eval": "blind"}, "Qwen3VL-8B-I"),
    ("sureon", "gpt-5.1", "Table 14", {"eval": "visual"}, "GPT-5.1 (high)"),
    ("surghi", "SurgCLIP*(β)", "Table 3", {"dataset": "strasbypass70"}, "SurgCLIP∗(β)"),
    ("surghi", "HYPERSURG", "Table 2", {"dataset": "Overall"}, "HyperSurg"),
])
def test_find_row(benchmark, name, table, setting, model):
    row = find_row(benchmark, name, table=table, **setting)
    assert row is not None and row.model == model
    assert all(row.setting.get(k, v).casefold() == v.casefold() for k, v in setting.items())


def test_find_row_says_none_for_models_the_paper_lacks():
    assert find_row("medhorizon", "Random", table="Table 2") is None
    assert find_row("medhorizon", "Random", table="Fig. 7").printed == {"overall": "25"}  # "Random (25% baseline)"
    assert find_row("surghi", "CLIP", dataset="Cholec80") is None


def test_rounding_as_the_paper_rounds():
    """Half up to the printed decimals, on the value without float dust: 21.25 % prints 21.3 (Python's round,
    half to even, would say 21.2 and a difference of -0.1)."""
    row = find_row("medhorizon", "Qwen3-VL-8B")
    assert row.printed["Size"] == "21.3"
    cells = {c.key: c for c in compare(row, {"Size": (0.2125, None), "CPR": (1 / 26, (0.01, 0.2))})}
    assert cells["Size"].difference == 0.0 and cells["Size"].inside is None
    assert cells["CPR"].difference == 0.0 and cells["CPR"].inside is True
    assert cells["PR"].run is None and cells["PR"].difference is None
    assert compare(row, {"Size": (0.21249, None)})[8].difference == pytest.approx(-0.1)


# ------------------------------------------------------------------ `score` beside Table 2


def _qwen8b_predictions(tmp_path, items):
    """Right on exactly as many items per task as Table 2's Qwen3-VL-8B row implies, wrong on the rest."""
    row = find_row("medhorizon", "Qwen3-VL-8B")
    want = {t: round(row.value(t) * n / 100) for t, n in TASKS.items()}
    lines = []
    for it in items:
        right = want[it["task"]] > 0
        want[it["task"]] -= right
        wrong = "ABCD"[("ABCD".index(it["answer"]) + 1) % 4]
        lines.append(json.dumps({"uid": it["uid"], "prediction": it["answer"] if right else wrong}))
    p = tmp_path / "preds.jsonl"
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.fixture(scope="module")
def full_release(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("published")
    items = published_items()
    return write_release(tmp / "release.jsonl", items), _qwen8b_predictions(tmp, items)


@pytest.mark.parametrize("name", ["Qwen3-VL-8B", "qwen3_vl_8b", "Qwen/Qwen3-VL-8B-Instruct"])
def test_predictions_at_the_qwen3_vl_8b_row_show_no_difference(full_release, capsys, name):
    data, preds = full_release
    assert main(["score", "--benchmark", "medhorizon", "--data", str(data), "--predictions", str(preds),
                 "--paper-row", name, "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["overall"]["correct"] == 328
    (paper,) = rep["paper"]
    assert (paper["table"], paper["model"], paper["section"]) == ("Table 2", "Qwen3-VL-8B", "4.1 Overall Performance")
    columns = {c["key"]: c for c in paper["columns"]}
    assert list(columns) == ["overall", *TASKS]
    for key, c in columns.items():
        assert c["difference"] == 0.0, key
        assert c["inside_ci95"] is True, key
        assert c["ci95"][0] < c["run"] < c["ci95"][1]
        assert f"{c['run']:.1f}" == c["printed"], key
    assert rep["paper_notes"] == ["note: the paper ran Qwen3-VL-8B with 1 FPS, cap 768 (Table 7; "
                                  "`medhorizon-tasks protocol qwen3_vl_8b`)"]


def test_the_text_report_shows_the_row_beside_the_run(full_release, capsys):
    data, preds = full_release
    assert main(["score", "--benchmark", "medhorizon", "--data", str(data), "--predictions", str(preds),
                 "--paper-row", "Qwen3-VL-8B"]) == 0
    out = capsys.readouterr().out
    assert 'The paper\'s numbers: MedHorizon Table 2 (4.1 Overall Performance), row "Qwen3-VL-8B" (size 8B, ' \
           'input 1 FPS), beside this run:' in out
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if line.split()[:2] == ["column", "published"])
    ov = lines[head + 1].split()
    assert ov[:3] == ["Ov.", "26.2", "26.2"] and ov[-2:] == ["+0.0", "yes"]
    la = lines[head + 14].split()
    assert la[:3] == ["LA", "21.9", "21.9"] and la[-2:] == ["+0.0", "yes"]


def test_a_run_off_the_row_shows_its_difference(full_release, tmp_path, capsys):
    data, preds = full_release
    rows = [json.loads(x) for x in preds.read_text().splitlines()]
    items = {it["uid"]: it for it in published_items()}
    flipped = 0
    for r in rows:  # 60 more right answers on PR: 182 / 517 = 35.2 %
        if flipped < 60 and items[r["uid"]]["task"] == "PR" and r["prediction"] != items[r["uid"]]["answer"]:
            r["prediction"], flipped = items[r["uid"]]["answer"], flipped + 1
    p = tmp_path / "more.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["score", "--benchmark", "medhorizon", "--data", str(data), "--predictions", str(p),
                 "--paper-row", "Qwen3-VL-8B", "--json"]) == 0
    columns = {c["key"]: c for c in json.loads(capsys.readouterr().out)["paper"][0]["columns"]}
    assert columns["PR"]["difference"] == pytest.approx(35.2 - 23.6)
    assert columns["PR"]["inside_ci95"] is False
    assert columns["overall"]["difference"] == pytest.approx(31.0 - 26.2)
    assert columns["SD"]["difference"] == 0.0


def test_an_unknown_paper_row_is_a_clear_error(full_release, capsys):
    data, preds = full_release
    assert main(["score", "--benchmark", "medhorizon", "--data", str(data), "--predictions", str(preds),
                 "--paper-row", "Qwen9"]) == 2
    err = capsys.readouterr().err
    assert "--paper-row 'Qwen9': the paper's Table 2 has no such row; rows: GPT-5.4-mini, GPT-5.4," in err


def test_an_lmms_eval_samples_file_finds_its_row_and_says_the_protocol_differs(tmp_path, capsys):
    """The checkpoint in the results file beside the samples picks the row (through the protocol registry); a
    run at cap 64 is told that the paper's row used cap 768."""
    items = published_items()
    data = write_release(tmp_path / "release.jsonl", items)
    preds = _qwen8b_predictions(tmp_path, items)
    samples = tmp_path / "20260101_000000_samples_medhorizon.jsonl"
    with samples.open("w") as fh:
        for k, line in enumerate(preds.read_text().splitlines()):
            rec = json.loads(line)
            fh.write(json.dumps({"doc_id": k, "resps": [[rec["prediction"]]], "filtered_resps": [rec["prediction"]],
                                 "accuracy": {"uid": str(rec["uid"]), "mode": "visual", "error": None}}) + "\n")
    (tmp_path / "20260101_000000_results.json").write_text(json.dumps({
        "results": {"medhorizon": {"accuracy,none": 0.262}},
        "config": {"model": "medhorizon_qwen3_vl", "model_args": "pretrained=Qwen/Qwen3-VL-8B-Instruct"},
        "configs": {"medhorizon": {"lmms_eval_specific_kwargs": {"default": {"mode": "visual", "fps": 1, "cap": 64}}}}}))
    assert main(["score", "--benchmark", "medhorizon", "--data", str(data), "--predictions", str(samples)]) == 0
    out = capsys.readouterr().out
    assert 'row "Qwen3-VL-8B"' in out
    assert ("note: the paper ran Qwen3-VL-8B with 1 FPS, cap 768 (Table 7; `medhorizon-tasks protocol qwen3_vl_8b`); "
            "this run: 1 FPS, cap 64, not the paper's protocol") in out


def test_plain_predictions_without_a_row_show_none(full_release, capsys):
    data, preds = full_release
    assert main(["score", "--benchmark", "medhorizon", "--data", str(data), "--predictions", str(preds),
                 "--json"]) == 0
    assert "paper" not in json.loads(capsys.readouterr().out)


def test_run_values_of_each_benchmark():
    sureon = {"benchmark": "sureon", "mu": {"accuracy": 0.5, "ci95_bootstrap": [0.4, 0.6]},
              "by_category": {"AD": {"accuracy": 0.25, "correct": 1, "n": 4}}, "sm": {"accuracy": None},
              "mg": {"overall": 0.2, "by_category": {"AD": 0.1}}}
    v = run_values(sureon)
    assert v["mu"] == (0.5, (0.4, 0.6)) and v["AD"][0] == 0.25 and v["AD"][1][0] < 0.25 < v["AD"][1][1]
    assert v["SM"] is None
    assert run_values(sureon, mg=True) == {"mu": (0.2, None), "AD": (0.1, None)}
    surghi = {"benchmark": "surghi", "overall": {"multi_level": 0.3, "n_missing": 0},
              "datasets": {"StrasBypass70": {"multi_level": 0.25, "phase_acc": float("nan")}}}
    assert run_values(surghi) == {"multi_level": (0.3, None)}
    assert run_values(surghi, dataset="StrasbyPass70") == {"multi_level": (0.25, None)}


# ------------------------------------------------------------------ Sureon and SurgHiBench beside their tables

def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _sureon_340(tmp_path):
    """SUREON_ITEMS (AD, LAR, TO, SM) padded to the paper's benchmark: 340 questions, 299 accuracy-scored
    (abstract, appendix D.1): 296 more AD items (answer B) and 40 more SM items."""
    pad = [{**SUREON_ITEMS[0], "uid": f"p{k}"} for k in range(296)]
    sm = [{**SUREON_ITEMS[3], "uid": f"s{k + 2}"} for k in range(40)]
    items = SUREON_ITEMS + pad + sm
    summaries = [{"uid": it["uid"], "prediction": "clip; cut"} for it in items if it["category"] == "SM"]
    return _jsonl(tmp_path / "items.jsonl", items), pad, summaries


def test_sureon_score_beside_table_3_its_mg_row_and_table_14(tmp_path, capsys):
    data, pad, summaries = _sureon_340(tmp_path)
    visual = _jsonl(tmp_path / "visual.jsonl", [{"uid": "a1", "prediction": "B"}, {"uid": "a2", "prediction": "A"},
                                                {"uid": "t1", "prediction": "retract > clip > cut"}, *summaries,
                                                *({"uid": it["uid"], "prediction": "B"} for it in pad)])
    blind = _jsonl(tmp_path / "blind.jsonl", [{"uid": "a1", "prediction": "A"}, {"uid": "a2", "prediction": "A"},
                                              {"uid": "t1", "prediction": "clip > cut > retract"}, *summaries,
                                              *({"uid": it["uid"], "prediction": "A"} for it in pad)])
    assert main(["score", "--benchmark", "sureon", "--data", str(data), "--predictions", str(visual), "--blind",
                 str(blind), "--paper-row", "Qwen3-VL-8B-Instruct", "--mode", "visual", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    paper = rep["paper"]
    assert "paper_refused" not in rep
    assert [(p["table"], p["setting"].get("eval")) for p in paper] == [
        ("Table 3", "visual"), ("Table 3", "MG"), ("Table 14", None), ("Table 15", None), ("Table 16", None),
        ("Table 17", None)]
    assert all(p["flags"] == [] for p in paper)
    t3 = {c["key"]: c for c in paper[0]["columns"]}
    assert t3["mu"]["run"] == pytest.approx(100 * 298 / 299)
    assert t3["mu"]["difference"] == pytest.approx(99.7 - 23.1)
    assert t3["AD"]["difference"] == pytest.approx(100 - 28.6) and t3["EE"]["run"] is None
    mg = {c["key"]: c for c in paper[1]["columns"]}
    assert mg["mu"]["run"] == pytest.approx(100 * 298 / 299) and mg["mu"]["ci95"] is None
    assert mg["mu"]["inside_ci95"] is None
    assert paper[2]["published_ci95"] == {"mu": ["18.4", "27.8"]}
    assert main(["score", "--benchmark", "sureon", "--data", str(data), "--predictions", str(blind),
                 "--paper-row", "Qwen3VL-8B-I", "--mode", "blind", "--json"]) == 0
    paper = json.loads(capsys.readouterr().out)["paper"]
    assert [(p["table"], p["setting"].get("eval")) for p in paper] == [("Table 3", "blind")]
    assert {c["key"]: c for c in paper[0]["columns"]}["mu"]["printed"] == "13.4"


def test_surghi_score_beside_tables_2_to_4_per_dataset(tmp_path, capsys):
    frames = [{"dataset": "MIPO", "video": "m1", "frame": f, "phase": "Fixation", "step": "Distal Fixation"}
              for f in range(4)]
    ann = _jsonl(tmp_path / "ann.jsonl", frames)
    pred = _jsonl(tmp_path / "pred.jsonl", [{**r, "step": "Proximal Fixation" if r["frame"] else r["step"]}
                                            for r in frames])
    assert main(["score", "--benchmark", "surghi", "--data", str(ann), "--predictions", str(pred),
                 "--paper-row", "HyperSurg", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    paper = rep["paper"]
    assert [(p["table"], p["setting"]["dataset"]) for p in paper] == [
        (t, "MIPO") for t in ("Table 2", "Table 3", "Table 4")]
    # the paper's Overall is over its four datasets: a run on MIPO alone is not set beside it
    assert [(r["table"], r["setting"]["dataset"]) for r in rep["paper_refused"]] == [
        (t, "Overall") for t in ("Table 2", "Table 3", "Table 4")]
    assert rep["paper_refused"][0]["refused"] == ["the paper's Overall is the mean over BernBypass70, GraSP, MIPO, "
                                                  "StrasbyPass70; this run's datasets are MIPO"]
    t2 = {c["key"]: c for c in paper[0]["columns"]}
    assert t2["phase_acc"]["run"] == 100.0 and t2["step_acc"]["run"] == 25.0
    assert t2["step_acc"]["difference"] == pytest.approx(25.0 - 17.6) and t2["step_acc"]["ci95"] is None
    assert main(["score", "--benchmark", "surghi", "--data", str(ann), "--predictions", str(pred),
                 "--paper-row", "HyperSurg"]) == 0
    out = capsys.readouterr().out
    assert 'SurgHiBench Table 4 (5.3 Task 3: Hierarchy-Aware Error Severity), row "HyperSurg" (dataset MIPO)' in out
    assert "(—: no 95% interval for that value in this report)" in out
    assert ('The paper\'s numbers are not set beside this run (Table 2 / Table 3 / Table 4, row "HyperSurg" '
            "(dataset Overall)): the paper's Overall is the mean over BernBypass70") in out


# ------------------------------------------------------------------ `leaderboard build` beside the papers


def test_leaderboard_build_shows_each_entry_beside_its_paper_row(full_release, tmp_path, capsys):
    data, preds = full_release
    subs = []
    for model in ("Qwen/Qwen3-VL-8B-Instruct", "My model"):
        out = tmp_path / f"{model.replace('/', '_')}.json"
        assert main(["leaderboard", "make", "--benchmark", "medhorizon", "--data", str(data), "--predictions",
                     str(preds), "--model", model, "--model-size", "8B", "--fps", "1", "--cap", "768", "-o", str(out)]) == 0
        subs.append(str(out))
    capsys.readouterr()
    board = tmp_path / "board"
    assert main(["leaderboard", "build", *subs, "--data", str(data), "-o", str(board), "--n-resamples", "200"]) == 0
    out = capsys.readouterr().out
    assert "Published values beside these entries:" in out
    line = next(x for x in out.splitlines() if x.startswith("MedHorizon  Qwen/Qwen3-VL-8B-Instruct"))
    assert "Table 2 Ov.: Qwen3-VL-8B (8B, 1 FPS)" in line and "26.2" in line and line.split()[-2:] == ["+0.0", "yes"]
    assert "My model" not in out.split("Published values beside these entries:")[1], "no row: not shown"
    md = (board / "leaderboard.md").read_text()
    assert "## Published values beside these entries" in md
    row = next(x for x in md.splitlines() if x.startswith("| MedHorizon | Qwen/Qwen3-VL-8B-Instruct |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[3:] == ["26.2", cells[4], "+0.0", "yes"] and cells[4].startswith("26.2 [")
    html = (board / "leaderboard.html").read_text()
    assert '<section id="paper">' in html and "<td>Table 2 Ov.: Qwen3-VL-8B (8B, 1 FPS)</td>" in html
    # an explicit row for an entry the registry does not know
    assert main(["leaderboard", "build", *subs, "--data", str(data), "-o", str(board), "--n-resamples", "200",
                 "--paper-row", "My model=Hulu-Med-7B"]) == 0
    out = capsys.readouterr().out.split("Published values beside these entries:")[1]
    line = next(x for x in out.splitlines() if x.startswith("MedHorizon  My model"))
    assert "Hulu-Med-7B" in line and line.split()[-2:] == ["+0.0", "yes"], "Hulu-Med-7B's Ov. is 26.2 too"
    assert main(["leaderboard", "build", *subs, "--data", str(data), "-o", str(board), "--paper-row",
                 "Nobody=Qwen3-VL-8B"]) == 2
    assert "no entry is named 'Nobody'" in capsys.readouterr().err
