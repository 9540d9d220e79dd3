"""Errors the framework answers itself (an unknown URL: 404, a method a route does not take: 405, a path or
query that does not parse: 422) as a styled page for a browser and as FastAPI's JSON for an API client.

A request that asks for HTML (``Accept: text/html``, as every browser's navigation does) gets the service's
page with a line saying what went wrong and where to go; anything else gets FastAPI's own JSON reply
(``{"detail": ...}``), so API clients see what FastAPI documents.
"""

from __future__ import annotations

from html import escape

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler, request_validation_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse
from starlette.exceptions import HTTPException

from . import pages

__all__ = ["add_error_pages", "wants_html"]

_TITLES = {404: "Not found", 405: "Method not allowed", 422: "Not understood"}


def wants_html(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "text/html" in accept and not request.url.path.startswith("/api/")


def _page(status: int, text: str, headers=None) -> HTMLResponse:
    title = _TITLES.get(status, f"Error {status}")
    body = (f'<p class="banner bad" id="error">{escape(text)}</p>'
            '<p>Go to <a href="/">the board</a> or <a href="/submit">the submission form</a>.</p>')
    return HTMLResponse(pages.page(title, body), status_code=status, headers=headers)


def add_error_pages(app: FastAPI) -> None:
    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException):
        if not wants_html(request):
            return await http_exception_handler(request, exc)
        path = request.url.path[:200]
        text = {404: f"There is no page at {path}.",
                405: f"{path} does not take {request.method} requests"
                     + (f" (it takes {exc.headers['Allow']})." if exc.headers and "Allow" in exc.headers else ".")
                }.get(exc.status_code, str(exc.detail))
        return _page(exc.status_code, text, getattr(exc, "headers", None))

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError):
        if not wants_html(request):
            return await request_validation_exception_handler(request, exc)
        problems = []
        for err in exc.errors():
            where = " ".join(str(x) for x in err.get("loc", ()) if x not in ("path", "query", "body"))
            value = err.get("input")
            problems.append(f"{where}: {err.get('msg', 'not valid')}"
                            + (f" (got {str(value)[:80]!r})" if isinstance(value, (str, int, float)) else ""))
        return _page(422, f"{request.url.path[:200]}: " + "; ".join(problems))
