"""Answer extraction for multiple-choice video QA.

This is the one place where free-form model output becomes an option letter.
Every benchmark in the package (MedHorizon: 4 options A-D; SurgHiBench-style
7-option sets: A-G) calls :func:`extract_choice`, so the rules below are the
scoring contract.  The function never guesses: when the output does not
commit to exactly one valid option it returns ``letter=None`` together with a
status that says why.

Statuses
--------
``ok``        one valid letter was committed to.
``empty``     the output is ``None``, blank, or only a reasoning block.
``refusal``   the model declined ("I cannot determine ...", "As an AI ...").
``hedge``     the final commitment names two or more letters ("A or B").
``unparsed``  nothing usable (no commitment, an out-of-range letter, several
              option texts, an ambiguous list of letters, ...).

Rules, in the order they are applied
------------------------------------
0.  Input is NFKC-normalised (full-width "（Ｃ）" and "答案：C" become ASCII),
    curly quotes are straightened, zero-width characters and chat-template
    tokens ("<|im_end|>", "</s>") removed, and markdown / LaTeX decoration
    (``* _ ` # { } $ |``, ``\\text``, ``\\(``) is blanked out *in place*, so
    character positions never move.
1.  Reasoning blocks are ignored: ``<think>…</think>`` (also ``<thinking>``,
    ``<reasoning>``, ``<thought>``, ``<analysis>``) is removed.  A closing tag whose opening
    is missing or mismatched (``</think>`` alone, ``<think>…</reasoning>``)
    means "everything before me was reasoning": the text is cut after it.
    An opening tag that is never closed at all (an output truncated
    mid-thought) only loses the tag: its content is all the model produced,
    and the rules below decide whether it commits.
2.  Empty / whitespace-only / ``None`` (or nothing left after 1) -> ``empty``.
3.  A bare single letter ("C", "c", "C.", " (C) ", "**C**", a lone "a" = A)
    -> that letter, or ``unparsed`` if it is outside the valid range.
4.  An output equal to one option text (ignoring case, outer punctuation and
    markdown) -> that option's letter.  This runs before the letter search so
    that an option such as "Both A and B" is not read as a hedge.
5.  Letter commitments are collected with their position and a strength
    tier; the LAST commitment of the strongest tier present wins:
      AUTH    structured or final: ``{"answer": "C"}`` (also in ```json
              fences, with extra keys), ``\\boxed{C}``, ``\\boxed{\\text{C}}``,
              ``<answer>C</answer>``, "Final answer: (d)", "最终答案".
      STRONG  explicit: "The answer is B", "Answer: c", "correct option is C",
              "I choose C", "I'd go with c", "**C**", "C is correct",
              "B is the answer", "B. Dissection - correct", 答案是C / 答案：C /
              选C / 选项C / 正确答案为 C, "Antwort: C", "Respuesta: C",
              "Réponse : C".
      SOFT    conversational: "I think it's B", "so D", "therefore C",
              "must be A".  Upper-case letters only (or "(c)").
      WEAK    formatting only: "Option C", "(C)", a line starting "C." /
              "C)" / "C: text" / "B because ...", a letter alone on a line,
              an upper-case letter ending the output, and letter groups such
              as "A or B" (see 8).
    Tiers exist because explanations often follow the answer ("The answer is
    B. Option A shows ..., option C ..."): a later *weaker* mention must not
    override an earlier explicit answer.  One exception: after a self-
    correction marker ("wait", "actually", "on second thought") that follows
    the winner, the last SOFT-or-stronger commitment after the marker wins.
    What is NOT a commitment:
      * the article "a"/"A" and the pronoun "I" used as words ("a careful
        look", "A careful look", "I think"), letters inside words, hyphen or
        abbreviation forms ("C-arm", "X-ray", "e.g.", "I'm"), "N/A";
      * rejected letters: "Option C is wrong", "not A", "rule out B",
        "D over B", "A. Preparation - incorrect", and "B?" (a question);
      * letters that are part of a matched option text ("Vitamin D");
      * WEAK line items when two or more different letters start lines with
        text after them (an echoed option list "A. Preparation\nB. ...");
      * a WEAK winner whose line also mentions another valid letter
        ("(A) Preparation (B) Dissection") -> ``unparsed``.
6.  A letter outside the valid range ("E" with 4 options) is discarded; if no
    other commitment remains the result is ``unparsed``.
7.  Refusals ("I cannot determine the answer from the provided frames",
    "I'm unable to answer", "I can't tell", "Not enough information",
    "cannot be determined", "As an AI ...", "Sorry, I can't help with that")
    -> ``refusal``, unless the winning commitment comes after the last
    refusal phrase ("I cannot be sure, but the answer is B" -> B) or is
    explicit (AUTH/STRONG), so that "The answer is C, although the exact
    instrument cannot be determined" stays C.
8.  Hedges: the winning commitment names two or more different letters ("A or
    B", "either B or C", "B/C", "The answer is A or C", "A and B are both
    possible", "Between B and D", 答案：A或B) -> ``hedge``; so does a single
    winner followed by an alternative ("..., but it could also be C").  A
    rejected option followed by a commitment is not a hedge ("Option C is
    wrong, the answer is B" -> B; "Not A. Not B. The answer is D" -> D).
9.  Option text: when no letter commitment exists, option texts are matched
    case-insensitively, whitespace-normalised and as whole words, in the text
    after the last answer cue ("answer is", "answer:", "I choose", a JSON
    answer value, ``\\boxed{``) if there is one, else in the whole output.
    Longer options hide options they contain ("Lymph node dissection" hides
    "Dissection").  An option starting right after the cue wins; otherwise
    exactly one distinct option must appear; several -> ``unparsed``.
10. Nothing recognisable -> ``unparsed``.
11. The function never raises on ``str`` input and never returns a letter
    outside the valid range.

Valid letters are the first ``len(options)`` letters of A-Z, else the first
``n_options``, else A-D.

Cost
----
Time is linear in the length of the output, whatever it holds (thousands of
letters, letter chains, repeated option texts, long runs of spaces, unclosed
tags): no position is examined more than a bounded number of times, so a
960 KB output takes seconds, not hours. Option patterns are compiled once per
option text, and only for outputs that may contain it. Weaker tiers are only
searched when no stronger commitment exists (or, for SOFT, after a
self-correction), which never changes a result.
"""

from __future__ import annotations

import bisect
import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate, compress
from operator import methodcaller
from typing import NamedTuple

__all__ = ["Extraction", "extract_choice", "strip_reasoning", "letters_for", "STATUSES"]

STATUSES = ("ok", "empty", "refusal", "hedge", "unparsed")

_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


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
# Sets of letters are bit masks (A = 1): a group's letters are then merged in O(1).
_BIT = {c: 1 << k for k, c in enumerate(_ALPHABET)}


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
    """Turn a model's free-form answer into an option letter (see module doc)."""
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


# --------------------------------------------------------------------------
# Rejection ("not A", "Option C is wrong") and other context tests
# --------------------------------------------------------------------------

_PRE_REJECT = re.compile(
    r"""(?ix)
    (?:
        (?<![a-z])(?:not|never|nor|neither|except|excluding|exclude[sd]?|eliminat(?:e|es|ed|ing)
                  |against|unlike|than|over|besides)
      | n't
      | (?<![a-z])rul(?:e|es|ed|ing)\s+out
      | (?<![a-z])instead\s+of
      | 不是|不选|不選|排除|而非|并非|並非
    )
    (?:\s+(?:choose|chose|pick|select|go\s+with|opt\s+for|say|be|consider))?
    [\s,:]*(?:(?:the\s+)?(?:option|choice|answer|letter)\s*)?[\s"'(\[<]*$
    """
)
_NEG_WORDS = (
    r"(?:wrong|incorrect|unlikely|less\s+likely|false|ruled\s+out|eliminated|excluded|impossible"
    r"|implausible|inconsistent|inappropriate|irrelevant|too\s+(?:early|late)|not\s+(?:correct|right))"
)
_POST_REJECT = re.compile(
    rf"""(?ix)
    [ \t)\]"'>]*
    (?:
        \?                                             # "B?" is a question, not an answer
      | [:\-–—][ \t]*(?:no\b|✗|❌|{_NEG_WORDS})       # "A: no", "A - wrong"
      | (?:[:\-–—][ \t]*)?
        (?:(?:is|are|was|were|seems?|looks?|appears?|would\s+be|must\s+be|can\s+be|could\s+be
              |should\s+be|has\s+been|have\s+been)\s+)?
        (?:(?:also|clearly|definitely|obviously|certainly|both|all|therefore|thus|likely|probably)\s+)?
        {_NEG_WORDS}\b
      | (?:isn't|aren't|wasn't|doesn't|don't|can't|cannot|won't|wouldn't|shouldn't|couldn't|didn't
              |(?:does|do|did|is|are|was|would|could|should|can|will)\s+not)\b
      | (?:是)?(?:错误|错的|錯誤|错|錯|不对|不對|不正确|不正確|被排除)
    )
    """
)


# Every ASCII match of _PRE_REJECT starts with one of these (lower case); searched in the
# lower-cased text, without IGNORECASE, the regex engine can skip to them.
_PRE_REJECT_HINT = re.compile("not|nev|nor|nei|exc|eli|aga|unl|than|over|bes|n't|rul|ins")


def _pre_rejected(m: str, start: int) -> bool:
    return _PRE_REJECT.search(m[max(0, start - 48):start]) is not None


def _post_rejected(m: str, end: int) -> bool:
    return _POST_REJECT.match(m, end) is not None


# --------------------------------------------------------------------------
# Cues
# --------------------------------------------------------------------------

_ADVERBS = r"(?:(?:likely|probably|most\s+likely|clearly|definitely|therefore|thus|then|indeed|simply|still)\s*[,:]?\s*)?"
_VERB = (r"(?:is|would\s+be|should\s+be|will\s+be|must\s+be|has\s+to\s+be|seems\s+to\s+be|"
         r"appears\s+to\s+be|=|:|-|–|—)(?![A-Za-z])")
_ADJ = (r"(?:(?:the|my|your|our)\s+)?(?:(?:correct|right|best|most\s+(?:likely|appropriate|probable|plausible)"
        r"|likely|true|predicted|proper|only\s+correct)\s+)?")

_T_WEAK, _T_SOFT, _T_STRONG, _T_AUTH = 0, 1, 2, 3

class _Near(NamedTuple):
    """Where an ASCII match can start: at a run in ``starts``, at most ``back`` runs of letters
    before a run in ``keys`` (which are starts too)."""

    keys: frozenset[str]
    back: int
    starts: frozenset[str]


# The patterns built on _ADJ hold a run naming the answer, at most 3 runs after the match starts
# ("the most likely answer"): trying them at every "the" would cost more than all other cues.
_ADJ_STARTS = frozenset({"the", "my", "your", "our", "correct", "right", "best", "most", "likely", "true",
                         "predicted", "proper", "only"})
_ANSWER_KEYS = frozenset({"answer"})
_OPTION_KEYS = frozenset({"option", "choice", "response", "selection", "pick", "letter", "fit", "match"})
_ANSWER_NEAR = _Near(_ANSWER_KEYS, 3, _ADJ_STARTS | _ANSWER_KEYS)
_OPTION_CUE_NEAR = _Near(_OPTION_KEYS, 3, _ADJ_STARTS | _OPTION_KEYS)
# Words that start an ASCII match of a pattern guarded by (?<![A-Za-z]): such a match starts
# where a run of letters starts, and the run is one of these words (see _Scan.matches).
_CHOOSE_STARTS = frozenset({"choose", "chose", "choosing", "pick", "picked", "picking", "select", "selected",
                            "selecting", "go", "going", "opt", "opting", "vote", "settle", "lean", "leaning", "wahle",
                            "elijo", "escojo", "choisis"})
_SOFT_STARTS = frozenset({"it", "its", "must", "should", "has", "would", "i", "probably", "most", "likely", "so",
                          "thus", "therefore", "hence", "consequently", "then"})

# (regex, tier, reading mode, marks the start of an "answer region" for option text, words, starts):
# where an ASCII text can match: every match contains one of ``words`` (for _may_occur; None: no
# such test) and starts with one of ``starts`` (_Scan.matches) or near them (_Near; None: anywhere).
_CUES: list[tuple[re.Pattern[str], int, int, bool, tuple[str, ...] | None, frozenset[str] | _Near | None]] = [
    # --- AUTH: structured or final answers -------------------------------
    (re.compile(r"\\boxed\s*|\\fbox\s*"), _T_AUTH, _M_ANSWER, True, ("\\boxed", "\\fbox"), None),
    (re.compile(r"(?i)<\s*answer\s*>\s*"), _T_AUTH, _M_ANSWER, True, ("answer",), None),
    # JSON / dict keys (underscores are masked: "final_answer" reads "final answer")
    (re.compile(r"""(?i)["'](?:final\s*answer|answer|final|choice|option|selected\s*option|selection"""
                r"""|prediction|pred|label|correct\s*(?:answer|option|choice))["']\s*:\s*"""),
     _T_AUTH, _M_ANSWER, True, ("answer", "final", "choice", "option", "selection", "pred", "label"), None),
    (re.compile(r"(?i)(?<![A-Za-z])final(?:\s+(?:answer|choice|option|response|verdict|decision|pick))?"
                rf"(?![A-Za-z])\s*(?:{_VERB}\s*:?\s*)?{_ADVERBS}"), _T_AUTH, _M_ANSWER, True,
     None, frozenset({"final"})),
    (re.compile(r"最终答案|最終答案|(?i:endg[üu]ltige\s+antwort|respuesta\s+final|r[ée]ponse\s+finale)"
                r"\s*(?:是|为|為|(?i:ist|lautet|es|est))?\s*:?\s*"), _T_AUTH, _M_ANSWER, True,
     ("antwort", "respuesta", "ponse"), None),
    # --- STRONG: explicit answer statements --------------------------------
    (re.compile(rf"(?i)(?<![A-Za-z</]){_ADJ}answer(?![A-Za-z])\s*(?:{_VERB}\s*:?\s*)?{_ADVERBS}"),
     _T_STRONG, _M_ANSWER, True, ("answer",), _ANSWER_NEAR),
    # ("another option is B" offers an alternative, it does not answer)
    (re.compile(rf"(?i)(?<![A-Za-z])(?<!another )(?<!other )(?<!alternative )"
                rf"{_ADJ}(?:option|choice|response|selection|pick|letter|fit|match)"
                rf"(?![A-Za-z])\s*{_VERB}\s*:?\s*{_ADVERBS}"), _T_STRONG, _M_ANSWER, True,
     ("option", "choice", "response", "selection", "pick", "letter", "fit", "match"), _OPTION_CUE_NEAR),
    (re.compile(r"(?i)(?<![A-Za-z])(?:choose|chose|choosing|pick|picked|picking|select|selected|selecting"
                r"|go(?:ing)?\s+with|opt(?:ing)?\s+for|vote\s+for|settle\s+on|lean(?:ing)?\s+towards?"
                r"|w[äa]hle|elijo|escojo|choisis)(?![A-Za-z])\s*:?\s*"), _T_STRONG, _M_ANSWER, True,
     None, _CHOOSE_STARTS),
    (re.compile(r"(?:正确|正確)?答案\s*(?:应该|應該|应|應|就)?\s*(?:是|为|為|选|選|:)?\s*:?\s*"),
     _T_STRONG, _M_ANSWER, True, (), None),
    (re.compile(r"(?:我)?(?:应该|應該|应|應)?(?:选择|選擇|选|選)(?:项|項)?\s*(?:是|为|為|:)?\s*"),
     _T_STRONG, _M_ANSWER, True, (), None),
    (re.compile(r"(?i)(?<![A-Za-z])(?:(?:die|meine)\s+)?(?:richtige\s+|korrekte\s+)?antwort(?![A-Za-z])"
                r"\s*(?:ist|lautet|w[äa]re|:)?\s*:?\s*"), _T_STRONG, _M_ANSWER, True,
     ("antwort",), frozenset({"die", "meine", "richtige", "korrekte", "antwort"})),
    (re.compile(r"(?i)(?<![A-Za-z])(?:(?:la|mi)\s+)?respuesta(?:\s+correcta)?(?![A-Za-z])"
                r"\s*(?:es|ser[ií]a|:)?\s*:?\s*"), _T_STRONG, _M_ANSWER, True, ("respuesta",),
     frozenset({"la", "mi", "respuesta"})),
    (re.compile(r"(?i)(?<![A-Za-z])(?:(?:la|ma)\s+)?(?:bonne\s+)?r[ée]ponse(?:\s+(?:correcte|juste))?"
                r"(?![A-Za-z])\s*(?:est|serait|:)?\s*:?\s*"), _T_STRONG, _M_ANSWER, True,
     ("ponse",), frozenset({"la", "ma", "bonne", "reponse"})),
    # --- SOFT: conversational --------------------------------------------
    (re.compile(r"(?i)(?<![A-Za-z])(?:it'?s|it\s+is|it\s+must\s+be|it\s+should\s+be|it\s+would\s+be"
                r"|must\s+be|should\s+be|has\s+to\s+be|would\s+be|i\s+think|i\s+believe|i\s+guess"
                r"|i\s+suspect|i'd\s+say|i\s+would\s+say|i\s+say|probably|most\s+likely|likely"
                r"|so|thus|therefore|hence|consequently|then)(?![A-Za-z])[\s,:]*"
                r"(?:(?:it'?s|it\s+is|that)\s+)?"), _T_SOFT, _M_SOFT, False, None, _SOFT_STARTS),
]

# A letter followed by a verdict: "B is correct", "C is the answer", "(c) is right", "C正确".
_POST_CUE = re.compile(
    r"""(?ix)[ \t)\]"'>]*
    (?:
        (?:is|would\s+be|seems\s+to\s+be|appears\s+to\s+be|must\s+be)\s+(?:(?:the|my|our)\s+)?
            (?:(?:correct|right|best|most\s+(?:likely|appropriate|plausible|probable)|only\s+correct)\s+)?
            (?:answer|option|choice|one|guess|bet|pick)(?![a-z])
      | (?:is\s+|seems\s+)?(?:(?:the\s+)?(?:correct|right|best\s+(?:answer|option|choice|fit|match))
            |fits\s+best|matches\s+best|best\s+fits|best\s+matches)(?![a-z])
      | (?:是正确|是正確|正确|正確|是对|是對)
    )"""
)
_BOLD = re.compile(rf"(\*\*|__)[ \t]*(?:[(\[][ \t]*)?{_LETTER_RE.pattern}[ \t]*(?:[)\]][ \t]*)?(?:[.:][ \t]*)?\1")
# Start of a line: "C. Dissection", "(C) text", "- b) ...", "C: text", "C" alone.
_LINE_ITEM = re.compile(
    r"(?m)^[ \t>\-•+]*(?:\d+[.)][ \t]+)?(?P<word>(?i:option|choice)[ \t]*)?(?:(?P<open>[(\[])[ \t]*)?"
    rf"{_LETTER_RE.pattern}[ \t]*(?P<close>[)\]])?[ \t]*(?P<punct>[.:,\-–—])?[ \t]*(?P<rest>[^\n]*)$"
)
_REASON_WORD = re.compile(r"(?i)(?:because|since|as|given|due)(?![A-Za-z])")
# Per-option verdict lists: "B. Dissection - correct", "A: no", "Option C: ... ✗".
_VERDICT_TAIL = r"[\s.!)\]]*$"
_LINE_NEG = re.compile(
    r"(?i)(?:[-–—:(,]|(?<![a-z])(?:is|are|seems|looks))\s*(?:incorrect|wrong|no|unlikely|false|ruled\s+out|excluded"
    r"|eliminated|not\s+(?:correct|right|likely|visible|present|shown|this(?:\s+one)?)|✗|❌|✘|×)" + _VERDICT_TAIL
)
_LINE_POS = re.compile(
    r"(?i)(?:[-–—:(,]|(?<![a-z])(?:is|seems|looks))\s*(?:correct|right|yes|true|✓|✔|✅|most\s+likely"
    r"|best(?:\s+(?:fit|match|answer|option))?|(?:the\s+)?(?:correct\s+)?answer)" + _VERDICT_TAIL
)
_PAREN = re.compile(rf"[(\[][ \t]*{_LETTER_RE.pattern}[ \t]*[)\]]")
_OPTION_WORD = re.compile(r"(?i)(?<![A-Za-z])(?:option|choice|letter|opci[oó]n|alternative)\s*")
_OPTION_WORD_PREFIXES = ("option", "choice", "letter", "opcion", "alternative")  # no (?![A-Za-z]): "options"

# Alternatives after a commitment: "..., but it could also be C", "or maybe C".
_ALT_BEFORE = re.compile(r"(?i)(?<![A-Za-z])(?:(?:could|might|may)\s+(?:also\s+)?be|or\s+(?:maybe|possibly|perhaps)"
                         r"|alternatively|possibly|perhaps|maybe)(?![A-Za-z])[\s,:]*")
_ALT_BEFORE_STARTS = frozenset({"could", "might", "may", "or", "alternatively", "possibly", "perhaps", "maybe"})
_ALT_AFTER = re.compile(r"""(?i)[ \t)\]"']*(?:(?:could|might|may)\s+also|is\s+also\s+(?:possible|plausible|likely|correct)"""
                        r"|also\s+(?:possible|plausible|fits?|works?)|could\s+work|is\s+a\s+close\s+second)")

_CORRECTION_WORDS = ("wait", "actually", "second", "correction", "reconsider", "considering", "hmm")
_CORRECTION = re.compile(r"(?i)(?<![A-Za-z])(?:wait|actually|on\s+second\s+thought|correction|let\s+me\s+reconsider"
                         r"|re-?considering|hmm+)(?![A-Za-z])")

_REFUSAL_RE = re.compile(
    r"""(?ix)
      (?<![a-z])(?:can\s*not|can't|could\s+not|couldn't|unable\s+to|not\s+able\s+to|impossible\s+to
                  |(?:is|it's)\s+not\s+possible\s+to)
        \s+(?:(?:reliably|confidently|definitively|accurately|really|clearly|fully|precisely|possibly)\s+)?
        (?:determine[ds]?|tell|answer|say|identify|decide|infer|conclude|judge|know
          |(?:see|view|access|watch|process|analy[sz]e)\s+(?:the\s+|any\s+)?(?:video|frames?|images?|clip|footage|content)
          |provide\s+(?:an?\s+|the\s+)?answer|help|assist
          |be\s+(?:determined|answered|inferred|identified|established|known|told))(?![a-z])
    | (?<![a-z])not\s+enough\s+(?:visual\s+)?(?:information|info|context|detail|details|evidence)
    | (?<![a-z])insufficient\s+(?:visual\s+)?(?:information|evidence|context|detail|details)
    | (?<![a-z])as\s+an\s+(?:ai|language\s+model)(?![a-z])
    | (?<![a-z])sorry(?![a-z])[^.\n]{0,60}?(?:can't|cannot|can\s+not|unable|not\s+able|won't)
    | (?<![a-z])i\s+(?:don't|do\s+not)\s+know(?![a-z])
    | (?<![a-z])(?:no|without)\s+(?:video|frames?|images?)\s+(?:(?:was|were|is|are|has\s+been|have\s+been)\s+)?
        (?:provided|available|attached|shown|given)
    | 无法|無法|不能确定|不能確定|信息不足|資訊不足
    | (?<![a-z])(?:kann|können)\s+(?:ich\s+)?(?:das\s+)?(?:nicht|keine)(?![a-z])
    | (?<![a-z])no\s+(?:puedo|es\s+posible)(?![a-z])
    | (?<![a-z])je\s+ne\s+(?:peux|suis)\s+pas(?![a-z])
    """
)
_REFUSAL_STARTS = frozenset({"can", "cannot", "could", "couldn", "unable", "not", "impossible", "is", "it",
                             "insufficient", "as", "sorry", "i", "no", "without", "kann", "je"})


def _may_occur(low: str | None, words: tuple[str, ...]) -> bool:
    """Can a pattern whose ASCII matches all contain one of ``words`` match the text?

    ``low`` is the lower-cased text when it is pure ASCII, else None (always
    True: under re.IGNORECASE some non-ASCII letters match ASCII ones, "ı"
    matches "i"). Most outputs contain few of the cue words; skipping a regex
    that cannot match saves a scan of the whole text, and never changes a result.
    """
    if low is None:
        return True
    for w in words:
        if w in low:
            return True
    return False


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
