"""The maintainers' view in HTML (``/maintainer``): a login with the maintainer's token, then every kept entry
(public and hidden) with a form per entry to hide, restore, delete, verify or unverify it with a reason, and
the action log. The same actions as the API (``POST /api/submissions/{id}/{action}``), for a person in a
browser.

The session (:class:`Sessions`): after a login the browser keeps an ``HttpOnly``, ``SameSite=Strict`` cookie
holding an HMAC session -- when it was issued, a random nonce, and an HMAC of both and of the token's hash
under a key of this process -- never the token itself. A session ends after :data:`SESSION_SECONDS`, when the
server restarts (a new key), or when the maintainer's token changes (its hash is in the HMAC). Each action
form carries a CSRF token: an HMAC of the session under the same key, which another site cannot read.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from html import escape

from ..benchmarks.data import BENCHMARK_NAMES
from . import pages
from .store import ACTIONS, MARKS, Action, StoredSubmission

__all__ = ["Sessions", "SESSION_COOKIE", "SESSION_SECONDS", "login_page", "dashboard_page"]

SESSION_COOKIE = "mh_maintainer"
SESSION_SECONDS = 8 * 3600


class Sessions:
    """HMAC sessions of the maintainers' view (module text)."""

    def __init__(self, key: bytes | None = None, *, clock=time.time):
        self.key = key or secrets.token_bytes(32)
        self.clock = clock

    def _mac(self, text: str) -> str:
        return hmac.new(self.key, text.encode(), hashlib.sha256).hexdigest()

    @staticmethod
    def _token_hash(token: str) -> str:
        return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()

    def issue(self, token: str) -> str:
        head = f"{int(self.clock())}.{secrets.token_urlsafe(16)}"
        return f"{head}.{self._mac(head + '.' + self._token_hash(token))}"

    def valid(self, cookie: str | None, token: str | None) -> bool:
        """Whether ``cookie`` is a live session issued for ``token`` (the maintainer's token now)."""
        if not cookie or not token:
            return False
        head, _, mac = cookie.rpartition(".")
        issued = head.partition(".")[0]
        if not issued.isdigit() or not 0 <= self.clock() - int(issued) <= SESSION_SECONDS:
            return False
        return hmac.compare_digest(mac, self._mac(head + "." + self._token_hash(token)))

    def csrf(self, cookie: str) -> str:
        return self._mac("csrf." + cookie)

    def csrf_valid(self, cookie: str | None, presented: str | None) -> bool:
        return bool(cookie and presented) and hmac.compare_digest(self.csrf(cookie), presented)


def login_page(*, problem: str | None = None, off: bool = False) -> str:
    if off:
        return pages.page("Maintainers", '<p class="banner info" id="off">Maintainer actions are off: the server was '
                                         "started without a maintainer token.</p>")
    out = []
    if problem:
        out.append(f'<p class="banner bad" id="refused">{escape(problem)}</p>')
    out.append('<form class="submit login" method="post" action="/maintainer/login">'
               '<label for="token">Maintainer token <span class="hint">kept by the server as a session cookie '
               "(never the token itself); it ends after 8 hours</span></label>"
               '<input type="password" id="token" name="token" autocomplete="current-password">'
               '<p><button type="submit" id="login">Log in</button></p></form>')
    return pages.page("Maintainers", "\n".join(out))


def _act_form(row: StoredSubmission, csrf: str, verified: bool) -> str:
    actions = [a for a in (*ACTIONS, *MARKS)
               if not (a == "hide" and row.state == "hidden") and not (a == "restore" and row.state == "public")
               and not (a == "verify" and verified) and not (a == "unverify" and not verified)]
    opts = "".join(f'<option value="{a}">{a}</option>' for a in actions)
    return (f'<form class="act" method="post" action="/maintainer/act" id="act-{row.id}">'
            f'<input type="hidden" name="csrf" value="{csrf}"><input type="hidden" name="id" value="{row.id}">'
            f'<select name="action" aria-label="action">{opts}</select>'
            '<input type="text" name="reason" placeholder="reason (required)" aria-label="reason">'
            '<button type="submit">Do</button></form>')


def dashboard_page(rows: list[StoredSubmission], verified: dict[int, Action], log: list[Action], csrf: str, *,
                   banner: str | None = None, problem: str | None = None) -> str:
    out = []
    if banner:
        out.append(f'<p class="banner ok" id="banner">{escape(banner)}</p>')
    if problem:
        out.append(f'<p class="banner bad" id="refused">{escape(problem)}</p>')
    out.append('<form method="post" action="/maintainer/logout"><input type="hidden" name="csrf" '
               f'value="{csrf}"><button type="submit" id="logout">Log out</button></form>')
    body = "".join(
        f'<tr id="row-{r.id}"><td data-label="Id" class="num">{r.id}</td>'
        f'<td data-label="Model"><a href="/submissions/{r.id}">{escape(r.model)}</a></td>'
        f'<td data-label="Benchmark">{escape(BENCHMARK_NAMES.get(r.benchmark, r.benchmark))}</td>'
        f'<td data-label="Received">{escape(r.received_at)}</td>'
        f'<td data-label="State" class="state">{escape(r.state)}</td>'
        f'<td data-label="Verified" class="verified">{"yes" if r.id in verified else "no"}</td>'
        f'<td data-label="Submitter">{escape(r.submitter or "")}</td>'
        f'<td data-label="Action">{_act_form(r, csrf, r.id in verified)}</td></tr>' for r in rows)
    out.append(f"<h2>Entries ({len(rows)})</h2>" + (
        '<div class="wrap"><table class="board" id="entries"><thead><tr><th>Id</th><th>Model</th><th>Benchmark</th>'
        "<th>Received</th><th>State</th><th>Verified</th><th>Submitter</th><th>Action</th></tr></thead>"
        f"<tbody>{body}</tbody></table></div>" if rows else '<p class="banner info">No entries yet.</p>'))
    logs = "".join(
        f'<tr><td data-label="At">{escape(a.at)}</td><td data-label="Entry" class="num">{a.submission_id}</td>'
        f'<td data-label="Model">{escape(a.model)}</td><td data-label="Action">{escape(a.action)}</td>'
        f'<td data-label="Reason">{escape(a.reason)}</td></tr>' for a in reversed(log[-500:]))
    out.append("<h2>Action log</h2>" + (
        '<div class="wrap"><table class="board log" id="log"><thead><tr><th>At</th><th>Entry</th><th>Model</th>'
        f"<th>Action</th><th>Reason</th></tr></thead><tbody>{logs}</tbody></table></div>"
        '<p class="foot">Newest first (the last 500; <code>GET /api/actions</code> has them all).</p>'
        if log else '<p class="foot">No action yet.</p>'))
    return pages.page("Maintainers", "\n".join(out))
