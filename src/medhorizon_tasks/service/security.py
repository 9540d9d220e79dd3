"""What stands between the internet and the store: body size, maintainers' and submitters' tokens, the form's
CSRF token, a rate limit per submitter, and the headers every page carries.

* **Body size**: :class:`Guard` answers 413 before reading a body whose ``Content-Length`` is over the
  limit, and stops a body sent without one (chunked) as soon as it passes the limit: no upload is ever read
  whole to find out it is too large.
* **Maintainer token**: from ``$MEDHORIZON_MAINTAINER_TOKEN`` or a file (``--maintainer-token-file``, read
  again whenever it changes, so a maintainer rotates the token by rewriting the file), never a command-line
  argument (other users of the machine can read those); compared with :func:`hmac.compare_digest`.
* **Submitter tokens** (``--require-token``): issued by a maintainer, kept as hashes in the store.
* **CSRF**: the form carries an HMAC of a random value that is also in a ``SameSite=Strict`` cookie; a
  POST whose two do not match (another site's form) is refused.
* **Rate limit**: at most N accepted submissions per window per submitter (token name) or, without a token,
  per client address (behind a reverse proxy: the address it forwards, see ``--forwarded-allow-ips``), and a
  much higher cap on attempts; counted in the store, shared by every process on it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
from pathlib import Path

from ..core.errors import MedHorizonError

__all__ = ["Guard", "TooLarge", "MaintainerToken", "Csrf", "RateLimit", "parse_rate", "SECURITY_HEADERS", "TOKEN_ENV",
           "MIN_TOKEN_LENGTH"]

TOKEN_ENV = "MEDHORIZON_MAINTAINER_TOKEN"
MIN_TOKEN_LENGTH = 24


class Guard:
    """ASGI middleware around the whole application: request bodies over ``max_bytes`` are refused with 413,
    read no further than the limit (a ``Content-Length`` over it is refused before reading; a body sent without
    one raises :class:`TooLarge` from ``receive`` as soon as it passes the limit, which the application answers
    with 413); every response gets :data:`SECURITY_HEADERS`, and HTML ones the Content-Security-Policy ``csp``.
    Plain ASGI (no task group in between), so the exception reaches the application's handler as it is."""

    def __init__(self, app, max_bytes: int, csp: str):
        self.app, self.max_bytes = app, max_bytes
        self._headers = [(k.lower().encode(), v.encode()) for k, v in SECURITY_HEADERS.items()]
        self._csp = (b"content-security-policy", csp.encode())

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers") or []).get(b"content-length")
        if length is not None:
            try:
                n = int(length)
            except ValueError:
                n = -1
            if n < 0 or n > self.max_bytes:
                return await self._refuse(send, f"Content-Length {length.decode('latin-1')[:30]}")
        seen = 0

        async def limited_receive():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise TooLarge(self.too_large(f"more than {self.max_bytes:,} bytes sent"))
            return message

        async def with_headers(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                names = {k.lower() for k, _ in headers}
                headers += [h for h in self._headers if h[0] not in names]
                if any(k.lower() == b"content-type" and v.startswith(b"text/html") for k, v in headers):
                    headers.append(self._csp)
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, limited_receive, with_headers)

    def too_large(self, got: str) -> str:
        return (f"upload too large: {got}; this server takes at most {self.max_bytes:,} bytes "
                f"({self.max_bytes / 2 ** 20:.0f} MiB)")

    async def _refuse(self, send, got: str) -> None:
        import json

        body = json.dumps({"accepted": False, "problems": [self.too_large(got)]}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close"), *self._headers]})
        await send({"type": "http.response.body", "body": body})


class TooLarge(Exception):
    """Raised from ``receive`` once a body passes the limit; :class:`BodyLimit` answers 413."""


class MaintainerToken:
    """The maintainer's token, from ``$MEDHORIZON_MAINTAINER_TOKEN`` or a file (re-read when it changes)."""

    def __init__(self, path: str | os.PathLike | None = None, *, environ=None):
        from ..core.settings import env_text

        self.path = Path(path) if path else None
        from_env = env_text(TOKEN_ENV, environ)
        self._env = from_env if not path else None
        self._stamp: tuple | None = None
        self._token: str | None = None
        self._lock = threading.Lock()
        if self.path is not None and from_env:
            raise MedHorizonError(f"both ${TOKEN_ENV} and --maintainer-token-file are set: give the token one way")
        self._check(self.current())

    def _check(self, token: str | None) -> None:
        where = str(self.path) if self.path else f"${TOKEN_ENV}"
        if token is not None and len(token) < MIN_TOKEN_LENGTH:
            raise MedHorizonError(f"the maintainer token in {where} is {len(token)} characters long: use at least "
                                  f"{MIN_TOKEN_LENGTH} random ones (e.g. `python -c \"import secrets; "
                                  "print(secrets.token_urlsafe(32))\"`)")

    @property
    def configured(self) -> bool:
        return self.path is not None or bool(self._env)

    def current(self) -> str | None:
        if self.path is None:
            return self._env or None
        try:
            st = self.path.stat()
        except OSError as exc:
            raise MedHorizonError(f"--maintainer-token-file {self.path}: cannot read it ({exc.strerror})") from None
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        with self._lock:
            if stamp != self._stamp:
                try:
                    token = self.path.read_text(encoding="utf-8").strip() or None
                except UnicodeDecodeError as exc:
                    raise MedHorizonError(f"--maintainer-token-file {self.path}: not UTF-8 text (byte {exc.start}); "
                                          "write the token as plain text") from None
                except OSError as exc:
                    raise MedHorizonError(f"--maintainer-token-file {self.path}: cannot read it "
                                          f"({exc.strerror or exc})") from None
                self._check(token)
                self._token, self._stamp = token, stamp
            return self._token

    def problem(self) -> str | None:
        """Why the token cannot be read now (the file was made unreadable after the start), for a reply: it
        names no path of the server; None when it reads."""
        try:
            self.current()
        except MedHorizonError:
            return ("maintainer actions are unavailable: the server cannot read its maintainer token file; tell "
                    "the server's operator (its log says why)")
        return None

    def matches(self, presented: str | None) -> bool:
        """Whether ``presented`` is the maintainer's token (constant time in the token's content)."""
        try:
            token = self.current()
        except MedHorizonError:
            return False
        if not token or not presented:
            return False
        return hmac.compare_digest(presented.encode("utf-8", "surrogatepass"), token.encode("utf-8"))


class Csrf:
    """Double-submit CSRF tokens: the cookie holds a random value, the form an HMAC of it under a server key."""

    COOKIE = "mh_csrf"

    def __init__(self, key: bytes | None = None):
        self.key = key or secrets.token_bytes(32)

    def new_value(self) -> str:
        return secrets.token_urlsafe(24)

    def form_token(self, value: str) -> str:
        return hmac.new(self.key, value.encode(), hashlib.sha256).hexdigest()

    def valid(self, cookie_value: str | None, form_token: str | None) -> bool:
        if not cookie_value or not form_token:
            return False
        return hmac.compare_digest(self.form_token(cookie_value), form_token)


def parse_rate(text: str) -> tuple[int, float]:
    """``"30/hour"`` -> (30, 3600.0); also second, minute, day."""
    units = {"second": 1.0, "minute": 60.0, "hour": 3600.0, "day": 86400.0}
    count, sep, unit = text.partition("/")
    try:
        n = int(count)
    except ValueError:
        n = 0
    if not sep or n < 1 or unit not in units:
        raise MedHorizonError(f"--rate-limit {text!r}: expected N/UNIT with N >= 1 and UNIT one of "
                              f"{', '.join(units)} (e.g. 30/hour)")
    return n, units[unit]


_UNITS = {1.0: "second", 60.0: "minute", 3600.0: "hour", 86400.0: "day"}


def per(window: float) -> str:
    """``3600.0`` -> ``"hour"``; a window of no unit's length -> ``"90 s"``."""
    return _UNITS.get(float(window), f"{window:g} s")


class RateLimit:
    """At most ``n`` **accepted** submissions per ``window`` seconds per submitter, and at most ``attempts``
    attempts (every submission received, refused ones included: a much higher cap, default ``10 n``, at least
    30) so that fixing a refused upload never locks anyone out. The counts are in the store
    (:meth:`~.store.Store.attempt`, :meth:`~.store.Store.add`), so every process on one store shares them; an
    accepted submission is counted in the transaction that keeps it."""

    ATTEMPTS_FACTOR, MIN_ATTEMPTS = 10, 30

    def __init__(self, n: int, window: float, store, *, attempts: int | None = None):
        self.n, self.window, self.store = n, window, store
        self.attempts = attempts or max(self.MIN_ATTEMPTS, self.ATTEMPTS_FACTOR * n)

    def describe(self) -> str:
        """The limit as the form and the refusals say it."""
        return (f"at most {self.n} accepted submission{'s' if self.n != 1 else ''} per {per(self.window)} from one "
                f"submitter (refused ones do not count; at most {self.attempts} attempts per {per(self.window)})")

    def accepted(self, who: str):
        from .store import Rate

        return Rate(who, self.n, self.window, "accepted")

    def check(self, who: str) -> tuple[float, str] | None:
        """Before an upload is read: None if ``who`` may send it now (the attempt is counted), else (seconds to
        wait, the reason)."""
        from .store import Rate

        wait = self.store.attempt(Rate(who, self.attempts, self.window, "attempt"))
        if wait is not None:
            return wait, (f"rate limit: more than {self.attempts} attempts per {per(self.window)} from one submitter; "
                          f"try again in {wait:.0f} s")
        wait = self.store.accepted_wait(self.accepted(who))
        if wait is not None:
            return wait, self.refusal(wait)
        return None

    def refusal(self, wait: float) -> str:
        return f"rate limit: {self.describe()}; try again in {wait:.0f} s"


# Every page: no framing, no guessing of types, no referrer to other sites, and scripts or styles only from
# the page itself (the board's sorting script and style, by their hashes, filled in by pages.py).
SECURITY_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}
