"""Sureon's temporal-order answers: the order of three event labels in a free-form output.

In core because two readers share it: :mod:`medhorizon_tasks.benchmarks.sureon.items` reads an
item file's "X > Y > Z" answers with it, :mod:`medhorizon_tasks.benchmarks.sureon.scoring` the
model outputs (and cleans its summaries with :func:`clean_answer`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from .normalise import strip_reasoning

__all__ = ["extract_order", "clean_answer"]

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
# The final answer portion starts after the last cue: "answer:", "Answer is", "order:",
# "final order is", '"order": [...]'.
_CUE = re.compile(r"\b(?:answer|order)\b[\"']?\s*(?:[:：=]|\bis\b)", re.I)
_DECORATION = re.compile(r"[*`#]")


def clean_answer(text: str) -> str:
    """The text an answer is read from: NFKC, straight quotes, reasoning blocks removed, ``* ` #`` blanked."""
    t = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    return _DECORATION.sub(" ", strip_reasoning(t))


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _final_portion(text: str) -> str:
    cues = list(_CUE.finditer(text))
    return text[cues[-1].end():] if cues else text


def extract_order(text: str | None, events: Sequence[str]) -> tuple[str, str, str] | None:
    """The predicted order of the three event labels in ``text``, or None.

    Reasoning blocks (``<think>…</think>``) are ignored. The final answer
    portion is the text after the last "answer:" / "answer is" / "order:" cue
    (the whole text without one). Labels are matched case-insensitively, with
    whitespace normalised, as whole words, longest label first (a label that
    is part of a longer label's mention is not a mention of its own). The
    order is the order of first mention, so JSON lists, "A > B > C",
    "1. A 2. B 3. C", "first A, then B, finally C", comma / arrow / newline
    separated lists all read the same. None unless each of the three labels
    occurs exactly once in the final answer portion. Returns the labels as
    given in ``events``.
    """
    if isinstance(events, str):
        raise TypeError("events must be a sequence of labels, not a str")
    labels = list(events)
    if text is None or not isinstance(text, str) or not labels:
        return None
    portion = _norm(_final_portion(clean_answer(text)))
    if not portion:
        return None
    taken: list[tuple[int, int]] = []
    first: dict[int, int] = {}
    for idx in sorted(range(len(labels)), key=lambda i: -len(_norm(labels[i]))):
        label = _norm(labels[idx])
        if not label:
            return None
        pattern = re.compile(r"(?<![0-9a-z])" + re.escape(label) + r"(?![0-9a-z])")
        hits = [(m.start(), m.end()) for m in pattern.finditer(portion)
                if not any(m.start() < e and s < m.end() for s, e in taken)]
        if len(hits) != 1:
            return None
        taken.append(hits[0])
        first[idx] = hits[0][0]
    order = sorted(first, key=first.get)
    return tuple(labels[i] for i in order)  # type: ignore[return-value]
