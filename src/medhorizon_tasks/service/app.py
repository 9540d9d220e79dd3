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
* An unknown URL (404), a method a route does not take (405), a path or query that does not parse (422): a
  styled page for a browser, FastAPI's JSON for others (:mod:`.errors`).

Maintainers (``Authorization: Bearer <token>``):

* ``POST /api/submissions/{id}/hide|restore|delete|verify|unverify`` with ``{"reason": "..."}``;
  ``GET /api/actions``;
* ``GET /api/submissions/{id}/items``: whether each item was answered right (never served to anyone else);
* ``POST /api/submitters`` with ``{"name": "..."}``: a submitter token (``--require-token``).
* ``GET /maintainer``: the same actions in HTML, after a login with the token (:mod:`.routes.maintainer_view`).

The routes live in :mod:`.routes`, one router per audience; what they share (store, boards, limits, tokens)
is one :class:`~.context.Service` handed to each by a dependency.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse
from sqlalchemy import exc as sa_exc

from . import pages
from .context import DEFAULT_MAX_UPLOAD_MB, Answer, Service, ServiceConfig
from .errors import add_error_pages
from .routes import ROUTERS
from .security import Guard, TooLarge

__all__ = ["ServiceConfig", "create_app", "DEFAULT_MAX_UPLOAD_MB"]


def create_app(cfg: ServiceConfig) -> FastAPI:
    svc = Service(cfg)
    app = FastAPI(title=cfg.title, docs_url=None, redoc_url=None, openapi_url="/api/openapi.json")
    app.state.service = svc

    @app.exception_handler(TooLarge)
    async def too_large(request: Request, exc: TooLarge):
        return JSONResponse({"accepted": False, "problems": [str(exc)]}, status_code=413,
                            headers={"Connection": "close"})

    @app.exception_handler(Answer)
    async def answer(request: Request, exc: Answer):
        return exc.response

    add_error_pages(app)

    @app.exception_handler(sa_exc.OperationalError)
    @app.exception_handler(sa_exc.InterfaceError)
    async def store_away(request: Request, exc: Exception):
        # the database stopped or is unreachable: each request tries it again (PostgreSQL's pool pings first),
        # so the service recovers by itself when it is back
        line = ("the board's database is unreachable at the moment; nothing was kept or changed: try again in a "
                "minute")
        headers = {"Retry-After": "30"}
        if request.url.path.startswith("/api/") or request.url.path == "/healthz":
            return JSONResponse({"ok": False, "error": line}, status_code=503, headers=headers)
        return HTMLResponse(pages.message_page("Unavailable", line), status_code=503, headers=headers)

    app.router.on_shutdown.append(svc.intake.close)
    for router in ROUTERS:
        app.include_router(router)
    return Guard(app, int(cfg.max_upload_mb * 2 ** 20), pages.CSP)
