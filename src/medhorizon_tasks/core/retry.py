"""When to retry a request to a model server, and how long to wait: one policy for every client of the package.

Transient failures -- HTTP 408 (the server timed the request out), 409 (a
conflict the providers' own SDKs retry), 429 and 5xx, a connection that fails,
a reply that misses its deadline -- are retried with bounded exponential backoff and
jitter: the wait before retry ``k`` (0-based) is ``base_s * 2**k``, capped at
:data:`MAX_RETRY_WAIT_S`, times a random factor in [0.5, 1] so that many
clients do not retry in step; a server's ``Retry-After`` is honoured instead,
capped the same way. A 400 that refuses one input for its content
(:func:`content_refusal`: flagged by the provider's usage or content policy) is
that item's own outcome, ``refused``: not retried, and no reason to stop asking
the other items. Any other status is permanent (a 400 for a parameter the model
does not take, 401, 403, 404): retrying it only sends the same refused request
again. Used by the LLM judge (:mod:`.judge`) and the OpenAI-compatible
bridge (``medhorizon_openai``).
"""

from __future__ import annotations

import email.utils
import random
import re
import time

__all__ = ["MAX_RETRY_WAIT_S", "transient_status", "content_refusal", "retry_after", "backoff_wait"]

#: Longest wait honoured from a ``Retry-After`` header, and longest backoff, in seconds.
MAX_RETRY_WAIT_S = 60.0


# OpenAI's SDK retries 408, 409, 429 and >= 500 (openai-python ``_should_retry``), as do Anthropic's and Google's
_TRANSIENT = (408, 409, 429)

# what providers answer when they refuse one input for its content: OpenAI ("Invalid prompt: your prompt was
# flagged as potentially violating our usage policy", code invalid_prompt; images: content_policy_violation,
# "rejected as a result of our safety system"), Azure OpenAI (code content_filter, "... triggering Azure
# OpenAI's content management policy"), ResponsibleAIPolicyViolation
_CONTENT_CODES = ("content_filter", "content_policy_violation", "invalid_prompt", "responsibleaipolicyviolation")
_CONTENT_WORDS = re.compile(r"usage polic|content (?:management )?polic|safety system|content filter|"
                            r"flagged (?:as|by|for)", re.I)


def transient_status(code: int) -> bool:
    """Whether an HTTP status is worth retrying: 408 (request timeout), 409 (conflict), 429 (rate limited) and
    5xx (the server's own failure)."""
    return code in _TRANSIENT or code >= 500


def content_refusal(code: int, error_code, message: str) -> bool:
    """Whether an HTTP error refuses one input for its content (that item's ``refused``), not the request's
    form: a 400 whose ``error.code`` or message names the provider's content or usage policy."""
    if code != 400:
        return False
    return str(error_code or "").strip().lower() in _CONTENT_CODES or bool(_CONTENT_WORDS.search(message or ""))


def retry_after(value: str | None) -> float | None:
    """A ``Retry-After`` header (seconds or an HTTP date) as seconds in [0, MAX_RETRY_WAIT_S], or None."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - time.time()
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), MAX_RETRY_WAIT_S)


def backoff_wait(attempt: int, base_s: float, server_wait_s: float | None = None) -> float:
    """Seconds to wait before retry ``attempt`` (0-based): the server's wait when it gave one, else
    ``base_s * 2**attempt`` capped at :data:`MAX_RETRY_WAIT_S`, with jitter."""
    if server_wait_s is not None:
        return min(server_wait_s, MAX_RETRY_WAIT_S)
    return min(base_s * 2 ** attempt, MAX_RETRY_WAIT_S) * random.uniform(0.5, 1.0)
