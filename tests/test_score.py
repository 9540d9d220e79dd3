"""Scoring, reports and the `score` command contract."""

import json
import re
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from medhorizon_tasks.benchmarks.medhorizon import scoring
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.core.errors import DataError

TASKS = ["PR", "SD", "RL", "BPQ", "LLS", "Site", "Hist", "Size", "IR", "WR", "RSR", "CPR", "LA"]


@pytest.fixture()
def release(tmp_path):
    """26 items: two per task, answers cycling A..D, over two sources."""
    recs = []
    uid = 0
    for v, source in enumerate(["GraSP", "REAL-Colon"]):
        qa = []
        for t in TASKS:
            qa.append({"uid": uid, "question": f"Question {uid}?", "options": [f"opt{uid}-{k}" for k in range(4)],
                       "answer": "ABCD"[uid % 4], "task_id": t})
            uid += 1
        recs.append({"key": f"v{v}", "dataset": source, "video_path": f"v{v}.mp4", "num_frames": 1000,
                     "fps": 25.0, "duration_seconds": 40.0, "qa": qa})
    p = tmp_path / "release.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in recs))
    return p


def write_preds(tmp_path, rows, name="preds.jsonl"):
    p = tmp_path / name
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return p


def run_cli(*args, capsys):
    rc = main(list(args))
    out = capsys.readouterr()
    return rc, out.out, out.err


def authors_scorer(release_path, preds_path):
    """The authors' ~150-line scorer's rule, for agreement checks: upper-case, FIRST standalone A-D, else first char."""
    answers = {}
    for line in open(release_path):
        for qa in json.loads(line)["qa"]:
            answers[qa["uid"]] = qa["answer"]
    correct = 0
    for line in open(preds_path):
        rec = json.loads(line)
        pred = next(rec[k] for k in ("prediction", "pred", "answer") if k in rec)
        text = str(pred).upper()
        m = re.search(r"\b([A-D])\b", text)
        letter = m.group(1) if m else text[:1]
        correct += letter == answers[rec["uid"]]
    return correct / len(answers)


def test_json_contract(release, tmp_path, capsys):
    items = load_release(release)
    # Right on every PR and SD item, wrong elsewhere, one invalid and one missing.
    rows = []
    for it in items:
        if it.uid == "25":
            continue  # missing
        pred = it.answer if it.task in ("PR", "SD") else ("I cannot tell." if it.uid == "24" else
                                                           "ABCD"[("ABCD".index(it.answer) + 1) % 4])
        rows.append({"uid": int(it.uid), "prediction": pred})
    rc, out, _ = run_cli("score", "--benchmark", "medhorizon", "--data", str(release), "--predictions",
                         str(write_preds(tmp_path, rows)), "--json", capsys=capsys)
    assert rc == 0
    rep = json.loads(out)
    assert rep["benchmark"] == "medhorizon"
    o = rep["overall"]
    assert (o["correct"], o["n"], o["invalid"], o["missing"]) == (4, 26, 1, 1)
    assert o["accuracy"] == pytest.approx(4 / 26)
    lo, hi = o["ci95"]
    assert lo < 4 / 26 < hi and 0 <= lo and hi <= 1
    from statsmodels.stats.proportion import proportion_confint
    assert (lo, hi) == pytest.approx(proportion_confint(4, 26, method="wilson"))
    assert list(rep["by_task"]) == TASKS
    assert rep["by_task"]["PR"] == {"accuracy": 1.0, "correct": 2, "n": 2, "invalid": 0, "missing": 0, "errors": 0,
                                    "request_errors": 0, "refused": 0, "truncated": 0, "oom": 0,
                                    "accuracy_authors": 1.0, "correct_authors": 2, "rules_disagree": 0,
                                    "ci95": pytest.approx(list(proportion_confint(2, 2, method="wilson"))),
                                    "ci_method": "wilson"}
    assert rep["by_family"]["fine_grained"]["ci95"] == pytest.approx(list(proportion_confint(
        rep["by_family"]["fine_grained"]["correct"], rep["by_family"]["fine_grained"]["n"], method="wilson")))
    assert rep["extraction"] == "default"
    assert (o["accuracy_authors"], o["correct_authors"], o["rules_disagree"]) == (pytest.approx(4 / 26), 4, 0)
    assert rep["by_task"]["LA"]["missing"] == 1 and rep["by_task"]["CPR"]["invalid"] == 1
    assert rep["by_family"]["fine_grained"]["n"] == 16 and rep["by_family"]["semantic_reasoning"]["n"] == 10
    assert rep["by_family"]["fine_grained"]["correct"] == 4
    assert {k: v["n"] for k, v in rep["by_hop"].items()} == {"1": 2, "2": 4, "3": 4}
    assert {k: v["n"] for k, v in rep["by_source"].items()} == {"GraSP": 13, "REAL-Colon": 13}


def test_table_layout(release, tmp_path, capsys):
    items = load_release(release)
    rows = [{"uid": it.uid, "pred": it.answer} for it in items]
    rc, out, _ = run_cli("score", "--benchmark", "medhorizon", "--data", str(release), "--predictions",
                         str(write_preds(tmp_path, rows)), "--label", "Oracle-ish", "--input", "64", capsys=capsys)
    assert rc == 0
    header = next(line for line in out.splitlines() if line.startswith("Model"))
    assert [c.strip() for c in header.split("|")] == ["Model", "Input", "Ov.", *TASKS]
    row = next(line for line in out.splitlines() if line.startswith("Oracle-ish"))
    assert [c.strip() for c in row.split("|")][2:] == ["100.0"] * 14
    assert "Fine-grained Understanding" in out and "Semantic Reasoning" in out


@pytest.mark.parametrize("key", ["prediction", "pred", "answer"])
def test_authors_format_accepted_and_agrees_on_bare_letters(release, tmp_path, capsys, key):
    items = load_release(release)
    rows = [{"uid": int(it.uid), key: "ABCD"[(int(it.uid) * 7) % 4]} for it in items]
    preds = write_preds(tmp_path, rows)
    rc, out, _ = run_cli("score", "--benchmark", "medhorizon", "--data", str(release), "--predictions", str(preds),
                         "--json", capsys=capsys)
    assert rc == 0
    assert json.loads(out)["overall"]["accuracy"] == pytest.approx(authors_scorer(release, preds))


def test_where_the_authors_scorer_goes_wrong(release, tmp_path, capsys):
    items = {it.uid: it for it in load_release(release)}
    a0 = items["0"].answer  # "A"
    rows = [{"uid": 1, "prediction": "a careful look at the frames shows the answer is B"},  # answer of uid 1 is B
            {"uid": 2, "prediction": "Option (A) is wrong, the answer is C"}]               # answer of uid 2 is C
    preds = write_preds(tmp_path, rows)
    assert a0 == "A"
    rc, out, _ = run_cli("score", "--benchmark", "medhorizon", "--data", str(release), "--predictions", str(preds),
                         "--json", capsys=capsys)
    assert json.loads(out)["overall"]["correct"] == 2
    assert authors_scorer_subset(release, preds) == 0


def authors_scorer_subset(release_path, preds_path):
    answers = {}
    for line in open(release_path):
        for qa in json.loads(line)["qa"]:
            answers[qa["uid"]] = qa["answer"]
    n = 0
    for line in open(preds_path):
        rec = json.loads(line)
        m = re.search(r"\b([A-D])\b", rec["prediction"].upper())
        n += (m.group(1) if m else "") == answers[rec["uid"]]
    return n


@pytest.mark.parametrize("rows,expected", [
    ([{"uid": 0, "prediction": "A"}, {"uid": 0, "prediction": "B"}], "line 2: field 'uid': '0' is predicted more than once"),
    ([{"uid": 999, "prediction": "A"}], "line 1: field 'uid': '999' is not an item of this benchmark"),
    ([{"prediction": "A"}], "line 1: field 'uid'"),
    ([{"uid": 0, "guess": "A"}], "line 1 (uid 0): no prediction field"),
    ([{"uid": 0, "prediction": 3}], "line 1 (uid 0): field 'prediction': expected text"),
])
def test_bad_prediction_files(release, tmp_path, capsys, rows, expected):
    rc, _, err = run_cli("score", "--benchmark", "medhorizon", "--data", str(release), "--predictions",
                         str(write_preds(tmp_path, rows)), capsys=capsys)
    assert rc == 2
    assert expected in err
    assert "Traceback" not in err


def test_malformed_json_line_in_predictions(release, tmp_path, capsys):
    p = tmp_path / "p.jsonl"
    p.write_text('{"uid": 0, "prediction": "A"}\n{"uid": 1, "prediction": \n')
    rc, _, err = run_cli("score", "--benchmark", "medhorizon", "--data", str(release), "--predictions", str(p),
                         capsys=capsys)
    assert rc == 2 and "line 2: not valid JSON" in err


def test_records_file_has_one_record_per_item(release, tmp_path, capsys):
    rows = [{"uid": 0, "prediction": "<think>maybe B</think> The answer is A"}]
    recs = tmp_path / "records.jsonl"
    run_cli("score", "--benchmark", "medhorizon", "--data", str(release), "--predictions",
            str(write_preds(tmp_path, rows)), "--out", str(recs), "--mode", "visual", capsys=capsys)
    lines = [json.loads(x) for x in recs.read_text().splitlines()]
    assert len(lines) == 26
    first = lines[0]
    assert {"uid", "task", "source", "mode", "raw_output", "extracted", "correct", "valid"} <= set(first)
    assert (first["uid"], first["extracted"], first["correct"], first["valid"], first["mode"]) == ("0", "A", True, True, "visual")
    assert lines[1]["status"] == "missing" and lines[1]["correct"] is False


def test_lmms_eval_samples_lines_are_read(release, tmp_path):
    items = load_release(release)
    rows = [{"doc_id": 0, "target": "A", "filtered_resps": "The answer is A", "accuracy": {"uid": "0", "mode": "visual"}},
            {"doc_id": 1, "target": "B", "resps": [["(c)"]], "accuracy": {"uid": "1", "mode": "visual",
                                                                           "error": "item 1: video file not found"}}]
    preds = scoring.read_predictions(write_preds(tmp_path, rows), [it.uid for it in items])
    recs = scoring.score_predictions(items, preds)
    assert recs[0]["correct"] and recs[0]["mode"] == "visual"
    assert recs[1]["status"] == "error" and "not found" in recs[1]["error"] and not recs[1]["correct"]
    rep = scoring.report(recs)
    assert rep["overall"]["errors"] == 1 and rep["video_errors"][0]["uid"] == "1"


def test_missing_data_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MEDHORIZON_DATA", raising=False)
    rc, _, err = run_cli("score", "--benchmark", "medhorizon", "--predictions", str(tmp_path / "x.jsonl"),
                         capsys=capsys)
    assert rc == 2 and "MEDHORIZON_DATA" in err


prediction_values = st.one_of(st.none(), st.text(max_size=30), st.integers(), st.booleans(),
                              st.lists(st.text(max_size=3), max_size=2), st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.dictionaries(st.sampled_from(["uid", "prediction", "pred", "answer", "doc_id", "resps",
                                                 "filtered_resps", "accuracy", "doc"]),
                                st.one_of(st.integers(-2, 30), prediction_values), max_size=5), max_size=6))
def test_predictions_reader_fuzz(release, tmp_path, rows):
    items = load_release(release)
    p = write_preds(tmp_path, rows, name="fuzz.jsonl")
    try:
        preds = scoring.read_predictions(p, [it.uid for it in items])
    except DataError as e:
        assert str(e)
    else:
        rep = scoring.report(scoring.score_predictions(items, preds))
        assert rep["overall"]["n"] == 26


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=200))
def test_predictions_reader_fuzz_bytes(release, tmp_path, blob):
    p = tmp_path / "fuzz.bin"
    p.write_bytes(blob)
    try:
        scoring.read_predictions(p, ["0"])
    except DataError:
        pass


def test_console_script_reports_errors_without_traceback(tmp_path):
    exe = [sys.executable, "-m", "medhorizon_tasks.commands.main"]
    r = subprocess.run([*exe, "score", "--benchmark", "medhorizon", "--data", str(tmp_path / "none.jsonl"),
                        "--predictions", "x"], capture_output=True, text=True)
    assert r.returncode == 2 and "file not found" in r.stderr and "Traceback" not in r.stderr


def test_compare_two_runs(release, tmp_path, capsys):
    items = load_release(release)
    good = write_preds(tmp_path, [{"uid": it.uid, "prediction": it.answer} for it in items], name="good.jsonl")
    bad = write_preds(tmp_path, [{"uid": it.uid, "prediction": "A"} for it in items], name="bad.jsonl")
    rc, out, _ = run_cli("compare", str(good), str(bad), "--data", str(release), "--json", capsys=capsys)
    assert rc == 0
    res = json.loads(out)
    (pair,) = res["pairs"]
    # good is right on all 26, "A" is right on the 7 items whose answer is A: 19 discordant, exact test
    assert (pair["only_a"], pair["only_b"], pair["exact"]) == (19, 0, True)
    assert pair["pvalue"] == pytest.approx(2 * 0.5 ** 19) and pair["significant"]
    rc, out, _ = run_cli("compare", str(good), str(bad), "--data", str(release), "--labels", "good,bad", capsys=capsys)
    assert "good" in out and "100.0%" in out and "*" in out
