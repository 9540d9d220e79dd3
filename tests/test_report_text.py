"""The small rules every report shares: percent text (core.text.pct) and the answer key (core.mcq)."""

import math

import pytest

from medhorizon_tasks.core.mcq import parse_answer_key
from medhorizon_tasks.core.text import pct


@pytest.mark.parametrize("x, kwargs, text", [
    (0.2624, {}, "26.2"),
    (1.0, {}, "100.0"),
    (0.0, {}, "0.0"),
    (None, {}, "—"),
    (math.nan, {}, "—"),
    (0.05, {"width": 5}, "  5.0"),
    (None, {"width": 5}, "  —  "),
    (0.001234, {"digits": 3, "unit": "%"}, "0.123%"),
    (None, {"digits": 3, "unit": "%"}, "—"),
    (None, {"missing": "-"}, "-"),
])
def test_pct(x, kwargs, text):
    assert pct(x, **kwargs) == text


OPTIONS = ("Dissection", "Clipping", "Suturing", "Irrigation")


@pytest.mark.parametrize("raw, letter", [
    ("B", "B"), (" b ", "B"), ("(C)", "C"), ("D.", "D"), ("B. Clipping", "B"), ("B.  clipping ", "B"),
    ("suturing", "C"), ("  Irrigation", "D"), ("(A) Dissection", "A"),
])
def test_the_answer_key_is_a_letter_a_prefixed_option_or_its_text(raw, letter):
    problems = []
    assert parse_answer_key(raw, OPTIONS, ("A", "B", "C", "D"), "item 7:", problems) == letter
    assert problems == []


@pytest.mark.parametrize("raw, message", [
    ("E", "item 7: field 'answer': 'E' is not among the options A-D"),
    ("B. Suturing", "item 7: field 'answer': 'B. Suturing' is not among the options A-D"),
    ("", "item 7: field 'answer': expected a letter A-D or an option text, got ''"),
    (3, "item 7: field 'answer': expected a letter A-D or an option text, got 3"),
])
def test_a_bad_answer_key_is_named(raw, message):
    problems = []
    assert parse_answer_key(raw, OPTIONS, ("A", "B", "C", "D"), "item 7:", problems) is None
    assert len(problems) == 1 and problems[0].startswith(message)


def test_seven_options_take_letters_up_to_g():
    opts = tuple(f"option {i}" for i in range(7))
    assert parse_answer_key("G", opts, tuple("ABCDEFG"), "item 1:", []) == "G"
    problems = []
    assert parse_answer_key("H", opts, tuple("ABCDEFG"), "item 1:", problems) is None
    assert "not among the options A-G" in problems[0]
