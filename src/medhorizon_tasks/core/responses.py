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
``oom``            the accelerator ran out of memory on this item (a local model's
                   ``torch.cuda.OutOfMemoryError``, caught per item by the bridges, the probes
                   and ``medhorizon_resume``: :func:`oom_text` names the item's frame count and
                   size). The accelerator's cache is emptied and the run goes on with the next
                   item; a resumed run asks it again (it is not the model's answer)
=================  ===========================================================================

Each of them makes a run exit non-zero (``medhorizon-tasks run``, ``vlmeval``):
the items are listed by uid, scored wrong, and counted apart from ``invalid``.

``None`` is no response at all (an item without a prediction): that is
``missing``, the readers' own status, not a failure of this module.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["REQUEST_ERROR", "REFUSED", "TRUNCATED", "OOM", "FAILURE_STATUSES", "Failure", "response_failure",
           "request_error_text", "refused_text", "truncated_text", "oom_text", "is_out_of_memory",
           "empty_accelerator_cache"]

REQUEST_ERROR = "request_error"
REFUSED = "refused"
TRUNCATED = "truncated"
OOM = "oom"
FAILURE_STATUSES = (REQUEST_ERROR, REFUSED, TRUNCATED, OOM)

_REQUEST_ERROR_TAG = "MEDHORIZON_REQUEST_ERROR"
_REFUSED_TAG = "MEDHORIZON_REFUSED"
_TRUNCATED_TAG = "MEDHORIZON_TRUNCATED"
_OOM_TAG = "MEDHORIZON_OOM"
_REASON_CHARS = 300

# each failure text at the start of a response (leading white space allowed), with the reason it carries
_FAILURES = (
    (re.compile(rf"\[{_REQUEST_ERROR_TAG}(?P<head>[^\]]*)\]\s*(?P<reason>.*)", re.S), REQUEST_ERROR),
    (re.compile(rf"\[{_TRUNCATED_TAG}(?P<head>[^\]]*)\]\s*(?P<reason>.*)", re.S), TRUNCATED),
    (re.compile(rf"\[{_REFUSED_TAG}(?P<head>[^\]]*)\]\s*(?P<reason>.*)", re.S), REFUSED),
    (re.compile(rf"\[{_OOM_TAG}(?P<head>[^\]]*)\]\s*(?P<reason>.*)", re.S), OOM),
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
        if status in (TRUNCATED, REFUSED, OOM):  # the marker's head is why; what follows is the partial answer
            return Failure(status, _one_line(head or {TRUNCATED: "cut at the length limit", REFUSED:
                                                      "refused by the provider", OOM: "out of memory"}[status]))
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


def oom_text(what: str, error) -> str:
    """The response a bridge writes for an item on which the accelerator ran out of memory: ``what`` it was given
    (:func:`~.video.planned_frames.describe_visuals`: frame count and size, so a report names the plans that do not
    fit) and the error's own words, all in the marker (nothing after it is read)."""
    why = f"{what}: {error}".replace("[", "(").replace("]", ")")  # the marker's head ends at the first "]"
    return f"[{_OOM_TAG}: {_one_line(why)}]"


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is the accelerator running out of memory: torch's ``OutOfMemoryError``
    (``torch.cuda.OutOfMemoryError``, ``torch.OutOfMemoryError`` since torch 2.5, and any subclass), or the
    ``RuntimeError`` older torch and other back ends raise with "out of memory" in its text. Known by class,
    so that core imports no torch."""
    for cls in type(exc).__mro__:
        if cls.__name__ == "OutOfMemoryError" and cls.__module__.split(".")[0] == "torch":
            return True
    return type(exc) is RuntimeError and "out of memory" in str(exc).lower()


def empty_accelerator_cache() -> None:
    """Give the memory the allocator still caches back to the device after an out-of-memory item (CUDA, and
    Apple's MPS), so the next item starts from what the model itself holds. Nothing without torch loaded."""
    import sys

    torch = sys.modules.get("torch")
    if torch is None:
        return
    import gc

    gc.collect()  # the failed forward's tensors, held by the traceback's frames until collected
    try:
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        mps = getattr(torch, "mps", None)
        if mps is not None and getattr(torch.backends, "mps", None) and torch.backends.mps.is_available():
            mps.empty_cache()
    except Exception:  # noqa: BLE001 (a device that cannot even be asked: the next item will say so)
        pass
