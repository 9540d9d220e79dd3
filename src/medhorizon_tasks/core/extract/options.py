"""Rules 4 and 9 of :mod:`medhorizon_tasks.core.extract`: where the option texts occur in an output,
with the per-option and per-question caches."""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Sequence

from .letters import _ALPHABET
from .normalise import _mask, _normalise

# --------------------------------------------------------------------------
# Option texts
# --------------------------------------------------------------------------

def _edge_bound(ch: str) -> bool:
    """Whole-word boundaries apply to scripts that separate words by spaces."""
    return ch.isalnum() and ord(ch) < 0x2E80


def _strip_edges(s: str) -> str:
    """Drop punctuation, symbols, spaces and controls at both ends."""
    i, j = 0, len(s)
    while i < j and unicodedata.category(s[i])[0] in "PSZC":
        i += 1
    while j > i and unicodedata.category(s[j - 1])[0] in "PSZC":
        j -= 1
    return s[i:j]


@functools.lru_cache(maxsize=None)
def _option_letter_prefix(idx: int) -> re.Pattern[str]:
    return re.compile(rf"^\s*[(\[]?\s*{_ALPHABET[idx]}\s*[)\].:]\s+", re.I)


def _normalise_option(opt: str, idx: int) -> str | None:
    s = _mask(_normalise(opt))
    # Options are meant to come without their letter; tolerate "B. Dissection".
    s = _option_letter_prefix(idx).sub("", s)
    s = " ".join(_strip_edges(s).split())
    return s or None


@functools.lru_cache(maxsize=8192)
def _option_pattern(opt: str, idx: int) -> tuple[str, str, tuple[str, str] | None] | None:
    """(case-folded text, whole-word pattern, (first word, longest word)) of option ``idx``, or
    None when it is blank. The words (lower case) are only given for ASCII options: in an ASCII
    text a match starts where the first word occurs, and contains the longest.

    Cached, and the pattern is compiled (_compiled) only for an output that may contain the
    option: a run asks about the same few thousand option texts for every item, most outputs
    name none of them, and compiling one costs as much as extracting a short answer.
    """
    key = _normalise_option(opt, idx)
    if not key:
        return None
    pat = r"\s+".join(re.escape(w) for w in key.split(" "))
    if _edge_bound(key[0]):
        pat = r"(?<!\w)" + pat
    if _edge_bound(key[-1]):
        pat += r"(?!\w)"
    words = key.lower().split(" ")
    probe = (words[0], max(words, key=len)) if key.isascii() else None
    return key.casefold(), pat, probe


@functools.lru_cache(maxsize=8192)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


_OptionEntry = tuple[str, str, tuple[str, str] | None]


@functools.lru_cache(maxsize=4096)
def _option_set(options: tuple) -> tuple[tuple[_OptionEntry | None, ...], int]:
    """Each option's entry (_option_pattern; None for a blank or non-text option) and the length
    of the longest, for one question's option tuple (cached: runs score the same questions)."""
    entries = tuple(_option_pattern(o, i) if isinstance(o, str) else None for i, o in enumerate(options))
    return entries, max((len(e[0]) for e in entries if e is not None), default=0)


def _span_order(s: tuple[int, int, int]) -> tuple[int, int]:
    return -(s[1] - s[0]), s[0]


_AFTER_CUE = re.compile(r"""[\s:"'(\[\-–—.,]*""")


class _Options:
    """Where the option texts occur in the (masked) output."""

    def __init__(self, options: Sequence[str] | None, m: str, low: str | None) -> None:
        options = tuple(options or ())
        try:
            entries, self._longest = _option_set(options)
        except TypeError:  # an unhashable option (not text): nothing to cache
            entries, self._longest = _option_set.__wrapped__(options)
        self.keys: list[str | None] = [e[0] if e is not None else None for e in entries]  # case-folded
        spans: list[tuple[int, int, int]] = []
        for idx, entry in enumerate(entries):
            if entry is None:
                continue
            probe = entry[2]
            if low is None or probe is None:
                spans.extend((mm.start(), mm.end(), idx) for mm in _compiled(entry[1]).finditer(m))
            elif probe[1] in low:
                rx = _compiled(entry[1])
                # finditer, tried only where the first word occurs (the pattern starts with a
                # look-behind, so finditer would run it at every character)
                first, end = probe[0], 0
                p = low.find(first)
                while p >= 0:
                    if p >= end:
                        mm = rx.match(m, p)
                        if mm is not None:
                            spans.append((p, mm.end(), idx))
                            end = mm.end()
                    p = low.find(first, p + 1)
        if len(spans) > 1:
            # Longest match first; a shorter option inside an accepted longer
            # match ("Dissection" in "Lymph node dissection") does not count.
            # Accepted spans are marked in a byte map: testing a span against
            # every accepted one is quadratic in outputs that repeat options.
            spans.sort(key=_span_order)
            covered = bytearray(len(m))
            accepted = []
            for s in spans:
                a, b = s[0], s[1]
                if covered.find(1, a, b) < 0:
                    accepted.append(s)
                    covered[a:b] = b"\x01" * (b - a)
            spans = sorted(accepted)
        self.spans = spans
        self._starts = [s[0] for s in spans]

    def equal(self, m: str) -> int | None:
        longest = self._longest
        if not longest:
            return None
        # Normalised, the text is its words joined by single spaces (case folding only lengthens
        # it): more words than the longest option has characters cannot be equal to one, and
        # splitting stops there instead of going through a long output.
        words = _strip_edges(m).split(None, longest)
        if len(words) > longest:
            return None
        out = " ".join(words).casefold()
        hits = [i for i, k in enumerate(self.keys) if k and k == out]
        return hits[0] if len(hits) == 1 else None

    def covers(self, pos: int) -> bool:
        k = bisect.bisect_right(self._starts, pos) - 1  # accepted spans do not overlap
        return k >= 0 and pos < self.spans[k][1]

    def pick(self, m: str, region_start: int | None) -> int | None:
        """The one option named after ``region_start`` (whole text if None)."""
        if region_start is None:
            spans = self.spans
        else:
            spans = self.spans[bisect.bisect_left(self._starts, region_start):]
            if spans and _AFTER_CUE.fullmatch(m, region_start, spans[0][0]):
                return spans[0][2]  # the option starts right after the cue
        distinct = {s[2] for s in spans}
        return distinct.pop() if len(distinct) == 1 else None  # several -> unparsed
