"""What every route of the service works with, in one object: the configuration, the store, the boards, the
form's CSRF keys and the rate limit; and the dependencies that hand it (and a maintainer's check) to a route.

The routers (:mod:`.routes`) are split by audience, the shape of FastAPI's "bigger applications" layout; they
reach this object through :func:`service`, never through a module-level global, so two applications (two
stores) live side by side in one process, as the tests run them.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field

from fastapi import Request
from fastapi.responses import JSONResponse

from ..benchmarks.data import BENCHMARKS, BenchmarkData
from ..leaderboard.build import DEFAULT_ALPHA, DEFAULT_N_RESAMPLES, DEFAULT_SEED
from .boards import Boards, entry_href
from .intake import Intake, Refused
from .maintainer_pages import Sessions
from .security import Csrf, MaintainerToken, RateLimit
from .store import DeletedBefore, OverRate, Store, StoredSubmission
from .workers import DEFAULT_INTAKE_WORKERS, IntakeWorkers

__all__ = ["ServiceConfig", "Service", "Answer", "service", "maintainer", "refused", "DEFAULT_MAX_UPLOAD_MB"]

# The largest real submission: 1,253 MedHorizon items, each a reasoning model's output of up to 16,384 tokens
# (about 4 bytes a token: 64 KiB), is 1,253 x 64 KiB = 78 MiB of text, plus the JSON around it.
DEFAULT_MAX_UPLOAD_MB = 100


@dataclass
class ServiceConfig:
    datas: Mapping[str, BenchmarkData]
    store: Store
    title: str = "Leaderboard"
    max_upload_mb: float = DEFAULT_MAX_UPLOAD_MB
    require_token: bool = False
    rate: tuple[int, float] = (20, 3600.0)
    maintainer: MaintainerToken = field(default_factory=MaintainerToken)
    n_resamples: int = DEFAULT_N_RESAMPLES
    seed: int = DEFAULT_SEED
    alpha: float = DEFAULT_ALPHA
    off_protocol: str = "mark"   # a run off the standard protocol: "mark" (ranked apart) or "refuse"
    intake_workers: int = DEFAULT_INTAKE_WORKERS   # processes reading uploads (0: a thread of this process)
    csrf_key: bytes | None = None  # the form's CSRF key: the same in every process of one board (serve --workers)


class Answer(Exception):
    """A reply decided before the route's own work (a maintainer check, a submitter's token): raised by a
    dependency, answered as it is by the application's handler."""

    def __init__(self, response: JSONResponse):
        super().__init__(response.status_code)
        self.response = response


def refused(problems: list[str], status: int = 422) -> JSONResponse:
    return JSONResponse({"accepted": False, "problems": problems}, status_code=status)


def bearer(request: Request) -> str | None:
    value = request.headers.get("authorization") or ""
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


class Service:
    """One running service: built once by :func:`~.app.create_app`, kept on ``app.state.service``."""

    def __init__(self, cfg: ServiceConfig):
        self.cfg = cfg
        self.store = cfg.store
        self.datas = dict(cfg.datas)
        self.boards = Boards(self.store, self.datas, n_resamples=cfg.n_resamples, seed=cfg.seed, alpha=cfg.alpha,
                             background=True)
        self.csrf = Csrf(cfg.csrf_key)
        # the maintainers' HTML view's logins, valid in every process of one board: a key of their own, derived
        # from the board's shared form key (a session MAC and a form MAC never share a key)
        self.sessions = Sessions(hmac.new(cfg.csrf_key, b"maintainer sessions", hashlib.sha256).digest()
                                 if cfg.csrf_key else None)
        self.limiter = RateLimit(*cfg.rate, self.store)
        self.intake = IntakeWorkers(self.datas, cfg.intake_workers)
        self.held = {b: self.datas[b].version for b in BENCHMARKS if b in self.datas}

    def is_maintainer(self, request: Request) -> bool:
        return self.cfg.maintainer.matches(bearer(request))

    def submitter(self, request: Request, token: str | None) -> tuple[str | None, list[str] | None, int]:
        """(who, problems, status): the submitter's name with a valid token, else the client's address."""
        address = request.client.host if request.client else "unknown"
        if token:
            name = self.store.submitter_of(token)
            if name is None:
                return None, ["submitter token: not a token of this server"], 403
            return f"token:{name}", None, 200
        if self.cfg.require_token:
            return None, ["this server takes submissions with a submitter token only (Authorization: Bearer "
                          "TOKEN, or the form's token field); ask the board's maintainer for one"], 401
        return f"address:{address}", None, 200

    def over_rate(self, who: str) -> JSONResponse | None:
        """429 when ``who`` has its accepted submissions of the period, or too many attempts (this one is
        counted); None to go on. The store holds the counts: every process on it shares the limit."""
        over = self.limiter.check(who)
        if over is None:
            return None
        wait, reason = over
        return JSONResponse({"accepted": False, "problems": [reason]}, status_code=429,
                            headers={"Retry-After": str(max(1, int(wait + 0.999)))})

    def keep(self, intake: Intake, *, filename: str | None, who: str,
             received: bytes) -> tuple[StoredSubmission, bool]:
        """Score first (a failure keeps nothing), then keep the submission, its score and its count against the
        rate limit in one transaction (a limit reached meanwhile by another request or process: 429, nothing
        kept); a run already kept (by its content key) is that entry; a run off the protocol is refused when the
        server says so, and a run a maintainer deleted is refused saying so (409)."""
        from ..benchmarks.standard import entry_departures
        from ..leaderboard.submission import content_key

        departures = entry_departures(intake.metadata)
        if departures and self.cfg.off_protocol == "refuse":
            raise Refused(f"this run departs from the {intake.data.benchmark} standard protocol "
                          f"({'; '.join(departures)}): this server takes runs of the standard protocol only")
        entry = self.boards.score(intake.submission, intake.data, intake.submission_bytes)
        try:
            return self.store.add(received=received, submission=intake.submission_bytes,
                                  benchmark=intake.data.benchmark, data_version=intake.data.version,
                                  model=intake.metadata["model"], kind=intake.kind, filename=filename, submitter=who,
                                  content_key=content_key(intake.submission),
                                  score=self.boards.to_keep(entry, intake.data), rate=self.limiter.accepted(who))
        except DeletedBefore as exc:
            raise Refused(str(exc), status=409) from None
        except OverRate as exc:
            raise Refused([self.limiter.refusal(exc.wait)], 429) from None

    def placed(self, row: StoredSubmission):
        """(board, entry) of a stored submission: on the public board if it is there, else scored alone."""
        if row.benchmark not in self.datas or row.data_version != self.datas[row.benchmark].version:
            return None, None
        if row.state == "public":
            for b in self.boards.boards()[0]:
                for e in b.entries:
                    if e.submission.source == entry_href(row.id):
                        return b, e
        from ..leaderboard.build import rank_board

        e = self.boards.entry_of(row)
        b = rank_board(row.benchmark, self.datas[row.benchmark], [e], n_resamples=self.cfg.n_resamples,
                       seed=self.cfg.seed, alpha=self.cfg.alpha)
        e.rank = 0  # alone: no rank
        return b, e

    def visible(self, request: Request, sub_id: int) -> StoredSubmission | None:
        row = self.store.get(sub_id)
        if row is None or (row.state != "public" and not self.is_maintainer(request)):
            return None
        return row


def service(request: Request) -> Service:
    """The dependency every route takes: the application's :class:`Service`."""
    return request.app.state.service


def maintainer(request: Request) -> Service:
    """The dependency of maintainers' routes: the service, once the request carries the maintainer's token
    (else 403 when maintainer actions are off, 401 without a token, 403 with a wrong one)."""
    svc = service(request)
    unreadable = svc.cfg.maintainer.problem()
    if unreadable:
        raise Answer(JSONResponse({"error": unreadable}, status_code=503))
    if not svc.cfg.maintainer.configured:
        raise Answer(JSONResponse({"error": "maintainer actions are off: the server was started without a "
                                            "maintainer token"}, status_code=403))
    if bearer(request) is None:
        raise Answer(JSONResponse({"error": "maintainer token required (Authorization: Bearer TOKEN)"},
                                  status_code=401, headers={"WWW-Authenticate": "Bearer"}))
    if not svc.is_maintainer(request):
        raise Answer(JSONResponse({"error": "wrong maintainer token"}, status_code=403))
    return svc
