"""The maintainers' view in HTML (:mod:`..maintainer_pages`): ``GET /maintainer`` (the login form, or the
entries and the action log), ``POST /maintainer/login``, ``POST /maintainer/act`` (CSRF-checked),
``POST /maintainer/logout``."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, RedirectResponse

from ..context import Service, service
from ..maintainer_pages import SESSION_COOKIE, SESSION_SECONDS, Sessions, dashboard_page, login_page
from ..store import ACTIONS, MARKS

router = APIRouter()


def _sessions(svc: Service) -> Sessions:
    return svc.sessions


def _token(svc: Service) -> str | None:
    try:
        return svc.cfg.maintainer.current()
    except Exception:  # noqa: BLE001 - an unreadable token file: nobody is logged in
        return None


def _session(request: Request, svc: Service) -> str | None:
    cookie = request.cookies.get(SESSION_COOKIE)
    return cookie if _sessions(svc).valid(cookie, _token(svc)) else None


def _dashboard(svc: Service, cookie: str, *, status: int = 200, **kw) -> HTMLResponse:
    rows = svc.store.list(include_hidden=True)
    page = dashboard_page(rows, svc.store.verified(), svc.store.actions(), _sessions(svc).csrf(cookie), **kw)
    return HTMLResponse(page, status_code=status, headers={"Cache-Control": "no-store"})


@router.get("/maintainer", response_class=HTMLResponse)
def view(request: Request, svc: Service = Depends(service)):
    if not svc.cfg.maintainer.configured:
        return HTMLResponse(login_page(off=True), status_code=403)
    cookie = _session(request, svc)
    if cookie is None:
        return HTMLResponse(login_page(), headers={"Cache-Control": "no-store"})
    done = request.query_params.get("done")
    return _dashboard(svc, cookie, banner=done[:300] if done else None)


@router.post("/maintainer/login")
async def login(request: Request, svc: Service = Depends(service)):
    if not svc.cfg.maintainer.configured:
        return HTMLResponse(login_page(off=True), status_code=403)
    form = await request.form(max_files=0, max_fields=4)
    token = form.get("token")
    if not isinstance(token, str) or not svc.cfg.maintainer.matches(token.strip()):
        return HTMLResponse(login_page(problem="wrong maintainer token"), status_code=403)
    response = RedirectResponse("/maintainer", status_code=303)
    response.set_cookie(SESSION_COOKIE, _sessions(svc).issue(token.strip()), max_age=SESSION_SECONDS,
                        path="/maintainer", httponly=True, samesite="strict",
                        secure=request.url.scheme == "https")
    return response


@router.post("/maintainer/act")
async def act(request: Request, svc: Service = Depends(service)):
    cookie = _session(request, svc)
    if cookie is None:
        return HTMLResponse(login_page(problem="log in first (the session ended or was never opened)"),
                            status_code=401)
    form = await request.form(max_files=0, max_fields=8)
    fields = {k: v for k, v in form.items() if isinstance(v, str)}
    if not _sessions(svc).csrf_valid(cookie, fields.get("csrf")):
        return _dashboard(svc, cookie, status=403, problem="the form's security token is missing or stale (or the "
                                                           "form was sent from another site): try again")
    action, reason, sub_id = fields.get("action", ""), fields.get("reason", "").strip(), fields.get("id", "")
    if action not in (*ACTIONS, *MARKS):
        return _dashboard(svc, cookie, status=422, problem=f"action: {action[:40]!r} is not one of "
                                                           f"{', '.join((*ACTIONS, *MARKS))}")
    if not sub_id.isdigit():
        return _dashboard(svc, cookie, status=422, problem=f"id: {sub_id[:40]!r} is not an entry's number")
    if not reason:
        return _dashboard(svc, cookie, status=422, problem=f"reason: give the reason to {action} entry {sub_id}")
    try:
        done = await run_in_threadpool(svc.store.act, int(sub_id), action, reason[:2000])
    except KeyError:
        return _dashboard(svc, cookie, status=404, problem=f"id: no entry {sub_id}")
    from urllib.parse import quote

    return RedirectResponse(f"/maintainer?done={quote(f'{done.action}: entry {done.submission_id} ({done.model})')}",
                            status_code=303)


@router.post("/maintainer/logout")
async def logout(request: Request, svc: Service = Depends(service)):
    response = RedirectResponse("/maintainer", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/maintainer", httponly=True, samesite="strict")
    return response
