"""When to retry a request to a model server, and how long to wait: one policy for every client of the package.

Transient failures -- HTTP 429 and 5xx, a connection that fails, a reply that
misses its deadline -- are retried with bounded exponential backoff and
jitter: the wait before retry ``k`` (0-based) is ``base_s * 2**k``, capped at
:data:`MAX_RETRY_WAIT_S`, times a random factor in [0.5, 1] so that many
clients do not retry in step; a server's ``Retry-After`` is honoured instead,
capped the same way. Any other status is permanent (a 400 for a parameter the
model does not take, 401, 403, 404): retrying it only sends the same refused
request again. Used by the LLM judge (:mod:`.judge`) and the OpenAI-compatible
bridge (``medhorizon_openai``).
"""

from __future__ import annotations

import email.utils
import random
import time

__all__ = ["MAX_RETRY_WAIT_S", "transient_status", "retry_after", "backoff_wait"]

#: Longest wait honoured from a ``Retry-After`` header, and longest backoff, in seconds.
MAX_RETRY_WAIT_S = 60.0


def transient_status(code: int) -> bool:
    """Whether an HTTP status is worth retrying: 429 (rate limited) and 5xx (the server's own failure)."""
    return code == 429 or code >= 500


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
