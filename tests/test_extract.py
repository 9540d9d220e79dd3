"""Tests for medhorizon_tasks.core.extract (the single answer-extraction function)."""

from __future__ import annotations

import dataclasses
import random
import re
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medhorizon_tasks.core.extract import Extraction, extract_choice, letters_for
from medhorizon_tasks.core.extract import choice as extract_module
from medhorizon_tasks.core.extract import options as options_module

# MedHorizon-style phase options (4) and a 7-option set (A-G).
O4 = ["Preparation", "Dissection", "Lymph node dissection", "Closure"]
O7 = ["Port placement", "Adhesiolysis", "Mobilization", "Vascular ligation", "Resection", "Anastomosis", "Closure"]
VITAMINS = ["Vitamin A", "Vitamin C", "Vitamin D", "Vitamin K"]  # option texts that contain letters
COMBO = ["Retraction", "Suturing", "Both A and B", "Neither"]

LONG_COT = (
    "Let's go through each option.\n"
    "A (Preparation) would show port insertion, which is not visible here.\n"
    "B (Dissection) fits the early frames, where the hook opens the peritoneum.\n"
    "However, frames 10-16 show the lymph node packet being lifted off the vessel, which matches C.\n"
    "Therefore, the answer is C."
)
LONG_COT_REJECTS = (
    "Initially I considered A, because the trocars are visible in frame 1. But the rest of the clip "
    "clearly shows dissection along the mesocolon. Option C can be ruled out since no lymph nodes are "
    "harvested, and D happens much later. So the answer is B."
)
ANSWER_THEN_EXPLAIN = (
    "The answer is B.\n\n"
    "Explanation: option A refers to port placement, option C to node harvesting and option D to "
    "closure; none of these appear in the sampled frames."
)
MARKDOWN = (
    "## Analysis\n"
    "- **A (Preparation):** ports are already in place\n"
    "- **B (Dissection):** tissue planes are being opened with the hook\n"
    "- **C**: no nodes visible\n\n"
    "**Answer: B**"
)
JSON_FENCED = (
    "```json\n"
    '{"reasoning": "Option A is wrong; I first thought the answer is B", "answer": "C", "confidence": 0.8}\n'
    "```"
)

# (text, options, expected letter, expected status).  ``options`` is None for the
# default four letters, a list of option texts, or an int meaning n_options.
CASES = [
    # --- rule 1: reasoning blocks are ignored ---------------------------------
    ("<think>Frames 1-3 show the trocar, so maybe A.</think>\nThe answer is C.", None, "C", "ok"),
    ("<think>I think the answer is A</think>", None, None, "empty"),
    ("The frames show cutting, the answer is A... no.</think>Answer: B", None, "B", "ok"),
    ("<reasoning>A seems right at first.</reasoning>\n**Answer:** D", None, "D", "ok"),
    ("<think>considering A and B ...</reasoning> Final answer: C", None, "C", "ok"),
    ("<THINK>B</THINK>  C", None, "C", "ok"),
    # --- rule 2: the last explicit commitment wins ----------------------------
    ("The answer is B", None, "B", "ok"),
    ("Answer: C", None, "C", "ok"),
    ("Final answer: (d)", None, "D", "ok"),
    ("**C**", None, "C", "ok"),
    ("\\boxed{C}", None, "C", "ok"),
    ("\\boxed{\\text{C}}", None, "C", "ok"),
    ("The phase is dissection, so $\\boxed{\\textbf{(B)}}$", None, "B", "ok"),
    ('{"answer": "C"}', None, "C", "ok"),
    (JSON_FENCED, None, "C", "ok"),
    ('{"final_answer": "b", "confidence": 0.9, "notes": "A and D are unlikely"}', None, "B", "ok"),
    ("Option C", None, "C", "ok"),
    ("Looking at the instruments, the best match is (C).", None, "C", "ok"),
    ("C. Lymph node dissection", O4, "C", "ok"),
    ("D) Closure", O4, "D", "ok"),
    ("C: Lymph node dissection", O4, "C", "ok"),
    ("I choose C", None, "C", "ok"),
    ("I'd go with c", None, "C", "ok"),
    ("The correct option is C", None, "C", "ok"),
    ("answer: c", None, "C", "ok"),
    ("The answer is (c).", None, "C", "ok"),
    ("\\boxed{c}", None, "C", "ok"),
    ("the answer is a.", None, "A", "ok"),
    ("a careful look at the frames shows the specimen bag being removed, so D", None, "D", "ok"),
    ("A careful review of frames 4-9 shows ongoing dissection along the vessel.\nB", None, "B", "ok"),
    ("I think it's B", None, "B", "ok"),
    ("Based on a review of the clip, I'd say A.", None, "A", "ok"),
    ("I would go with a different reading of frame 3: the answer is C", None, "C", "ok"),
    ("The answer is B because the grasper is retracting tissue while the hook cuts.", None, "B", "ok"),
    ("Answer:\n\nB", None, "B", "ok"),
    ("### Answer\n**B. Dissection**", O4, "B", "ok"),
    ("B is correct.", None, "B", "ok"),
    ("Option B is the correct answer.", None, "B", "ok"),
    ("My final choice: (A)", None, "A", "ok"),
    ("It's definitely not A; I'd pick D.", None, "D", "ok"),
    ("Is it B? No - the specimen is already out, so D.", None, "D", "ok"),
    ("The answer is A. Wait, frame 7 shows the hook cutting, so C.", None, "C", "ok"),
    (MARKDOWN, None, "B", "ok"),
    (LONG_COT, None, "C", "ok"),
    (LONG_COT_REJECTS, None, "B", "ok"),
    (ANSWER_THEN_EXPLAIN, None, "B", "ok"),
    ("The answer is B.\nExplanation:\n- A. Preparation: no\n- C. Lymph node dissection: later", O4, "B", "ok"),
    ("The C-arm is positioned for fluoroscopy; the answer is B.", None, "B", "ok"),
    ("B because the hook is dissecting the peritoneum.", None, "B", "ok"),
    ("Option A: Preparation - incorrect\nOption B: Dissection - correct\nOption C: Lymph node dissection - incorrect"
     "\nOption D: Closure - incorrect", O4, "B", "ok"),
    ("The answer is D.<|im_end|>", None, "D", "ok"),
    ("Options:\nA. Preparation\nB. Dissection\nC. Lymph node dissection\nD. Closure\n\nAnswer: B", O4, "B", "ok"),
    # --- rule 3: a bare letter --------------------------------------------------
    ("C", None, "C", "ok"),
    ("c", None, "C", "ok"),
    ("C.", None, "C", "ok"),
    (" (C) ", None, "C", "ok"),
    ("a", None, "A", "ok"),
    ("  b)  \n", None, "B", "ok"),
    # --- rule 4: non-English ----------------------------------------------------
    ("答案是C", None, "C", "ok"),
    ("答案：C", None, "C", "ok"),
    ("选C", None, "C", "ok"),
    ("正确答案为 C", None, "C", "ok"),
    ("选项C", None, "C", "ok"),
    ("根据视频内容，不是A，答案是B。", None, "B", "ok"),
    ("（Ｃ）", None, "C", "ok"),  # full-width forms
    ("Antwort: C", None, "C", "ok"),
    ("Die richtige Antwort ist D.", None, "D", "ok"),
    ("Respuesta: C", None, "C", "ok"),
    ("La respuesta correcta es b", None, "B", "ok"),
    ("Réponse : C", None, "C", "ok"),
    # --- rule 5: the answer given as option text --------------------------------
    ("The answer is lymph node dissection.", O4, "C", "ok"),
    ("Dissection.", O4, "B", "ok"),
    ("  closure  ", O4, "D", "ok"),
    ("The clip shows lymph node dissection.", O4, "C", "ok"),
    ("Answer: Preparation. Closure only happens at the end of the case.", O4, "A", "ok"),
    ('{"answer": "Closure"}', O4, "D", "ok"),
    ("Dissection and closure are both visible.", O4, None, "unparsed"),
    ("The answer is Vitamin D", VITAMINS, "C", "ok"),  # the "D" is part of the option text
    ("Both A and B", COMBO, "C", "ok"),
    ("The answer is both A and B.", COMBO, "C", "ok"),
    ("The resection is ongoing: Resection", O7, "E", "ok"),
    ("<answer>Lymph node dissection</answer>", O4, "C", "ok"),
    ("\\boxed{Dissection}", O4, "B", "ok"),
    # --- rule 6: letters outside the valid range --------------------------------
    ("The answer is E", None, None, "unparsed"),
    ("E", None, None, "unparsed"),
    ("G", None, None, "unparsed"),
    ("G", 7, "G", "ok"),
    ("The answer is G", 7, "G", "ok"),
    ("Final answer: F", O7, "F", "ok"),
    ("Answer: E", 7, "E", "ok"),
    ("Looking at frames 1-8, B and C are ruled out. Final answer: G", O7, "G", "ok"),
    # --- rule 7: refusals -------------------------------------------------------
    ("I cannot determine the answer from the provided frames.", None, None, "refusal"),
    ("I'm unable to answer this question.", None, None, "refusal"),
    ("I can't tell.", None, None, "refusal"),
    ("Not enough information is visible in the frames.", None, None, "refusal"),
    ("The surgical phase cannot be determined from these images.", None, None, "refusal"),
    ("As an AI language model, I cannot watch videos.", None, None, "refusal"),
    ("Sorry, I can't help with that.", None, None, "refusal"),
    ("无法确定答案。", None, None, "refusal"),
    ("I cannot be sure, but the answer is B", None, "B", "ok"),
    ("I can't tell for certain from frame 2, but I'd go with D.", None, "D", "ok"),
    ("There is not enough information to be certain, but B is the best guess.", None, "B", "ok"),
    ("The answer is C, although the exact instrument cannot be determined.", None, "C", "ok"),
    ("I cannot determine the phase. B?", None, None, "refusal"),
    # --- rule 8: hedges ---------------------------------------------------------
    ("A or B", None, None, "hedge"),
    ("either B or C", None, None, "hedge"),
    ("B/C", None, None, "hedge"),
    ("The answer is A or C", None, None, "hedge"),
    ("A and B are both possible.", None, None, "hedge"),
    ("Between B and D", None, None, "hedge"),
    ("It's either A or D.", None, None, "hedge"),
    ("I'd go with B, or maybe C.", None, None, "hedge"),
    ("The answer is B, but it could also be C.", None, None, "hedge"),
    ("Between E and G, hard to say.", 7, None, "hedge"),
    ("答案：A或B", None, None, "hedge"),
    ('{"answer": "B", "note": "C could also fit"}', None, None, "hedge"),
    ("Option C is wrong, the answer is B", None, "B", "ok"),
    ("Option (C) is wrong, the answer is B", None, "B", "ok"),
    ("Not A. Not B. The answer is D", None, "D", "ok"),
    ("A and B are both wrong, so the answer is C.", None, "C", "ok"),
    ("Between B and D, I'd choose D.", None, "D", "ok"),
    ("I'd go with D over B.", None, "D", "ok"),
    # --- rule 9: empty ------------------------------------------------------------
    ("", None, None, "empty"),
    ("   \n\t ", None, None, "empty"),
    (None, None, None, "empty"),
    ("<think>long reasoning about A and B</think>   ", None, None, "empty"),
    # --- rule 10: nothing recognisable ----------------------------------------------
    ("The video shows a laparoscopic procedure.", None, None, "unparsed"),
    ("A. Preparation\nB. Dissection\nC. Lymph node dissection\nD. Closure", O4, None, "unparsed"),
    ("(A) Preparation (B) Dissection (C) Lymph node dissection (D) Closure", O4, None, "unparsed"),
    ("Answer: N/A", None, None, "unparsed"),
    ("ABCD", None, None, "unparsed"),
    ("I think this is a difficult question.", None, None, "unparsed"),
    ("The answer is B? I am not sure.", None, None, "unparsed"),
    ("Option C is wrong.", None, None, "unparsed"),
]


def _call(text, options):
    if isinstance(options, int):
        return extract_choice(text, n_options=options)
    return extract_choice(text, options)


@pytest.mark.parametrize(("text", "options", "letter", "status"), CASES)
def test_extract_table(text, options, letter, status):
    got = _call(text, options)
    assert (got.letter, got.status) == (letter, status)
    assert got.valid == (status == "ok")


def test_table_is_big_enough_and_covers_every_status():
    assert len(CASES) >= 70
    assert {c[3] for c in CASES} == {"ok", "empty", "refusal", "hedge", "unparsed"}


# --- API --------------------------------------------------------------------------


def test_letters_for():
    assert letters_for(4) == ("A", "B", "C", "D")
    assert letters_for(7) == tuple("ABCDEFG")
    for bad in (0, 27, -1, True):
        with pytest.raises(ValueError):
            letters_for(bad)


def test_valid_letters_come_from_options_then_n_options_then_four():
    assert extract_choice("F", O7).letter == "F"
    assert extract_choice("F", n_options=7).letter == "F"
    assert extract_choice("F").status == "unparsed"
    assert extract_choice("D", ["x", "y", "z"]).status == "unparsed"  # 3 options: A-C


def test_extraction_is_frozen_and_reports_validity():
    e = extract_choice("B")
    assert e == Extraction("B", "ok") and e.valid
    assert not Extraction(None, "hedge").valid
    with pytest.raises(dataclasses.FrozenInstanceError):
        e.letter = "C"  # type: ignore[misc]


def test_rejects_non_text():
    with pytest.raises(TypeError):
        extract_choice(3)  # type: ignore[arg-type]


# --- rule 11: never raises, never invents a letter ---------------------------------

LETTERISH = st.lists(
    st.sampled_from(
        list("ABCDEFGabcdefgI ().:*\n{}\"'/") + ["or ", "and ", "not ", "answer ", "is ", "答案", "选",
                                                  "<think>", "</think>", "\\boxed{", "wrong ", "so ", "Option "]
    ),
    max_size=25,
).map("".join)


@settings(max_examples=300, deadline=None, database=None)
@given(st.text())
def test_fuzz_any_text(text):
    got = extract_choice(text)
    assert isinstance(got, Extraction)
    assert got.status in extract_module.STATUSES
    assert got.letter is None or got.letter in letters_for(4)
    assert (got.letter is not None) == (got.status == "ok")


@settings(max_examples=300, deadline=None, database=None)
@given(LETTERISH, st.sampled_from([None, 4, 7]), st.lists(st.text(max_size=12), min_size=1, max_size=7))
def test_fuzz_letter_heavy_text_without_safety_net(text, n, options):
    # Call the core directly: the public wrapper swallows internal errors, so
    # this is where a crash would actually show up.
    valid = letters_for(n or len(options))
    got = extract_module._extract(text, valid, None if n else options)
    assert got.status in extract_module.STATUSES
    assert got.letter is None or got.letter in valid
    assert (got.letter is not None) == (got.status == "ok")


# --- contrast with the authors' scorer ------------------------------------------------


def authors_first_letter(text):
    """The authors' scorer: upper-case, then the FIRST standalone A-D."""
    m = re.search(r"\b([A-D])\b", text.upper())
    return m.group(1) if m else None


@pytest.mark.parametrize(
    ("text", "truth"),
    [
        ("a careful look shows C", "C"),
        ("Option (C) is wrong, the answer is B", "B"),
    ],
)
def test_authors_scorer_gets_these_wrong_and_we_do_not(text, truth):
    assert authors_first_letter(text) != truth
    assert extract_choice(text) == Extraction(truth, "ok")


@pytest.mark.parametrize("text", ["A", "b", " C ", "D.", "(a)", "c)", "**B**", "d\n"])
def test_agrees_with_authors_scorer_on_bare_letters(text):
    assert extract_choice(text).letter == authors_first_letter(text)
    assert extract_choice(text).valid


# --- linear time ------------------------------------------------------------------------------
#
# Extraction must stay linear in the length of the output whatever it holds: a letter chain read
# again from every letter or cue inside it, option texts tested against every earlier match, or a
# regex that splits a run of spaces every possible way are all quadratic, and a 960 KB output then
# never finishes. Wall time is not asserted (CI shares its cores): the work is counted instead, as
# the number of Python calls and C calls made while extracting (sys.setprofile), for inputs of n
# and 4n characters. Linear work grows 4x; the original's grew 6-16x where it was quadratic in
# Python, and its C-level quadratic cases (a regex back-tracking over a run of spaces, a search
# back to the line start for every "option") did not finish the 64 KB / 960 KB inputs below.
# The core is called directly: the public wrapper would turn a crash into "unparsed".

ADVERSARIAL = {  # name: repeated unit
    "comma_list": "A, B, C, D, ",
    "option_chain": "option A or ",
    "soft_cue_chain": "A or probably B or probably C or ",
    "alt_chain": "A or maybe B or maybe C or maybe D or ",
    "or_groups": "A or B. ",
    "letters": "A B C D ",
    "slash_list": "A/B/C/D/",
    "and_list": "A, B and C, D and ",
    "option_texts": "Preparation Dissection Lymph node dissection Closure ",
    "one_option": "Closure ",
    "echoed_list": "A. Preparation\nB. Dissection\n",
    "option_words": "option ",
    "parens": "(A) (B) (C) (D) ",
    "bold": "**A** **B** ",
    "refusals": "I cannot determine the phase. ",
    "think_tags": "<think>A</think> <think> ",
    "cues": "The answer is answer: final answer: ",
    "rejections": "not A, rule out B, C is wrong. ",
    "verdicts": "Option A: Preparation - incorrect\n",
    "chinese": "答案是A或B，选项C，",
    "one_letter_lines": "b\n",
}
# What each gives at any length (whole units), the same as the original gives on short ones.
ADVERSARIAL_RESULTS = {
    "comma_list": (None, "unparsed"), "option_chain": ("A", "ok"), "soft_cue_chain": (None, "hedge"),
    "alt_chain": (None, "hedge"), "or_groups": (None, "hedge"), "letters": (None, "unparsed"),
    "slash_list": (None, "hedge"), "and_list": (None, "hedge"), "option_texts": (None, "unparsed"),
    "one_option": ("D", "ok"), "echoed_list": (None, "unparsed"), "option_words": (None, "unparsed"),
    "parens": (None, "unparsed"), "bold": ("B", "ok"), "refusals": (None, "refusal"),
    "think_tags": (None, "empty"), "cues": (None, "unparsed"), "rejections": (None, "unparsed"),
    "verdicts": ("A", "ok"), "chinese": ("C", "ok"), "one_letter_lines": ("B", "ok"),
}
# Long runs inside one construct: regex back-tracking, not repeated units.
RUNS = {
    "spaces_after_lt": (lambda n: "<" + " " * n + "x", (None, "unparsed")),
    "spaces_after_cue": (lambda n: "The answer is" + " " * n + "C", ("C", "ok")),
    "spaces_in_tag": (lambda n: "<think" + " " * n + "> B </think> C", ("C", "ok")),
    "quotes_after_cue": (lambda n: "Answer: " + "\"'([<" * (n // 5) + "x", (None, "unparsed")),
}


def _adversarial(name, n):
    unit = ADVERSARIAL[name]
    return unit * max(1, n // len(unit))


def _core(text):
    return extract_module._extract(text, letters_for(4), O4)


def _work(text):
    """(calls made while extracting, result)."""
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        calls += 1

    sys.setprofile(count)
    try:
        got = _core(text)
    finally:
        sys.setprofile(None)
    return calls, got


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_work_grows_linearly(name):
    small, _ = _work(_adversarial(name, 1000))
    big, got = _work(_adversarial(name, 4000))
    assert big / small < 6, f"{name}: 4x the text, {big / small:.1f}x the work ({small} -> {big} calls)"
    assert (got.letter, got.status) == ADVERSARIAL_RESULTS[name]


@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_64kb_adversarial_outputs(name):
    got = _core(_adversarial(name, 64 * 1024))
    assert (got.letter, got.status) == ADVERSARIAL_RESULTS[name]


@pytest.mark.parametrize("name", list(RUNS))
def test_long_runs(name):
    make, expected = RUNS[name]
    for n in (64 * 1024, 960 * 1024):
        got = _core(make(n))
        assert (got.letter, got.status) == expected, n


@pytest.mark.parametrize("name", ["option_texts", "one_option", "option_words", "refusals", "think_tags", "cues"])
def test_960kb_adversarial_outputs(name):
    got = _core(_adversarial(name, 960 * 1024))
    assert (got.letter, got.status) == ADVERSARIAL_RESULTS[name]


def test_compiled_option_patterns_are_cached():
    for cache in (options_module._option_set, options_module._option_pattern, options_module._compiled):
        cache.cache_clear()
    for _ in range(3):
        extract_module._extract_memo.cache_clear()  # the whole-result memo would hide the per-option caches
        assert extract_choice("The answer is lymph node dissection.", O4) == Extraction("C", "ok")
        assert extract_choice("The answer is closure.", list(reversed(O4))) == Extraction("A", "ok")
    per_question = options_module._option_set.cache_info()
    per_text = options_module._option_pattern.cache_info()
    compiled = options_module._compiled.cache_info()
    assert (per_question.misses, per_question.hits) == (2, 4)
    assert per_text.misses == 8  # each (text, letter) once: the letter decides which "B." prefix is stripped
    # compiled once each, and only for options an output may name ("Preparation" never is)
    assert (compiled.misses, compiled.currsize) == (3, 3)


def test_an_output_scored_twice_is_extracted_once_and_long_outputs_are_not_kept():
    memo = extract_module._extract_memo
    memo.cache_clear()
    for _ in range(3):
        assert extract_choice("I think it's B.", O4) == Extraction("B", "ok")
    assert (memo.cache_info().misses, memo.cache_info().hits) == (1, 2)
    long = "Some reasoning. " * 400 + "The answer is D."
    assert len(long) > extract_module._MEMO_MAX_CHARS
    assert extract_choice(long, O4) == extract_choice(long, O4) == Extraction("D", "ok")
    assert memo.cache_info().currsize == 1


# --- agreement with the original implementation ----------------------------------------------

# The extractor was rewritten for linear time (commit after 433bf22); every result must stay
# what the rules gave before. A seeded corpus of realistic model outputs (the pieces below,
# composed at random) was scored by the original and its results are frozen here.
_PIECES = {
    "cue": ["The answer is", "Answer:", "answer:", "Final answer:", "\\boxed{", '{"answer": "', "<answer>",
            "I choose", "I'd go with", "I think it's", "so", "Therefore,", "thus", "must be", "It's", "答案是",
            "答案：", "选", "选项", "正确答案为", "Antwort:", "Die richtige Antwort ist", "Respuesta:",
            "La respuesta correcta es", "Réponse :", "The correct option is", "My final choice:", "最终答案",
            "The best match is", '"final_answer": "', "I pick", "the most likely answer would be", "I'd say",
            "probably", "most likely", "Hence", "I believe", "it should be"],
    "decor": ["{}", "({})", "{}.", "**{}**", "{})", "option {}", "Option {}", "\\text{{{}}}", "[{}]", "'{}'",
              '"{}"', "{}:", "choice {}", "（{}）", "letter {}", "__{}__", " {}\n"],
    "post": ["is correct", "is the answer", "is right", "fits best", "正确", "is wrong", "is incorrect",
             "- correct", "- incorrect", ": no", "?", "could also fit", "is also possible", "is unlikely",
             "can be ruled out", "isn't", "is not correct", "错误", "is a close second"],
    "pre": ["not", "Not", "rule out", "never", "except", "instead of", "over", "than", "不是", "排除", "neither",
            "eliminate", "I wouldn't choose", "excluding"],
    "conn": [" or ", " and ", "/", ", ", " or maybe ", " nor ", "或", "和", " & ", ", or possibly ", " und ",
             ", option ", " or probably ", " y "],
    "refusal": ["I cannot determine the answer from the provided frames.", "I'm unable to answer this question.",
                "I can't tell.", "Not enough information is visible.", "cannot be determined",
                "As an AI language model", "Sorry, I can't help with that.", "无法确定答案。", "I don't know",
                "no video was provided", "insufficient visual evidence", "je ne peux pas"],
    "hedge": ["either", "Between", "both", "it could also be", "or maybe", "possibly", "perhaps", "alternatively"],
    "filler": ["The frames show the hook dissecting tissue.", "A careful look at the clip", "a careful review",
               "I think this is a difficult question.", "The C-arm is positioned.", "X-ray", "e.g.", "I'm", "N/A",
               "Hepatitis B", "Vitamin D", "Let's go through each option.", "Explanation:", "because", "Wait,",
               "Actually,", "On second thought,", "hmm", "frame 7", "A surgeon", "I would", "I", "a", "A", "the",
               "wrong", "Preparation", "Dissection", "lymph node dissection", "Closure", "Both A and B", "根据视频内容",
               "。", "(", ")", ":", "-", "\"", "`", "```json", "#", "|", "$", "\\(", "}", "{", "<|im_end|>", "</s>",
               "\u200b", "ＡＢＣ", "“", "’", "•", ">", "1.", "\t", "\n", "\n\n", "'s", "ABCD", "A-B", "C's"],
    "think": ["<think>", "</think>", "<thinking>", "</thinking>", "<reasoning>", "</reasoning>", "< /think >"],
    "sep": [" ", " ", " ", "\n", "\n\n", ". ", ", ", "; ", "", " - ", ":\n", "\n- ", "\n* ", "\n1. ", "。"],
}
_LETTERS = "ABCDEFGabcdefgIi"
_OPTION_SETS = [None, O4, O7, VITAMINS, COMBO, 7]


def _piece(r, options):
    P = _PIECES
    letter = lambda: r.choice(P["decor"]).format(r.choice(_LETTERS))  # noqa: E731
    k = r.randrange(13)
    if k == 0:
        return r.choice(P["cue"]) + r.choice(["", " ", "\n"]) + letter()
    if k == 1:
        return letter() + r.choice(["", " "]) + r.choice(P["post"])
    if k == 2:
        return r.choice(P["pre"]) + " " + letter()
    if k == 3:
        group = letter() + "".join(r.choice(P["conn"]) + letter() for _ in range(r.randrange(1, 4)))
        return (r.choice(P["hedge"]) + " " if r.random() < 0.4 else "") + group
    if k == 4:
        return r.choice(P["refusal"])
    if k == 5:
        return r.choice(P["think"])
    if k == 6 and isinstance(options, list):
        o = r.choice(options)
        return r.choice(["", "The answer is ", "Answer: ", letter() + ". ", "\\boxed{"]) + r.choice([o, o.lower()])
    if k == 7 and isinstance(options, list):
        return "\n".join(f"{_LETTERS[i]}. {o}" for i, o in enumerate(options))
    if k == 8:
        return '{"reasoning": "' + r.choice(P["filler"]) + '", "answer": "' + r.choice(_LETTERS) + '"}'
    if k == 9:
        return r.choice(["Option ", "", "- ", "("]) + r.choice(_LETTERS) + r.choice([": ", ". ", ") "]) + \
            r.choice(P["filler"]) + r.choice([" - incorrect", " - correct", ": no", "", " is the answer"])
    if k == 10:
        return letter()
    return r.choice(P["filler"]) + " " + r.choice(P["filler"])


def realistic_outputs(seed, n):
    """``n`` (text, options) pairs: 1 to 20 pieces joined by separators."""
    r = random.Random(seed)
    out = []
    for _ in range(n):
        options = r.choice(_OPTION_SETS)
        text = "".join(_piece(r, options) + r.choice(_PIECES["sep"]) for _ in range(r.choice([1, 1, 2, 3, 5, 8, 20])))
        out.append((text.strip() if r.random() < 0.3 else text, options))
    return out


def _code(e):
    """One character per result: the letter, or e(mpty) r(efusal) h(edge) u(nparsed)."""
    return e.letter if e.status == "ok" else e.status[0]


def _core_call(text, options):
    """extract_choice without its safety net (a crash must not pass for "unparsed")."""
    if isinstance(options, int) or options is None:
        return extract_module._extract(text, letters_for(options or 4), None)
    return extract_module._extract(text, letters_for(len(options)), tuple(options))


_ORIGINAL_RESULTS = (
    "BuBurDCDEuGuBuuurDuruuuADuADuECDDrEDDhuEhBBruDAuAuFCBABBBDAACuAuuDuCAuuuBAuuABurCArFhEeuEuBuEDruCAuh"
    "EEFBCDuCFuuBAFGrAurBeuuhCuuuBDuuDuCGuBBuruhrCBeADArBuCArrCrBrErEuAuBFeCruuuACBAuDEruBCDFuuCBDBCCABDB"
    "CGBCuuADCBuDuAuCuDCBBDeDDuAhrrrDuuCAuADFrheDruBuuuGuBBeuuArAGuDEuurDuuArEArGFuFAuAGBrBuCDrCuADrFABuA"
    "AAuBDhDDrErEruCruDhFBAuuDuDFDCDFACCCrADBrFCACCrhuDCeuruuGCrCBruAABABrChCuDrBuDrAuDuBGDrurrADDDAuFCAB"
    "DuBuuuCuCBDuCuABuuhAFuCrAAuuDAurAABDurBCCuBBruCCCCBruDurEGCuBDuuDuFhDCAreuCrDBrCueGuGGuuCuEuAAFuuBru"
    "huFruCBuuBruuDruurFFCAAuAuChBDhuurABCAuBDCrAEDrBeuCuAhurAFuueBDuuCuurBruBuFuerurDrrCDuuuDCuDCDrFCADr"
    "hruuBuDDBrCEuuuCuuruuCACuuuDAuuuuBCDCCuBruCBuuDuArCuuuCBrEeuCBBFADCADAreuAAuDuBrhuuDDCBuCAuABAeuuFBr"
    "uuDBACDEABCAhFuuBDBhCrDCrDurhrACuBABDBrurFrEuuAhCuuFhuAADeDuuuDADCrBuDhuBAEAFGuuBArDAuuCGuurFrBAAuru"
    "CBDCBDDDGBAABuuuDDDCAAuBeBuAhAEDAACAAuCuurBDDDuEuBuuuurDruuGuADABruuAruDAuhuuhhACBDuAFuuhhhDhuABADCD"
    "uuGCuDDCBFruBEuDeruhuADuCArAuDCADurBuCAeAAruGueuhCuruuruCAuDuADBhAuBeuABBeDAGruDDGeuBuruDruAuuADCrDE"
    "CGuBruAuChuuurBAuCBDruChuDhuDAABurCuuurCFuEDuCrruDuDEruDDhuuruDuCErurBDhECDBrerurhCFuDuADGDCBBrruCeh"
    "ueAuruDDuuAuDururhuuuAuACuAruuhDFuuBBFuAuurDuuCAABADuGrCCBuBFuDeuuAFCrFuCuFuACrDErhhuBCuDDCuruuCBCuD"
    "DuhuCuAuuDhBrDuCABhCBuuCueuBhEBuBuhCDueuuGGDFruCAAuhrruBueDhCGCCBuDDCurGuBFDuuAruuCAuureuDCDArueAuGD"
    "FruAAreeEBEEBDCBuBrBCEhBDAAeurrBurueAeuuruerheuDCGrBuBrAueBBuEBuACFuCBEADAurADurCuAuuuuuueuurGBuDFuu"
    "hBBrruuhBuBrAArrEuBDrAACDueuhuuhuruDrAuACDDhuECrrAhCuDBuDBBrDCruuBDuruhADACrBuBhuDAuuhuuDuuhuuGDuDuu"
    "AuACuurDuDuCuuEurhAuFuuBuBuEuuuGDhFhAuuAABBuCCBruuehGuDrureDuBuhuBuuhCuuAuBuruuDAuGuurAuBrhuBrDuruCh"
    "uBABBFAGCEhCAAuuBEDuACDADDuDBBCAuDAuAuuCrCDuhFFueuuAuBAhruuDDuCuuCDDCrrrDCBCCuBuBurrAuFBuACrBAuuuBAu"
    "uuuuuDeDACuuCBuuFruuGuuuhCCCuuFABFAuhuFuBruGBDuuADuuBEuCBuuCuAFFDAuruuuuuBAuGBuBrruuuurCuECAuhCuBEhu"
    "BFurrrrArruBuuBurDCAuruhDBAhADBuBueDrEAuChuuCuuuuDDurrDBuuAhBrAAABuurDDDuruCuEuuDuuBGCuuuBEruhEueBuB"
    "uGFruDGrABrhBDuAGrCDGBrhBuuruCuBurrCADBAruBuBABrCruBrDABBADuuuuuDuAuCFDFuuAuuureuruureAuCBuCCuuGreuA"
    "uAuCuAuruurhBuuuDBruABhABAGCruuACBEurBhuruDruuCuEuCuhrBGBuADAuAAuDDuBuuECuuAeurAFruhBBheuhBuhueurAuB"
    "ABFCuBurhuCDGDuDuuhuABEFuhuDuuGCDAuCDBuurDrBuCGGuAuDhDueuBhurCAAeDruBrBuuBCDrDAhuBBruACCrDBDuAhDDuEF"
    "ChBGeBAurFBDhCurrChhuurrBCuFBBrFuDBheuDBuDBDuruCuBuuAFuBGuhCDCBuFBuCDuuDrueuuuuDhCBBruGBBDreEuFuurCu"
    "CruueArBBAuuurAFBrAuuAFuBeDuCuuBBueuFuDDeueuDGBuuDCBuAuAAuuAuABuEuCBuBuACFuDCGuAruDuBDBCrGAuCuuhDeCu"
    "uBuACuhFrBBDDAAuuuBDBuuBBuurAuDFuBuABuBruhrhhuuurCBuuAurDAEGuruuuuuAuBuBrCrhrueuhEeuuCruuuACBuuACrAD"
    "CBGAuBruBADDBeuCDuDhuuBBuBAAuruCuuuCuuueuAEBuGFruCerAreErArCDrurBuDBhAuDDCuBuBuuDuuFAurFDhBuuruuCrrh"
    "BFBruBDBADDrruCrCDuhCAuCEBAFuuuuBDhuCBrhBFAuruuCCurureurDuDuuAGuruACrEuADrBurAuuBuuuueuADrBeuBGDBDDu"
    "CuGArAurruuAuAuAuBBueuCurrDCBuuEuAuruuurBBruBrEuuCuDDAuCCCuuCAAChDBBBCuhuAADruABGeDrDBDGuCCuDrGAAuuA"
    "uBCuuruuuCCuFuhrDBuBurAruuCACuruuBeuBAuBAAuuhuehuCFuuuuuDAAuuerurrrBrDrCrrBrurCCAuEruuurCuECChCDuDuG"
    "CuuBuAuACrrEuBCuAArhuCruBBDCuhDFBCuAECuArruBAEFFDBAuCuCuruCDeDruAuhruFBGBhuuuuhDBBrBuuAuCCDuruACCuhu"
)


def test_agrees_with_original_on_realistic_corpus():
    corpus = realistic_outputs(20240611, len(_ORIGINAL_RESULTS))
    got = "".join(_code(_core_call(text, options)) for text, options in corpus)
    bad = [(text, options, want, have) for (text, options), want, have in zip(corpus, _ORIGINAL_RESULTS, got)
           if want != have]
    assert not bad, f"{len(bad)} result(s) changed, first: {bad[0]!r}"
