"""Sureon core: item loader, temporal-order extraction, per-item scoring, the report."""

import json
from fractions import Fraction

import pytest

from medhorizon_tasks.benchmarks.sureon import items as I
from medhorizon_tasks.benchmarks.sureon import scoring as S
from medhorizon_tasks.core.errors import DataError
from medhorizon_tasks.core.extract import extract_order
from medhorizon_tasks.core.judge import Verdict
from medhorizon_tasks.core.stats import accuracy_summary, wilson_ci

NR = 2000  # bootstrap resamples in tests


def opts(tag):
    return [f"{tag} option {k}" for k in range(7)]


def mcq(uid, cat, answer="A", **kw):
    rec = {"uid": uid, "category": cat, "question": f"What happens in {uid}?", "video_path": f"clips/{uid}.mp4",
           "start_s": 10.0, "end_s": 18.5, "options": opts(uid), "answer": answer}
    rec.update(kw)
    return rec


EVENTS = ["Dissection", "Lymph node dissection", "Clipping"]


def to_item(uid, answer=("Clipping", "Dissection", "Lymph node dissection"), **kw):
    rec = {"uid": uid, "category": "TO", "question": "Order these events.", "video_path": f"clips/{uid}.mp4",
           "start_s": 0, "end_s": 120, "events": list(EVENTS),
           "answer": answer if isinstance(answer, str) else list(answer)}
    rec.update(kw)
    return rec


def sm_item(uid, **kw):
    rec = {"uid": uid, "category": "SM", "question": "Summarise the steps.", "video_path": f"clips/{uid}.mp4",
           "start_s": 5, "end_s": 90, "reference": "Expose, clip, then divide the cystic duct."}
    rec.update(kw)
    return rec


def fixture_records():
    """Every category: 6 perception, 5 accuracy-scored reasoning (3 MCQ + 2 TO), 3 SM."""
    return [
        mcq("a1", "AD", "A"), mcq("a2", "Action Description", "B"),
        mcq("e1", "EE", "C"), mcq("ea1", "Entity Attribute", "D"),
        mcq("p1", "pad", "E"), mcq("i1", "Instrument–Action Interaction", "G"),
        mcq("l1", "LAR", "F"), mcq("s1", "Safety Practice Identification", "A"), mcq("f1", "F", "B"),
        to_item("t1"), to_item("t2", answer=("Dissection", "Clipping", "Lymph node dissection")),
        sm_item("m1"), sm_item("m2"), sm_item("m3", category="Sequence Summarization"),
    ]


def write_jsonl(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


@pytest.fixture()
def items(tmp_path):
    return I.load_items(write_jsonl(tmp_path / "items.jsonl", fixture_records()))


# ------------------------------------------------------------------ items

def test_categories_table():
    assert [c.code for c in I.CATEGORIES] == ["AD", "EE", "EA", "PAD", "IAI", "LAR", "SPI", "F", "TO", "SM"]
    assert [c.code for c in I.CATEGORIES if c.group == "perception"] == ["AD", "EE", "EA", "PAD", "IAI"]
    assert [c.code for c in I.CATEGORIES if c.kind == "mcq"] == ["AD", "EE", "EA", "PAD", "IAI", "LAR", "SPI", "F"]
    assert I.resolve_category("Temporal Ordering").code == "TO"
    assert I.resolve_category("entity (object) existence").code == "EE"
    assert I.resolve_category("Procedure-agnostic Action Description").code == "PAD"
    assert I.resolve_category("f").code == "F"
    assert I.resolve_category("Next step") is None and I.resolve_category(None) is None


def test_load_items_every_category(items):
    by = {it.uid: it for it in items}
    assert len(items) == 14
    assert {it.category for it in items} == set(I.CATEGORY_CODES)
    a2 = by["a2"]
    assert (a2.category, a2.group, a2.kind, a2.answer, len(a2.options)) == ("AD", "perception", "mcq", "B", 7)
    assert by["i1"].category == "IAI" and by["i1"].answer == "G"
    t1 = by["t1"]
    assert (t1.kind, t1.group, t1.options, t1.events) == ("to", "reasoning", (), tuple(EVENTS))
    assert t1.answer == ("Clipping", "Dissection", "Lymph node dissection")
    m3 = by["m3"]
    assert (m3.category, m3.kind, m3.answer, m3.reference) == ("SM", "sm", None,
                                                                "Expose, clip, then divide the cystic duct.")
    assert not m3.accuracy_scored and t1.accuracy_scored and a2.accuracy_scored
    assert (t1.start_s, t1.end_s) == (0.0, 120.0) and isinstance(t1.start_s, float)
    with pytest.raises(Exception):
        a2.uid = "x"  # frozen


def test_load_items_accepted_forms(tmp_path):
    rows = [
        mcq(7, "EE", "(c)", options=[f"{L}. opt {L}" for L in "ABCDEFG"]),
        mcq("x2", "EA", "opt  D", options={L: f"opt {L}" for L in "GFEDCBA"}),
        mcq("x3", "AD", "E. x3 option 4"),
        to_item("x4", answer="Answer: clipping -> dissection -> lymph node dissection"),
        to_item("x5", answer=["clipping", "lymph node DISSECTION", "dissection"]),
    ]
    got = {it.uid: it for it in I.load_items(write_jsonl(tmp_path / "i.jsonl", rows))}
    assert got["7"].answer == "C" and got["7"].options[0] == "opt A"
    assert got["x2"].answer == "D" and got["x2"].options[3] == "opt D"
    assert got["x3"].answer == "E"
    assert got["x4"].answer == ("Clipping", "Dissection", "Lymph node dissection")
    assert got["x5"].answer == ("Clipping", "Lymph node dissection", "Dissection")


BAD = [
    ("six options", mcq("b1", "AD", options=opts("b1")[:6]), "b1", "options"),
    ("duplicate option", mcq("b2", "EE", options=["same"] + opts("b2")[1:6] + ["Same "]), "b2", "options"),
    ("answer H", mcq("b3", "LAR", "H"), "b3", "answer"),
    ("answer not an option", mcq("b3b", "LAR", "something else"), "b3b", "answer"),
    ("TO not a permutation", to_item("b4", answer=["Clipping", "Clipping", "Dissection"]), "b4", "answer"),
    ("TO unknown label", to_item("b4b", answer=["Clipping", "Stapling", "Dissection"]), "b4b", "answer"),
    ("TO two events", to_item("b4c", events=["Clipping", "Dissection"]), "b4c", "events"),
    ("missing reference", {k: v for k, v in sm_item("b5").items() if k != "reference"}, "b5", "reference"),
    ("blank reference", sm_item("b5b", reference="  "), "b5b", "reference"),
    ("start >= end", mcq("b6", "F", start_s=30, end_s=30), "b6", "end_s"),
    ("negative start", mcq("b6b", "F", start_s=-1), "b6b", "start_s"),
    ("start not a number", mcq("b6c", "F", start_s="10"), "b6c", "start_s"),
    ("unknown category", mcq("b7", "XYZ"), "b7", "category"),
    ("absolute video path", mcq("b8", "SPI", video_path="/data/v.mp4"), "b8", "video_path"),
    ("missing video path", mcq("b8b", "SPI", video_path=""), "b8b", "video_path"),
    ("missing question", mcq("b9", "SPI", question=" "), "b9", "question"),
    ("missing options", {k: v for k, v in mcq("b10", "PAD").items() if k != "options"}, "b10", "options"),
]


@pytest.mark.parametrize("case,record,uid,field", BAD, ids=[b[0] for b in BAD])
def test_bad_item_names_uid_and_field(tmp_path, case, record, uid, field):
    path = write_jsonl(tmp_path / "i.jsonl", [mcq("good", "AD"), record])
    with pytest.raises(DataError) as ei:
        I.load_items(path)
    assert len(ei.value.problems) == 1, ei.value.problems
    msg = ei.value.problems[0]
    assert f"item {uid} (line 2)" in msg and f"field '{field}'" in msg, msg


def test_duplicate_uid(tmp_path):
    path = write_jsonl(tmp_path / "i.jsonl", [mcq("d1", "AD"), mcq("ok", "EE"), mcq("d1", "EA")])
    with pytest.raises(DataError) as ei:
        I.load_items(path)
    assert ei.value.problems == ["item d1: field 'uid' is duplicated (lines 1, 3)"]


def test_malformed_json_line_names_line(tmp_path):
    path = write_jsonl(tmp_path / "i.jsonl", [mcq("g1", "AD"), '{"uid": "g2", "category": ', mcq("g3", "AD")])
    with pytest.raises(DataError, match=r"line 2: not valid JSON"):
        I.load_items(path)


def test_missing_uid_and_non_object_name_the_line(tmp_path):
    path = write_jsonl(tmp_path / "i.jsonl", [mcq("g1", "AD"), [1, 2], {"category": "AD"}])
    with pytest.raises(DataError) as ei:
        I.load_items(path)
    assert ei.value.problems[0].startswith("line 2: expected a JSON object")
    assert ei.value.problems[1].startswith("line 3: field 'uid'")


def test_all_problems_collected(tmp_path):
    rows = [mcq("c1", "AD", "H"), mcq("c2", "EE", start_s=9, end_s=3), sm_item("c3", reference=None)]
    with pytest.raises(DataError) as ei:
        I.load_items(write_jsonl(tmp_path / "i.jsonl", rows))
    assert len(ei.value.problems) == 3
    assert "c1" in str(ei.value) and "c2" in str(ei.value) and "c3" in str(ei.value)


def test_empty_and_missing_file(tmp_path):
    with pytest.raises(DataError, match="no items"):
        I.load_items(write_jsonl(tmp_path / "e.jsonl", []))
    with pytest.raises(DataError, match="file not found"):
        I.load_items(tmp_path / "nope.jsonl")


# ------------------------------------------------------------------ temporal ordering extraction

C, D, L = "Clipping", "Dissection", "Lymph node dissection"
TO_CASES = [
    ("json list", '["Clipping", "Dissection", "Lymph node dissection"]', (C, D, L)),
    ("json object", '{"order": ["lymph node dissection", "clipping", "dissection"]}', (L, C, D)),
    ("json fenced", '```json\n["Dissection","Clipping","Lymph node dissection"]\n```', (D, C, L)),
    ("greater-than", "Dissection > Clipping > Lymph node dissection", (D, C, L)),
    ("unicode arrows", "Clipping → Lymph node dissection → Dissection", (C, L, D)),
    ("ascii arrows", "clipping -> dissection -> lymph node dissection", (C, D, L)),
    ("numbered inline", "1. Dissection 2. Lymph node dissection 3. Clipping", (D, L, C)),
    ("numbered lines", "1) Clipping\n2) Dissection\n3) Lymph node dissection", (C, D, L)),
    ("first then finally", "First dissection, then clipping, finally lymph node dissection.", (D, C, L)),
    ("comma separated", "Lymph node dissection, Dissection, Clipping", (L, D, C)),
    ("newline separated", "Clipping\nLymph node dissection\nDissection", (C, L, D)),
    ("upper case", "CLIPPING > DISSECTION > LYMPH NODE DISSECTION", (C, D, L)),
    ("whitespace inside label", "Clipping, Lymph   node\n dissection, Dissection", (C, L, D)),
    ("markdown bold", "**Dissection**, **Clipping**, **Lymph node dissection**", (D, C, L)),
    ("think block ignored", "<think>Maybe Dissection > Clipping > Lymph node dissection?</think>"
                            "Clipping > Dissection > Lymph node dissection", (C, D, L)),
    ("orphan closing think tag", "dissection then clipping ... </think> Lymph node dissection, clipping, dissection",
     (L, C, D)),
    ("answer cue", "Dissection comes early, then clipping, and lymph node dissection. "
                   "Answer: Clipping, Dissection, Lymph node dissection", (C, D, L)),
    ("last of several cues", "Answer: Dissection, Clipping, Lymph node dissection. Wait. "
                             "Final answer: Lymph node dissection, Clipping, Dissection", (L, C, D)),
    ("order cue", "Looking at clipping and dissection carefully. The correct order: "
                  "dissection, lymph node dissection, clipping", (D, L, C)),
    ("answer is", "The answer is dissection > clipping > lymph node dissection", (D, C, L)),
    ("substring label, long first", "Lymph node dissection > Dissection > Clipping", (L, D, C)),
    ("substring label, short first", "Dissection > Lymph node dissection > Clipping", (D, L, C)),
    ("missing label", "Clipping > Lymph node dissection", None),
    ("short label only inside long one", "Clipping, then lymph node dissection", None),
    ("repeated label", "Clipping > Dissection > Clipping > Lymph node dissection", None),
    ("repeated without cue", "First clipping, then dissection, then lymph node dissection. "
                             "So: clipping, dissection, lymph node dissection", None),
    ("empty", "", None),
    ("none", None, None),
    ("only reasoning", "<think>Clipping > Dissection > Lymph node dissection</think>", None),
    ("cue without labels after it", "Clipping > Dissection > Lymph node dissection. Answer: not sure", None),
    ("word-glued label", "Clippings > Dissection > Lymph node dissection", None),
]


@pytest.mark.parametrize("case,text,expected", TO_CASES, ids=[c[0] for c in TO_CASES])
def test_extract_order(case, text, expected):
    assert extract_order(text, EVENTS) == expected


def test_extract_order_returns_given_labels_and_rejects_str_events():
    assert extract_order("b, c, a", ["A", "B", "C"]) == ("B", "C", "A")
    with pytest.raises(TypeError):
        extract_order("x", "abc")


# ------------------------------------------------------------------ per-item scoring

def test_score_item_mcq_and_to(items):
    by = {it.uid: it for it in items}
    r = S.score_item(by["i1"], "The answer is G.", "visual")
    assert (r["extracted"], r["status"], r["valid"], r["correct"]) == ("G", "ok", True, True)
    assert set(r) == set(S.RECORD_KEYS) and r["benchmark"] == "sureon" and r["group"] == "perception"
    r = S.score_item(by["i1"], "Answer: H", "visual")
    assert (r["extracted"], r["status"], r["correct"]) == (None, "unparsed", False)
    r = S.score_item(by["a2"], "a2 option 1", "visual")  # option text -> B
    assert r["correct"] is True
    r = S.score_item(by["t1"], "Clipping > Dissection > Lymph node dissection", "visual")
    assert (r["kind"], r["extracted"], r["status"], r["correct"]) == (
        "to", ["Clipping", "Dissection", "Lymph node dissection"], "ok", True)
    assert r["answer"] == ["Clipping", "Dissection", "Lymph node dissection"]
    r = S.score_item(by["t1"], "Dissection > Clipping > Lymph node dissection", "visual")
    assert (r["status"], r["correct"]) == ("ok", False)
    assert S.score_item(by["t1"], "  ", "visual")["status"] == "truncated"  # an empty reply is no answer
    assert S.score_item(by["t1"], "no idea", "visual")["status"] == "unparsed"
    json.dumps(r)


def test_score_item_sm_with_and_without_judge(items):
    m1 = {it.uid: it for it in items}["m1"]
    r = S.score_item(m1, "<think>hmm</think> Expose, clip, divide.", "visual")
    assert (r["status"], r["valid"], r["correct"]) == ("not_judged", False, None)
    calls = []

    def judge(*, uid, reference, answer):  # the two texts only (appendix D.1): never the question
        calls.append((uid, reference, answer))
        return Verdict(correct=True, reason="all steps present", raw="{}")

    r = S.score_item(m1, "<think>hmm</think> Expose, clip, divide.", "visual", judge=judge)
    assert calls == [("m1", m1.reference, "Expose, clip, divide.")]
    assert (r["status"], r["valid"], r["correct"], r["judge_reason"]) == ("ok", True, True, "all steps present")
    r = S.score_item(m1, "x", "visual", judge=lambda **kw: Verdict(correct=None, reason="malformed", raw=""))
    assert (r["status"], r["valid"], r["correct"]) == ("invalid", False, False)

    class FakeJudge:  # a Judge-like object with a .judge method is accepted too
        def judge(self, **kw):
            return Verdict(correct=False, reason="missing step", raw="")

    assert S.score_item(m1, "x", "visual", judge=FakeJudge())["correct"] is False
    with pytest.raises(TypeError):
        S.score_item(m1, "x", "visual", judge=lambda **kw: "yes")


# ------------------------------------------------------------------ report

VISUAL = {
    "a1": "A", "a2": "C", "e1": "Answer: C",  # ea1 missing
    "p1": "A or B", "i1": "(G)", "l1": "F", "s1": "B", "f1": "I cannot determine the answer.",
    "t1": "Clipping > Dissection > Lymph node dissection",
    "t2": "Clipping > Dissection > Lymph node dissection",
    "m1": "Expose, clip, divide.", "m2": "Divide then clip.", "m3": "???",
}
BLIND = {
    "a1": "B", "a2": "B", "e1": "A", "ea1": "A", "p1": "A", "i1": "A", "l1": "A", "s1": "B", "f1": "A",
    "t1": "Clipping > Dissection > Lymph node dissection", "t2": "Clipping, Lymph node dissection, Dissection",
    "m1": "x", "m2": "x", "m3": "x",
}
VERDICTS = {"m1": True, "m2": False, "m3": None}


def fake_judge(*, uid, reference, answer):
    return Verdict(correct=VERDICTS[uid], reason=f"verdict for {uid}", raw="")


def run(items, outputs, judge=fake_judge, mode="visual"):
    preds = {u: {"raw": t, "mode": None, "error": None} for u, t in outputs.items()}
    return S.score_predictions(items, preds, mode, judge=judge)


def test_report_hand_computed(items):
    recs = run(items, VISUAL)
    by = {r["uid"]: r for r in recs}
    assert by["ea1"]["status"] == "missing" and by["p1"]["status"] == "hedge" and by["f1"]["status"] == "refusal"
    rep = S.report(recs, blind_records=run(items, BLIND), n_resamples=NR)

    # mu: 11 accuracy-scored items (SM excluded): a1 e1 i1 l1 t1 correct = 5/11
    assert (rep["mu"]["correct"], rep["mu"]["n"]) == (5, 11)
    assert rep["mu"]["accuracy"] == pytest.approx(5 / 11)
    assert rep["perception"]["correct"] == 3 and rep["perception"]["n"] == 6  # a1 e1 i1
    assert rep["reasoning"]["correct"] == 2 and rep["reasoning"]["n"] == 5   # l1 t1 (no SM)
    expected = {"AD": (1, 2), "EE": (1, 1), "EA": (0, 1), "PAD": (0, 1), "IAI": (1, 1), "LAR": (1, 1),
                "SPI": (0, 1), "F": (0, 1), "TO": (1, 2)}
    assert list(rep["by_category"]) == list(expected)  # Table 3 order, no SM
    for code, (k, n) in expected.items():
        s = rep["by_category"][code]
        assert (s["correct"], s["n"], s["accuracy"]) == (k, n, k / n)
    # the intervals are stats.accuracy_summary's
    lo, hi = wilson_ci(5, 11)
    assert rep["mu"]["ci95_wilson"] == pytest.approx([lo, hi])
    ref = accuracy_summary([True] * 5 + [False] * 6, n_resamples=NR, seed=0)
    assert rep["mu"]["ci95_bootstrap"] == pytest.approx(ref["ci95_bootstrap"])
    assert rep["mu"]["ci95_bootstrap"][0] < 5 / 11 < rep["mu"]["ci95_bootstrap"][1]
    assert rep["by_category"]["EE"]["ci95_bootstrap"] == [1.0, 1.0]

    # SM: m1 correct, m2 incorrect, m3 no usable verdict
    assert rep["sm"] == {"accuracy": pytest.approx(1 / 3), "correct": 1, "n": 3, "judged": 2, "not_judged": 0,
                         "invalid": 1, "request_errors": 0, "refused": 0, "truncated": 0, "oom": 0, "judge": [{"model": "fake_judge"}]}

    # MG: blind gets a2 and t1 right -> 2/11; MG = 5/11 - 2/11. SM: both runs judged alike (1/3 each) -> 0
    assert rep["mg"]["overall"] == pytest.approx(float(Fraction(3, 11)))
    mg = {"AD": 0.0, "EE": 1.0, "EA": 0.0, "PAD": 0.0, "IAI": 1.0, "LAR": 1.0, "SPI": 0.0, "F": 0.0, "TO": 0.0,
          "SM": 0.0}
    assert rep["mg"]["by_category"] == pytest.approx(mg)
    assert list(rep["mg"]["by_category"]) == list(mg)


def test_report_exact_json_keys(items):
    rep = S.report(run(items, VISUAL), blind_records=run(items, BLIND), n_resamples=NR)
    summary_keys = {"accuracy", "correct", "n", "ci95_bootstrap", "ci95_wilson", "invalid", "missing", "errors",
                    "request_errors", "refused", "truncated", "oom"}
    assert list(rep) == ["benchmark", "mu", "perception", "reasoning", "by_category", "sm", "video_errors",
                         "failed_responses", "missing", "blind_missing", "blind_failed_responses", "mg"]
    assert rep["benchmark"] == "sureon"
    for key in ("mu", "perception", "reasoning"):
        assert set(rep[key]) == summary_keys
    assert all(set(v) == summary_keys for v in rep["by_category"].values())
    assert set(rep["sm"]) == {"accuracy", "correct", "n", "judged", "not_judged", "invalid", "request_errors",
                              "refused", "truncated", "oom", "judge"}
    assert set(rep["mg"]) == {"overall", "by_category", "ci95_bootstrap", "pvalue", "n", "ci_method",
                              "by_category_ci95", "by_category_pvalue"}
    assert all(isinstance(v, float) for v in rep["mg"]["by_category"].values())
    assert json.loads(json.dumps(rep)) == rep
    assert "mg" not in S.report(run(items, VISUAL), n_resamples=NR)


def test_mg_of_the_judged_sm_category(items):
    """Table 3 reports MG for SM too: S_v - S_wv of the judge's accuracy, when both runs were judged."""
    blind_verdicts = {"m1": False, "m2": False, "m3": False}
    blind_judge = lambda *, uid, **kw: Verdict(correct=blind_verdicts[uid], reason="", raw="")  # noqa: E731
    visual, blind = run(items, VISUAL), run(items, BLIND, judge=blind_judge, mode="blind")
    rep = S.report(visual, blind_records=blind, n_resamples=NR)
    assert rep["sm"]["accuracy"] == pytest.approx(1 / 3)
    assert rep["mg"]["by_category"]["SM"] == pytest.approx(1 / 3 - 0.0)
    assert list(rep["mg"]["by_category"])[-1] == "SM", "Table 3 order: SM last"
    assert rep["mg"]["overall"] == pytest.approx(float(Fraction(3, 11))), "SM never enters the pooled MG"
    assert "MG +33.3" in S.format_report(rep)
    # either run not judged: no SM gain (nothing to compare), the others unchanged
    for v, b in ((run(items, VISUAL, judge=None), blind), (visual, run(items, BLIND, judge=None, mode="blind"))):
        other = S.report(v, blind_records=b, n_resamples=NR)
        assert "SM" not in other["mg"]["by_category"] and other["mg"]["overall"] == rep["mg"]["overall"]
    # a blind run without the SM items: not comparable either
    partial = S.report(visual, blind_records=[r for r in blind if r["category"] != "SM"], n_resamples=NR)
    assert "SM" not in partial["mg"]["by_category"]


def test_random_probe_answers_temporal_ordering_with_an_order():
    """The random probe guesses a uniformly random order of the three events on TO items (paper's Random row:
    16.7 = 1/3!), not a letter (0%); MCQ items still get a letter among the 7 options."""
    from itertools import permutations

    from medhorizon_tasks.benchmarks.sureon.protocol import build_prompt
    from medhorizon_tasks.data.synthetic.probes import random_answer

    events = EVENTS
    orders = list(permutations(events))
    to_items = [I.parse_item(to_item(f"t{k}", answer=orders[k % 6], question=f"Order the events of clip {k}."),
                             k, []) for k in range(600)]
    records = [S.score_item(it, random_answer(build_prompt(it), seed), "blind") for it in to_items for seed in (0, 1)]
    assert all(r["status"] == "ok" and sorted(r["extracted"]) == sorted(events) for r in records)
    share = sum(r["correct"] for r in records) / len(records)
    assert abs(share - 1 / 6) < 0.035, share  # 1,200 guesses: sd of the share 0.011
    assert len({tuple(r["extracted"]) for r in records}) == 6, "every order is guessed"
    mcq_item = I.parse_item(mcq("q1", "AD"), 0, [])
    assert random_answer(build_prompt(mcq_item), 0) in "ABCDEFG"


def test_sm_never_enters_mu(items):
    all_right = dict(VISUAL, m1="a", m2="b", m3="c")
    rep_a = S.report(run(items, all_right, judge=lambda **kw: Verdict(True, "", "")), n_resamples=NR)
    rep_b = S.report(run(items, all_right, judge=lambda **kw: Verdict(False, "", "")), n_resamples=NR)
    rep_c = S.report(run(items, all_right, judge=None), n_resamples=NR)
    assert rep_a["mu"] == rep_b["mu"] == rep_c["mu"]
    assert rep_a["reasoning"] == rep_c["reasoning"]
    assert (rep_a["sm"]["accuracy"], rep_b["sm"]["accuracy"]) == (1.0, 0.0)
    assert rep_c["sm"] == {"accuracy": None, "correct": 0, "n": 3, "judged": 0, "not_judged": 3, "invalid": 0,
                           "request_errors": 0, "refused": 0, "truncated": 0, "oom": 0, "judge": []}


def test_report_rejects_mismatched_blind_run_and_duplicates(items):
    recs = run(items, VISUAL)
    blind = [r for r in run(items, BLIND) if r["uid"] != "a1"]
    with pytest.raises(DataError, match="a1"):
        S.report(recs, blind_records=blind, n_resamples=NR)
    with pytest.raises(DataError, match=r"item a1: field 'uid'"):
        S.report(recs + [recs[0]], n_resamples=NR)


def test_read_predictions_and_video_errors(tmp_path, items):
    rows = [{"uid": "a1", "prediction": "A"}, {"uid": "t1", "pred": "Clipping, Dissection, Lymph node dissection"},
            {"uid": "m1", "answer": "Expose, clip, divide."}]
    preds = S.read_predictions(write_jsonl(tmp_path / "p.jsonl", rows), [it.uid for it in items])
    preds["e1"] = {"raw": None, "mode": None, "error": "video unreadable"}
    recs = S.score_predictions(items, preds, "visual")
    by = {r["uid"]: r for r in recs}
    assert len(recs) == len(items)
    assert by["a1"]["correct"] and by["t1"]["correct"] and by["m1"]["status"] == "not_judged"
    assert (by["e1"]["status"], by["e1"]["error"], by["e1"]["correct"]) == ("error", "video unreadable", False)
    assert by["f1"]["status"] == "missing"
    with pytest.raises(DataError, match="zz"):
        S.read_predictions(write_jsonl(tmp_path / "q.jsonl", [{"uid": "zz", "pred": "A"}]), ["a1"])


def test_format_report(items):
    rep = S.report(run(items, VISUAL), blind_records=run(items, BLIND), n_resamples=NR)
    text = S.format_report(rep)
    assert "45.5" in text  # mu = 5/11
    assert "[" in text and "MG" in text and "+27.3" in text  # MG = 3/11
    for code in ("AD", "EE", "EA", "PAD", "IAI", "LAR", "SPI", "F", "TO"):
        assert f"  {code}  " in text
    assert "n=3, judged=2" in text and "accuracy 33.3%" in text and "invalid verdicts=1" in text
    plain = S.format_report(S.report(run(items, VISUAL, judge=None), n_resamples=NR))
    assert "MG" not in plain and "not judged: 3" in plain
