"""Reading a query-aware selection (written by ``medhorizon-tasks select``) for the task variants that show it.

The variants ``medhorizon_aks128``, ``medhorizon_wfs128``, ``medhorizon_vilamp_select128`` (and their
``_synthetic`` twins) show each item the frames its selector chose, read from
``$MEDHORIZON_SELECTION/selection-<selector>-<budget>.jsonl`` (the ``select --out`` folder). Each row
records the selector and its version, the scorer, the candidate fps and the budget; the frames are shown
in time order with their timestamps, like any other plan, through every bridge. A missing folder, file or
item is a clear error naming what to run; an item whose video the pre-pass could not read is a video error
of that item.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from ...core.errors import DataError, MedHorizonError, VideoError
from ...core.safeio import iter_jsonl
from ...core.sampling import Selected
from ...core.settings import env_text

__all__ = ["SELECTION_ENV", "selection_file", "load_selection", "selected_policy"]

SELECTION_ENV = "MEDHORIZON_SELECTION"


def selection_file(selector: str, budget: int, folder: str | os.PathLike | None = None) -> Path:
    raw = folder if folder is not None else env_text(SELECTION_ENV)
    if not raw:
        raise MedHorizonError(f"${SELECTION_ENV} is not set: run `medhorizon-tasks select --selector {selector} "
                              f"--budget {budget} --scorer ... --out DIR` first, then set {SELECTION_ENV}=DIR")
    path = Path(raw).expanduser() / f"selection-{selector}-{budget}.jsonl"
    if not path.is_file():
        raise MedHorizonError(f"{path} does not exist: run `medhorizon-tasks select --selector {selector} --budget "
                              f"{budget} --scorer ... --out {Path(raw).expanduser()}` (the folder ${SELECTION_ENV} "
                              "names)")
    return path


@functools.lru_cache(maxsize=8)
def _load(path: str, stat: tuple) -> dict[str, dict]:
    rows: dict[str, dict] = {}
    problems = []
    for line, row in iter_jsonl(path):
        if not isinstance(row, dict) or not isinstance(row.get("uid"), str):
            problems.append(f"line {line}: not a selection row with a uid")
            continue
        if row.get("error") is None and not (isinstance(row.get("indices"), list) and row["indices"]
                                             and all(isinstance(i, int) for i in row["indices"])):
            problems.append(f"item {row['uid']} (line {line}): field indices must be a non-empty list of frame "
                            "indices")
            continue
        rows[row["uid"]] = row
    if problems:
        raise DataError(problems, source=f"selection {path}")
    return rows


def load_selection(selector: str, budget: int, folder: str | os.PathLike | None = None) -> dict[str, dict]:
    """``{uid: row}`` of the selection file (re-read when the file changes)."""
    path = selection_file(selector, budget, folder)
    st = path.stat()
    return _load(str(path), (st.st_mtime_ns, st.st_size))


def selected_policy(item, selector: str, budget: int, folder: str | os.PathLike | None = None) -> Selected:
    """The :class:`~medhorizon_tasks.core.sampling.Selected` policy of one item, checked against the item."""
    rows = load_selection(selector, budget, folder)
    row = rows.get(item.uid)
    where = f"selection-{selector}-{budget}.jsonl"
    if row is None:
        raise DataError(f"item {item.uid} has no selection: the selection was made for other data; run `select` "
                        "again on these items", source=where)
    if row.get("video_key") not in (None, item.video_key):
        raise DataError(f"item {item.uid}: field video_key is {row['video_key']!r}, the item's video is "
                        f"{item.video_key!r}", source=where)
    if row.get("error"):
        raise VideoError(f"the selection pre-pass could not read this item's video: {row['error']}", uid=item.uid)
    label = f"selected({selector},budget={budget},scorer={row.get('scorer', '?')},v{row.get('selector_version', '?')})"
    return Selected(tuple(int(i) for i in row["indices"]), label)
