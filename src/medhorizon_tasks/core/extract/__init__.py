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

Modules, lowest first (each imports only those above it)
--------------------------------------------------------
``normalise``   rules 0-1: normalisation, reasoning blocks, masking.
``letters``     standalone letters, reading modes, letter groups; the alphabet and bit masks.
``cues``        the rule tables: rejections, cues by tier, verdicts, alternatives, refusals.
``scan``        ``_Scan`` (one output's memo tables and indexes) and ``_Cand``.
``options``     option-text matching (rules 4 and 9).
``candidates``  the commitment tiers of rule 5 and the alternatives of rule 8.
``choice``      :func:`extract_choice`, :class:`Extraction`, the memo; applies the rules in order.
``order``       :func:`extract_order`, Sureon's temporal-order reader (uses ``normalise`` only).
``authors``     :func:`extract_authors`, the MedHorizon authors' rule (first standalone A-D), kept beside
                this one so that their numbers can be reproduced and the two compared.
``stored``      :func:`extract_many`, a batch of outputs read under one rule through an on-disk cache
                (``$MEDHORIZON_EXTRACTION_CACHE``), so that ``compare`` reuses what ``score`` read.

Named extractions
-----------------
:data:`EXTRACTIONS` maps a rule's name to its function: ``default`` (:func:`extract_choice`, the rules
above) and ``authors`` (:func:`extract_authors`). Both take ``(text, options)`` and return an
:class:`Extraction`; :data:`BESIDE` names the rule reported beside each.
"""

from .authors import extract_authors
from .choice import STATUSES, Extraction, extract_choice, letters_for
from .normalise import strip_reasoning
from .order import clean_answer, extract_order
from .stored import extract_many

__all__ = ["Extraction", "extract_choice", "strip_reasoning", "letters_for", "STATUSES", "extract_order",
           "clean_answer", "extract_authors", "EXTRACTIONS", "BESIDE", "extraction_rule", "extract_many"]

#: The named extractions: ``default`` is this package's rule, ``authors`` the MedHorizon authors' scorer's.
EXTRACTIONS = {"default": extract_choice, "authors": extract_authors}
#: The rule reported beside each one (every MedHorizon report shows both accuracies).
BESIDE = {"default": "authors", "authors": "default"}


def extraction_rule(name: str):
    """The extraction function named ``name`` (a key of :data:`EXTRACTIONS`); ValueError naming the choices."""
    try:
        return EXTRACTIONS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown extraction {name!r} (expected one of {', '.join(EXTRACTIONS)})") from None
