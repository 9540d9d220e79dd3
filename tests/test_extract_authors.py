"""The MedHorizon authors' answer rule as a named extraction, reported beside the package's rule.

Reference cases are the ones where the two rules differ (the reference file
``medhorizon_release.md`` names them); the rest checks that ``score --json`` and
its table, ``--extraction authors`` and ``compare`` carry both accuracies and the
number of items the rules read differently.
"""

import json

import pytest

from medhorizon_tasks.benchmarks.medhorizon import scoring
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.core.extract import BESIDE, EXTRACTIONS, extract_authors, extract_choice

O4 = ["Preparation", "Dissection", "Lymph node dissection", "Closure"]

# (output, options, the authors' letter, the package's letter)
DIFFER = [
    ("a careful look shows D", None, "A", "D"),                                # the article "a"
    ("A careful look at frame 12 shows that the answer is C", None, "A", "C"),
    ("Option (C) is wrong, the answer is B", None, "C", "B"),                 # a rejected option first
    ("Not A. Not B. The answer is D", None, "A", "D"),
    ("<think>Maybe A, since the trocar is visible.</think> The answer is C.", None, "A", "C"),
    ("<think>B or C?</think>\nFinal answer: D", None, "B", "D"),
    ("Lymph node dissection", O4, None, "C"),                                  # option text: first char "L"
    ("Preparation", O4, None, "A"),                                            # first char "P"
    ("Dissection", O4, "D", "B"),                                              # first char "D", by chance
    ("A or B", None, "A", None),                                               # a hedge
    ("I cannot tell; it could be A or B.", None, "A", None),
    ("答案是C", None, None, "C"),                                              # no word boundary before C
    ("The answer is B, but it could also be C", None, "B", None),
]

# (output, the letter both rules read)
AGREE = [("C", "C"), (" c ", "C"), ("(B)", "B"), ("The answer is D.", "D"), ('{"answer": "A"}', "A"),
         ("Answer: B", "B")]


@pytest.mark.parametrize("text,options,authors,ours", DIFFER)
def test_the_rules_differ_where_the_reference_says(text, options, authors, ours):
    assert extract_authors(text, options).letter == authors
    assert extract_choice(text, options).letter == ours


@pytest.mark.parametrize("text,letter", AGREE)
def test_the_rules_agree_on_plain_answers(text, letter):
    assert extract_authors(text).letter == extract_choice(text).letter == letter


@pytest.mark.parametrize("text,status", [(None, "empty"), ("", "empty"), ("   \n", "empty"), ("E", "unparsed"),
                                         ("Everything fits.", "unparsed"), ("7", "unparsed")])
def test_no_answer_under_the_authors_rule(text, status):
    ex = extract_authors(text)
    assert (ex.letter, ex.status, ex.valid) == (None, status, False)


def test_the_authors_rule_knows_only_a_to_d():
    assert extract_authors("E is right, not B") == extract_authors("E is right, not B", n_options=7)
    assert extract_authors("E is right, not B").letter == "B"
    with pytest.raises(TypeError):
        extract_authors(3)


def test_named_extractions():
    assert EXTRACTIONS == {"default": extract_choice, "authors": extract_authors}
    assert BESIDE == {"default": "authors", "authors": "default"}


@pytest.fixture()
def release(tmp_path):
    """13 items, one per task code, answers cycling A..D; options O4."""
    codes = ["PR", "SD", "RL", "BPQ", "LLS", "Site", "Hist", "Size", "IR", "WR", "RSR", "CPR", "LA"]
    qa = [{"uid": i, "question": f"Q{i}?", "options": O4, "answer": "ABCD"[i % 4], "task_id": c}
          for i, c in enumerate(codes)]
    p = tmp_path / "release.jsonl"
    p.write_text(json.dumps({"key": "v", "dataset": "GraSP", "video_path": "v.mp4", "num_frames": 100, "fps": 1.0,
                             "qa": qa}) + "\n")
    return p


# uid -> output; answers: 0 A, 1 B, 2 C, 3 D, 4 A, ...
OUTPUTS = {
    0: "A",                                                     # both right
    1: "a careful look shows B",                                # ours B (right), authors A (wrong)
    2: "Option (A) is wrong, the answer is C",                  # ours C (right), authors A (wrong)
    3: "<think>B?</think> The answer is D",                     # ours D (right), authors B (wrong)
    4: "B",                                                     # both wrong
    5: "Dissection",                                            # ours B (right), authors D (wrong)
    6: "A or C",                                                # ours hedge (wrong), authors A (wrong): differ
    7: "Option D",                                              # both D (right)
}


def _score_json(capsys, release, preds, *extra):
    rc = main(["score", "--benchmark", "medhorizon", "--data", str(release), "--predictions", str(preds),
               "--json", *extra])
    assert rc == 0
    return json.loads(capsys.readouterr().out)


def _preds(tmp_path):
    p = tmp_path / "preds.jsonl"
    p.write_text("".join(json.dumps({"uid": u, "prediction": t}) + "\n" for u, t in OUTPUTS.items()))
    return p


def test_score_json_reports_both_accuracies_and_the_disagreements(release, tmp_path, capsys):
    rep = _score_json(capsys, release, _preds(tmp_path))
    o = rep["overall"]
    assert rep["extraction"] == "default"
    assert (o["correct"], o["correct_authors"], o["rules_disagree"], o["n"]) == (6, 2, 5, 13)
    assert o["accuracy"] == pytest.approx(6 / 13) and o["accuracy_authors"] == pytest.approx(2 / 13)
    assert rep["by_task"]["SD"] == {**rep["by_task"]["SD"], "correct": 1, "correct_authors": 0, "rules_disagree": 1}
    assert rep["by_task"]["LA"]["missing"] == 1 and rep["by_task"]["LA"]["rules_disagree"] == 0


def test_extraction_authors_scores_with_the_authors_rule_and_shows_ours_beside(release, tmp_path, capsys):
    rep = _score_json(capsys, release, _preds(tmp_path), "--extraction", "authors")
    o = rep["overall"]
    assert rep["extraction"] == "authors"
    assert (o["correct"], o["correct_default"], o["rules_disagree"]) == (2, 6, 5)
    assert "accuracy_authors" not in o and o["accuracy_default"] == pytest.approx(6 / 13)
    # the Wilson interval belongs to the rule that scores
    assert o["ci95"][0] < 2 / 13 < o["ci95"][1]


def test_records_carry_both_readings(release, tmp_path, capsys):
    out = tmp_path / "records.jsonl"
    main(["score", "--benchmark", "medhorizon", "--data", str(release), "--predictions", str(_preds(tmp_path)),
          "--out", str(out)])
    capsys.readouterr()
    recs = {r["uid"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert recs["1"]["extraction"] == "default"
    assert (recs["1"]["extracted"], recs["1"]["extracted_authors"], recs["1"]["correct_authors"]) == ("B", "A", False)
    assert "extracted_authors" not in recs["12"], "no model output: no second reading"


def test_score_table_names_both_rules(release, tmp_path, capsys):
    assert main(["score", "--benchmark", "medhorizon", "--data", str(release), "--predictions",
                 str(_preds(tmp_path)), "--label", "run"]) == 0
    out = capsys.readouterr().out
    assert "Ov. under the default rule 46.2%, under the authors' rule 15.4%; the rules disagree on 5 of 13 items" in out
    assert main(["score", "--benchmark", "medhorizon", "--data", str(release), "--predictions",
                 str(_preds(tmp_path)), "--label", "run", "--extraction", "authors"]) == 0
    out = capsys.readouterr().out
    assert "Ov. under the authors' rule 15.4%, under the default rule 46.2%" in out
    row = next(line for line in out.splitlines() if line.startswith("run"))
    assert row.split("|")[2].strip() == "15.4"


def test_compare_with_the_authors_rule(release, tmp_path, capsys):
    a = _preds(tmp_path)
    b = tmp_path / "b.jsonl"
    b.write_text("".join(json.dumps({"uid": u, "prediction": "ABCD"[u % 4]}) + "\n" for u in range(13)))
    assert main(["compare", str(a), str(b), "--data", str(release), "--labels", "a,b", "--json"]) == 0
    ours = json.loads(capsys.readouterr().out)
    assert main(["compare", str(a), str(b), "--data", str(release), "--labels", "a,b", "--json",
                 "--extraction", "authors"]) == 0
    theirs = json.loads(capsys.readouterr().out)
    assert ours["extraction"] == "default" and theirs["extraction"] == "authors"
    assert ours["accuracy"]["a"] == pytest.approx(6 / 13) and theirs["accuracy"]["a"] == pytest.approx(2 / 13)
    assert ours["accuracy"]["b"] == theirs["accuracy"]["b"] == 1.0


def test_the_authors_rule_is_refused_for_other_benchmarks(tmp_path, capsys):
    p = tmp_path / "x.jsonl"
    p.write_text('{"uid": 0, "prediction": "A"}\n')
    assert main(["score", "--benchmark", "sureon", "--data", str(p), "--predictions", str(p),
                 "--extraction", "authors"]) == 2
    assert "MedHorizon authors' rule" in capsys.readouterr().err


def test_reports_of_mixed_extractions_are_refused(release):
    items = load_release(release)
    recs = [scoring.score_item(items[0], "A", "visual"), scoring.score_item(items[1], "B", "visual", "authors")]
    with pytest.raises(ValueError, match="different extractions"):
        scoring.report(recs)
