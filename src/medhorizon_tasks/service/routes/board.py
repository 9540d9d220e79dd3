"""Public reading: the boards (HTML, JSON, CSV), an entry's page and JSON, the health check."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from ...leaderboard.tables import format_csv
from .. import pages
from ..boards import board_json, entry_json
from ..context import Service, service

router = APIRouter()


@router.get("/", response_class=HTMLResponse)
def board_html(svc: Service = Depends(service)):
    bs, elsewhere = svc.boards.boards()
    return HTMLResponse(pages.board_page(bs, elsewhere, svc.cfg.title))


@router.get("/api/board")
def board_api(svc: Service = Depends(service)):
    return JSONResponse(board_json(*svc.boards.boards(), rescoring=svc.boards.rescoring()))


@router.get("/board.csv")
def board_csv(svc: Service = Depends(service)):
    return Response(format_csv(svc.boards.boards()[0]), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": 'attachment; filename="leaderboard.csv"'})


@router.get("/healthz")
def healthz(svc: Service = Depends(service)):
    return {"ok": True, "submissions": len(svc.store.list(include_hidden=True)), "data": svc.held}


@router.get("/submissions/{sub_id}", response_class=HTMLResponse)
def entry_html(request: Request, sub_id: int, svc: Service = Depends(service)):
    row = svc.visible(request, sub_id)
    if row is None:
        return HTMLResponse(pages.message_page("Not found", f"no public entry {sub_id}"), status_code=404)
    banner = ("Accepted: this submission is on the board." if "accepted" in request.query_params else
              "These bytes were submitted before: this is that entry; nothing new was kept."
              if "duplicate" in request.query_params else None)
    b, e = svc.placed(row)
    return HTMLResponse(pages.entry_page(row, b, e, banner=banner, maintainer=svc.is_maintainer(request)))


@router.get("/api/submissions/{sub_id}")
def entry_api(request: Request, sub_id: int, svc: Service = Depends(service)):
    row = svc.visible(request, sub_id)
    if row is None:
        return JSONResponse({"error": f"no public entry {sub_id}"}, status_code=404)
    return JSONResponse(entry_json(row, *svc.placed(row)))
