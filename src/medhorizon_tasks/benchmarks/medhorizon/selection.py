"""Reading a query-aware selection (written by ``medhorizon-tasks select``) for the task variants that show it.

The variants ``medhorizon_aks128``, ``medhorizon_wfs128``, ``medhorizon_vilamp_select128`` (and their
``_synthetic`` twins) show each item the frames its selector chose, read from
``$MEDHORIZON_SELECTION/selection-<selector>-<budget>.jsonl`` (the ``select --out`` folder). Each row
records the selector and its version, the scorer, the candidate fps and the budget; the frames are shown
in time order with their timestamps, like any other plan, through every bridge. A missing folder, file or
item is a clear error naming what to run; an item whose video the pre-pass could not read is a video error
of that item.

The file's rows say what they are, and are believed over its name: a row whose ``selector`` or ``budget``
is not the file's (a uniform selection, or a 16-frame one, copied under ``selection-aks-128.jsonl``), or
that shows more frames than its budget, is an error naming the file, the field and both values.
:func:`selection_shown` reads a selection for a set of items (``stats --recall --selection``) with the
same checks, and refuses one that does not cover every item, as a model run does.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from ...core.errors import DataError, MedHorizonError, VideoError
from ...core.safeio import iter_jsonl
from ...core.sampling import Selected
from ...core.settings import env_text

__all__ = ["SELECTION_ENV", "selection_file", "load_selection", "selected_policy", "selection_shown"]

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


def _what_it_is(row: dict, line: int, selector: str, budget: int) -> str | None:
    """The first way ``row`` says it is not a ``selector`` selection of ``budget`` frames (None: it is one)."""
    where = f"item {row['uid']} (line {line})"
    got = row.get("selector")
    if got != selector:
        return (f"field selector is {'missing' if got is None else repr(got)}, the file's name says {selector!r}: this is not {selector}'s selection "
                "(run `medhorizon-tasks select` with that selector)")
    got = row.get("budget")
    if isinstance(got, bool) or not isinstance(got, int) or got != budget:
        return (f"field budget is {'missing' if got is None else repr(got)}, the file's name says {budget}: a selection of another budget "
                f"(run `medhorizon-tasks select --budget {budget}`)")
    if row.get("error") is None and len(row["indices"]) > budget:
        return f"{where}: field indices has {len(row['indices'])} frames, more than its budget {budget}"
    return None


@functools.lru_cache(maxsize=8)
def _load(path: str, stat: tuple, selector: str, budget: int) -> dict[str, dict]:
    rows: dict[str, dict] = {}
    problems = []
    for line, row in iter_jsonl(path):
        if not isinstance(row, dict) or not isinstance(row.get("uid"), str):
            problems.append(f"line {line}: not a selection row with a uid")
            continue
        if row.get("error") is None and not (isinstance(row.get("indices"), list) and row["indices"]
                                             and all(isinstance(i, int) and not isinstance(i, bool)
                                                     for i in row["indices"])):
            problems.append(f"item {row['uid']} (line {line}): field indices must be a non-empty list of frame "
                            "indices")
            continue
        wrong = _what_it_is(row, line, selector, budget)
        if wrong is not None:
            # one message for the file: a copied or renamed file is wrong in every row
            raise DataError(wrong if wrong.startswith("item ") else f"item {row['uid']} (line {line}): {wrong}",
                            source=f"selection {path}")
        rows[row["uid"]] = row
    if problems:
        raise DataError(problems, source=f"selection {path}")
    return rows


def load_selection(selector: str, budget: int, folder: str | os.PathLike | None = None) -> dict[str, dict]:
    """``{uid: row}`` of the selection file (re-read when the file changes), every row checked to be a
    ``selector`` selection of ``budget`` frames."""
    path = selection_file(selector, budget, folder)
    return _read(path, selector, budget)


def _read(path: Path, selector: str, budget: int) -> dict[str, dict]:
    st = path.stat()
    return _load(str(path), (st.st_mtime_ns, st.st_size, st.st_ctime_ns), selector, int(budget))


def selection_shown(path: str | os.PathLike, items, selector: str | None = None,
                    budget: int | None = None) -> dict[str, list[float] | None]:
    """``{uid: timestamps}`` of the selection file ``path`` for every one of ``items`` (None: the pre-pass could
    not read the item's video, shown nothing). ``selector`` and ``budget`` default to the file's name
    (``selection-<selector>-<budget>.jsonl``). The rows are checked as the task variants check them, and a file
    that does not cover every item, or whose row names another video than the item's, is refused as a model
    run refuses it: recall over items it never selected for would count them as misses."""
    path = Path(path)
    if selector is None or budget is None:
        name, _, number = path.stem[len("selection-"):].rpartition("-")
        if not path.stem.startswith("selection-") or not name or not number.isdigit():
            raise DataError("not named selection-<selector>-<budget>.jsonl", source=f"selection {path}")
        selector, budget = name, int(number)
    rows = _read(path, selector, budget)
    missing = [it.uid for it in items if it.uid not in rows]
    if missing:
        raise DataError(f"no selection for {len(missing)} of the {len(items)} items (e.g. {', '.join(missing[:3])}): "
                        "the selection was made for other data or for only some of the items; run `select` on "
                        "these items, or give the data it was made for", source=f"selection {path}")
    other = [f"{it.uid} ({rows[it.uid]['video_key']!r}, the item's {it.video_key!r})" for it in items
             if rows[it.uid].get("video_key") not in (None, it.video_key)]
    if other:
        raise DataError(f"{len(other)} item(s) selected on another video, field video_key: {'; '.join(other[:3])}: "
                        "the selection was made for other data", source=f"selection {path}")
    out: dict[str, list[float] | None] = {}
    for it in items:
        row = rows[it.uid]
        ts = row.get("timestamps")
        if row.get("error") is not None:
            out[it.uid] = None
        elif not (isinstance(ts, list) and len(ts) == len(row["indices"])
                  and all(isinstance(t, (int, float)) and not isinstance(t, bool) for t in ts)):
            raise DataError(f"item {it.uid}: field timestamps must be a list of seconds, one per index",
                            source=f"selection {path}")
        else:
            out[it.uid] = [float(t) for t in ts]
    return out


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
