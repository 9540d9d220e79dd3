"""Any benchmark's data by name, and its version hash (what submissions, release builds and VLMEvalKit stamps name).

A submission names the version of the data it was made on; a leaderboard only
ranks submissions of one version, since a score on other items (or other
answers) is not comparable. The version is a hash of the *content* of the
data, never of a file:

    data_version = "sha256:" + the first 16 hex digits of
                   sha256(canonical JSON of {"benchmark", "scheme", "items"})

The canonical JSON has sorted keys, no whitespace and UTF-8 text, and the
items are sorted by id, so reformatting or reordering a data file keeps its
version, while any edit of an item (its question, options, answer, video,
evidence, label ...) changes it.

* MedHorizon: every flattened :class:`~..benchmarks.medhorizon.release.Item`
  (``Item.to_record()``, ``evidence_frames`` left out when empty), sorted by uid.
* Sureon: every :class:`~..benchmarks.sureon.items.SureonItem`, sorted by uid.
* SurgHiBench: every annotated frame ``[dataset, video, frame, phase, step]``
  (labels in the hierarchy's canonical form, so case and spacing do not
  count), sorted by ``(dataset, video, frame)``, and each dataset's
  hierarchy (phases, steps, semantic groups, aliases; sorted), because
  sibling / cousin / semantic accuracy and label matching depend on it: the
  same annotations under another hierarchy are another benchmark version.
  Task-item files (with ``timestamp_s`` / ``video_path``) and plain
  annotation files with the same labels have the same version.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..core.errors import DataError

__all__ = ["BENCHMARKS", "BENCHMARK_NAMES", "BenchmarkData", "load_benchmark_data", "data_version",
           "canonical_content", "hash_content", "show_id", "HASH_SCHEME"]

#: The benchmarks a submission can be for, in leaderboard order.
BENCHMARKS = ("medhorizon", "sureon", "surghi")
BENCHMARK_NAMES = {"medhorizon": "MedHorizon", "sureon": "Sureon", "surghi": "SurgHiBench"}
#: Bumped whenever the canonical form changes (it is part of the hashed content).
HASH_SCHEME = 1


def show_id(key: Hashable) -> str:
    """An item id as text: the uid, or ``dataset/video/frame`` for a SurgHiBench frame key."""
    return "/".join(map(str, key)) if isinstance(key, tuple) else str(key)


@dataclass
class BenchmarkData:
    """One benchmark's loaded data: what validation and scoring need.

    ``ids``: every item id in data order: the uid (MedHorizon, Sureon) or the
    frame key ``(dataset, video, frame)`` (SurgHiBench; shown as
    ``dataset/video/frame``). ``items``: MedHorizon / Sureon items. ``rows``
    and ``hierarchies``: SurgHiBench annotation rows and
    ``{dataset: (Hierarchy, source)}``.
    """

    benchmark: str
    source: str
    ids: list
    items: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    hierarchies: dict = field(default_factory=dict)
    _version: str | None = field(default=None, repr=False)

    @property
    def version(self) -> str:
        if self._version is None:
            self._version = hash_content(canonical_content(self))
        return self._version


def _hierarchy_canonical(h) -> dict:
    j = h.to_json()
    return {"phases": {p: sorted(ss) for p, ss in j["phases"].items()},
            "semantic_groups": {g: sorted(ss) for g, ss in j["semantic_groups"].items()},
            "phase_aliases": j["phase_aliases"], "step_aliases": j["step_aliases"]}


def _medhorizon_record(item) -> dict:
    """``Item.to_record()`` without an empty ``evidence_frames`` (a field added later: a release that lists no
    evidence images keeps the version it had; one that lists them is another version, its oracle differs)."""
    rec = item.to_record()
    if not rec.get("evidence_frames"):
        rec.pop("evidence_frames", None)
    return rec


def canonical_content(data: BenchmarkData) -> dict[str, Any]:
    """The JSON value whose hash is the data version (see the module doc)."""
    if data.benchmark == "medhorizon":
        items: Any = [_medhorizon_record(it) for it in sorted(data.items, key=lambda it: it.uid)]
    elif data.benchmark == "sureon":
        items = [dataclasses.asdict(it) for it in sorted(data.items, key=lambda it: it.uid)]
    elif data.benchmark == "surghi":
        frames = []
        for r in sorted(data.rows, key=lambda r: r.key):
            h = data.hierarchies[r.dataset][0]
            frames.append([r.dataset, r.video, r.frame, h.canonical_phase(r.phase),
                           None if r.step is None else h.canonical_step(r.step)])  # None: phases only
        items = {"frames": frames,
                 "hierarchies": {ds: _hierarchy_canonical(h) for ds, (h, _) in sorted(data.hierarchies.items())}}
    else:
        raise DataError(f"unknown benchmark {data.benchmark!r} (expected one of {', '.join(BENCHMARKS)})")
    return {"benchmark": data.benchmark, "scheme": HASH_SCHEME, "items": items}


def hash_content(content: Any) -> str:
    """``"sha256:"`` + 16 hex digits of the canonical JSON text of ``content``."""
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def load_benchmark_data(benchmark: str, data: str | os.PathLike | None = None, *,
                        hierarchy: str | os.PathLike | None = None) -> BenchmarkData:
    """Load and validate one benchmark's data with the package's own readers.

    ``data``: MedHorizon: the release (JSONL, JSON list or dataset folder;
    default ``$MEDHORIZON_DATA``); Sureon: the items JSONL (required);
    SurgHiBench: the annotations or task items (JSONL/CSV frame rows;
    required). ``hierarchy``: SurgHiBench only, a hierarchy JSON for datasets
    the package does not ship (see ``surghi.frames.load_hierarchy_file``;
    default: the ``hierarchies.json`` beside the rows, if any); without one,
    such datasets get a hierarchy derived from the annotations.
    """
    if benchmark not in BENCHMARKS:
        raise DataError(f"unknown benchmark {benchmark!r} (expected one of {', '.join(BENCHMARKS)})")
    if hierarchy is not None and benchmark != "surghi":
        raise DataError(f"--hierarchy applies to surghi only, not to {benchmark}")
    if benchmark == "medhorizon":
        from .medhorizon.release import DATA_ENV, load_release

        items = load_release(data)
        return BenchmarkData(benchmark, str(data) if data else f"${DATA_ENV}", [it.uid for it in items],
                             items=items)
    if data is None:
        raise DataError(f"no data given for {benchmark}: pass --data "
                        + ("(the items JSONL)" if benchmark == "sureon" else "(the annotation or task-item rows)"))
    if benchmark == "sureon":
        from .sureon.items import load_items

        items = load_items(data)
        return BenchmarkData(benchmark, str(data), [it.uid for it in items], items=items)
    from .surghi.frames import hierarchy_beside, load_hierarchy_file, read_frame_rows, resolve_hierarchies

    rows = read_frame_rows(Path(data), role="annotations")
    if hierarchy is None:  # the hierarchies written beside the rows, as every reader of them does
        hierarchy = hierarchy_beside(data)
    given = load_hierarchy_file(hierarchy) if hierarchy is not None else None
    hierarchies = resolve_hierarchies(rows, given)
    return BenchmarkData(benchmark, str(data), [r.key for r in rows], rows=rows, hierarchies=hierarchies)


def data_version(benchmark: str, data: str | os.PathLike | None = None, *,
                 hierarchy: str | os.PathLike | None = None) -> str:
    """The version hash of a benchmark's data (``medhorizon-tasks leaderboard version``)."""
    return load_benchmark_data(benchmark, data, hierarchy=hierarchy).version
