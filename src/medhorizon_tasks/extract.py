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
    ``<reasoning>``, ``<thought>``) is removed.  A closing tag whose opening
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
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Extraction", "extract_choice", "letters_for", "STATUSES"]

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
        options = list(options)
        valid = letters_for(len(options))
    else:
        valid = letters_for(4 if n_options is None else n_options)
    if text is None:
        return _EMPTY
    if not isinstance(text, str):
        raise TypeError(f"text must be str or None, got {type(text).__name__}")
    try:
        result = _extract(text, valid, options)
    except Exception:  # pragma: no cover - a bug must not abort an eval run
        return _UNPARSED
    if result.letter is not None and result.letter not in valid:  # belt and braces
        return _UNPARSED
    return result


# --------------------------------------------------------------------------
# Normalisation
# --------------------------------------------------------------------------

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
                         "\u00b4": "'", "\u2032": "'"})
_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad]")

_REASONING_TAG = re.compile(r"<\s*(/?)\s*(think|thinking|reasoning|thought)\s*>", re.I)

# Blanked out (same length) before searching: markdown emphasis/headings/tables,
# LaTeX wrappers and braces (so \boxed{\text{C}} reads "\boxed       C  " and a
# JSON object reads ' "answer": "C" '), and "N/A", which is not "N or A".
_MASK = re.compile(
    r"\\(?:text(?:bf|it|rm|tt|sf|normal)?|math(?:rm|bf|it|tt|sf|bb)|mbox|bf|textsc)(?![A-Za-z])"
    r"|\\[()\[\]]"
    r"|(?<![A-Za-z])[Nn]/[Aa](?![A-Za-z])"
    r"|[*_`#{}$|]"
)


# Chat-template and tokenizer leftovers: "<|im_end|>", "</s>", "<eos>", "[/INST]".
_SPECIAL_TOKENS = re.compile(
    r"<\|[A-Za-z0-9_.\-]{1,40}\|>|</?s>|<(?:eos|bos|pad|unk|end_of_turn|start_of_turn)>|\[/?INST\]", re.I
)


def _normalise(text: str) -> str:
    t = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    return _SPECIAL_TOKENS.sub(" ", _INVISIBLE.sub("", t))


def _strip_reasoning(t: str) -> str:
    # One linear pass over the tags (a regex with a back-reference would be
    # quadratic on outputs full of unclosed tags).
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


def _mask(t: str) -> str:
    return _MASK.sub(lambda m: " " * len(m.group()), t)


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


@dataclass(frozen=True)
class _Tok:
    letter: str  # upper case
    start: int
    end: int


def _read_letter(m: str, p: int, mode: int, decorated: bool) -> _Tok | None:
    lm = _LETTER_RE.match(m, p)
    if lm is None:
        return None
    ch = lm.group(1)
    i = lm.start(1)
    j = i + 1
    while j < len(m) and m[j] in " \t":
        j += 1
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
    return _Tok(ch.upper(), i, i + 1)


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


@dataclass(frozen=True)
class _Group:
    toks: tuple[_Tok, ...]
    seps: tuple[str, ...]  # connector between toks[i] and toks[i+1]
    end: int


def _read_group(m: str, pos: int, mode: int, upper_cont: bool = False) -> _Group | None:
    """Read "C", "(c)", "option C", "either B or C", "A, B or D" at ``pos``."""
    pm = _PREFIX.match(m, pos)
    p = pm.end()
    decorated = bool(_DECOR_HINT.search(m, pos, p))
    first = _read_letter(m, p, mode, decorated)
    if first is None:
        return None
    toks = [first]
    seps: list[str] = []
    end = first.end
    while True:
        cm = _CONNECTOR.match(m, end)
        if cm is None:
            break
        cont_mode = _M_SOFT if upper_cont else mode
        nxt = _read_letter(m, cm.end(), cont_mode, bool(_DECOR_HINT.search(m, cm.start(), cm.end())))
        if nxt is None:
            break
        toks.append(nxt)
        seps.append(cm.group("sep").replace(" ", "").replace("\t", ""))
        end = nxt.end
    # "B, C is wrong" is two clauses, not the list "B, C": a comma only joins
    # letters when a real connector ("or", "/", "and") follows later on.
    if seps and seps[-1] == ",":
        k = seps.index(",")
        if not any(s != "," for s in seps[k:]):
            toks, seps = toks[: k + 1], seps[:k]
            end = toks[-1].end
    return _Group(tuple(toks), tuple(seps), _CLOSE.match(m, end).end())


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

# (regex, tier, reading mode, marks the start of an "answer region" for option text)
_CUES: list[tuple[re.Pattern[str], int, int, bool]] = [
    # --- AUTH: structured or final answers -------------------------------
    (re.compile(r"\\boxed\s*|\\fbox\s*"), _T_AUTH, _M_ANSWER, True),
    (re.compile(r"(?i)<\s*answer\s*>\s*"), _T_AUTH, _M_ANSWER, True),
    # JSON / dict keys (underscores are masked: "final_answer" reads "final answer")
    (re.compile(r"""(?i)["'](?:final\s*answer|answer|final|choice|option|selected\s*option|selection"""
                r"""|prediction|pred|label|correct\s*(?:answer|option|choice))["']\s*:\s*"""),
     _T_AUTH, _M_ANSWER, True),
    (re.compile(r"(?i)(?<![A-Za-z])final(?:\s+(?:answer|choice|option|response|verdict|decision|pick))?"
                rf"(?![A-Za-z])\s*(?:{_VERB}\s*:?\s*)?{_ADVERBS}"), _T_AUTH, _M_ANSWER, True),
    (re.compile(r"最终答案|最終答案|(?i:endg[üu]ltige\s+antwort|respuesta\s+final|r[ée]ponse\s+finale)"
                r"\s*(?:是|为|為|(?i:ist|lautet|es|est))?\s*:?\s*"), _T_AUTH, _M_ANSWER, True),
    # --- STRONG: explicit answer statements --------------------------------
    (re.compile(rf"(?i)(?<![A-Za-z</]){_ADJ}answer(?![A-Za-z])\s*(?:{_VERB}\s*:?\s*)?{_ADVERBS}"),
     _T_STRONG, _M_ANSWER, True),
    # ("another option is B" offers an alternative, it does not answer)
    (re.compile(rf"(?i)(?<![A-Za-z])(?<!another )(?<!other )(?<!alternative )"
                rf"{_ADJ}(?:option|choice|response|selection|pick|letter|fit|match)"
                rf"(?![A-Za-z])\s*{_VERB}\s*:?\s*{_ADVERBS}"), _T_STRONG, _M_ANSWER, True),
    (re.compile(r"(?i)(?<![A-Za-z])(?:choose|chose|choosing|pick|picked|picking|select|selected|selecting"
                r"|go(?:ing)?\s+with|opt(?:ing)?\s+for|vote\s+for|settle\s+on|lean(?:ing)?\s+towards?"
                r"|w[äa]hle|elijo|escojo|choisis)(?![A-Za-z])\s*:?\s*"), _T_STRONG, _M_ANSWER, True),
    (re.compile(r"(?:正确|正確)?答案\s*(?:应该|應該|应|應|就)?\s*(?:是|为|為|选|選|:)?\s*:?\s*"),
     _T_STRONG, _M_ANSWER, True),
    (re.compile(r"(?:我)?(?:应该|應該|应|應)?(?:选择|選擇|选|選)(?:项|項)?\s*(?:是|为|為|:)?\s*"),
     _T_STRONG, _M_ANSWER, True),
    (re.compile(r"(?i)(?<![A-Za-z])(?:(?:die|meine)\s+)?(?:richtige\s+|korrekte\s+)?antwort(?![A-Za-z])"
                r"\s*(?:ist|lautet|w[äa]re|:)?\s*:?\s*"), _T_STRONG, _M_ANSWER, True),
    (re.compile(r"(?i)(?<![A-Za-z])(?:(?:la|mi)\s+)?respuesta(?:\s+correcta)?(?![A-Za-z])"
                r"\s*(?:es|ser[ií]a|:)?\s*:?\s*"), _T_STRONG, _M_ANSWER, True),
    (re.compile(r"(?i)(?<![A-Za-z])(?:(?:la|ma)\s+)?(?:bonne\s+)?r[ée]ponse(?:\s+(?:correcte|juste))?"
                r"(?![A-Za-z])\s*(?:est|serait|:)?\s*:?\s*"), _T_STRONG, _M_ANSWER, True),
    # --- SOFT: conversational --------------------------------------------
    (re.compile(r"(?i)(?<![A-Za-z])(?:it'?s|it\s+is|it\s+must\s+be|it\s+should\s+be|it\s+would\s+be"
                r"|must\s+be|should\s+be|has\s+to\s+be|would\s+be|i\s+think|i\s+believe|i\s+guess"
                r"|i\s+suspect|i'd\s+say|i\s+would\s+say|i\s+say|probably|most\s+likely|likely"
                r"|so|thus|therefore|hence|consequently|then)(?![A-Za-z])[\s,:]*"
                r"(?:(?:it'?s|it\s+is|that)\s+)?"), _T_SOFT, _M_SOFT, False),
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

# Alternatives after a commitment: "..., but it could also be C", "or maybe C".
_ALT_BEFORE = re.compile(r"(?i)(?<![A-Za-z])(?:(?:could|might|may)\s+(?:also\s+)?be|or\s+(?:maybe|possibly|perhaps)"
                         r"|alternatively|possibly|perhaps|maybe)(?![A-Za-z])[\s,:]*")
_ALT_AFTER = re.compile(r"""(?i)[ \t)\]"']*(?:(?:could|might|may)\s+also|is\s+also\s+(?:possible|plausible|likely|correct)"""
                        r"|also\s+(?:possible|plausible|fits?|works?)|could\s+work|is\s+a\s+close\s+second)")

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


@dataclass(frozen=True)
class _Cand:
    start: int  # first letter position
    end: int
    letters: tuple[str, ...]  # upper case, in order of mention
    tier: int
    kind: str  # cue, post, bold, verdict, item, line, paren, option, final, group, alt
    list_item: bool = False  # a line item followed by text (possibly an echoed option list)

    @property
    def distinct(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(self.letters))


def _cand_from_group(g: _Group, tier: int, kind: str, m: str, truncate_on_reject: bool) -> _Cand | None:
    toks = g.toks
    if _pre_rejected(m, toks[0].start):
        return None
    if _post_rejected(m, toks[-1].end):
        # "The answer is B and D is wrong": the verdict belongs to the last
        # letter, so keep the explicitly introduced first one.
        if truncate_on_reject and len(toks) > 1:
            toks = toks[:1]
        else:
            return None
    return _Cand(toks[0].start, toks[-1].end, tuple(t.letter for t in toks), tier, kind)


def _single(tok_start: int, ch: str, tier: int, kind: str, m: str, list_item: bool = False) -> _Cand | None:
    if _pre_rejected(m, tok_start) or _post_rejected(m, tok_start + 1):
        return None
    return _Cand(tok_start, tok_start + 1, (ch.upper(),), tier, kind, list_item)


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


def _norm_for_compare(s: str) -> str:
    return " ".join(_strip_edges(s).split()).casefold()


class _Options:
    """Where the option texts occur in the (masked) output."""

    def __init__(self, options: Sequence[str] | None, m: str) -> None:
        self.keys: list[str | None] = []
        spans: list[tuple[int, int, int]] = []
        for idx, opt in enumerate(options or ()):
            key = self._normalise_option(opt, idx)
            self.keys.append(key)
            if not key:
                continue
            words = key.split(" ")
            pat = r"\s+".join(re.escape(w) for w in words)
            if _edge_bound(key[0]):
                pat = r"(?<!\w)" + pat
            if _edge_bound(key[-1]):
                pat += r"(?!\w)"
            for mm in re.finditer(pat, m, re.I):
                spans.append((mm.start(), mm.end(), idx))
        # Longest match first; a shorter option inside an accepted longer
        # match ("Dissection" in "Lymph node dissection") does not count.
        spans.sort(key=lambda s: (-(s[1] - s[0]), s[0]))
        accepted: list[tuple[int, int, int]] = []
        for s in spans:
            if all(s[1] <= a[0] or s[0] >= a[1] for a in accepted):
                accepted.append(s)
        self.spans = sorted(accepted)
        self._starts = [s[0] for s in self.spans]

    @staticmethod
    def _normalise_option(opt: object, idx: int) -> str | None:
        if not isinstance(opt, str):
            return None
        s = _mask(_normalise(opt))
        # Options are meant to come without their letter; tolerate "B. Dissection".
        s = re.sub(rf"^\s*[(\[]?\s*{_ALPHABET[idx]}\s*[)\].:]\s+", "", s, flags=re.I)
        s = " ".join(_strip_edges(s).split())
        return s or None

    def equal(self, m: str) -> int | None:
        out = _norm_for_compare(m)
        hits = [i for i, k in enumerate(self.keys) if k and k.casefold() == out]
        return hits[0] if len(hits) == 1 else None

    def covers(self, pos: int) -> bool:
        k = bisect.bisect_right(self._starts, pos) - 1  # accepted spans do not overlap
        return k >= 0 and pos < self.spans[k][1]

    def pick(self, m: str, region_start: int | None) -> int | None:
        """The one option named after ``region_start`` (whole text if None)."""
        if region_start is None:
            spans = self.spans
        else:
            spans = [s for s in self.spans if s[0] >= region_start]
            if spans and re.fullmatch(r"""[\s:"'(\[\-–—.,]*""", m[region_start:spans[0][0]]):
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
        return Extraction(bare, "ok") if bare in valid else _UNPARSED

    opts = _Options(options, m)
    eq = opts.equal(m)
    if eq is not None:
        return Extraction(valid[eq], "ok")

    cands, alts, regions = _collect(t, m)
    validset = set(valid)

    def keep(c: _Cand) -> bool:
        if opts.covers(c.start):
            return False  # a letter inside an option text ("Hepatitis B")
        d = c.distinct
        if len(d) == 1:
            return d[0] in validset  # rule 6: out-of-range letters are not answers
        if c.tier == _T_WEAK:  # loose "X or Y" in prose: both must be real options
            return sum(x in validset for x in d) >= 2
        return True

    cands = [c for c in cands if keep(c)]
    alts = [c for c in alts if keep(c)]

    # Echoed option lists: two or more different letters starting lines that
    # carry text ("A. Preparation\nB. Dissection") are a list, not an answer.
    item_letters = {c.letters[0] for c in cands if c.list_item}
    if len(item_letters) >= 2:
        cands = [c for c in cands if not c.list_item]

    chosen = _choose(cands, m)

    refusals = [r for r in _REFUSAL_RE.finditer(m) if not opts.covers(r.start())]
    if refusals:
        # An explicit answer anywhere, or any commitment after the last refusal
        # phrase, overrides the refusal ("I can't be sure, but the answer is B").
        if chosen is None or (chosen.tier < _T_STRONG and chosen.start < refusals[-1].end()):
            return _REFUSAL
        if len(chosen.distinct) > 1 and chosen.start < refusals[-1].end():
            return _REFUSAL

    if chosen is None:
        region = max(regions) if regions else None
        idx = opts.pick(m, region)
        if idx is not None:
            return Extraction(valid[idx], "ok")
        return _UNPARSED

    if len(chosen.distinct) > 1:
        return _HEDGE
    letter = chosen.letters[0]
    if any(a.start > chosen.end and set(a.distinct) - {letter} for a in alts):
        return _HEDGE  # "The answer is B, but it could also be C"
    if chosen.tier == _T_WEAK and _weak_line_ambiguous(chosen, m, opts, validset):
        return _UNPARSED
    return Extraction(letter, "ok")


def _order(c: _Cand) -> tuple[int, int]:
    """Later end wins; on a tie the wider mention ("A or B" over its "B")."""
    return (c.end, -c.start)


def _choose(cands: list[_Cand], m: str) -> _Cand | None:
    """The last commitment of the strongest tier, honouring self-corrections."""
    chosen = None
    for tier in (_T_AUTH, _T_STRONG, _T_SOFT, _T_WEAK):
        pool = [c for c in cands if c.tier == tier]
        if pool:
            chosen = max(pool, key=_order)
            break
    if chosen is None:
        return None
    # "The answer is A. Wait, frame 7 shows cutting, so C": a correction marker
    # after the winner lets a later SOFT-or-stronger commitment take over.
    marks = [mk.end() for mk in _CORRECTION.finditer(m, chosen.end)]
    if marks:
        later = [c for c in cands if c.start >= marks[-1] and c.tier >= _T_SOFT]
        if later:
            best_tier = max(c.tier for c in later)
            chosen = max((c for c in later if c.tier == best_tier), key=_order)
    return chosen


def _weak_line_ambiguous(chosen: _Cand, m: str, opts: _Options, validset: set[str]) -> bool:
    """Does the line of a WEAK winner mention another valid, unrejected letter?"""
    line_start = m.rfind("\n", 0, chosen.start) + 1
    line_end = m.find("\n", chosen.end)
    if line_end < 0:
        line_end = len(m)
    own = chosen.letters[0]
    for lm in _LETTER_RE.finditer(m, line_start, line_end):
        i = lm.start(1)
        if chosen.start <= i < chosen.end:
            continue
        tok = _read_letter(m, i, _M_SOFT, i > 0 and m[i - 1] in "([")
        if tok is None or tok.letter == own or tok.letter not in validset or opts.covers(i):
            continue
        if _pre_rejected(m, i) or _post_rejected(m, i + 1):
            continue
        return True
    return False


def _collect(t: str, m: str) -> tuple[list[_Cand], list[_Cand], list[int]]:
    """All commitments, alternatives, and answer-region starts in the text."""
    cands: list[_Cand] = []
    alts: list[_Cand] = []
    regions: list[int] = []

    for rx, tier, mode, is_region in _CUES:
        for cm in rx.finditer(m):
            if is_region:
                regions.append(cm.end())
            g = _read_group(m, cm.end(), mode)
            if g is not None:
                c = _cand_from_group(g, tier, "cue", m, truncate_on_reject=True)
                if c is not None:
                    cands.append(c)

    group_until = -1  # letters inside an already-read loose group start no new one
    for lm in _LETTER_RE.finditer(m):
        i = lm.start(1)
        ch = lm.group(1)
        decorated = i > 0 and m[i - 1] in "(["
        # "B is correct", "(c) is the answer"
        if (ch.isupper() or decorated) and _POST_CUE.match(m, i + 1):
            tok = _read_letter(m, i, _M_SOFT, decorated)
            if tok is not None and not _pre_rejected(m, i):
                cands.append(_Cand(i, i + 1, (tok.letter,), _T_STRONG, "post"))
        # Loose groups in prose: "A or B", "either B or C", "B/C", "Between B and D".
        if (ch.isupper() or decorated) and i >= group_until:
            g = _read_group(m, i, _M_SOFT, upper_cont=True)
            if g is not None and len(g.toks) > 1:
                group_until = g.end
                c = _cand_from_group(g, _T_WEAK, "group", m, truncate_on_reject=False)
                if c is not None:
                    cands.append(c)
        # Alternatives: "C could also fit"
        if (ch.isupper() or decorated) and _ALT_AFTER.match(m, i + 1):
            alts.append(_Cand(i, i + 1, (ch.upper(),), _T_WEAK, "alt"))

    for am in _ALT_BEFORE.finditer(m):
        g = _read_group(m, am.end(), _M_SOFT)
        if g is not None:
            c = _cand_from_group(g, _T_WEAK, "alt", m, truncate_on_reject=False)
            if c is not None:
                alts.append(c)

    for bm in _BOLD.finditer(t):  # on the unmasked text: "**C**"
        c = _single(bm.start(2), bm.group(2), _T_STRONG, "bold", m)
        if c is not None:
            cands.append(c)

    for im in _LINE_ITEM.finditer(m):
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
            c = _single(i, ch, _T_STRONG, "verdict", m)  # "B. Dissection - correct"
        else:
            c = _single(i, ch, _T_WEAK, "item" if rest else "line", m, list_item=bool(rest))
        if c is not None:
            cands.append(c)

    for pm in _PAREN.finditer(m):
        c = _single(pm.start(1), pm.group(1), _T_WEAK, "paren", m)
        if c is not None:
            cands.append(c)

    for om in _OPTION_WORD.finditer(m):
        if not m[m.rfind("\n", 0, om.start()) + 1:om.start()].strip(" \t>-•+"):
            continue  # "Option B: ..." starting a line is a line item (above)
        g = _read_group(m, om.end(), _M_OPTION)
        if g is not None:
            c = _cand_from_group(g, _T_WEAK, "option", m, truncate_on_reject=False)
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
                c = _single(j - 1, m[j - 1], _T_WEAK, "final", m)
                if c is not None:
                    cands.append(c)

    return cands, alts, regions
