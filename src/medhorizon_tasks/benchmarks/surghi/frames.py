"""SurgHiBench inputs: per-frame label rows (predictions, annotations, task items) and hierarchies.

One row shape for everything: ``dataset, video, frame, phase, step`` in JSON Lines or CSV
(chosen by extension: ``.csv`` / ``.tsv``, otherwise JSON Lines).  Annotations and
predictions share it; the lmms-eval task items add ``timestamp_s`` (where the frame is in
the video) and ``video_path`` (relative to the video root).  Extra columns are ignored.

* An annotation row needs every field but ``step``; a prediction row may leave ``phase`` or ``step``
  empty / null (that label is then invalid, like an unknown one).
* A dataset is annotated with *phases only* (the paper's supplement Table 8 datasets: Cholec80,
  AutoLaparo, HeiChole) when none of its rows has a step (a CSV may lack the column); it is scored on
  the phase metrics, the step metrics being not applicable. A step missing on some rows of a dataset
  whose other rows have one is an error.
* A prediction row may carry ``error`` (text): the frame's video could not be read; it is scored wrong
  and counted as an error, whatever labels it has.
* ``frame`` is an integer >= 0 (CSV text ``"12"`` or JSON ``12.0`` are accepted), the key
  of the frame within its video; it is not converted to time.
* A ``(dataset, video, frame)`` key may appear once per file.

Every problem of a file is reported at once, each naming its line and field.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from ...core.errors import DataError
from ...core.safeio import iter_csv, iter_jsonl, read_json
from ...core.text import pct
from .hierarchy import Hierarchy
from .vocab import get_hierarchy

ROW_FIELDS = ("dataset", "video", "frame", "phase", "step")
ROLES = ("annotations", "predictions", "items")


@dataclass(frozen=True)
class FrameRow:
    """One frame's labels.  ``timestamp_s`` / ``video_path`` only in task items."""

    dataset: str
    video: str
    frame: int
    phase: str | None
    step: str | None
    timestamp_s: float | None = None
    video_path: str | None = None
    error: str | None = None  # predictions only: the frame's video could not be read (not an answer)

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.dataset, self.video, self.frame)

    @property
    def uid(self) -> str:
        """``dataset/video/frame``: the row's id in submissions and lmms-eval samples."""
        return f"{self.dataset}/{self.video}/{self.frame}"


def item_features():
    """The ``datasets.Features`` of a task item row (``datasets`` is imported on first use: it is slow).
    Annotation and prediction rows are the first five columns."""
    from datasets import Features, Value

    return Features({"uid": Value("string"), "dataset": Value("string"), "video": Value("string"),
                     "frame": Value("int64"), "phase": Value("string"), "step": Value("string"),
                     "timestamp_s": Value("float64"), "video_path": Value("string")})


def _iter_records(path: Path) -> Iterable[tuple[int, Any]]:
    if path.suffix.lower() in (".csv", ".tsv"):
        yield from iter_csv(path, "\t" if path.suffix.lower() == ".tsv" else ",", required=ROW_FIELDS[:4])
    else:
        yield from iter_jsonl(path)


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    text = str(value).strip()
    return text or None


_NOT_TEXT = (Mapping, list, tuple, set, bool)  # JSON values that are no name, whatever str() makes of them


def _named(rec: Mapping, name: str, where: str, problems: list[str], required: bool) -> str | None:
    """A text field of a row (a number is its text); a JSON object, a list or true/false where a name
    belongs is a problem naming the row and the field, never a name made of its text."""
    value = rec.get(name)
    if isinstance(value, _NOT_TEXT):
        kind = "an object" if isinstance(value, Mapping) else "a list" if isinstance(value, (list, tuple, set)) \
            else "true/false"
        shown = repr(value)
        problems.append(f"{where}: {name}: expected a name, got {kind} "
                        f"{shown if len(shown) <= 60 else shown[:57] + '...'}")
        return None
    text = _text(value)
    if text is None and required:
        problems.append(f"{where}: {name}: missing or empty")
    return text


def _frame(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    try:
        f = float(str(value).strip())
    except ValueError:
        return None
    return int(f) if math.isfinite(f) and f >= 0 and f == int(f) else None


def parse_row(rec: Any, where: str, role: str, problems: list[str]) -> FrameRow | None:
    """One row, or ``None`` with the reasons appended to ``problems``."""
    if not isinstance(rec, Mapping):
        problems.append(f"{where}: expected an object with {', '.join(ROW_FIELDS)}")
        return None
    bad = len(problems)
    dataset = _named(rec, "dataset", where, problems, required=True)
    video = _named(rec, "video", where, problems, required=True)
    frame = _frame(rec.get("frame"))
    if frame is None:
        problems.append(f"{where}: frame: expected an integer >= 0, got {rec.get('frame')!r}")
    phase = _named(rec, "phase", where, problems, required=role != "predictions")
    step = _named(rec, "step", where, problems, required=False)
    ts, vpath = None, None
    if role == "items":
        raw_ts = rec.get("timestamp_s")
        try:
            ts = float(raw_ts)
            if not (math.isfinite(ts) and ts >= 0):
                raise ValueError
        except (TypeError, ValueError):
            problems.append(f"{where}: timestamp_s: expected seconds >= 0, got {raw_ts!r}")
        vpath = _named(rec, "video_path", where, problems, required=True)
    error = _text(rec.get("error")) if role == "predictions" else None
    if len(problems) > bad:
        return None
    return FrameRow(dataset, video, frame, phase, step, ts, vpath, error)  # type: ignore[arg-type]


def read_frame_rows(path: str | os.PathLike, *, role: str = "annotations") -> list[FrameRow]:
    """Every row of a JSONL/CSV file (see the module doc); DataError lists all problems."""
    if role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}")
    path = Path(path)
    rows: list[FrameRow] = []
    problems: list[str] = []
    seen: dict[tuple, int] = {}
    for line, rec in _iter_records(path):
        row = parse_row(rec, f"line {line}", role, problems)
        if row is None:
            continue
        if row.key in seen:
            problems.append(f"line {line}: frame {row.uid} already given on line {seen[row.key]}")
            continue
        seen[row.key] = line
        rows.append(row)
    if role != "predictions":
        with_steps = {r.dataset for r in rows if r.step is not None}
        problems.extend(f"line {seen[r.key]}: step: missing or empty (other rows of dataset {r.dataset} have a "
                        "step; a dataset is annotated with phases only when none of its rows has one)"
                        for r in rows if r.step is None and r.dataset in with_steps)
    if not rows and not problems:
        problems.append("no rows")
    if problems:
        raise DataError(problems, source=f"{role} {path}")
    return rows


# ------------------------------------------------------------------ hierarchies

def load_hierarchy_file(path: str | os.PathLike) -> dict[str, Hierarchy] | Hierarchy:
    """``--hierarchy H``: one hierarchy ``{"phases": ..., "semantic_groups": ...}`` (for every
    dataset) or ``{dataset: {"phases": ...}, ...}``; or, by name, the package's shipped hierarchies:
    ``shipped`` (every dataset it knows) or ``shipped:GraSP,BernBypass70``."""
    if is_shipped_spec(path):
        return ShippedHierarchies.parse(str(path))
    path = Path(path)
    obj = read_json(path)
    if isinstance(obj, Mapping) and "phases" not in obj and obj and all(isinstance(v, Mapping) for v in obj.values()):
        problems: list[str] = []
        out: dict[str, Hierarchy] = {}
        for name, h in obj.items():
            try:
                out[str(name)] = Hierarchy.from_json(h, name=str(name), source=f"{path} [{name}]")
            except DataError as exc:
                problems.extend(f"{name}: {p}" for p in exc.problems)
        if problems:
            raise DataError(problems, source=str(path))
        return out
    try:
        return Hierarchy.from_json(obj, source=str(path))
    except DataError as exc:
        if exc.source == str(path):
            raise
        # Raised by the Hierarchy itself (e.g. a step in two semantic groups), under the hierarchy's name.
        raise DataError(exc.problems, source=str(path)) from None


HIERARCHY_ENV = "SURGHI_HIERARCHY"
#: The one name of the hierarchy file that goes with a data file: written beside the rows by ``surghi
#: import``, ``build-dataset`` and the synthetic sample, read beside them by the lmms-eval task, ``surghi
#: zeroshot``, ``score`` and the leaderboard.
HIERARCHY_FILE = "hierarchies.json"
#: Names written before there was one (``surghi import``: ``<rows>.hierarchy.json``; ``build-dataset``:
#: ``surghi/hierarchy.json``), still read when no ``hierarchies.json`` is there.
OLD_HIERARCHY_FILES = ("{stem}.hierarchy.json", "hierarchy.json")


def hierarchy_beside(data: str | os.PathLike) -> Path | None:
    """The hierarchy file beside the data file ``data`` (:data:`HIERARCHY_FILE`, else an old name), or None."""
    data = Path(data).expanduser()
    for name in (HIERARCHY_FILE, *OLD_HIERARCHY_FILES):
        path = data.parent / name.format(stem=data.stem)
        if path.is_file():
            return path
    return None


def hierarchy_file_for(data: str | os.PathLike) -> Path | None:
    """The hierarchy JSON that goes with task items ``data``: ``$SURGHI_HIERARCHY``, else the one beside the
    data (:func:`hierarchy_beside`), else None (shipped or derived hierarchies apply)."""
    env = os.environ.get(HIERARCHY_ENV)
    if env:
        return Path(env).expanduser()
    return hierarchy_beside(data)


def merged_hierarchies(path: str | os.PathLike, hierarchies: Mapping[str, Hierarchy]) -> dict[str, Any]:
    """The content of a per-dataset hierarchy file at ``path`` once ``hierarchies`` are written into it: the
    other datasets of a file already there are kept (two imports into one folder share its
    ``hierarchies.json``)."""
    path = Path(path)
    kept: dict[str, Any] = {}
    if path.is_file():
        old = load_hierarchy_file(path)
        if isinstance(old, Mapping):
            kept = {ds: h.to_json() for ds, h in old.items() if ds not in hierarchies}
    merged = {**kept, **{ds: h.to_json() for ds, h in hierarchies.items()}}
    return dict(sorted(merged.items()))


def levels_of(rows: Iterable[FrameRow]) -> dict[str, tuple[str, ...]]:
    """``{dataset: ("phases", "steps")}``, or ``("phases",)`` for a dataset annotated with phases only."""
    out: dict[str, tuple[str, ...]] = {}
    for r in rows:
        if r.step is not None:
            out[r.dataset] = ("phases", "steps")
        else:
            out.setdefault(r.dataset, ("phases",))
    return out


#: SurgHiBench Table 1, "Tree-likeness" ("the percentage of steps that belong to exactly one phase"), as printed,
#: per dataset: two bypass sites share one vocabulary and differ, so the hierarchy is each dataset's own.
PAPER_TREE_LIKENESS = {"MIPO": "100%", "StrasbyPass70": "74%", "BernBypass70": "54%", "GraSP": "33%"}
#: ``--hierarchy shipped`` / ``shipped:GraSP,BernBypass70`` (also ``$SURGHI_HIERARCHY``): the package's shipped
#: hierarchy for those datasets (every dataset it knows, without names) instead of the annotations' own.
SHIPPED = "shipped"


def _key(name: str) -> str:
    return "".join(str(name).casefold().split()).replace("_", "").replace("-", "")


class ShippedHierarchies(dict):
    """The shipped hierarchies a user asked for by name (``shipped:<names>``): dataset key -> Hierarchy;
    ``every``: every dataset the package has one for."""

    every = False

    @classmethod
    def parse(cls, spec: str) -> "ShippedHierarchies":
        out = cls()
        names = [n.strip() for n in spec.split(":", 1)[1].split(",")] if ":" in spec else []
        names = [n for n in names if n]
        if not names:
            out.every = True
        for n in names:
            try:
                out[_key(n)] = get_hierarchy(n)
            except KeyError as exc:
                raise DataError(f"--hierarchy {spec}: {exc.args[0]}") from None
        return out

    def for_dataset(self, dataset: str) -> Hierarchy | None:
        if self.every:
            try:
                return get_hierarchy(dataset)
            except KeyError:
                return None
        return self.get(_key(dataset))


def is_shipped_spec(spec) -> bool:
    text = str(spec)
    return text == SHIPPED or text.startswith(SHIPPED + ":")


def paper_tree_likeness(dataset: str) -> str | None:
    """The tree-likeness Table 1 prints for ``dataset`` (``"54%"``), None for a dataset the paper does not list."""
    return {_key(k): v for k, v in PAPER_TREE_LIKENESS.items()}.get(_key(dataset))


def _derived(dataset: str, rows: list[FrameRow]) -> Hierarchy:
    """The dataset's hierarchy from its own annotations: a step belongs to every phase it occurs in. A dataset
    the package knows keeps the shipped label aliases and semantic step groups (those of its steps that occur),
    which the annotations cannot give."""
    try:
        known = get_hierarchy(dataset)
    except KeyError:
        known = None
    labelled = ((r.video, r.frame, r.phase, r.step) for r in rows)
    if known is None:
        return Hierarchy.from_annotations(labelled, name=dataset)
    occurring = {known.canonical_step(r.step) for r in rows if r.step is not None}
    groups = {g: [s for s in ss if s in occurring] for g, ss in known.semantic_groups.items()}
    return Hierarchy.from_annotations(labelled, semantic_groups={g: ss for g, ss in groups.items() if ss},
                                      phase_aliases=known.phase_aliases, step_aliases=known.step_aliases,
                                      name=dataset)


def resolve_hierarchies(annotations: Iterable[FrameRow],
                        given: Mapping[str, Hierarchy] | Hierarchy | None = None) -> dict[str, tuple[Hierarchy, str]]:
    """``{dataset: (hierarchy, source)}`` for every dataset in ``annotations``.

    In order: the dataset's entry in ``given`` (a per-dataset file), a single ``given`` hierarchy, the
    shipped hierarchy when it was asked for by name (``given`` from :func:`load_hierarchy_file` of
    ``shipped`` / ``shipped:<names>``), else -- the default -- the hierarchy the annotations themselves have:
    a step belongs to every phase it occurs in (:func:`_derived`). SurgHiBench Table 1 gives each dataset its
    own tree-likeness (StrasbyPass70 74%, BernBypass70 54%, though the two share one vocabulary), so a
    hierarchy is a property of the data, not of the vocabulary. ``source`` says which: ``"file"``,
    ``"shipped"`` or ``"derived from annotations"``; :func:`hierarchy_summary` sets the tree-likeness beside
    the paper's.
    """
    by_ds: dict[str, list[FrameRow]] = {}
    for r in annotations:
        by_ds.setdefault(r.dataset, []).append(r)
    out: dict[str, tuple[Hierarchy, str]] = {}
    for ds, rows in by_ds.items():
        shipped = given.for_dataset(ds) if isinstance(given, ShippedHierarchies) else None
        if isinstance(given, Mapping) and not isinstance(given, ShippedHierarchies) and ds in given:
            out[ds] = (given[ds], "file")
        elif isinstance(given, Hierarchy):
            out[ds] = (given, "file")
        elif shipped is not None:
            out[ds] = (shipped, "shipped")
        else:
            out[ds] = (_derived(ds, rows), "derived from annotations")
    return out


def hierarchy_summary(dataset: str, hierarchy: Hierarchy, source: str) -> dict:
    """A report's line on the hierarchy used: its size and tree-likeness, the paper's Table 1 value beside it
    and whether the two differ (compared as the paper prints them: whole percent)."""
    tl = hierarchy.tree_likeness()
    paper = paper_tree_likeness(dataset)
    differs = None
    if paper is not None and tl == tl:
        differs = round(100 * tl) != int(paper.rstrip("%"))
    return {"source": source, "phases": len(hierarchy.phases), "steps": len(hierarchy.steps), "tree_likeness": tl,
            "paper_tree_likeness": paper, "differs_from_paper": differs}


def hierarchy_lines(summaries: Mapping[str, Mapping]) -> list[str]:
    """``hierarchy GraSP: derived from annotations, 11 phases, 21 steps, tree-likeness 33.3% (paper, Table 1: 33%)``
    per dataset, then a warning for each dataset whose tree-likeness is not the paper's."""
    lines, warnings = [], []
    for ds, h in summaries.items():
        tl = h.get("tree_likeness")
        shown = "-" if tl is None or tl != tl else f"{pct(tl)}%"
        paper = h.get("paper_tree_likeness")
        beside = f" (paper, Table 1: {paper})" if paper else ""
        lines.append(f"hierarchy {ds}: {h['source']}, {h['phases']} phases, {h['steps']} steps, "
                     f"tree-likeness {shown}{beside}")
        if h.get("differs_from_paper"):
            warnings.append(f"warning: {ds}: the hierarchy used ({h['source']}) has tree-likeness {shown}, the "
                            f"paper's Table 1 {paper}: its sibling / cousin / semantic step numbers (Table 4) are "
                            "not comparable with the paper's")
    return lines + warnings
