"""The submission service's web application (FastAPI): its routes, over the store and ``leaderboard/``.

Public:

* ``GET /``: the boards (one table per benchmark on the data the server holds); ``GET /api/board`` their
  JSON, ``GET /board.csv`` their CSV (the columns of ``leaderboard build``'s CSV).
* ``GET /submit`` and ``POST /submit``: the HTML form (multipart: a file and metadata fields, CSRF-protected);
  accepted -> 303 to the entry's page; refused -> 422 with every problem listed.
* ``POST /api/submissions``: a submission JSON as the body. 201 accepted (its scores), 200 the same bytes
  already kept (one entry), 4xx refused with ``{"accepted": false, "problems": [...]}``, 429 over the rate
  limit, 507 the store is full.
* ``GET /submissions/{id}`` and ``GET /api/submissions/{id}``: an entry's page and JSON (aggregates only).

Maintainers (``Authorization: Bearer <token>``):

* ``POST /api/submissions/{id}/hide|restore|delete`` with ``{"reason": "..."}``; ``GET /api/actions``;
* ``GET /api/submissions/{id}/items``: whether each item was answered right (never served to anyone else);
* ``POST /api/submitters`` with ``{"name": "..."}``: a submitter token (``--require-token``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from ..benchmarks.data import BENCHMARKS, BenchmarkData
from ..leaderboard.build import DEFAULT_ALPHA, DEFAULT_N_RESAMPLES, DEFAULT_SEED
from ..leaderboard.tables import format_csv
from . import pages
from .boards import Boards, board_json, entry_href, entry_json
from .intake import FORM_FIELDS, Intake, Refused, looks_like_submission, make_from_samples, read_submission_upload
from .security import Csrf, Guard, MaintainerToken, RateLimit, TooLarge
from .store import Store, StoredSubmission, StoreFull

__all__ = ["ServiceConfig", "create_app", "DEFAULT_MAX_UPLOAD_MB"]

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


def _refused(problems: list[str], status: int = 422) -> JSONResponse:
    return JSONResponse({"accepted": False, "problems": problems}, status_code=status)


def _bearer(request: Request) -> str | None:
    value = request.headers.get("authorization") or ""
    scheme, _, token = value.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def create_app(cfg: ServiceConfig) -> FastAPI:
    store, datas = cfg.store, dict(cfg.datas)
    boards = Boards(store, datas, n_resamples=cfg.n_resamples, seed=cfg.seed, alpha=cfg.alpha)
    csrf = Csrf()
    limiter = RateLimit(*cfg.rate)
    held = {b: datas[b].version for b in BENCHMARKS if b in datas}
    app = FastAPI(title=cfg.title, docs_url=None, redoc_url=None, openapi_url="/api/openapi.json")
    app.state.boards = boards

    @app.exception_handler(TooLarge)
    async def too_large(request: Request, exc: TooLarge):
        return JSONResponse({"accepted": False, "problems": [str(exc)]}, status_code=413,
                            headers={"Connection": "close"})

    # ---------------------------------------------------------------- helpers

    def is_maintainer(request: Request) -> bool:
        return cfg.maintainer.matches(_bearer(request))

    def maintainer_only(request: Request) -> JSONResponse | None:
        if not cfg.maintainer.configured:
            return JSONResponse({"error": "maintainer actions are off: the server was started without a maintainer "
                                          "token"}, status_code=403)
        if _bearer(request) is None:
            return JSONResponse({"error": "maintainer token required (Authorization: Bearer TOKEN)"},
                                status_code=401, headers={"WWW-Authenticate": "Bearer"})
        if not is_maintainer(request):
            return JSONResponse({"error": "wrong maintainer token"}, status_code=403)
        return None

    def submitter(request: Request, token: str | None) -> tuple[str | None, list[str] | None, int]:
        """(who, problems, status): the submitter's name with a valid token, else the client's address."""
        address = request.client.host if request.client else "unknown"
        if token:
            name = store.submitter_of(token)
            if name is None:
                return None, ["submitter token: not a token of this server"], 403
            return f"token:{name}", None, 200
        if cfg.require_token:
            return None, ["this server takes submissions with a submitter token only (Authorization: Bearer "
                          "TOKEN, or the form's token field); ask the board's maintainer for one"], 401
        return f"address:{address}", None, 200

    def over_rate(who: str) -> JSONResponse | None:
        wait = limiter.allow(who)
        if wait is None:
            return None
        n, window = cfg.rate
        return JSONResponse({"accepted": False, "problems": [
            f"rate limit: at most {n} submissions per {window:g} s from one submitter; try again in "
            f"{wait:.0f} s"]}, status_code=429, headers={"Retry-After": str(max(1, int(wait + 0.999)))})

    def keep(intake: Intake, *, filename: str | None, who: str, received: bytes) -> tuple[StoredSubmission, bool]:
        """Score first (a failure keeps nothing), then keep in one transaction."""
        boards.score(intake.submission, intake.data, intake.submission_bytes)
        return store.add(received=received, submission=intake.submission_bytes,
                         benchmark=intake.data.benchmark, data_version=intake.data.version,
                         model=intake.metadata["model"], kind=intake.kind, filename=filename, submitter=who)

    def placed(row: StoredSubmission):
        """(board, entry) of a stored submission: on the public board if it is there, else scored alone."""
        if row.benchmark not in datas or row.data_version != datas[row.benchmark].version:
            return None, None
        if row.state == "public":
            for b in boards.boards()[0]:
                for e in b.entries:
                    if e.submission.source == entry_href(row.id):
                        return b, e
        from ..leaderboard.build import rank_board

        e = boards.entry_of(row)
        b = rank_board(row.benchmark, datas[row.benchmark], [e], n_resamples=cfg.n_resamples, seed=cfg.seed,
                       alpha=cfg.alpha)
        e.rank = 0  # alone: no rank
        return b, e

    # ---------------------------------------------------------------- public

    @app.get("/", response_class=HTMLResponse)
    def board_html():
        bs, elsewhere = boards.boards()
        return HTMLResponse(pages.board_page(bs, elsewhere, cfg.title))

    @app.get("/api/board")
    def board_api():
        return JSONResponse(board_json(*boards.boards()))

    @app.get("/board.csv")
    def board_csv():
        return Response(format_csv(boards.boards()[0]), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": 'attachment; filename="leaderboard.csv"'})

    @app.get("/healthz")
    def healthz():
        return {"ok": True, "submissions": len(store.list(include_hidden=True)), "data": held}

    @app.get("/submit", response_class=HTMLResponse)
    def submit_form():
        value = csrf.new_value()
        response = HTMLResponse(pages.submit_page(held, csrf.form_token(value), require_token=cfg.require_token,
                                                  max_mb=cfg.max_upload_mb))
        response.set_cookie(Csrf.COOKIE, value, httponly=True, samesite="strict")
        return response

    @app.post("/submit")
    async def submit_post(request: Request):
        try:
            form = await request.form(max_files=1, max_fields=len(FORM_FIELDS) + 4)
        except TooLarge:
            raise
        except Exception as exc:  # a malformed multipart body  # noqa: BLE001
            return HTMLResponse(pages.message_page("Refused", f"the form could not be read: {exc}"), status_code=400)
        fields = {k: v for k, v in form.items() if isinstance(v, str) and k in FORM_FIELDS + ("token",)}

        def again(problems, status=422):
            value = csrf.new_value()
            response = HTMLResponse(pages.submit_page(held, csrf.form_token(value), require_token=cfg.require_token,
                                                      max_mb=cfg.max_upload_mb, problems=problems, form=fields),
                                    status_code=status)
            response.set_cookie(Csrf.COOKIE, value, httponly=True, samesite="strict")
            return response

        token = form.get("csrf")
        if not csrf.valid(request.cookies.get(Csrf.COOKIE), token if isinstance(token, str) else None):
            return again(["the form's security token is missing or stale (or the form was sent from another "
                          "site): reload the form and submit again"], 403)
        who, problems, status = submitter(request, (fields.get("token") or "").strip() or None)
        if problems:
            return again(problems, status)
        limited = over_rate(who)
        if limited is not None:
            return again(json.loads(limited.body)["problems"], 429)
        upload = form.get("file")
        if upload is None or isinstance(upload, str):
            return again(["file: choose a file to upload"])
        body = await upload.read()
        filename = (upload.filename or "")[:200] or None

        def work():
            intake = (read_submission_upload(body, datas, what="file") if looks_like_submission(body)
                      else make_from_samples(body, fields, datas, filename=filename))
            return keep(intake, filename=filename, who=who, received=body)

        try:
            row, new = await run_in_threadpool(work)
        except Refused as exc:
            return again(exc.problems, exc.status)
        except StoreFull as exc:
            return again([str(exc)], 507)
        return RedirectResponse(f"{entry_href(row.id)}?{'accepted' if new else 'duplicate'}=1", status_code=303)

    @app.post("/api/submissions")
    async def submit_api(request: Request):
        who, problems, status = submitter(request, _bearer(request))
        if problems:
            return _refused(problems, status)
        limited = over_rate(who)
        if limited is not None:
            return limited
        body = await request.body()
        filename = (request.headers.get("x-filename") or "")[:200] or None

        def work():
            intake = read_submission_upload(body, datas)
            row, new = keep(intake, filename=filename, who=who, received=body)
            return row, new, (entry_json(row, *placed(row)) if new else None)

        try:
            row, new, view = await run_in_threadpool(work)
        except Refused as exc:
            return _refused(exc.problems, exc.status)
        except StoreFull as exc:
            return _refused([str(exc)], 507)
        if not new:
            return JSONResponse({"accepted": True, "duplicate": True, "id": row.id, "page": entry_href(row.id),
                                 "message": f"these bytes were submitted before: entry {row.id}, received "
                                            f"{row.received_at}; nothing new was kept"}, status_code=200)
        return JSONResponse({"accepted": True, "duplicate": False, **view}, status_code=201)

    def visible(request: Request, sub_id: int) -> StoredSubmission | None:
        row = store.get(sub_id)
        if row is None or (row.state != "public" and not is_maintainer(request)):
            return None
        return row

    @app.get("/submissions/{sub_id}", response_class=HTMLResponse)
    def entry_html(request: Request, sub_id: int):
        row = visible(request, sub_id)
        if row is None:
            return HTMLResponse(pages.message_page("Not found", f"no public entry {sub_id}"), status_code=404)
        banner = ("Accepted: this submission is on the board." if "accepted" in request.query_params else
                  "These bytes were submitted before: this is that entry; nothing new was kept."
                  if "duplicate" in request.query_params else None)
        b, e = placed(row)
        return HTMLResponse(pages.entry_page(row, b, e, banner=banner, maintainer=is_maintainer(request)))

    @app.get("/api/submissions/{sub_id}")
    def entry_api(request: Request, sub_id: int):
        row = visible(request, sub_id)
        if row is None:
            return JSONResponse({"error": f"no public entry {sub_id}"}, status_code=404)
        return JSONResponse(entry_json(row, *placed(row)))

    # ---------------------------------------------------------------- maintainers

    @app.get("/api/submissions/{sub_id}/items")
    def entry_items(request: Request, sub_id: int):
        refused = maintainer_only(request)
        if refused is not None:
            return refused
        row = store.get(sub_id)
        if row is None:
            return JSONResponse({"error": f"no entry {sub_id}"}, status_code=404)
        _, e = placed(row)
        if e is None:
            return JSONResponse({"error": "not on the data this server holds"}, status_code=409)
        return JSONResponse({"id": row.id, "benchmark": row.benchmark, "correct": e.paired}
                            if isinstance(e.paired, dict) and row.benchmark != "surghi"
                            else {"id": row.id, "benchmark": row.benchmark, "per_video": e.paired})

    @app.post("/api/submissions/{sub_id}/{action}")
    async def act(request: Request, sub_id: int, action: str):
        refused = maintainer_only(request)
        if refused is not None:
            return refused
        if action not in ("hide", "restore", "delete"):
            return JSONResponse({"error": f"unknown action {action!r}: hide, restore or delete"}, status_code=404)
        try:
            reason = (json.loads(await request.body() or b"{}") or {}).get("reason")
        except (ValueError, AttributeError):
            reason = None
        if not isinstance(reason, str) or not reason.strip():
            return JSONResponse({"error": 'give the reason: {"reason": "..."}'}, status_code=422)
        try:
            done = await run_in_threadpool(store.act, sub_id, action, reason.strip()[:2000])
        except KeyError:
            return JSONResponse({"error": f"no entry {sub_id}"}, status_code=404)
        return JSONResponse({"ok": True, "action": done.__dict__})

    @app.get("/api/actions")
    def actions(request: Request):
        refused = maintainer_only(request)
        if refused is not None:
            return refused
        return JSONResponse({"actions": [a.__dict__ for a in store.actions()]})

    @app.post("/api/submitters")
    async def add_submitter(request: Request):
        refused = maintainer_only(request)
        if refused is not None:
            return refused
        try:
            name = (json.loads(await request.body() or b"{}") or {}).get("name")
        except (ValueError, AttributeError):
            name = None
        if not isinstance(name, str) or not name.strip() or len(name) > 200:
            return JSONResponse({"error": 'give the submitter\'s name: {"name": "..."} (at most 200 characters)'},
                                status_code=422)
        try:
            token = await run_in_threadpool(store.add_submitter, name.strip())
        except Exception:  # noqa: BLE001 - the name is taken (unique)
            return JSONResponse({"error": f"a submitter named {name.strip()!r} exists already"}, status_code=409)
        return JSONResponse({"name": name.strip(), "token": token}, status_code=201)

    return Guard(app, int(cfg.max_upload_mb * 2 ** 20), pages.CSP)
