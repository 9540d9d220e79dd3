"""The rule tables: rejections, answer cues by tier, verdicts, line items, alternatives,
self-corrections and refusals, and where each can match (``_may_occur``)."""

from __future__ import annotations

import re
from collections import namedtuple

from .letters import _LETTER_RE, _M_ANSWER, _M_SOFT

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

# Where an ASCII match can start: at a run in ``starts``, at most ``back`` runs of letters before a run in
# ``keys`` (which are starts too). (collections' namedtuple: typing costs start-up time.)
_Near = namedtuple("_Near", ["keys", "back", "starts"])


class _Lazy:
    """A pattern compiled when first used: the rules for other languages (German, Spanish, French, Chinese)
    are tried only on outputs that may hold their words, and most runs never compile them (each costs about
    a millisecond of every command's start-up). Same results as the compiled pattern."""

    __slots__ = ("_source", "_flags", "_rx")

    def __init__(self, source: str, flags: int = 0) -> None:
        self._source, self._flags, self._rx = source, flags, None

    def _compiled(self) -> re.Pattern[str]:
        if self._rx is None:
            self._rx = re.compile(self._source, self._flags)
        return self._rx

    def match(self, *args):
        return self._compiled().match(*args)

    def finditer(self, *args):
        return self._compiled().finditer(*args)

    @property
    def pattern(self) -> str:
        return self._source


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
_CUES: list[tuple[re.Pattern[str] | _Lazy, int, int, bool, tuple[str, ...] | None, frozenset[str] | _Near | None]] = [
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
    (_Lazy(r"最终答案|最終答案|(?i:endg[üu]ltige\s+antwort|respuesta\s+final|r[ée]ponse\s+finale)"
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
    (_Lazy(r"(?:正确|正確)?答案\s*(?:应该|應該|应|應|就)?\s*(?:是|为|為|选|選|:)?\s*:?\s*"),
     _T_STRONG, _M_ANSWER, True, (), None),
    (_Lazy(r"(?:我)?(?:应该|應該|应|應)?(?:选择|選擇|选|選)(?:项|項)?\s*(?:是|为|為|:)?\s*"),
     _T_STRONG, _M_ANSWER, True, (), None),
    (_Lazy(r"(?i)(?<![A-Za-z])(?:(?:die|meine)\s+)?(?:richtige\s+|korrekte\s+)?antwort(?![A-Za-z])"
                r"\s*(?:ist|lautet|w[äa]re|:)?\s*:?\s*"), _T_STRONG, _M_ANSWER, True,
     ("antwort",), frozenset({"die", "meine", "richtige", "korrekte", "antwort"})),
    (_Lazy(r"(?i)(?<![A-Za-z])(?:(?:la|mi)\s+)?respuesta(?:\s+correcta)?(?![A-Za-z])"
                r"\s*(?:es|ser[ií]a|:)?\s*:?\s*"), _T_STRONG, _M_ANSWER, True, ("respuesta",),
     frozenset({"la", "mi", "respuesta"})),
    (_Lazy(r"(?i)(?<![A-Za-z])(?:(?:la|ma)\s+)?(?:bonne\s+)?r[ée]ponse(?:\s+(?:correcte|juste))?"
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
