"""What a standalone option letter is, how one is read after a cue, and how letters join into groups.

The alphabet and the letter bit masks live here, below every module that shares them.
"""

from __future__ import annotations

import re

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
# Sets of letters are bit masks (A = 1): a group's letters are then merged in O(1).
_BIT = {c: 1 << k for k, c in enumerate(_ALPHABET)}


# --------------------------------------------------------------------------
# Letters
# --------------------------------------------------------------------------

_LAT = "0-9A-Za-z\u00c0-\u024f"
# A standalone letter: not glued to another Latin letter/digit, and not part of
# hyphenated, possessive or abbreviated forms ("C-arm", "X-ray", "C's", "I'd",
# "e.g.", "i.e.").  Compiled WITHOUT re.I so that only ASCII letters match.
_LETTER_RE = re.compile(rf"(?<![{_LAT}])(?<![{_LAT}][-'.])([A-Za-z])(?![{_LAT}])(?![-'.][{_LAT}])")
_NEXT_WORD = re.compile(r"[ \t]+([A-Za-z]+)")

_CONNECTOR_WORDS = frozenset({"or", "and", "nor", "oder", "und", "ou", "et", "o", "y"})
# Words that may follow a sentence-initial letter "A" without making it the article.
_COPULAS = frozenset({
    "is", "was", "would", "should", "must", "seems", "seem", "looks", "appears",
    "fits", "matches", "best", "because", "since", "as", "here", "then", "too",
    "also", "remains", "could", "might", "may", "can", "will", "wins",
})
# Words that make a capital "A" the article even right after an answer cue
# ("Answer: A careful look at the frames shows ... so D").
_ARTICLE_NOUNS = frozenset({
    "careful", "close", "closer", "review", "look", "detailed", "thorough", "quick", "brief",
    "surgeon", "video", "clip", "frame", "few", "lot", "number", "series", "key", "combination",
    "laparoscopic", "good", "possible", "major", "significant", "clear", "single", "similar",
    "more", "reasonable", "plausible", "likely", "definitive", "definite", "certain", "specific",
})
# "I think", "I would" ... : the pronoun, not option I.
_PRONOUN_VERBS = frozenset({
    "think", "am", "was", "would", "will", "believe", "guess", "can", "cannot", "could",
    "have", "had", "do", "did", "don", "need", "must", "should", "may", "might", "feel",
    "choose", "chose", "pick", "select", "suspect", "see", "say", "agree", "go", "lean",
    "mean", "hope", "assume", "notice", "observe", "conclude", "also", "really", "just",
    "want", "prefer", "know", "cant", "dont", "shall", "honestly",
})

# Modes for reading a letter after a cue.
_M_ANSWER = 0  # after an explicit answer cue: any case, article guard for a/i
_M_SOFT = 1  # after a conversational cue: upper case (or bracketed) only
_M_OPTION = 2  # after "option"/"choice": any case, no article guard


_HSPACE = re.compile(r"[ \t]*")


def _read_letter(m: str, p: int, mode: int, decorated: bool) -> tuple[str, int] | None:
    """The letter at ``p`` read in ``mode``: (upper-case letter, its position), or None."""
    lm = _LETTER_RE.match(m, p)
    if lm is None:
        return None
    ch = lm.group(1)
    i = lm.start(1)
    j = _HSPACE.match(m, i + 1).end()
    decorated = decorated or (j < len(m) and m[j] in ")]")
    nw = _NEXT_WORD.match(m, i + 1)
    word = nw.group(1) if nw else None
    low = word.lower() if word else None
    if ch == "I" and low in _PRONOUN_VERBS:
        return None  # "I think ..."
    if not decorated:
        if mode != _M_OPTION and ch in "ai" and word and low not in _CONNECTOR_WORDS:
            return None  # the article "a" / pronoun "i" followed by a word
        if ch == "A" and low in _ARTICLE_NOUNS and mode != _M_OPTION:
            return None
        if mode == _M_SOFT:
            if ch.islower():
                return None
            if ch in "AI" and word and word[0].islower() and low not in _CONNECTOR_WORDS | _COPULAS:
                return None  # "so A careful reading ..." -> article
    return ch.upper(), i


_PREFIX = re.compile(
    r"""[\s"'(\[<]*"""
    r"(?:(?i:either|both|between|entweder|soit)\s+)?"
    r"(?:(?i:option|choice|letter|opci[oó]n|alternative)\s*[:\-]?\s*|选项|選項)?"
    r"""[\s"'(\[<]*"""
)
_DECOR_HINT = re.compile(r"[(\[]|(?i:option|choice|letter|opci|alternative)|选项|選項")
# Between letters of a group: "A or B", "B/C", "A, B or C", "A and B",
# "B, or maybe C", Chinese 或/和, German/French/Spanish or/and.
_CONNECTOR = re.compile(
    r"""[ \t)\]"'>]*(?P<sep>(?:,[ \t]*)?(?:/|&|(?<![A-Za-z])(?i:or|and|nor|oder|und|ou|et|o|y)(?![A-Za-z])"""
    r"""|或者|或|和|与|與|还是|還是|及)|,)"""
    r"""[ \t]*(?:(?i:maybe|possibly|perhaps|probably|even)[ \t]+)?"""
    r"""(?:(?i:option|choice)[ \t]*)?[ \t"'(\[<]*"""
)
_CLOSE = re.compile(r"""[ \t)\]"'>]*""")
