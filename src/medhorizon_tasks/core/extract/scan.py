"""One output's scan: the commitment record (``_Cand``) and ``_Scan``, the memo tables and indexes
that keep extraction linear in the length of the output."""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from itertools import accumulate, compress
from operator import methodcaller

from .cues import _LINE_ITEM, _PRE_REJECT_HINT, _Near, _post_rejected, _pre_rejected
from .letters import _ALPHABET, _BIT, _CLOSE, _CONNECTOR, _DECOR_HINT, _LETTER_RE, _M_SOFT, _PREFIX, _read_letter


class _Cand:
    """One commitment: the letters mentioned from ``start`` to ``end``."""

    __slots__ = ("start", "end", "first", "mask", "tier", "kind", "list_item")

    def __init__(self, start: int, end: int, first: str, mask: int, tier: int, kind: str,
                 list_item: bool = False) -> None:
        self.start = start  # first letter position
        self.end = end
        self.first = first  # the first letter mentioned, upper case
        self.mask = mask  # every letter mentioned (_BIT); the rules only ask which, never how often
        self.tier = tier
        self.kind = kind  # cue, post, bold, verdict, item, line, paren, option, final, group, alt
        self.list_item = list_item  # a line item followed by text (possibly an echoed option list)

    @property
    def several(self) -> bool:
        return self.mask & (self.mask - 1) != 0


# A letter group: (first letter, its position, end of the last letter, letters, more than one letter?).
_Group = tuple[str, int, int, int, bool]

_NEWLINE = re.compile("\n")
_NON_LETTERS_TO_SPACE = str.maketrans({c: " " for c in map(chr, range(128)) if not "a" <= c <= "z"})
_PLUS_ONE = (1).__add__
_ONE_LETTER = frozenset(_ALPHABET.lower())
_LEAD = re.compile(r"[ \t>\-•+]*")


class _Scan:
    """Memo tables and indexes for one output: extraction stays linear in its length, and
    ordinary outputs are not scanned once per rule.

    The same letter chain ("A, B, C, ...", "option A or option B or ...") is
    reached from every letter and every cue inside it, and the same positions
    are tested for rejection from several rules; reading the chain again from
    each of them is quadratic.  Here each connector is read once per reading
    mode, and each chain's summary (where it ends, which letters it names,
    whether its connectors are all commas) is computed once per position.

    In ASCII text (nearly every output) the runs of letters are indexed once;
    a pattern that can only match where one of a few words starts is then
    tried there only (``matches``), instead of at every character.
    """

    __slots__ = ("m", "low", "_words", "_word_set_", "_letters", "_links", "_runs", "_tails", "_pre", "_post",
                 "_newlines", "_lead")

    def __init__(self, m: str) -> None:
        self.m = m
        self.low = m.lower() if m.isascii() else None  # for _may_occur
        self._words: tuple[list[str], list[int]] | None = None
        self._word_set_: set[str] | None = None
        self._letters: list[int] | None = None
        # Per reading mode (_M_ANSWER, _M_SOFT, _M_OPTION), keyed by the end of a letter.
        self._links: tuple[dict, dict, dict] = ({}, {}, {})
        self._runs: tuple[dict, dict, dict] = ({}, {}, {})
        self._tails: tuple[dict, dict, dict] = ({}, {}, {})
        self._pre: dict[int, bool] = {}
        self._post: dict[int, bool] = {}
        self._newlines: list[int] | None = None
        self._lead: dict[int, int] = {}

    # -- where patterns can match -------------------------------------------------

    def _word_set(self) -> set[str]:
        if self._word_set_ is None:
            self._word_set_ = set(self._letter_runs()[0])
        return self._word_set_

    def _letter_runs(self) -> tuple[list[str], list[int]]:
        """ASCII text: its runs of letters (lower case, and empty strings) and where each starts.

        Split at every non-letter, so that piece k starts at k + (length of the pieces before
        it): all in C, with no match object per word (those cost more than the searches saved).
        """
        if self._words is None:
            pieces = self.low.translate(_NON_LETTERS_TO_SPACE).split(" ")
            self._words = (pieces, list(accumulate(map(_PLUS_ONE, map(len, pieces)), initial=0)))
        return self._words

    def matches(self, rx: re.Pattern[str], starts: frozenset[str] | tuple[str, ...]) -> Iterable[re.Match[str]]:
        """``rx.finditer(m)``, for a pattern whose ASCII matches start where a run of letters starts.

        ``starts``: the runs a match can start with, as a frozenset of words, or as a tuple of
        prefixes. Trying the pattern only there finds the same matches (finditer resumes at
        the end of each match, and every other position fails), without running a pattern
        that begins with a look-behind at every character of the text.
        """
        if self.low is None:
            return rx.finditer(self.m)
        words, at = self._letter_runs()
        if isinstance(starts, frozenset):
            if starts.isdisjoint(self._word_set()):
                return ()
            return self._try(rx, compress(at, map(starts.__contains__, words)))
        return self._try(rx, compress(at, map(methodcaller("startswith", starts), words)))

    def _try(self, rx: re.Pattern[str], found: Iterable[int]) -> list[re.Match[str]]:
        """finditer's matches, trying only the positions ``found`` (ascending)."""
        m = self.m
        out = []
        end = 0
        for p in found:
            if p >= end:
                mm = rx.match(m, p)
                if mm is not None:
                    out.append(mm)
                    end = mm.end()
        return out

    def matches_near(self, rx: re.Pattern[str], near: _Near) -> Iterable[re.Match[str]]:
        """``rx.finditer(m)``, for a pattern whose ASCII matches hold a run that is one of
        ``near.keys`` ("answer"), at most ``near.back`` runs after the match starts at a run in
        ``near.starts`` ("the most likely answer").

        ``matches`` with every possible first word would try the pattern at every "the".
        """
        if self.low is None:
            return rx.finditer(self.m)
        words, at = self._letter_runs()
        keys, starts = near.keys, near.starts
        if keys.isdisjoint(self._word_set()):
            return ()
        found: set[int] = set()
        for k in compress(range(len(words)), map(keys.__contains__, words)):
            found.add(at[k])
            back, x = near.back, k - 1
            while back and x >= 0:  # the runs before it (empty pieces are separators)
                w = words[x]
                if w:
                    if w in starts:
                        found.add(at[x])
                    back -= 1
                x -= 1
        return self._try(rx, sorted(found))

    def letters(self) -> list[int]:
        """Positions of the standalone letters (_LETTER_RE), ascending."""
        if self._letters is None:
            m = self.m
            if self.low is None:
                self._letters = [lm.start(1) for lm in _LETTER_RE.finditer(m)]
            else:
                # In ASCII text a standalone letter is a run of one letter; the look-arounds do the rest.
                words, at = self._letter_runs()
                self._letters = [p for p in compress(at, map(_ONE_LETTER.__contains__, words))
                                 if _LETTER_RE.match(m, p)]
        return self._letters

    # -- rejection ---------------------------------------------------------------

    def pre_rejected(self, start: int) -> bool:
        r = self._pre.get(start)
        if r is None:
            low = self.low
            if low is not None and _PRE_REJECT_HINT.search(low, max(0, start - 48), start) is None:
                r = False  # no word a rejection starts with in the window
            else:
                r = _pre_rejected(self.m, start)
            self._pre[start] = r
        return r

    def post_rejected(self, end: int) -> bool:
        r = self._post.get(end)
        if r is None:
            r = self._post[end] = _post_rejected(self.m, end)
        return r

    # -- letter groups -------------------------------------------------------------

    def link(self, end: int, mode: int) -> tuple[bool, tuple[str, int]] | None:
        """The connector and letter after the letter ending at ``end``: (connector is a bare comma, letter)."""
        memo = self._links[mode]
        if end in memo:
            return memo[end]
        m = self.m
        res = None
        cm = _CONNECTOR.match(m, end)
        if cm is not None:
            nxt = _read_letter(m, cm.end(), mode, _DECOR_HINT.search(m, cm.start(), cm.end()) is not None)
            if nxt is not None:
                res = (cm.group("sep").replace(" ", "").replace("\t", "") == ",", nxt)
        memo[end] = res
        return res

    def _run(self, end: int, mode: int) -> tuple[int, int, bool]:
        """The letters joined by non-comma connectors after ``end``: (end of the last, their mask,
        whether a comma connector follows them)."""
        memo = self._runs[mode]
        path = []
        pos = end
        while pos not in memo:
            link = self.link(pos, mode)
            if link is None or link[0]:
                memo[pos] = (pos, 0, link is not None)
                break
            path.append((pos, link[1][0]))
            pos = link[1][1] + 1
        res = memo[pos]
        for p, letter in reversed(path):
            res = (res[0], res[1] | _BIT[letter], res[2])
            memo[p] = res
        return memo[end]

    def _tail(self, end: int, mode: int) -> tuple[int, int, bool]:
        """The whole chain after ``end``: (end of its last letter, its mask, all connectors bare commas)."""
        memo = self._tails[mode]
        path = []
        pos = end
        while pos not in memo:
            link = self.link(pos, mode)
            if link is None:
                memo[pos] = (pos, 0, True)
                break
            path.append((pos, link[0], link[1][0]))
            pos = link[1][1] + 1
        res = memo[pos]
        for p, comma, letter in reversed(path):
            res = (res[0], res[1] | _BIT[letter], res[2] and comma)
            memo[p] = res
        return memo[end]

    def group(self, pos: int, mode: int, upper_cont: bool = False) -> _Group | None:
        """Read "C", "(c)", "option C", "either B or C", "A, B or D" at ``pos``.

        A comma only joins letters when a real connector ("or", "/", "and")
        follows later on: "B, C is wrong" is two clauses, not the list "B, C".
        So the group is the first letter, the letters after it joined by real
        connectors, and, past the first comma, the rest of the chain only if
        a real connector comes later.
        """
        m = self.m
        p = _PREFIX.match(m, pos).end()
        first = _read_letter(m, p, mode, p > pos and _DECOR_HINT.search(m, pos, p) is not None)
        if first is None:
            return None
        letter, start = first
        cont = _M_SOFT if upper_cont else mode
        last, mask, comma = self._run(start + 1, cont)
        mask |= _BIT[letter]
        several = last != start + 1
        if comma:
            t_last, t_mask, all_commas = self._tail(last, cont)
            if not all_commas:
                last, mask, several = t_last, mask | t_mask, True
        return letter, start, last, mask, several

    def close(self, end: int) -> int:
        """Where a group ending at ``end`` ends, closing brackets and quotes included."""
        return _CLOSE.match(self.m, end).end()

    def cand_from_group(self, g: _Group, tier: int, kind: str, truncate_on_reject: bool) -> _Cand | None:
        letter, start, last, mask, several = g
        if self.pre_rejected(start):
            return None
        if self.post_rejected(last):
            # "The answer is B and D is wrong": the verdict belongs to the last
            # letter, so keep the explicitly introduced first one.
            if truncate_on_reject and several:
                return _Cand(start, start + 1, letter, _BIT[letter], tier, kind)
            return None
        return _Cand(start, last, letter, mask, tier, kind)

    def single(self, start: int, ch: str, tier: int, kind: str, list_item: bool = False) -> _Cand | None:
        if self.pre_rejected(start) or self.post_rejected(start + 1):
            return None
        u = ch.upper()
        return _Cand(start, start + 1, u, _BIT[u], tier, kind, list_item)

    # -- lines -------------------------------------------------------------------------

    def newlines(self) -> list[int]:
        """Positions of the line breaks, ascending."""
        if self._newlines is None:
            self._newlines = [mm.start() for mm in _NEWLINE.finditer(self.m)] if "\n" in self.m else []
        return self._newlines

    def line_items(self) -> list[re.Match[str]]:
        """``_LINE_ITEM.finditer(m)``: its matches start lines, so only line starts are tried
        (finditer would try its "^" at every character)."""
        m = self.m
        out = []
        for start in [0, *(n + 1 for n in self.newlines())]:
            mm = _LINE_ITEM.match(m, start)
            if mm is not None:
                out.append(mm)
        return out

    def line_lead(self, pos: int) -> bool:
        """Is everything from the start of ``pos``'s line up to ``pos`` list decoration (blanks, >-•+)?"""
        k = bisect.bisect_left(self.newlines(), pos)
        line_start = self._newlines[k - 1] + 1 if k else 0
        lead = self._lead.get(line_start)
        if lead is None:
            lead = self._lead[line_start] = _LEAD.match(self.m, line_start).end()
        return lead >= pos
