"""SurgHiBench frame rows from the upstream annotation files: ``medhorizon-tasks surghi import``.

Each source's own files become the rows that ``score --benchmark surghi``
and the lmms-eval task read (``dataset, video, frame, phase, step,
timestamp_s, video_path``; see :mod:`.frames`), one per second of video:
``frame`` is the second (0, 1, 2, ...) and ``timestamp_s`` the time in the
real video, so the task decodes the annotated moment from the raw video.

**MultiBypass140** (``CAMMA-public/MultiBypass140``): one JSON per video,
``labels/{bern,strasbourg}/labels_by70/{BBP,SBP}NN.mp4.json`` =
``{"phases": [{start, end, label_name, label_id}], "steps": [...]}`` with
times in milliseconds, and the 1 FPS split pickles
``labels/*/labels_by70_splits/labels/{train,val,test}/1fps_*.pickle`` =
``{video: [{Frame_id: "BBP03_00000005", Phase_gt, Step_gt, ...}]}``.

* The pickles are the official 1 FPS labels (out-of-body seconds already
  removed): where a video has one, its rows come from it, and the JSON
  intervals are only compared with it (disagreements are reported). Frame
  ``BBP03_00000005`` is the 5th picture of ``ffmpeg -vf fps=1 %08d.jpg``,
  numbered from 1, so it shows second 4 (inferred from the repository's
  ``util/extract_frames.py``).
* Otherwise the JSON intervals are sampled at every whole second; a second
  inside an ``out_of_body`` interval (phase id 12, an overlay) is left out,
  as the pickles do; ``severe_index`` (13) is an overlay and ignored.
* ``other_intervention`` (phase 11) is left out unless ``keep_other``: the
  paper excludes the "other" class, and the shipped hierarchy has no such phase.
* Ids are read through ``tables/phase.csv`` / ``step.csv`` (:mod:`.vocab`);
  BBP videos are dataset ``BernBypass70``, SBP videos ``StrasBypass70``.

**GraSP** (``BCV-Uniandes/GraSP``): ``annotations/grasp_long-term_{split}.json``,
COCO-like: ``images`` ``{id, file_name: "CASE041/000000045.jpg", video_name,
frame_num}`` and ``annotations`` ``{image_id, phases, steps}``, one per key
frame, key frames 1 s apart. The key frames are numbered in the 30 fps frame
set, so a key frame is at ``frame_num / 30`` s (``frames_fps``) and its row is
second ``floor`` of that. Category names come from the file's own
``phases_categories`` / ``steps_categories`` when present, else from the
PSI-AVA lists in :mod:`.vocab`. ``split="all"`` reads train and test (the
folds are parts of train).

Pickles are read by :mod:`.label_pickles`: plain dicts, lists, text and
numbers only, the work bounded, so a file can neither run code nor make the
import hang.

Every input is bounded and checked before any row is made: interval times and
key frame times within :data:`MAX_VIDEO_S` (no surgical video is two days
long), ``frames_fps`` a positive rate, ``video_template`` a relative path with
``{video}`` (and optionally ``{dataset}``) and nothing else to substitute.
Every row is then read back by the reader that will read the file
(:func:`.frames.parse_row`, role ``items``, and the video root's path rule), so
a row the package would refuse (a negative frame, an escaping ``video_path``)
is refused here, named by where it came from, and nothing is written.

Each dataset's hierarchy is then derived from the rows
(:meth:`~.hierarchy.Hierarchy.from_annotations`: a step belongs to every phase
it co-occurs with), with its tree-likeness; the paper's per-dataset numbers
(StrasBypass70 74%, BernBypass70 54%, GraSP 33%) come from exactly this.
"""

from __future__ import annotations

import heapq
import math
import os
import re
import string
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from ...core.errors import DataError, MedHorizonError, VideoError
from ...core.paths import relative_video_path
from ...core.safeio import read_json
from .frames import FrameRow, parse_row
from .hierarchy import Hierarchy, normalize
from .label_pickles import frame_records, load_label_pickle, shown
from .vocab import (
    BYPASS_PHASES,
    BYPASS_SEMANTIC_GROUPS,
    BYPASS_STEPS,
    GRASP_PHASES,
    GRASP_SEMANTIC_GROUPS,
    GRASP_STEPS,
    get_hierarchy,
)

__all__ = ["SOURCES", "ImportResult", "import_multibypass140", "import_grasp", "import_source", "load_pickle",
           "check_video_template", "MAX_VIDEO_S"]

SOURCES = ("multibypass140", "grasp")
#: The longest video an import accepts. No source video comes near: MedHorizon's longest video over all its
#: sources is 37.2 h (seeds/medhorizon.txt, abstract); a label beyond two days is a unit mistake or hostile.
MAX_VIDEO_S = 48 * 3600
load_pickle = load_label_pickle
BYPASS_OTHER, BYPASS_OUT_OF_BODY, BYPASS_SEVERE = 11, 12, 13
_BYPASS_PHASE_IDS = {**dict(enumerate(BYPASS_PHASES)), BYPASS_OTHER: "other_intervention"}
_VIDEO = re.compile(r"([BS]BP\d{2,3})", re.IGNORECASE)
_LABEL_JSON = re.compile(r"([BS]BP\d{2,3})(?:\.\w+)?\.json", re.IGNORECASE)  # BBP03.mp4.json


@dataclass
class ImportResult:
    """Rows, each dataset's derived hierarchy, and what was left out (reason -> count)."""

    source: str
    rows: list[FrameRow]
    hierarchies: dict[str, Hierarchy] = field(default_factory=dict)
    dropped: Counter = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)

    def summary(self) -> dict:
        out = {}
        for ds, h in sorted(self.hierarchies.items()):
            rows = [r for r in self.rows if r.dataset == ds]
            try:
                shipped = get_hierarchy(ds).tree_likeness()
            except KeyError:
                shipped = None
            out[ds] = {"videos": len({r.video for r in rows}), "frames": len(rows), "phases": len(h.phases),
                       "steps": len(h.steps), "tree_likeness": h.tree_likeness(),
                       "shipped_tree_likeness": shipped}
        return {"source": self.source, "datasets": out, "dropped": dict(self.dropped), "notes": self.notes}

    def message(self) -> str:
        s = self.summary()
        lines = []
        for ds, d in s["datasets"].items():
            shipped = (f" (the shipped hierarchy: {d['shipped_tree_likeness']:.0%})"
                       if d["shipped_tree_likeness"] is not None else "")
            lines.append(f"{ds}: {d['videos']} videos, {d['frames']} frames at 1 FPS; derived hierarchy "
                         f"{d['phases']} phases / {d['steps']} steps, tree-likeness {d['tree_likeness']:.0%}{shipped}")
        for reason, n in sorted(self.dropped.items()):
            lines.append(f"left out: {n} second(s): {reason}")
        lines.extend(f"note: {n}" for n in self.notes)
        return "\n".join(lines)


# ------------------------------------------------------------------ options and rows, checked

def check_video_template(template: str) -> None:
    """``--video-template``: a relative path with ``{video}`` (and optionally ``{dataset}``) and no other
    field, conversion or format spec; MedHorizonError saying what is wrong."""
    where = f"--video-template {template!r}"
    try:
        fields = [(name, spec, conv) for _, name, spec, conv in string.Formatter().parse(template) if name is not None]
    except ValueError as exc:
        raise MedHorizonError(f"{where}: not a template ({exc}); write e.g. 'multibypass/{{video}}.mp4'") from None
    bad = [name or "{}" for name, spec, conv in fields if name not in ("video", "dataset") or spec or conv]
    if bad:
        raise MedHorizonError(f"{where}: only {{video}} and {{dataset}} can be filled in, not {', '.join(bad)}")
    if not any(name == "video" for name, _, _ in fields):
        raise MedHorizonError(f"{where}: has no {{video}}: every row would point at the same file")
    try:
        relative_video_path(template.format(video="V", dataset="D"))
    except VideoError as exc:
        raise MedHorizonError(f"{where}: {str(exc).replace('field ' + repr('video_path') + ' ', '')}") from None


class _Rows:
    """The rows of one import, each checked by the readers that will read the written file."""

    def __init__(self, result: "ImportResult", template: str, problems: list[str]):
        self.result, self.template, self.problems = result, template, problems

    def add(self, where: str, dataset: str, video: str, second: int, phase: str, step: str, t: float) -> None:
        video_path = self.template.format(video=video, dataset=dataset)
        try:
            relative_video_path(video_path)
        except VideoError as exc:
            self.problems.append(f"{where}: {exc}")
            return
        rec = {"dataset": dataset, "video": video, "frame": second, "phase": phase, "step": step, "timestamp_s": t,
               "video_path": video_path}
        row = parse_row(rec, where, "items", self.problems)
        if row is not None:
            self.result.rows.append(row)


def _seconds_ok(ms_or_s: float, unit: str) -> bool:
    return 0 <= ms_or_s <= MAX_VIDEO_S * (1000 if unit == "ms" else 1)


def _int(value) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        f = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return int(f) if math.isfinite(f) and f == int(f) else None


# ------------------------------------------------------------------ MultiBypass140

def _label(entry: dict, names: dict[int, str], where: str, problems: list[str],
           overlays: tuple[int, ...] = ()) -> tuple[int | None, str | None]:
    lid = _int(entry.get("label_id"))
    if lid is not None and (lid in names or lid in overlays):
        return lid, names.get(lid)
    name = entry.get("label_name")
    if isinstance(name, str) and name.strip():
        key = normalize(re.sub(r"^[ps]\d+_", "", name.strip(), flags=re.IGNORECASE))
        for i, n in names.items():
            if normalize(n) == key:
                return i, n
        if key == "out of body" and BYPASS_OUT_OF_BODY in overlays:
            return BYPASS_OUT_OF_BODY, None
        if key == "severe index" and BYPASS_SEVERE in overlays:
            return BYPASS_SEVERE, None
    problems.append(f"{where}: unknown label (label_id {entry.get('label_id')!r}, label_name "
                    f"{entry.get('label_name')!r})")
    return None, None


def _intervals(obj, key: str, names: dict[int, str], source: str, problems: list[str],
               overlays: tuple[int, ...] = ()) -> list[tuple[float, float, int, str | None]]:
    raw = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(raw, list):
        problems.append(f"{source}: field '{key}': expected a list of intervals {{start, end, label_name, label_id}}")
        return []
    out = []
    for i, e in enumerate(raw):
        where = f"{source}: {key}[{i}]"
        if not isinstance(e, dict):
            problems.append(f"{where}: expected an object")
            continue
        start, end = e.get("start"), e.get("end")
        if not all(isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in (start, end)):
            problems.append(f"{where}: start/end must be numbers (milliseconds), got {start!r}, {end!r}")
            continue
        if end < start:
            problems.append(f"{where}: end {end} is before start {start}")
            continue
        if not (_seconds_ok(start, "ms") and _seconds_ok(end, "ms")):
            problems.append(f"{where}: start/end {start!r}, {end!r} ms: outside 0 .. {MAX_VIDEO_S * 1000} "
                            f"({MAX_VIDEO_S // 3600} h, longer than any surgical video)")
            continue
        lid, name = _label(e, names, where, problems, overlays)
        if lid is not None:
            out.append((float(start), float(end), lid, name))
    return out


def _per_second(intervals, seconds: int, skip=()) -> list[tuple[int, str | None] | None]:
    """The label at every whole second ``0 .. seconds - 1``: that of the interval holding it (ends included),
    the latest-starting one where several do (the first given, among equal starts). One sweep:
    O((seconds + intervals) log intervals), whatever the intervals."""
    kept = [iv for iv in intervals if iv[2] not in skip]
    order = sorted(range(len(kept)), key=lambda i: kept[i][0])
    active: list[tuple[float, int]] = []  # (-start, index): the latest-starting interval on top
    out: list[tuple[int, str | None] | None] = []
    k = 0
    for t in range(seconds):
        ms = t * 1000.0
        while k < len(order) and kept[order[k]][0] <= ms:
            heapq.heappush(active, (-kept[order[k]][0], order[k]))
            k += 1
        while active and kept[active[0][1]][1] < ms:  # ended: it never holds a later second either
            heapq.heappop(active)
        out.append((kept[active[0][1]][2], kept[active[0][1]][3]) if active else None)
    return out


def _bypass_dataset(video: str) -> str:
    return "BernBypass70" if video.upper().startswith("B") else "StrasBypass70"


_FRAME_ID = re.compile(r"[A-Za-z0-9]*_(\d{1,9})")


def _pickle_rows(labels: Path, split: str | None) -> tuple[dict[str, dict[int, tuple[int, int, str]]], set[str]]:
    """``({video: {second: (phase id, step id, where)}}, videos of the split)`` from every split pickle."""
    per_video: dict[str, dict[int, tuple[int, int, str]]] = {}
    in_split: set[str] = set()
    problems: list[str] = []
    counted = [0]
    for path in sorted(labels.rglob("*.pickle")) + sorted(labels.rglob("*.pkl")):
        for video, frames in frame_records(load_pickle(path), path, counted):
            vid = _VIDEO.search(video)  # text: the loader accepts no other key
            if vid is None or not isinstance(frames, (list, tuple)):
                problems.append(f"{path}: entry {shown(video)}: expected a video id (BBPNN / SBPNN) with a list "
                                "of frame records")
                continue
            name = vid.group(1).upper()
            if split is not None and split in path.parts[len(labels.parts):]:
                in_split.add(name)
            seconds: dict[int, tuple[int, int, str]] = {}
            for j, rec in enumerate(frames):
                where = f"{path}: {name}[{j}]"
                if not isinstance(rec, dict):
                    problems.append(f"{where}: expected an object with Frame_id, Phase_gt, Step_gt, got {shown(rec)}")
                    continue
                fid = rec.get("Frame_id")
                m = _FRAME_ID.fullmatch(fid) if isinstance(fid, str) else None
                phase, step = _int(rec.get("Phase_gt")), _int(rec.get("Step_gt"))
                if m is None or phase is None or step is None:
                    problems.append(f"{where}: expected Frame_id 'VIDEO_NNNNNNNN' and integer Phase_gt / Step_gt, got "
                                    f"{shown(fid)}, {shown(rec.get('Phase_gt'))}, {shown(rec.get('Step_gt'))}")
                    continue
                number = int(m.group(1))
                if not 1 <= number <= MAX_VIDEO_S + 1:
                    problems.append(f"{where}: Frame_id {fid!r}: the 1 FPS frames are numbered from 1 (ffmpeg's "
                                    f"%08d) up to one per second of a video of at most {MAX_VIDEO_S // 3600} h")
                    continue
                seconds[number - 1] = (phase, step, where)  # ffmpeg numbers its 1 FPS frames from 1
            old = per_video.get(name)
            if old is not None and {t: v[:2] for t, v in old.items()} != {t: v[:2] for t, v in seconds.items()}:
                problems.append(f"{path}: video {name} has other labels than in an earlier pickle")
                continue
            per_video.setdefault(name, seconds)
            if len(problems) > 50:
                break
        if len(problems) > 50:
            break
    if problems:
        raise DataError(problems, source=f"MultiBypass140 pickles under {labels}")
    return per_video, in_split


def import_multibypass140(labels: str | os.PathLike, *, split: str | None = None,
                          video_template: str = "multibypass/{video}.mp4", keep_other: bool = False) -> ImportResult:
    """Rows from a MultiBypass140 ``labels`` folder (JSON per video and / or the split pickles); module doc."""
    check_video_template(video_template)
    labels = Path(labels)
    if not labels.is_dir():
        raise DataError(f"not a folder: {labels}")
    result = ImportResult("multibypass140", [])
    problems: list[str] = []
    json_labels: dict[str, tuple[list, list, Path]] = {}
    for path in sorted(labels.rglob("*.json")):
        m = _LABEL_JSON.fullmatch(path.name)
        if m is None:
            continue
        obj = read_json(path)
        phases = _intervals(obj, "phases", _BYPASS_PHASE_IDS, str(path), problems,
                            overlays=(BYPASS_OUT_OF_BODY, BYPASS_SEVERE))
        steps = _intervals(obj, "steps", dict(enumerate(BYPASS_STEPS)), str(path), problems)
        json_labels[m.group(1).upper()] = (phases, steps, path)
    if problems:
        raise DataError(problems, source=f"MultiBypass140 labels under {labels}")
    from_pickles, in_split = _pickle_rows(labels, split)
    videos = sorted(set(json_labels) | set(from_pickles))
    if split is not None:
        videos = [v for v in videos if v in in_split]
        if not videos:
            raise DataError(f"no video of split {split!r}: no pickle under a folder named {split!r}", source=str(labels))
    if not videos:
        raise DataError("no MultiBypass140 labels found (labels_by70/*.mp4.json or the split pickles)",
                        source=str(labels))
    disagree = Counter()
    rows = _Rows(result, video_template, problems)
    for video in videos:
        seconds: dict[int, tuple[int, int, str]] = dict(from_pickles.get(video, {}))
        if video in json_labels:
            phases, steps, path = json_labels[video]
            n = int(max((e for _, e, _, _ in phases + steps), default=0.0) // 1000) + 1
            out_of_body = _per_second([p for p in phases if p[2] == BYPASS_OUT_OF_BODY], n)
            phase_at = _per_second(phases, n, skip=(BYPASS_OUT_OF_BODY, BYPASS_SEVERE))
            step_at = _per_second(steps, n)
            for t in range(n):
                p, s = phase_at[t], step_at[t]
                if out_of_body[t]:
                    if video not in from_pickles:
                        result.dropped["out of body"] += 1
                    continue
                if video in from_pickles:
                    if t in seconds and p is not None and s is not None and seconds[t][:2] != (p[0], s[0]):
                        disagree[video] += 1
                    continue
                if p is None or s is None:
                    result.dropped["no phase or no step interval"] += 1
                    continue
                seconds[t] = (p[0], s[0], f"{path}: second {t}")
        for t in sorted(seconds):
            phase_id, step_id, where = seconds[t]
            if phase_id == BYPASS_OTHER and not keep_other:
                result.dropped["other_intervention (excluded, as in the paper)"] += 1
                continue
            phase = _BYPASS_PHASE_IDS.get(phase_id)
            step = BYPASS_STEPS[step_id] if 0 <= step_id < len(BYPASS_STEPS) else None
            if phase is None or step is None:
                result.dropped[f"phase id {phase_id} / step id {step_id} outside phase.csv / step.csv"] += 1
                continue
            rows.add(where, _bypass_dataset(video), video, t, phase, step, float(t))
    if problems:
        raise DataError(problems, source=f"MultiBypass140 labels under {labels}")
    for video, n in sorted(disagree.items()):
        result.notes.append(f"{video}: the JSON intervals disagree with the 1 FPS pickle at {n} second(s); the pickle "
                            "was used")
    _derive(result, BYPASS_SEMANTIC_GROUPS)
    return result


# ------------------------------------------------------------------ GraSP

def _categories(obj: dict, keys: tuple[str, ...], shipped: tuple[str, ...]) -> dict[int, str]:
    for key in keys:
        cats = obj.get(key)
        if isinstance(cats, list) and cats and all(isinstance(c, dict) and _int(c.get("id")) is not None
                                                   and isinstance(c.get("name"), str) for c in cats):
            return {_int(c["id"]): c["name"] for c in cats}
    return dict(enumerate(shipped))


def _one_id(value, where: str, field_name: str, problems: list[str]) -> int | None:
    if isinstance(value, list):
        one_hot = len(value) > 1 and all(_int(v) in (0, 1) for v in value)
        ones = [i for i, v in enumerate(value) if _int(v) == 1] if one_hot else value
        if len(ones) != 1:
            problems.append(f"{where}: field '{field_name}': expected one label, got {shown(value)}")
            return None
        value = ones[0]
    i = _int(value)
    if i is None:
        problems.append(f"{where}: field '{field_name}': expected a label id, got {shown(value)}")
    return i


def import_grasp(labels: str | os.PathLike, *, split: str = "test", frames_fps: float = 30.0,
                 video_template: str = "grasp/{video}.mp4") -> ImportResult:
    """Rows from GraSP's long-term annotation JSON(s) under ``labels`` (module doc)."""
    check_video_template(video_template)
    if isinstance(frames_fps, bool) or not isinstance(frames_fps, (int, float)) or not math.isfinite(frames_fps) \
            or not 0 < frames_fps <= 1000:
        raise MedHorizonError(f"--frames-fps {frames_fps!r}: the rate of GraSP's frame numbering must be a frame rate "
                              "> 0 (30 for the released frames)")
    if not re.fullmatch(r"[A-Za-z0-9_-]+", split or ""):
        raise MedHorizonError(f"--split {split!r}: expected test, train, all or the name of another "
                              "grasp_long-term_<name>.json")
    labels = Path(labels)
    names = ("train", "test") if split == "all" else (split,)
    files = []
    for name in names:
        found = sorted(labels.rglob(f"grasp_long-term_{name}.json")) if labels.is_dir() else \
            ([labels] if labels.is_file() else [])
        if not found:
            raise DataError(f"no grasp_long-term_{name}.json under {labels}")
        files.append(found[0])
    result = ImportResult("grasp", [])
    problems: list[str] = []
    rows = _Rows(result, video_template, problems)
    seen: dict[tuple[str, int], str] = {}
    for path in files:
        obj = read_json(path)
        if not isinstance(obj, dict) or not isinstance(obj.get("images"), list) or \
                not isinstance(obj.get("annotations"), list):
            raise DataError("expected a COCO-like object with 'images' and 'annotations' lists", source=str(path))
        phase_names = _categories(obj, ("phases_categories", "phase_categories"), GRASP_PHASES)
        step_names = _categories(obj, ("steps_categories", "step_categories"), GRASP_STEPS)
        images = {}
        for i, im in enumerate(obj["images"]):
            if not isinstance(im, dict) or _int(im.get("id")) is None:
                problems.append(f"{path}: images[{i}]: expected an object with a numeric id")
                continue
            images[_int(im["id"])] = im
        for i, ann in enumerate(obj["annotations"]):
            where = f"{path}: annotations[{i}]"
            if not isinstance(ann, dict):
                problems.append(f"{where}: expected an object")
                continue
            im = images.get(_int(ann.get("image_id")))
            if im is None:
                problems.append(f"{where}: image_id {shown(ann.get('image_id'))} is not among the images")
                continue
            file_name = str(im.get("file_name") or ann.get("image_name") or "")
            video = im.get("video_name") or (file_name.split("/")[0] if "/" in file_name else None)
            video = video if isinstance(video, str) else None
            number = _int(im.get("frame_num"))
            if number is None:
                m = re.search(r"(?<!\d)(\d{1,12})\.\w+$", file_name)
                number = int(m.group(1)) if m else None
            if not video or number is None:
                problems.append(f"{where}: cannot tell the video and frame number (file_name {shown(file_name)})")
                continue
            pid = _one_id(ann.get("phases"), where, "phases", problems)
            sid = _one_id(ann.get("steps"), where, "steps", problems)
            if pid is None or sid is None:
                continue
            if pid not in phase_names or sid not in step_names:
                problems.append(f"{where}: phase id {pid} / step id {sid} is not a GraSP category")
                continue
            t = number / frames_fps
            if not _seconds_ok(abs(t), "s"):
                problems.append(f"{where}: frame_num {number} at {frames_fps:g} fps is {t:.3g} s: beyond "
                                f"{MAX_VIDEO_S // 3600} h, longer than any surgical video")
                continue
            second = math.floor(t + 1e-9)
            key = (str(video), second)
            if key in seen:
                problems.append(f"{where}: {video} second {second} already has a key frame ({seen[key]})")
                continue
            seen[key] = file_name
            rows.add(where, "GraSP", str(video), second, phase_names[pid], step_names[sid], t)
        if len(problems) > 50:
            break
    if problems:
        raise DataError(problems, source=f"GraSP labels under {labels}")
    if not result.rows:
        raise DataError("no annotated key frames", source=str(labels))
    result.rows.sort(key=lambda r: r.key)
    _derive(result, GRASP_SEMANTIC_GROUPS)
    return result


# ------------------------------------------------------------------ both

def _derive(result: ImportResult, groups: dict[str, list[str]]) -> None:
    by_ds: dict[str, list[FrameRow]] = defaultdict(list)
    for r in result.rows:
        by_ds[r.dataset].append(r)
    for ds, rows in by_ds.items():
        occurring = {normalize(r.step) for r in rows}
        kept = {g: [s for s in ss if normalize(s) in occurring] for g, ss in groups.items()}
        result.hierarchies[ds] = Hierarchy.from_annotations(
            ((r.video, r.frame, r.phase, r.step) for r in rows), name=ds,
            semantic_groups={g: ss for g, ss in kept.items() if ss})


def import_source(source: str, labels: str | os.PathLike, **kwargs) -> ImportResult:
    """``source``: ``multibypass140`` or ``grasp``; ``kwargs`` go to its importer."""
    key = re.sub(r"[^a-z0-9]", "", source.lower())
    if key in ("multibypass140", "multibypass"):
        return import_multibypass140(labels, **kwargs)
    if key == "grasp":
        return import_grasp(labels, **kwargs)
    raise DataError(f"unknown source {source!r} (expected one of {', '.join(SOURCES)})")


def rows_as_records(rows: list[FrameRow]) -> list[dict]:
    """The rows as the JSONL records :func:`.frames.read_frame_rows` reads (role ``items``)."""
    return [{"dataset": r.dataset, "video": r.video, "frame": r.frame, "phase": r.phase, "step": r.step,
             "timestamp_s": r.timestamp_s, "video_path": r.video_path} for r in rows]
