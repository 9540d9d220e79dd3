"""A model's response that is not an answer: a failed request, a refused item, or an empty or cut-off reply.

Every reader of a model's text calls :func:`response_failure` before extraction
(the MedHorizon, Sureon and SurgHiBench scorers, in lmms-eval and VLMEvalKit
alike, and the resumable journal), so a failure never reaches the extractor:
it is a status of its own in every record and report, never an answer.

=================  ===========================================================================
status             what the response was
=================  ===========================================================================
``request_error``  a request that still failed after the retries: this package's bridge
                   marker (:func:`request_error_text`), lmms-eval's placeholder
                   ``[LMMS_EVAL_REQUEST_FAILED after N retries] <error>`` (its ``openai``,
                   ``gemini`` and ``async_openai`` wrappers), or a VLMEvalKit failure string
                   (``FAIL_MSG`` of ``vlmeval/inference*.py`` and ``vlmeval/constant.py``, the
                   API wrappers' ``fail_msg``: all begin "Failed to obtain answer", one "Fail
                   to obtain answer")
``refused``        the provider refused this item for its content: a reply stopped by its
                   content filter (``finish_reason: content_filter``, the partial text kept after
                   the bridge's marker, :func:`refused_text`, never extracted), or an HTTP 400
                   that says the input was flagged by its usage / content policy. Another item
                   of the same run may well be answered, so the run goes on; a resumed run does
                   not ask a refused item again unless told to
``truncated``      an empty reply (nothing but white space), or one the provider cut at the
                   length limit (``finish_reason: length``; the bridge's marker,
                   :func:`truncated_text`, keeps the partial text after it)
=================  ===========================================================================

Each of them makes a run exit non-zero (``medhorizon-tasks run``, ``vlmeval``):
the items are listed by uid, scored wrong, and counted apart from ``invalid``.

``None`` is no response at all (an item without a prediction): that is
``missing``, the readers' own status, not a failure of this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["REQUEST_ERROR", "REFUSED", "TRUNCATED", "FAILURE_STATUSES", "Failure", "response_failure",
           "request_error_text", "refused_text", "truncated_text"]

REQUEST_ERROR = "request_error"
REFUSED = "refused"
TRUNCATED = "truncated"
FAILURE_STATUSES = (REQUEST_ERROR, REFUSED, TRUNCATED)

_REQUEST_ERROR_TAG = "MEDHORIZON_REQUEST_ERROR"
_REFUSED_TAG = "MEDHORIZON_REFUSED"
_TRUNCATED_TAG = "MEDHORIZON_TRUNCATED"
_REASON_CHARS = 300

# each failure text at the start of a response (leading white space allowed), with the reason it carries
_FAILURES = (
    (re.compile(rf"\[{_REQUEST_ERROR_TAG}(?P<head>[^\]]*)\]\s*(?P<reason>.*)", re.S), REQUEST_ERROR),
    (re.compile(rf"\[{_TRUNCATED_TAG}(?P<head>[^\]]*)\]\s*(?P<reason>.*)", re.S), TRUNCATED),
    (re.compile(rf"\[{_REFUSED_TAG}(?P<head>[^\]]*)\]\s*(?P<reason>.*)", re.S), REFUSED),
    (re.compile(r"\[LMMS_EVAL_REQUEST_FAILED(?P<head>[^\]]*)\]\s*(?P<reason>.*)", re.S), REQUEST_ERROR),
    (re.compile(r"(?P<head>)(?P<reason>Fail(?:ed)? to obtain answer.*)", re.S), REQUEST_ERROR),
)


@dataclass(frozen=True)
class Failure:
    """A response that is not an answer: its ``status`` (:data:`FAILURE_STATUSES`) and one line saying why."""

    status: str
    reason: str


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _REASON_CHARS else text[: _REASON_CHARS - 3] + "..."


def response_failure(text) -> Failure | None:
    """The failure a model's response stands for, or None when it may go to the extractor.

    ``None`` (no response) and anything that is not text return None: the
    readers count those themselves (``missing``, a malformed field).
    """
    if not isinstance(text, str):
        return None
    stripped = text.lstrip()
    if not stripped:
        return Failure(TRUNCATED, "empty reply")
    for pattern, status in _FAILURES:
        m = pattern.match(stripped)
        if m is None:
            continue
        head, reason = m.group("head").strip(" :"), m.group("reason")
        if status in (TRUNCATED, REFUSED):  # the marker's head is why; what follows is the partial answer
            return Failure(status, _one_line(head or ("cut at the length limit" if status == TRUNCATED
                                                      else "refused by the provider")))
        return Failure(status, _one_line(": ".join(p for p in (head, reason.strip()) if p)) or "request failed")
    return None


def request_error_text(attempts: int, error: str) -> str:
    """The response a bridge writes for a request that failed ``attempts`` times (last error ``error``)."""
    return f"[{_REQUEST_ERROR_TAG} after {attempts} attempt(s)] {_one_line(str(error))}"


def truncated_text(why: str, partial: str | None = None) -> str:
    """The response a bridge writes for a reply cut by the length limit or empty (``why``), the partial text kept
    after the marker for the record (never extracted)."""
    return f"[{_TRUNCATED_TAG}: {_one_line(why)}] {partial or ''}".rstrip()


def refused_text(why: str, partial: str | None = None) -> str:
    """The response a bridge writes for an item the provider refused for its content (``why``: its words, or
    ``finish_reason=content_filter``), any partial text kept after the marker for the record (never extracted)."""
    return f"[{_REFUSED_TAG}: {_one_line(why)}] {partial or ''}".rstrip()
