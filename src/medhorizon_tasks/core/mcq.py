"""Multiple-choice items as benchmarks publish them: options as a list, or a mapping keyed by letter, maybe
"A."-prefixed; the answer key as a letter, a prefixed option ("B. Dissection") or the option's text."""

from __future__ import annotations

import re

_PREFIX = re.compile(r"^\s*\(?([A-Za-z])\s*[\.\):：]\s*")  # "B. ", "(B) ", "B: ", "B："
_BARE_LETTER = re.compile(r"\(?\s*([A-Za-z])\s*[\.\):]?\s*")


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def strip_letter_prefix(text: str, letter: str) -> str:
    """``"B. Dissection"`` -> ``"Dissection"`` when the prefix is the option's own letter."""
    m = _PREFIX.match(text)
    if m and m.group(1).upper() == letter:
        return text[m.end():].strip()
    return text.strip()


def parse_options(raw, letters: tuple[str, ...], where: str, problems: list[str]) -> tuple[str, ...] | None:
    """Exactly ``len(letters)`` distinct non-empty option texts, prefixes stripped; problems name ``where``."""
    n, span = len(letters), f"{letters[0]}-{letters[-1]}"
    if isinstance(raw, dict):
        if sorted(str(k).strip().upper() for k in raw) != list(letters):
            problems.append(f"{where} field 'options': a mapping must have exactly the keys {span}, "
                            f"got {sorted(map(str, raw))}")
            return None
        by_letter = {str(k).strip().upper(): v for k, v in raw.items()}
        values = [by_letter[L] for L in letters]
    elif isinstance(raw, list):
        if len(raw) != n:
            problems.append(f"{where} field 'options': expected exactly {n} options, got {len(raw)}")
            return None
        values = raw
    else:
        problems.append(f"{where} field 'options': expected a list of {n} strings or a mapping {span}, "
                        f"got {type(raw).__name__}")
        return None
    out = []
    for letter, v in zip(letters, values):
        if not isinstance(v, str) or not v.strip():
            problems.append(f"{where} field 'options': option {letter} must be a non-empty string, got {v!r}")
            return None
        text = strip_letter_prefix(v, letter)
        if not text:
            problems.append(f"{where} field 'options': option {letter} is empty after removing its "
                            f"'{letter}.' prefix")
            return None
        out.append(text)
    normalised = [" ".join(o.lower().split()) for o in out]
    if len(set(normalised)) != n:
        dup = sorted({o for o in normalised if normalised.count(o) > 1})
        problems.append(f"{where} field 'options': options must be distinct, repeated: {dup}")
        return None
    return tuple(out)


def parse_answer_key(raw, options: tuple[str, ...], letters: tuple[str, ...], where: str,
                     problems: list[str]) -> str | None:
    """The gold letter of an item whose ``answer`` field is a letter (``"B"``, ``"(b)"``, ``"B."``), the
    option with its own letter prefix (``"B. Dissection"``), or the option's text (case and spacing
    ignored); problems name ``where`` and the field."""
    span = f"{letters[0]}-{letters[-1]}"
    if not isinstance(raw, str) or not raw.strip():
        problems.append(f"{where} field 'answer': expected a letter {span} or an option text, got {raw!r}")
        return None
    s = raw.strip()
    m = _BARE_LETTER.fullmatch(s)
    if m and m.group(1).upper() in letters:
        return m.group(1).upper()
    lowered = [_norm(o) for o in options]
    m = _PREFIX.match(s)
    if m and m.group(1).upper() in letters and _norm(s[m.end():]) == lowered[letters.index(m.group(1).upper())]:
        return m.group(1).upper()
    if _norm(s) in lowered:
        return letters[lowered.index(_norm(s))]
    problems.append(f"{where} field 'answer': {raw!r} is not among the options {span} {list(options)}")
    return None
