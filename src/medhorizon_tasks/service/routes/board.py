"""Public reading: the boards (HTML with search and filters, JSON, CSV), an entry's page and JSON, the health
check. Each adds what the store knows beside the scores: when an entry was received and whether the
maintainers verified it (:mod:`..board_page`)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from ...leaderboard.tables import format_csv
from .. import pages
from ..board_page import Filters, annotate_csv, annotate_json, served_board_page
from ..boards import board_json, entry_json
from ..context import Service, service

router = APIRouter()


def _marks(svc: Service):
    """(every kept row by id, the verified entries): read from the store at this request."""
    return {r.id: r for r in svc.store.list(include_hidden=True)}, svc.store.verified()


@router.get("/", response_class=HTMLResponse)
def board_html(request: Request, svc: Service = Depends(service)):
    bs, elsewhere = svc.boards.boards()
    rows, verified = _marks(svc)
    return HTMLResponse(served_board_page(bs, elsewhere, svc.cfg.title, datas=svc.datas, rows=rows,
                                          verified=verified, filters=Filters.from_query(request.query_params)))


@router.get("/api/board")
def board_api(svc: Service = Depends(service)):
    rows, verified = _marks(svc)
    return JSONResponse(annotate_json(board_json(*svc.boards.boards(), rescoring=svc.boards.rescoring()), rows,
                                      verified, svc.datas))


@router.get("/board.csv")
def board_csv(svc: Service = Depends(service)):
    rows, verified = _marks(svc)
    return Response(annotate_csv(format_csv(svc.boards.boards()[0]), rows, verified),
                    media_type="text/csv; charset=utf-8",
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
              "This run was submitted before (the same benchmark, data version, protocol, items and outputs): "
              "this is that entry; nothing new was kept."
              if "duplicate" in request.query_params else None)
    b, e = svc.placed(row)
    return HTMLResponse(pages.entry_page(row, b, e, banner=banner, maintainer=svc.is_maintainer(request),
                                         verified=svc.store.verified().get(row.id)))


@router.get("/api/submissions/{sub_id}")
def entry_api(request: Request, sub_id: int, svc: Service = Depends(service)):
    row = svc.visible(request, sub_id)
    if row is None:
        return JSONResponse({"error": f"no public entry {sub_id}"}, status_code=404)
    act = svc.store.verified().get(row.id)
    return JSONResponse({**entry_json(row, *svc.placed(row)), "verified": act is not None,
                         "verified_reason": act.reason if act else None})
