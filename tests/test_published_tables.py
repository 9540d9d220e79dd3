"""The tables issue 27 adds as data (item 7), read back cell by cell against the paper text (tests/paper_text.py,
the seed lines verbatim), and shown beside a run: Sureon Tables 15-17 beside `score`, Table 18 beside `compare`,
SurgHiBench Tables 8-10 beside `score`, MedHorizon's Figs. 7-8 beside `diagnose`."""

import json
import re

import pytest

import paper_text as T
from medhorizon_tasks.benchmarks.medhorizon.diagnostics import DIAGNOSTICS
from medhorizon_tasks.benchmarks.published import find_pair, find_row, published_rows
from medhorizon_tasks.commands.jobs.diagnose import format_rows, paper_value
from medhorizon_tasks.commands.main import main
from test_sureon_cli import ITEMS as SUREON_ITEMS


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _body(lines) -> list[list[str]]:
    """The data rows of a seed Markdown table (header and rule dropped)."""
    assert set(lines[1].replace("|", "").split()) == {"---"}
    return [_cells(line) for line in lines[2:]]


def _with_ci(cell: str) -> tuple[str, list[str]]:
    m = re.fullmatch(r"(\S+) \[(\S+), (\S+)\]", cell)
    assert m, cell
    return m.group(1), [m.group(2), m.group(3)]


# ------------------------------------------------------------------ Sureon, cell by cell

def test_sureon_table_4_cell_by_cell():
    rows = published_rows("sureon", "Table 4")
    body = _body(T.SUREON_TABLE_4)
    assert len(rows) == len(body) == 3
    for row, cells in zip(rows, body):
        assert row.model == "Sureon-VLM" and row.setting == {"distractors": cells[0]}
        assert [row.printed[k] for k in ("training_samples", "visual", "blind", "mg")] == cells[1:]
        assert row.value("visual") - row.value("blind") == pytest.approx(row.value("mg"))  # MG = S_v - S_wv


def test_sureon_table_5_cell_by_cell():
    rows = published_rows("sureon", "Table 5")
    body = _body(T.SUREON_TABLE_5)
    assert len(rows) == len(body) == 6
    for row, cells in zip(rows, body):
        assert [row.model, row.printed["cholec80_phase_f1"], row.printed["heichole_phase_f1"],
                row.printed["heichole_action_f1"]] == cells
    assert find_row("sureon", "Sureon-VLM (clip)", table="Table 5").value("heichole_action_f1") is None


@pytest.mark.parametrize("table,lines,keys", [
    ("Table 15", T.SUREON_TABLE_15, ["perception", "reasoning"]),
    ("Table 16", T.SUREON_TABLE_16, ["AD", "IAI", "EA", "EE", "PAD"]),
    ("Table 17", T.SUREON_TABLE_17, ["LAR", "SPI", "F", "TO"]),
])
def test_sureon_tables_15_to_17_cell_by_cell(table, lines, keys):
    rows = published_rows("sureon", table)
    body = _body(lines)
    assert len(rows) == len(body) == 12
    head = _cells(lines[0])
    assert [c.label for c in rows[0].columns] == [h.split(" (")[0] if table != "Table 15" else h for h in head[1:]]
    for row, cells in zip(rows, body):
        assert row.model == cells[0]
        for key, cell in zip(keys, cells[1:]):
            value, ci = _with_ci(cell)
            assert (row.printed[key], list(row.ci95[key])) == (value, ci), (table, row.model, key)
    # the categories repeat Table 3's visual row (same models, same printed accuracies)
    for row in rows:
        t3 = find_row("sureon", row.model, table="Table 3", eval="visual")
        if t3 is not None and table != "Table 15":
            assert all(row.printed[k] == t3.printed[k] for k in keys), row.model


def test_sureon_table_18_cell_by_cell():
    rows = published_rows("sureon", "Table 18")
    body = _body(T.SUREON_TABLE_18)
    assert len(rows) == len(body) == 66  # "(12 choose 2) = 66 model pairs"
    for row, cells in zip(rows, body):
        a, b, delta, p, holm = cells
        assert (row.model, row.setting["model_b"], row.printed["delta"]) == (a, b, delta)
        assert (row.printed["p_raw"], row.printed["p_holm"]) == (p.replace("$<$", "<"), holm.replace("$<$", "<"))
    pairs = {(r.model, r.setting["model_b"]) for r in rows}
    models = {m for pair in pairs for m in pair}
    assert len(models) == 12 and len(pairs) == 66


# ------------------------------------------------------------------ SurgHiBench, cell by cell

_NUM = re.compile(r"\d+\.\d")


def _ablation(text: str, labels: list[str]) -> dict[tuple[str, str], list[str]]:
    """``{(dataset, label): [phase, step, multi-level]}`` from the seed's run-together text."""
    parts = re.split(r"(MIPO|StrasbyPass70|BernBypass70|GraSP|Overall) ", text)
    out = {}
    for ds, block in zip(parts[1::2], parts[2::2]):
        alternation = "|".join(re.escape(label) for label in labels)
        for label, digits in re.findall(rf"({alternation}) ?((?:\d+\.\d){{3}})", block):
            out[(ds, label)] = _NUM.findall(digits)
    return out


def test_surghi_table_8_cell_by_cell():
    text = T.SURGHI_TABLE_8
    found = re.findall(r"(Cholec80|AutoLaparo|HeiChole|BernBypass70|StrasbyPass70|GraSP) SurgCLIP \(β\) "
                       r"([\d. —]+?) ?SurgCLIP ∗ \(β\) ([\d. —]+?)(?= [A-Z]|$)", text)
    assert [f[0] for f in found] == ["Cholec80", "AutoLaparo", "HeiChole", "BernBypass70", "StrasbyPass70", "GraSP"]
    rows = published_rows("surghi", "Table 8")
    assert len(rows) == 12
    for (ds, original, ours), pair in zip(found, zip(rows[0::2], rows[1::2])):
        for cells, row in zip((original, ours), pair):
            values = _NUM.findall(cells)
            if "—" in cells:  # one dash under the two step columns: no step results for this dataset
                values += ["—", "—"]
            assert row.setting == {"dataset": ds}
            assert [row.printed[k] for k in ("phase_acc", "phase_f1", "step_acc", "step_f1")] == values, (ds, row.model)
    assert [r.model for r in rows[:2]] == ["SurgCLIP (β) (Perez et al.)", "SurgCLIP∗(β)"]
    # the reimplementation's rows on the four multi-level datasets repeat Table 2's
    for row in rows[1::2]:
        t2 = find_row("surghi", "SurgCLIP∗(β)", table="Table 2", dataset=row.setting["dataset"])
        if t2 is not None:
            assert (row.printed["phase_acc"], row.printed["phase_f1"]) == (t2.printed["phase_acc"],
                                                                         t2.printed["phase_f1"])


@pytest.mark.parametrize("table,text,labels,names", [
    ("Table 9", T.SURGHI_TABLE_9, ["Lorentz only", "+ Entailment cones", "+ Triplet sampler", "+ Both (HYPERSURG)"],
     ["HyperSurg (Lorentz only)", "HyperSurg (Lorentz + entailment cones)", "HyperSurg (Lorentz + triplet sampler)",
      "HyperSurg (all three: the full model)"]),
    ("Table 10", T.SURGHI_TABLE_10, ["λ=0.01", "λ=0.05", "λ=0.1", "λ=0.2", "λ=0.3"],
     [f"HyperSurg (λ = {x})" for x in ("0.01", "0.05", "0.1", "0.2", "0.3")]),
])
def test_surghi_tables_9_and_10_cell_by_cell(table, text, labels, names):
    parsed = _ablation(text, labels)
    rows = published_rows("surghi", table)
    assert len(parsed) == len(rows) == 5 * len(labels)
    by_name = dict(zip(names, labels))
    for row in rows:
        cells = parsed[(row.setting["dataset"], by_name[row.model])]
        assert [row.printed[k] for k in ("phase_acc", "step_acc", "multi_level")] == cells, (row.model, row.setting)
    # the full model (Table 9) and lambda = 0.1 (Table 10) are Table 2's HyperSurg
    for ds in ("MIPO", "StrasbyPass70", "BernBypass70", "GraSP", "Overall"):
        full = find_row("surghi", names[3] if table == "Table 9" else names[2], table=table, dataset=ds)
        t2 = find_row("surghi", "HyperSurg", table="Table 2", dataset=ds)
        assert [full.printed[k] for k in ("phase_acc", "step_acc", "multi_level")] == \
            [t2.printed[k] for k in ("phase_acc", "step_acc", "multi_level")], ds


# ------------------------------------------------------------------ MedHorizon's figures, as the text quotes them

def test_medhorizon_figures_are_the_values_the_text_quotes():
    def fig(table, model, **setting):
        return find_row("medhorizon", model, table=table, **setting).printed

    m = re.search(r"Random \((\d+)% baseline\)", T.MEDHORIZON_FIG_7)
    assert fig("Fig. 7", "Random", input="Random") == {"overall": m.group(1)}
    m = re.search(r"MedGRPO improves from ([\d.]+)% to ([\d.]+)%, and Lingshu-7B from ([\d.]+)% to ([\d.]+)%",
                  T.MEDHORIZON_FIG_7)
    assert [fig("Fig. 7", mo, input=i)["semantic_reasoning"] for mo in ("MedGRPO", "Lingshu-7B")
            for i in ("Uniform", "GT-images")] == list(m.groups())
    m = re.search(r"reduces Qwen3-VL-8B from ([\d.]+)% to ([\d.–]+)% overall", T.MEDHORIZON_FIG_8_9)
    assert fig("Fig. 8", "Qwen3-VL-8B", order="original") == {"overall": m.group(1)}
    for order in ("reverse", "block_shuffle", "local_shuffle"):
        assert fig("Fig. 8", "Qwen3-VL-8B", order=order) == {"overall": m.group(2)}
    m = re.search(r"Qwen3-VL and Lingshu still require ([\d.]+)% and ([\d.]+)% of temporal units", T.MEDHORIZON_FIG_8_9)
    assert [fig("Fig. 9", mo)["units_for_90pct_attention"] for mo in ("Qwen3-VL-8B", "Lingshu-7B")] == list(m.groups())
    m = re.search(r"frame similarity around ([\d.]+)", T.MEDHORIZON_FIG_8_9)
    assert fig("Fig. 9", "Lingshu-7B")["frame_similarity"] == "~" + m.group(1)
    m = re.search(r"AKS, ViLAMP, and WFS-SB achieve ([\d.]+)%, ([\d.]+)%, and ([\d.]+)% accuracy", T.MEDHORIZON_FIG_10)
    assert [fig("Fig. 10", mo)["overall"] for mo in ("AKS", "ViLAMP", "WFS-SB")] == list(m.groups())
    assert fig("Fig. 10", "WFS-SB")["Site"] == re.search(r"WFS-SB reaches ([\d.]+)% on Site", T.MEDHORIZON_FIG_10)[1]


# ------------------------------------------------------------------ beside a run

def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_sureon_score_beside_tables_15_to_17(tmp_path, capsys):
    from test_published import _sureon_340

    # AD, LAR, TO and SM items, padded to the paper's 340 questions (only the paper's data is set beside its rows)
    data, pad, summaries = _sureon_340(tmp_path)
    visual = _jsonl(tmp_path / "visual.jsonl", [{"uid": "a1", "prediction": "B"}, {"uid": "a2", "prediction": "A"},
                                                {"uid": "t1", "prediction": "retract > clip > cut"}, *summaries,
                                                *({"uid": it["uid"], "prediction": "B"} for it in pad)])
    assert main(["score", "--benchmark", "sureon", "--data", str(data), "--predictions", str(visual),
                 "--paper-row", "Gemini 3.1 Pro", "--mode", "visual", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    paper = {p["table"]: p for p in rep["paper"]}
    assert list(paper) == ["Table 3", "Table 14", "Table 15", "Table 16", "Table 17"]
    t15 = {c["key"]: c for c in paper["Table 15"]["columns"]}
    assert t15["reasoning"]["printed"] == "51.1" and t15["reasoning"]["run"] == pytest.approx(
        100 * rep["reasoning"]["accuracy"])
    assert paper["Table 15"]["published_ci95"]["reasoning"] == ["42.9", "59.4"]
    t16 = {c["key"]: c for c in paper["Table 16"]["columns"]}
    assert t16["AD"]["run"] == 100.0 and t16["AD"]["difference"] == pytest.approx(100 - 54.3)
    assert t16["EE"]["run"] is None  # no EE item in this run
    # a blind run is set beside Table 3's blind row only
    assert main(["score", "--benchmark", "sureon", "--data", str(data), "--predictions", str(visual),
                 "--paper-row", "Gemini 3.1 Pro", "--mode", "blind", "--json"]) == 0
    assert [p["table"] for p in json.loads(capsys.readouterr().out)["paper"]] == ["Table 3"]


def test_sureon_compare_beside_table_18(tmp_path, capsys):
    data = _jsonl(tmp_path / "items.jsonl", SUREON_ITEMS)
    right = _jsonl(tmp_path / "r.jsonl", [{"uid": "a1", "prediction": "B"}, {"uid": "a2", "prediction": "A"},
                                          {"uid": "t1", "prediction": "retract > clip > cut"}])
    wrong = _jsonl(tmp_path / "w.jsonl", [{"uid": "a1", "prediction": "C"}, {"uid": "a2", "prediction": "C"},
                                          {"uid": "t1", "prediction": "cut > clip > retract"}])
    assert find_pair("gpt-5.1", "Human") == (find_row("sureon", "Human", table="Table 18",
                                                      model_b="GPT-5.1 (high)"), True)
    assert main(["compare", "--benchmark", "sureon", "--data", str(data), str(wrong), str(right),
                 "--labels", "gpt-5.1,Human"]) == 0
    out = capsys.readouterr().out
    assert "Sureon Table 18" in out
    line = next(x for x in out.splitlines() if x.startswith("  Human vs gpt-5.1:"))
    row = find_row("sureon", "Human", table="Table 18", model_b="GPT-5.1 (high)")
    assert f"paper Δ {row.printed['delta']} pts, p {row.printed['p_raw']}, p_holm {row.printed['p_holm']}" in line
    assert "this run Δ 66.67 pts" in line  # 2 of 3 accuracy-scored items right, against none
    assert main(["compare", "--benchmark", "sureon", "--data", str(data), str(wrong), str(right),
                 "--labels", "mine,theirs"]) == 0
    assert "Table 18" not in capsys.readouterr().out  # pairs the paper does not have: nothing beside


def test_surghi_score_beside_tables_8_to_10(tmp_path, capsys):
    frames = [{"dataset": "Cholec80", "video": "c1", "frame": f, "phase": "Preparation", "step": None}
              for f in range(4)]
    ann = _jsonl(tmp_path / "ann.jsonl", frames)
    assert main(["score", "--benchmark", "surghi", "--data", str(ann), "--predictions", str(ann),
                 "--paper-row", "SurgCLIP*(β)", "--json"]) == 0
    paper = json.loads(capsys.readouterr().out)["paper"]
    (cholec,) = [p for p in paper if p["setting"]["dataset"] == "Cholec80"]
    assert cholec["table"] == "Table 8" and cholec["model"] == "SurgCLIP∗(β)"
    phase = {c["key"]: c for c in cholec["columns"]}["phase_acc"]
    assert (phase["printed"], phase["run"], phase["difference"]) == ("57.8", 100.0, pytest.approx(42.2))
    mipo = [{"dataset": "MIPO", "video": "m1", "frame": f, "phase": "Fixation", "step": "Distal Fixation"}
            for f in range(2)]
    ann = _jsonl(tmp_path / "mipo.jsonl", mipo)
    assert main(["score", "--benchmark", "surghi", "--data", str(ann), "--predictions", str(ann),
                 "--paper-row", "HyperSurg (λ = 0.05)", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    paper = rep["paper"]
    # a run on MIPO alone is set beside Table 10's MIPO row, never its Overall (the mean over four datasets)
    assert [(p["table"], p["setting"]["dataset"]) for p in paper] == [("Table 10", "MIPO")]
    assert [(p["table"], p["setting"]["dataset"]) for p in rep["paper_refused"]] == [("Table 10", "Overall")]
    assert {c["key"]: c["printed"] for c in paper[0]["columns"]} == {"phase_acc": "22.8", "step_acc": "20.0",
                                                                    "multi_level": "21.4"}


def test_diagnose_rows_show_the_figures_values():
    model = "Qwen/Qwen3-VL-8B-Instruct"
    order = {v.group: paper_value("order", v, model) for v in DIAGNOSTICS["order"]}
    assert order == {"original": "Fig. 8 Ov. 26.5", "reverse": "Fig. 8 Ov. 24.2–24.5",
                     "block_shuffle": "Fig. 8 Ov. 24.2–24.5", "local_shuffle": "Fig. 8 Ov. 24.2–24.5"}
    evidence = {v.label: paper_value("evidence", v, "lingshu_7b") for v in DIAGNOSTICS["evidence"]}
    assert evidence == {"Random": "Fig. 7 Ov. 25", "Text": "", "Uniform": "Fig. 7 Semantic 22.9",
                        "GT-images": "Fig. 7 Semantic 38.0"}
    assert all(paper_value("budgets", v, model) == "" for v in DIAGNOSTICS["budgets"])
    assert all(paper_value("order", v, "my-model") == "" for v in DIAGNOSTICS["order"])
    row = {"label": "original", "task": "medhorizon_order_original", "accuracy": 0.25, "ci95_lo": 0.2, "ci95_hi": 0.3,
           "fine_grained": 0.2, "semantic_reasoning": 0.3, "n": 8, "invalid": 0, "paper": order["original"]}
    assert format_rows([row]).splitlines()[2].endswith("  Fig. 8 Ov. 26.5")
