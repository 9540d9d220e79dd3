"""The MedHorizon authors' answer rule, as a named extraction (``authors``) beside the package's own.

The authors' public scorer (``evaluate_medhorizon.py``, about 150 lines in a
public review repository) normalises an answer this way: *upper-case the
output, take the first standalone letter A-D (regex ``\\b([A-D])\\b``), else
the first character*. This module implements that description (the script
itself is not copied here), so that a user who must reproduce the paper's
Table 2 to the decimal can score with the rule the authors used, and see how
many items the two rules read differently.

What follows from the rule, on purpose (these are the authors' results, not
bugs to fix here):

* "a careful look shows D" -> ``A`` (the article "a", upper-cased);
* "Option (C) is wrong, the answer is B" -> ``C`` (the first letter wins);
* ``<think>Maybe A</think> The answer is C`` -> ``A`` (no reasoning blocks);
* an answer given as the option text ("Dissection") -> its first character,
  ``D`` here, a letter only by chance;
* a refusal or a hedge names whatever letter it mentions first.

Two details the description leaves open, decided here and said: surrounding
whitespace is removed before "the first character" is taken (``" B"`` is B),
and a first character outside A-D is no answer at all (``letter=None``,
status ``unparsed``; the authors' scorer compares it with the key and counts
it wrong, which is the same score). Options are ignored: the authors' rule
knows only the letters A-D.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .choice import Extraction

__all__ = ["extract_authors", "AUTHORS_LETTERS"]

AUTHORS_LETTERS = ("A", "B", "C", "D")
_STANDALONE = re.compile(r"\b([A-D])\b")
_EMPTY = Extraction(None, "empty")
_UNPARSED = Extraction(None, "unparsed")
_OK = {c: Extraction(c, "ok") for c in AUTHORS_LETTERS}


def extract_authors(text: str | None, options: Sequence[str] | None = None, *,
                    n_options: int | None = None) -> Extraction:
    """The authors' rule (module doc): upper-case, the first standalone A-D, else the first character.

    Same signature and result type as :func:`~medhorizon_tasks.core.extract.extract_choice`, so either
    rule can be named where an extraction is chosen; ``options`` and ``n_options`` are accepted and
    ignored, as the authors' scorer ignores them.
    """
    if text is None:
        return _EMPTY
    if not isinstance(text, str):
        raise TypeError(f"text must be str or None, got {type(text).__name__}")
    upper = text.strip().upper()
    if not upper:
        return _EMPTY
    m = _STANDALONE.search(upper)
    letter = m.group(1) if m else upper[0]
    return _OK.get(letter, _UNPARSED)
