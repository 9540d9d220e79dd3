"""Sending a run: the HTML form (``GET``/``POST /submit``, CSRF-protected) and the JSON API
(``POST /api/submissions``: a submission JSON; ``POST /api/runs``: a run's files with the form's fields, what
``leaderboard submit`` sends). Each scores before it keeps: a failure keeps nothing."""

from __future__ import annotations

import json

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse

from .. import pages
from ..boards import entry_href, entry_json
from ..context import Answer, Service, bearer, refused, service
from ..intake import FORM_FIELDS, Refused
from ..security import Csrf, TooLarge
from ..store import StoreFull

router = APIRouter()


def _form_page(svc: Service, *, status: int = 200, **kw) -> HTMLResponse:
    value = svc.csrf.new_value()
    response = HTMLResponse(pages.submit_page(svc.held, svc.csrf.form_token(value), require_token=svc.cfg.require_token,
                                              max_mb=svc.cfg.max_upload_mb, rate=svc.limiter.describe(), **kw),
                            status_code=status)
    response.set_cookie(Csrf.COOKIE, value, httponly=True, samesite="strict")
    return response


async def _config_of(form) -> bytes | None:
    """The run's lmms-eval ``results.json``, when the form or request carries one (field ``config``)."""
    config = form.get("config")
    if config is None or isinstance(config, str):
        return None
    return await config.read() or None


@router.get("/submit", response_class=HTMLResponse)
def submit_form(svc: Service = Depends(service)):
    return _form_page(svc)


@router.post("/submit")
async def submit_post(request: Request, svc: Service = Depends(service)):
    try:
        form = await request.form(max_files=2, max_fields=len(FORM_FIELDS) + 4)
    except TooLarge:
        raise
    except Exception as exc:  # a malformed multipart body  # noqa: BLE001
        return HTMLResponse(pages.message_page("Refused", f"the form could not be read: {exc}"), status_code=400)
    fields = {k: v for k, v in form.items() if isinstance(v, str) and k in FORM_FIELDS + ("token",)}

    def again(problems, status=422):
        return _form_page(svc, status=status, problems=problems, form=fields)

    token = form.get("csrf")
    if not svc.csrf.valid(request.cookies.get(Csrf.COOKIE), token if isinstance(token, str) else None):
        return again(["the form's security token is missing or stale (or the form was sent from another "
                      "site): reload the form and submit again"], 403)
    who, problems, status = svc.submitter(request, (fields.get("token") or "").strip() or None)
    if problems:
        return again(problems, status)
    limited = svc.over_rate(who)
    if limited is not None:
        return again(json.loads(limited.body)["problems"], 429)
    upload = form.get("file")
    if upload is None or isinstance(upload, str):
        return again(["file: choose a file to upload"])
    body = await upload.read()
    filename = (upload.filename or "")[:200] or None
    config = await _config_of(form)
    try:
        intake = await svc.intake.read(body, form=fields, filename=filename, what="file", config=config)
        row, new = await run_in_threadpool(svc.keep, intake, filename=filename, who=who, received=body)
    except Refused as exc:
        return again(exc.problems, exc.status)
    except StoreFull as exc:
        return again([str(exc)], 507)
    return RedirectResponse(f"{entry_href(row.id)}?{'accepted' if new else 'duplicate'}=1", status_code=303)


def api_sender(request: Request, svc: Service = Depends(service)) -> str:
    """The dependency of the API's uploads: who sends (a submitter token, else the client's address), once
    the token is one of this server's and the sender is within the rate limit (else the refusal, as it is)."""
    who, problems, status = svc.submitter(request, bearer(request))
    if problems:
        raise Answer(refused(problems, status))
    limited = svc.over_rate(who)
    if limited is not None:
        raise Answer(limited)
    return who


@router.post("/api/submissions")
async def submit_api(request: Request, svc: Service = Depends(service), who: str = Depends(api_sender)):
    body = await request.body()
    filename = (request.headers.get("x-filename") or "")[:200] or None

    def work(intake):
        row, new = svc.keep(intake, filename=filename, who=who, received=body)
        return row, new, (entry_json(row, *svc.placed(row)) if new else None)

    return await _answer(svc.intake.read(body), work)


@router.post("/api/runs")
async def submit_run(request: Request, svc: Service = Depends(service), who: str = Depends(api_sender)):
    """A run as files (multipart: ``file`` = samples, predictions or a submission JSON; ``config`` = the run's
    lmms-eval results file, optional) with the form's fields, answered as ``POST /api/submissions`` answers:
    what ``medhorizon-tasks leaderboard submit`` sends."""
    try:
        form = await request.form(max_files=2, max_fields=len(FORM_FIELDS) + 4)
    except TooLarge:
        raise
    except Exception as exc:  # a malformed multipart body  # noqa: BLE001
        return refused([f"the request could not be read as multipart form data: {exc}"], 400)
    upload = form.get("file")
    if upload is None or isinstance(upload, str):
        return refused(["file: send the run's file (multipart field 'file')"])
    fields = {k: v for k, v in form.items() if isinstance(v, str) and k in FORM_FIELDS}
    body = await upload.read()
    filename = (upload.filename or "")[:200] or None
    config = await _config_of(form)

    def work(intake):
        row, new = svc.keep(intake, filename=filename, who=who, received=body)
        return row, new, entry_json(row, *svc.placed(row))

    return await _answer(svc.intake.read(body, form=fields, filename=filename, what="file", config=config), work)


def _duplicate(row) -> JSONResponse:
    return JSONResponse({"accepted": True, "duplicate": True, "id": row.id, "page": entry_href(row.id),
                         "message": f"this run was submitted before (the same benchmark, data version, protocol, "
                                    f"items and outputs): entry {row.id}, received {row.received_at}; nothing new "
                                    "was kept"}, status_code=200)


async def _answer(reading, work) -> JSONResponse:
    """The API's reply to an upload: ``reading`` (the intake workers' reading of it) then ``work`` (keep it)."""
    try:
        row, new, view = await run_in_threadpool(work, await reading)
    except Refused as exc:
        return refused(exc.problems, exc.status)
    except StoreFull as exc:
        return refused([str(exc)], 507)
    if not new:
        return _duplicate(row)
    return JSONResponse({"accepted": True, "duplicate": False, **view}, status_code=201)
