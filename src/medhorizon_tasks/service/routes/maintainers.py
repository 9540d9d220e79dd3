"""The maintainers' routes (``Authorization: Bearer <token>``, checked by the :func:`~..context.maintainer`
dependency before a route runs): an entry's per-item correctness, hide / restore / delete / verify / unverify
with a reason, the
action log, submitter tokens."""

from __future__ import annotations

import json

from fastapi import APIRouter, Depends, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from ..context import Service, maintainer
from ..store import ACTIONS, MARKS

MAINTAINER_ACTIONS = (*ACTIONS, *MARKS)

router = APIRouter()


async def _body_field(request: Request, key: str):
    try:
        return (json.loads(await request.body() or b"{}") or {}).get(key)
    except (ValueError, AttributeError):
        return None


@router.get("/api/submissions/{sub_id}/items")
def entry_items(sub_id: int, svc: Service = Depends(maintainer)):
    row = svc.store.get(sub_id)
    if row is None:
        return JSONResponse({"error": f"no entry {sub_id}"}, status_code=404)
    _, e = svc.placed(row)
    if e is None:
        return JSONResponse({"error": "not on the data this server holds"}, status_code=409)
    return JSONResponse({"id": row.id, "benchmark": row.benchmark, "correct": e.paired}
                        if isinstance(e.paired, dict) and row.benchmark != "surghi"
                        else {"id": row.id, "benchmark": row.benchmark, "per_video": e.paired})


@router.post("/api/submissions/{sub_id}/{action}")
async def act(request: Request, sub_id: int, action: str, svc: Service = Depends(maintainer)):
    if action not in MAINTAINER_ACTIONS:
        return JSONResponse({"error": f"unknown action {action!r}: {', '.join(MAINTAINER_ACTIONS)}"},
                            status_code=404)
    reason = await _body_field(request, "reason")
    if not isinstance(reason, str) or not reason.strip():
        return JSONResponse({"error": 'give the reason: {"reason": "..."}'}, status_code=422)
    try:
        done = await run_in_threadpool(svc.store.act, sub_id, action, reason.strip()[:2000])
    except KeyError:
        return JSONResponse({"error": f"no entry {sub_id}"}, status_code=404)
    return JSONResponse({"ok": True, "action": done.__dict__})


@router.get("/api/actions")
def actions(svc: Service = Depends(maintainer)):
    return JSONResponse({"actions": [a.__dict__ for a in svc.store.actions()]})


@router.post("/api/submitters")
async def add_submitter(request: Request, svc: Service = Depends(maintainer)):
    name = await _body_field(request, "name")
    if not isinstance(name, str) or not name.strip() or len(name) > 200:
        return JSONResponse({"error": 'give the submitter\'s name: {"name": "..."} (at most 200 characters)'},
                            status_code=422)
    try:
        token = await run_in_threadpool(svc.store.add_submitter, name.strip())
    except Exception:  # noqa: BLE001 - the name is taken (unique)
        return JSONResponse({"error": f"a submitter named {name.strip()!r} exists already"}, status_code=409)
    return JSONResponse({"name": name.strip(), "token": token}, status_code=201)
