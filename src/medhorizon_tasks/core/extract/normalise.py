"""Rules 0 and 1 of :mod:`medhorizon_tasks.core.extract`: text normalisation, reasoning blocks, masking.

``_mask`` blanks characters in place: a position in the masked text is the same position in the
text it was made from.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["strip_reasoning"]

# --------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
                         "\u00b4": "'", "\u2032": "'"})
_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad]")

# The slash sits in its own optional group: "<\s*/?\s*" splits a long run of
# spaces after "<" every possible way before failing (quadratic backtracking).
_REASONING_TAG = re.compile(r"<\s*(?:(/)\s*)?(think|thinking|reasoning|thought|analysis)\s*>", re.I)

# Blanked out (same length) before searching: markdown emphasis/headings/tables,
# LaTeX wrappers and braces (so \boxed{\text{C}} reads "\boxed       C  " and a
# JSON object reads ' "answer": "C" '), and "N/A", which is not "N or A".
# The single characters go through str.translate (no regex callback per "*");
# they are never part of the sequences, and blanking them first does not
# change what the sequences' letter look-arounds see.
_MASK_CHARS = str.maketrans(dict.fromkeys("*_`#{}$|", " "))
_MASK_SEQ = re.compile(
    r"\\(?:text(?:bf|it|rm|tt|sf|normal)?|math(?:rm|bf|it|tt|sf|bb)|mbox|bf|textsc)(?![A-Za-z])"
    r"|\\[()\[\]]"
    r"|(?<![A-Za-z])[Nn]/[Aa](?![A-Za-z])"
)


# Chat-template and tokenizer leftovers: "<|im_end|>", "</s>", "<eos>", "[/INST]".
_SPECIAL_TOKENS = re.compile(
    r"<\|[A-Za-z0-9_.\-]{1,40}\|>|</?s>|<(?:eos|bos|pad|unk|end_of_turn|start_of_turn)>|\[/?INST\]", re.I
)


def _normalise(text: str) -> str:
    t = unicodedata.normalize("NFKC", text)
    if not t.isascii():  # quotes and invisible characters are all outside ASCII
        t = _INVISIBLE.sub("", t.translate(_QUOTES))
    if "<" in t or "[" in t:
        t = _SPECIAL_TOKENS.sub(" ", t)
    return t


def _strip_reasoning(t: str) -> str:
    # One linear pass over the tags (a regex with a back-reference would be
    # quadratic on outputs full of unclosed tags).
    if "<" not in t:
        return t
    tags = [(mt.start(), mt.end(), bool(mt.group(1)), mt.group(2).lower()) for mt in _REASONING_TAG.finditer(t)]
    if not tags:
        return t
    pieces: list[str] = []
    kept_from = 0  # start of the text not yet copied
    open_at: tuple[int, str] | None = None  # the unmatched opening tag, if any
    for start, end, closing, name in tags:
        if not closing:
            if open_at is None:
                open_at = (start, name)
        elif open_at is not None and open_at[1] == name:
            pieces.append(t[kept_from:open_at[0]])  # <think> ... </think>: drop the block
            pieces.append(" ")
            kept_from, open_at = end, None
        else:
            # A closing tag whose opening is missing or mismatched: everything
            # before it was reasoning.
            pieces, kept_from, open_at = [], end, None
    pieces.append(t[kept_from:])
    # An opening tag never closed (truncated output): keep its content, drop the tag.
    return _REASONING_TAG.sub(" ", "".join(pieces))


def strip_reasoning(text: str) -> str:
    """Rule 1 alone: the text with its reasoning blocks removed. Every scorer of the package (MCQ letters,
    Sureon's temporal order and summaries, SurgHiBench's phase/step answers) applies it, in lmms-eval and
    VLMEvalKit alike; the lmms-eval tasks turn lmms-eval's own stripping off so that this is the one rule."""
    return _strip_reasoning(text)


def _blank(mm: re.Match[str]) -> str:
    return " " * (mm.end() - mm.start())


def _mask(t: str) -> str:
    t = t.translate(_MASK_CHARS)
    if "\\" in t or "/" in t:
        t = _MASK_SEQ.sub(_blank, t)
    return t
