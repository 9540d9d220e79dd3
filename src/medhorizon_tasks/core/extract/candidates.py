"""The commitment tiers of rule 5 (AUTH/STRONG, SOFT, WEAK, and the alternatives of rule 8), read from
one output's scan, and the choice among them."""

from __future__ import annotations

import re
from collections.abc import Iterable

from .cues import (
    _ALT_AFTER,
    _ALT_BEFORE,
    _ALT_BEFORE_STARTS,
    _BOLD,
    _CORRECTION,
    _CORRECTION_WORDS,
    _CUES,
    _LINE_NEG,
    _LINE_POS,
    _OPTION_WORD,
    _OPTION_WORD_PREFIXES,
    _PAREN,
    _POST_CUE,
    _REASON_WORD,
    _T_SOFT,
    _T_STRONG,
    _T_WEAK,
    _may_occur,
    _Near,
)
from .letters import _BIT, _LETTER_RE, _M_OPTION, _M_SOFT, _read_letter
from .options import _Options
from .scan import _Cand, _Scan


def _last_of_best_tier(cands: list[_Cand]) -> _Cand | None:
    """The last commitment of the strongest tier among ``cands``."""
    if not cands:
        return None
    best = max(c.tier for c in cands)
    return max((c for c in cands if c.tier == best), key=_order)


def _correction_marks(m: str, low: str | None, after: int) -> list[int]:
    if not _may_occur(low, _CORRECTION_WORDS):
        return []
    return [mk.end() for mk in _CORRECTION.finditer(m, after)]


def _order(c: _Cand) -> tuple[int, int]:
    """Later end wins; on a tie the wider mention ("A or B" over its "B")."""
    return (c.end, -c.start)


def _weak_line_ambiguous(chosen: _Cand, m: str, opts: _Options, vmask: int, sc: _Scan) -> bool:
    """Does the line of a WEAK winner mention another valid, unrejected letter?"""
    line_start = m.rfind("\n", 0, chosen.start) + 1
    line_end = m.find("\n", chosen.end)
    if line_end < 0:
        line_end = len(m)
    own = chosen.first
    for lm in _LETTER_RE.finditer(m, line_start, line_end):
        i = lm.start(1)
        if chosen.start <= i < chosen.end:
            continue
        tok = _read_letter(m, i, _M_SOFT, i > 0 and m[i - 1] in "([")
        if tok is None or tok[0] == own or not _BIT[tok[0]] & vmask or opts.covers(i):
            continue
        if sc.pre_rejected(i) or sc.post_rejected(i + 1):
            continue
        return True
    return False


def _strong_cands(t: str, m: str, sc: _Scan, regions: list[int], weak_lines: list[_Cand]) -> list[_Cand]:
    """AUTH and STRONG commitments; adds the answer-region starts to ``regions`` and the WEAK
    line items (read in the same pass) to ``weak_lines``."""
    cands: list[_Cand] = []
    low = sc.low
    for rx, tier, mode, is_region, words, starts in _CUES:
        if tier < _T_STRONG or (words is not None and not _may_occur(low, words)):
            continue
        for cm in _cue_matches(rx, m, sc, starts):
            if is_region:
                regions.append(cm.end())
            g = sc.group(cm.end(), mode)
            if g is not None:
                c = sc.cand_from_group(g, tier, "cue", truncate_on_reject=True)
                if c is not None:
                    cands.append(c)

    # "B is correct", "(c) is the answer"
    for i in sc.letters():
        decorated = i > 0 and m[i - 1] in "(["
        if (decorated or m[i].isupper()) and _POST_CUE.match(m, i + 1):
            tok = _read_letter(m, i, _M_SOFT, decorated)
            if tok is not None and not sc.pre_rejected(i):
                cands.append(_Cand(i, i + 1, tok[0], _BIT[tok[0]], _T_STRONG, "post"))

    for bm in _BOLD.finditer(t) if "**" in t or "__" in t else ():  # on the unmasked text: "**C**"
        c = sc.single(bm.start(2), bm.group(2), _T_STRONG, "bold")
        if c is not None:
            cands.append(c)

    for im in sc.line_items():
        i = im.start(3)  # the letter (groups: word, open, letter, ...)
        ch = im.group(3)
        decorated = bool(im.group("word") or im.group("open") or im.group("close") or im.group("punct"))
        rest = im.group("rest").strip()
        if not decorated and rest and not _REASON_WORD.match(rest):
            continue  # "A careful look ...", "I think ..." (but "B because ..." counts)
        tail = m[i + 1:im.end()]
        if rest and _LINE_NEG.search(tail):
            continue  # "A. Preparation - incorrect"
        if rest and _LINE_POS.search(tail):
            c = sc.single(i, ch, _T_STRONG, "verdict")  # "B. Dissection - correct"
            if c is not None:
                cands.append(c)
        else:
            c = sc.single(i, ch, _T_WEAK, "item" if rest else "line", list_item=bool(rest))
            if c is not None:
                weak_lines.append(c)
    return cands


def _soft_cands(m: str, sc: _Scan) -> list[_Cand]:
    """SOFT commitments: "I think it's B", "so D"."""
    cands: list[_Cand] = []
    for rx, tier, mode, is_region, words, starts in _CUES:
        if tier != _T_SOFT or (words is not None and not _may_occur(sc.low, words)):
            continue
        for cm in _cue_matches(rx, m, sc, starts):
            g = sc.group(cm.end(), mode)
            if g is not None:
                c = sc.cand_from_group(g, tier, "cue", truncate_on_reject=True)
                if c is not None:
                    cands.append(c)
    return cands


def _weak_cands(m: str, sc: _Scan, weak_lines: list[_Cand]) -> list[_Cand]:
    """WEAK commitments: letter groups in prose, line items (read by _strong_cands), "(C)",
    "option C", an upper-case letter ending the output."""
    cands: list[_Cand] = []
    group_until = -1  # letters inside an already-read loose group start no new one
    for i in sc.letters():
        # Loose groups in prose: "A or B", "either B or C", "B/C", "Between B and D".
        if i >= group_until and (m[i].isupper() or (i > 0 and m[i - 1] in "([")) \
                and sc.link(i + 1, _M_SOFT) is not None:  # else a group of one: not loose prose
            g = sc.group(i, _M_SOFT, upper_cont=True)
            if g is not None and g[4]:
                group_until = sc.close(g[2])
                c = sc.cand_from_group(g, _T_WEAK, "group", truncate_on_reject=False)
                if c is not None:
                    cands.append(c)
    cands.extend(weak_lines)

    for pm in _PAREN.finditer(m) if "(" in m or "[" in m else ():
        c = sc.single(pm.start(1), pm.group(1), _T_WEAK, "paren")
        if c is not None:
            cands.append(c)

    for om in sc.matches(_OPTION_WORD, _OPTION_WORD_PREFIXES):
        if sc.line_lead(om.start()):
            continue  # "Option B: ..." starting a line is a line item (above)
        g = sc.group(om.end(), _M_OPTION)
        if g is not None:
            c = sc.cand_from_group(g, _T_WEAK, "option", truncate_on_reject=False)
            if c is not None:
                cands.append(c)

    # An upper-case letter ending the output: "... so the frames show D."
    j = len(m)
    while j > 0 and (m[j - 1].isspace() or m[j - 1] in ".!)]\"'>"):
        j -= 1
    if j > 0:
        lm = _LETTER_RE.match(m, j - 1)
        if lm is not None and m[j - 1].isupper():
            tok = _read_letter(m, j - 1, _M_SOFT, False)
            if tok is not None:
                c = sc.single(j - 1, m[j - 1], _T_WEAK, "final")
                if c is not None:
                    cands.append(c)
    return cands


def _alt_cands(m: str, sc: _Scan) -> Iterable[_Cand]:
    """Alternatives offered after a commitment: "C could also fit", "..., but it could also be C"."""
    for i in sc.letters():
        if (m[i].isupper() or (i > 0 and m[i - 1] in "([")) and _ALT_AFTER.match(m, i + 1):
            u = m[i].upper()
            yield _Cand(i, i + 1, u, _BIT[u], _T_WEAK, "alt")
    for am in sc.matches(_ALT_BEFORE, _ALT_BEFORE_STARTS):
        g = sc.group(am.end(), _M_SOFT)
        if g is not None:
            c = sc.cand_from_group(g, _T_WEAK, "alt", truncate_on_reject=False)
            if c is not None:
                yield c


def _cue_matches(rx: re.Pattern[str], m: str, sc: _Scan, starts: frozenset[str] | _Near | None
                 ) -> Iterable[re.Match[str]]:
    if starts is None:
        return rx.finditer(m)
    if isinstance(starts, _Near):
        return sc.matches_near(rx, starts)
    return sc.matches(rx, starts)
