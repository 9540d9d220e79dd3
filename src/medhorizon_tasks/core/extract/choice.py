"""The public rule: :func:`extract_choice` and its result (see :mod:`medhorizon_tasks.core.extract` for the
rules), with the whole-result memo and ``_extract``, which applies the rules in order."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from .candidates import (
    _alt_cands,
    _correction_marks,
    _last_of_best_tier,
    _order,
    _soft_cands,
    _strong_cands,
    _weak_cands,
    _weak_line_ambiguous,
)
from .cues import _REFUSAL_RE, _REFUSAL_STARTS, _T_STRONG, _T_WEAK
from .letters import _ALPHABET, _BIT
from .normalise import _mask, _normalise, _strip_reasoning
from .options import _Options, _strip_edges
from .scan import _Cand, _Scan

__all__ = ["Extraction", "extract_choice", "letters_for", "STATUSES"]

STATUSES = ("ok", "empty", "refusal", "hedge", "unparsed")


@dataclass(frozen=True)
class Extraction:
    letter: str | None  # an upper-case letter among the valid ones, or None
    status: str  # "ok" | "empty" | "refusal" | "hedge" | "unparsed"

    @property
    def valid(self) -> bool:
        return self.status == "ok"


_EMPTY = Extraction(None, "empty")
_REFUSAL = Extraction(None, "refusal")
_HEDGE = Extraction(None, "hedge")
_UNPARSED = Extraction(None, "unparsed")
_OK = {c: Extraction(c, "ok") for c in _ALPHABET}


def letters_for(n: int) -> tuple[str, ...]:
    """The first ``n`` option letters: ``letters_for(4) == ("A", "B", "C", "D")``."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 26:
        raise ValueError(f"number of options must be an int in 1..26, got {n!r}")
    return tuple(_ALPHABET[:n])


def extract_choice(
    text: str | None,
    options: Sequence[str] | None = None,
    *,
    n_options: int | None = None,
) -> Extraction:
    """Turn a model's free-form answer into an option letter (see the package doc)."""
    if options is not None:
        if isinstance(options, str):  # a common slip: one string is not a list
            raise TypeError("options must be a sequence of option texts, not a str")
        options = tuple(options)
        valid = letters_for(len(options))
    else:
        valid = letters_for(4 if n_options is None else n_options)
    if text is None:
        return _EMPTY
    if not isinstance(text, str):
        raise TypeError(f"text must be str or None, got {type(text).__name__}")
    try:
        result = _extract_memo(text, valid, options) if len(text) <= _MEMO_MAX_CHARS else _extract(text, valid, options)
    except Exception:  # pragma: no cover - a bug must not abort an eval run
        return _UNPARSED
    if result.letter is not None and result.letter not in valid:  # belt and braces
        return _UNPARSED
    return result


# The same output is often scored more than once in a process (``score`` then ``compare``, a leaderboard
# build, the demo): a pure function of (text, valid letters, options), its results are kept for short
# texts. Long texts are not kept (memory) and are rare.
_MEMO_MAX_CHARS = 4096


@functools.lru_cache(maxsize=1 << 16)
def _extract_memo(text: str, valid: tuple[str, ...], options: tuple[str, ...] | None) -> "Extraction":
    return _extract(text, valid, options)


# --------------------------------------------------------------------------
# The extractor
# --------------------------------------------------------------------------

def _bare_letter(m: str) -> str | None:
    core = _strip_edges(m)
    if len(core) == 1 and core in _ALPHABET + _ALPHABET.lower():
        return core.upper()
    return None


def _extract(text: str, valid: tuple[str, ...], options: Sequence[str] | None) -> Extraction:
    t = _strip_reasoning(_normalise(text))
    if not t.strip():
        return _EMPTY
    m = _mask(t)
    if not m.strip():
        return _UNPARSED

    bare = _bare_letter(m)
    if bare is not None:
        return _OK[bare] if bare in valid else _UNPARSED

    sc = _Scan(m)
    opts = _Options(options, m, sc.low)
    eq = opts.equal(m)
    if eq is not None:
        return _OK[valid[eq]]

    vmask = 0
    for v in valid:
        vmask |= _BIT[v]

    def keep(c: _Cand) -> bool:
        if opts.covers(c.start):
            return False  # a letter inside an option text ("Hepatitis B")
        if not c.several:
            return c.mask & vmask != 0  # rule 6: out-of-range letters are not answers
        if c.tier == _T_WEAK:  # loose "X or Y" in prose: both must be real options
            return (c.mask & vmask).bit_count() >= 2
        return True

    # Commitments are collected one tier group at a time, strongest first: a weaker tier only
    # matters when no stronger commitment exists (or, for SOFT, after a self-correction), and
    # most outputs state their answer explicitly.
    regions: list[int] = []
    weak_lines: list[_Cand] = []
    strong = [c for c in _strong_cands(t, m, sc, regions, weak_lines) if keep(c)]
    soft: list[_Cand] | None = None
    chosen = _last_of_best_tier(strong)
    if chosen is None:
        soft = [c for c in _soft_cands(m, sc) if keep(c)]
        chosen = _last_of_best_tier(soft)
    if chosen is None:
        weak = [c for c in _weak_cands(m, sc, weak_lines) if keep(c)]
        # Echoed option lists: two or more different letters starting lines that
        # carry text ("A. Preparation\nB. Dissection") are a list, not an answer.
        if len({c.first for c in weak if c.list_item}) >= 2:
            weak = [c for c in weak if not c.list_item]
        chosen = _last_of_best_tier(weak)
    if chosen is not None:
        # "The answer is A. Wait, frame 7 shows cutting, so C": a correction marker
        # after the winner lets a later SOFT-or-stronger commitment take over.
        marks = _correction_marks(m, sc.low, chosen.end)
        if marks:
            if soft is None:
                soft = [c for c in _soft_cands(m, sc) if keep(c)]
            later = [c for c in strong + soft if c.start >= marks[-1]]
            if later:
                best_tier = max(c.tier for c in later)
                chosen = max((c for c in later if c.tier == best_tier), key=_order)

    refusals: list[re.Match[str]] = []
    if chosen is None or chosen.tier < _T_STRONG or chosen.several:  # else no refusal can win (rule 7)
        refusals = [r for r in sc.matches(_REFUSAL_RE, _REFUSAL_STARTS) if not opts.covers(r.start())]
    if refusals:
        # An explicit answer anywhere, or any commitment after the last refusal
        # phrase, overrides the refusal ("I can't be sure, but the answer is B").
        if chosen is None or (chosen.tier < _T_STRONG and chosen.start < refusals[-1].end()):
            return _REFUSAL
        if chosen.several and chosen.start < refusals[-1].end():
            return _REFUSAL

    if chosen is None:
        region = max(regions) if regions else None
        idx = opts.pick(m, region)
        if idx is not None:
            return _OK[valid[idx]]
        return _UNPARSED

    if chosen.several:
        return _HEDGE
    letter = chosen.first
    others = ~_BIT[letter]
    letters = sc.letters()  # an alternative starts at a letter: none follows the winner if no letter does
    if letters and letters[-1] > chosen.end and \
            any(a.start > chosen.end and a.mask & others and keep(a) for a in _alt_cands(m, sc)):
        return _HEDGE  # "The answer is B, but it could also be C"
    if chosen.tier == _T_WEAK and _weak_line_ambiguous(chosen, m, opts, vmask, sc):
        return _UNPARSED
    return _OK[letter]
