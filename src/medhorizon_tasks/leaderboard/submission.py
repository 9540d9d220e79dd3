"""Leaderboard submissions: the file format, making one, and validating it.

A submission is one JSON file: a model's predictions on every item of one
benchmark, with the metadata a leaderboard shows::

    {
      "format": "medhorizon-tasks-submission",
      "format_version": 1,
      "metadata": {
        "model": "Qwen2.5-VL-7B-Instruct",          # non-empty text
        "size": "7B",                               # non-empty text, "unknown" allowed
        "input_protocol": {"fps": 1, "cap": 64, "frames": null},
                                                    # all three keys; fps > 0, cap >= 1,
                                                    # frames >= 0 (0 = no frames) or null
        "date": "2025-06-30",                       # YYYY-MM-DD, a real date
        "benchmark": "medhorizon",                  # medhorizon | sureon | surghi
        "data_version": "sha256:0123456789abcdef",  # `leaderboard version` of the data
        "mode": "visual",                           # optional; sureon: visual | blind
        "notes": "...", "url": "https://...",       # optional
        "departures": ["no blur"]                   # optional: how the run departs from the paper's protocol
      },
      "predictions": [...]
    }

Predictions, exactly one per item of the data:

* MedHorizon, Sureon: ``{"id": <item uid>, "output": <raw model text, a
  letter, or null>}``, optionally ``"error": <text>`` (the item's video
  could not be read: scored wrong, counted as an error). The text is scored
  by the package's own extractor, exactly as ``medhorizon-tasks score``.
* SurgHiBench: ``{"dataset", "video", "frame", "phase", "step"}`` (``phase``
  / ``step`` may be null = invalid); the id is ``dataset/video/frame``.
  Optional ``"error"`` and ``"output"`` (the raw text, kept for reference).

Validation (:func:`validate_submission`) reports every problem at once in a
:class:`~medhorizon_tasks.core.errors.DataError`: bad shape, a missing or bad
metadata field, an unknown benchmark, a data version other than the data's
(expected vs got), duplicate ids (named), ids of the data without a
prediction (count and the first few) and ids that are not in the data.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..benchmarks.data import BENCHMARK_NAMES, BENCHMARKS, BenchmarkData, show_id
from ..core.errors import DataError
from ..core.safeio import atomic_write_text, read_json

__all__ = ["FORMAT", "FORMAT_VERSION", "Submission", "read_submission", "check_submission",
           "validate_submission", "make_submission", "dumps_submission", "write_submission",
           "input_protocol_text", "model_label", "content_key", "group_problems", "SUREON_MODES", "TEXT_LIMITS"]

FORMAT = "medhorizon-tasks-submission"
FORMAT_VERSION = 1
SUREON_MODES = ("visual", "blind")
_REQUIRED_META = ("model", "size", "input_protocol", "date", "benchmark", "data_version")
_OPTIONAL_META = ("mode", "notes", "url", "departures")
_PROTOCOL_KEYS = ("fps", "cap", "frames")
_VERSION_RE = re.compile(r"sha256:[0-9a-f]{16}")
_DATE_RE = re.compile(r"\d{4}-\d{2}-\d{2}")
_SHOW = 5  # ids named in a "missing" / "extra" problem
#: Most characters of each text field: what a board page shows stays a page (a 4 MiB model name once made every
#: visitor's board 12 MiB). ``departures`` is per departure; ``output`` per prediction (a reasoning model's 16k
#: tokens are about 64 KiB; four times that: the answer extractor costs up to ~40 µs a character on text made to be
#: slow, so this bounds an upload's scoring too).
TEXT_LIMITS = {"model": 200, "size": 40, "mode": 40, "notes": 2000, "url": 2000, "departures": 200,
               "output": 1 << 18, "error": 2000}
MAX_DEPARTURES = 20


@dataclass
class Submission:
    """A validated submission.

    ``predictions``: MedHorizon / Sureon ``uid -> {"raw", "mode", "error"}``
    (the shape ``scoring.read_predictions`` returns, so the scorers take it
    as is); SurgHiBench ``(dataset, video, frame) -> surghi.scoring.Prediction``.
    """

    metadata: dict
    predictions: dict
    source: str

    @property
    def benchmark(self) -> str:
        return self.metadata["benchmark"]

    @property
    def model(self) -> str:
        return self.metadata["model"]


def input_protocol_text(metadata: dict) -> str:
    """``"1 fps, cap 64"``, ``"32 frames"``, ``"blind"``, ``"4-8 frames per clip"`` (a Sureon visual run, whose
    protocol fixes its frames): the input protocol as one cell."""
    p = metadata.get("input_protocol") or {}
    parts = []
    if p.get("fps") is not None:
        parts.append(f"{p['fps']:g} fps")
    if p.get("cap") is not None:
        parts.append(f"cap {p['cap']}")
    if p.get("frames") is not None:
        parts.append(f"{p['frames']} frames")
    mode = metadata.get("mode")
    if not parts and metadata.get("benchmark") == "sureon" and (mode or "visual") == "visual":
        parts.append("4-8 frames per clip")  # the protocol's own (appendix D.1): no number to give
    if mode and mode != "visual":
        parts.append(str(mode))
    return ", ".join(parts) or "—"


# ------------------------------------------------------------------ reading

def read_submission(path: str | os.PathLike) -> Any:
    """The JSON value of a submission file (not yet validated); DataError naming the file and line if it is
    not readable JSON (:func:`~..safeio.read_json`)."""
    return read_json(path)


# ------------------------------------------------------------------ metadata

def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _too_long(where: str, key: str, v, problems: list[str]) -> bool:
    """Whether text ``v`` is over :data:`TEXT_LIMITS` (then one problem says the limit)."""
    limit = TEXT_LIMITS[key]
    if isinstance(v, str) and len(v) > limit:
        problems.append(f"{where}: at most {limit:,} characters, got {len(v):,}")
        return True
    return False


def _check_text(meta: dict, key: str, problems: list[str]) -> None:
    v = meta.get(key)
    if _too_long(f"metadata.{key}", key, v, problems):
        return
    if not isinstance(v, str) or not v.strip():
        problems.append(f"metadata.{key}: expected non-empty text, got {v!r}")


def _check_metadata(meta: Any, problems: list[str]) -> dict | None:
    if not isinstance(meta, dict):
        problems.append(f"metadata: expected an object, got {type(meta).__name__}")
        return None
    bad = len(problems)
    for key in _REQUIRED_META:
        if key not in meta:
            problems.append(f"metadata.{key}: missing (required: {', '.join(_REQUIRED_META)})")
    for key in sorted(set(meta) - set(_REQUIRED_META) - set(_OPTIONAL_META), key=str):
        problems.append(f"metadata.{key}: unknown field (allowed: {', '.join(_REQUIRED_META + _OPTIONAL_META)})")
    for key in ("model", "size"):
        if key in meta:
            _check_text(meta, key, problems)
    if "input_protocol" in meta:
        p = meta["input_protocol"]
        if not isinstance(p, dict):
            problems.append(f"metadata.input_protocol: expected an object with fps, cap and frames, got {p!r}")
        else:
            for key in _PROTOCOL_KEYS:
                if key not in p:
                    problems.append(f"metadata.input_protocol.{key}: missing (give a value or null)")
            for key in sorted(set(p) - set(_PROTOCOL_KEYS), key=str):
                problems.append(f"metadata.input_protocol.{key}: unknown field (allowed: fps, cap, frames)")
            fps, cap, frames = p.get("fps"), p.get("cap"), p.get("frames")
            if fps is not None and not (_is_number(fps) and fps > 0):
                problems.append(f"metadata.input_protocol.fps: expected a number > 0 or null, got {fps!r}")
            if cap is not None and not (_is_int(cap) and cap >= 1):
                problems.append(f"metadata.input_protocol.cap: expected an integer >= 1 or null, got {cap!r}")
            if frames is not None and not (_is_int(frames) and frames >= 0):
                problems.append(f"metadata.input_protocol.frames: expected an integer >= 0 or null, got {frames!r}")
    if "date" in meta:
        d = meta["date"]
        ok = isinstance(d, str) and _DATE_RE.fullmatch(d) is not None
        if ok:
            try:
                _dt.date.fromisoformat(d)
            except ValueError:
                ok = False
        if not ok:
            problems.append(f"metadata.date: {d!r} is not a date (expected YYYY-MM-DD, e.g. 2025-06-30)")
    bench = meta.get("benchmark")
    if "benchmark" in meta and bench not in BENCHMARKS:
        problems.append(f"metadata.benchmark: unknown benchmark {bench!r} (expected one of {', '.join(BENCHMARKS)})")
    if "data_version" in meta:
        v = meta["data_version"]
        if not isinstance(v, str) or not _VERSION_RE.fullmatch(v):
            problems.append(f"metadata.data_version: expected 'sha256:' and 16 hex digits "
                            f"(`medhorizon-tasks leaderboard version`), got {v!r}")
    if "mode" in meta and _too_long("metadata.mode", "mode", meta["mode"], problems):
        pass
    elif "mode" in meta:
        mode = meta["mode"]
        if bench == "sureon" and mode not in SUREON_MODES:
            problems.append(f"metadata.mode: expected one of {', '.join(SUREON_MODES)} for sureon, got {mode!r}")
        elif not isinstance(mode, str) or not mode.strip():
            problems.append(f"metadata.mode: expected non-empty text, got {mode!r}")
    if "notes" in meta and not isinstance(meta["notes"], str):
        problems.append(f"metadata.notes: expected text, got {type(meta['notes']).__name__}")
    elif "notes" in meta:
        _too_long("metadata.notes", "notes", meta["notes"], problems)
    if "departures" in meta:
        deps = meta["departures"]
        if isinstance(deps, list) and len(deps) > MAX_DEPARTURES:
            problems.append(f"metadata.departures: at most {MAX_DEPARTURES} departures, got {len(deps):,}")
        elif isinstance(deps, list) and any(_too_long(f"metadata.departures[{i}]", "departures", d, problems)
                                            for i, d in enumerate(deps)):
            pass
        elif not isinstance(deps, list) or not all(isinstance(d, str) and d.strip() for d in deps):
            problems.append(f"metadata.departures: expected a list of non-empty texts, got {deps!r}")
    if "url" in meta and _too_long("metadata.url", "url", meta["url"], problems):
        pass
    elif "url" in meta:
        url = meta["url"]
        if not isinstance(url, str) or not re.match(r"https?://\S+$", url):
            problems.append(f"metadata.url: expected an http(s) address, got {url!r}")
    return dict(meta) if len(problems) == bad else None


# ------------------------------------------------------------------ predictions

def _mcq_predictions(entries: list, mode: str | None, problems: list[str]) -> tuple[dict, list]:
    """``uid -> {"raw", "mode", "error"}`` and every id seen (duplicates included)."""
    from ..core.predictions import parse_uid

    out: dict[str, dict] = {}
    seen: list = []
    for i, e in enumerate(entries):
        where = f"predictions[{i}]"
        if not isinstance(e, dict):
            problems.append(f"{where}: expected an object {{\"id\", \"output\"}}, got {type(e).__name__}")
            continue
        uid = parse_uid(e.get("id"))
        if uid is None:
            problems.append(f"{where}: id: missing or not an integer/text, got {e.get('id')!r}")
            continue
        where = f"{where} (id {uid})"
        bad = len(problems)
        for key in sorted(set(e) - {"id", "output", "error"}, key=str):
            problems.append(f"{where}: {key}: unknown field (allowed: id, output, error)")
        if "output" not in e:
            problems.append(f"{where}: output: missing (the model's text, or null)")
        elif e["output"] is not None and not isinstance(e["output"], str):
            problems.append(f"{where}: output: expected text or null, got {type(e['output']).__name__}")
        else:
            _too_long(f"{where}: output", "output", e["output"], problems)
        err = e.get("error")
        if err is not None and not isinstance(err, str):
            problems.append(f"{where}: error: expected text or null, got {type(err).__name__}")
        else:
            _too_long(f"{where}: error", "error", err, problems)
        seen.append(uid)
        if len(problems) == bad and uid not in out:
            out[uid] = {"raw": e.get("output"), "mode": mode, "error": err or None}
    return out, seen


def _surghi_predictions(entries: list, problems: list[str]) -> tuple[dict, list]:
    from ..benchmarks.surghi.frames import ROW_FIELDS, parse_row
    from ..benchmarks.surghi.scoring import Prediction

    out: dict[tuple, Prediction] = {}
    seen: list = []
    allowed = set(ROW_FIELDS) | {"error", "output"}
    for i, e in enumerate(entries):
        where = f"predictions[{i}]"
        bad = len(problems)
        row = parse_row(e, where, "predictions", problems)
        if row is None:
            continue
        where = f"{where} (id {row.uid})"
        for key in ("phase", "step"):
            if key not in e:
                problems.append(f"{where}: {key}: missing (the predicted label, or null)")
        for key in sorted(set(e) - allowed, key=str):
            problems.append(f"{where}: {key}: unknown field (allowed: {', '.join(sorted(allowed))})")
        for key in ("error", "output"):
            if e.get(key) is not None and not isinstance(e[key], str):
                problems.append(f"{where}: {key}: expected text or null, got {type(e[key]).__name__}")
            else:
                _too_long(f"{where}: {key}", key, e.get(key), problems)
        seen.append(row.key)
        if len(problems) == bad and row.key not in out:
            out[row.key] = Prediction(row.phase, row.step, e.get("output"), e.get("error") or None)
    return out, seen


def _show(ids) -> str:
    ids = list(ids)
    text = ", ".join(show_id(i) for i in ids[:_SHOW])
    return text + (f", ... ({len(ids)} in all)" if len(ids) > _SHOW else "")


def _check_ids(seen: list, data: BenchmarkData, problems: list[str]) -> None:
    counts = Counter(seen)
    dups = [(k, c) for k, c in counts.items() if c > 1]
    if dups:
        problems.append("predictions: duplicate id(s), each must be predicted once: "
                        + ", ".join(f"{show_id(k)} ({c} times)" for k, c in dups))
    known = set(data.ids)
    missing = [k for k in data.ids if k not in counts]
    if missing:
        problems.append(f"predictions: missing id(s): {len(missing)} of the {len(data.ids)} items of the data "
                        f"have no prediction: {_show(missing)}")
    extra = [k for k in counts if k not in known]
    if extra:
        problems.append(f"predictions: extra id(s): {len(extra)} id(s) are not items of the data: {_show(extra)}")


# ------------------------------------------------------------------ validation

def check_submission(obj: Any, data: BenchmarkData | None = None) -> tuple[Submission | None, list[str]]:
    """Every problem of a submission value; with ``data``, also its version and ids against the data.

    Returns ``(submission, [])`` when it is valid, else ``(None, problems)``.
    """
    problems: list[str] = []
    if not isinstance(obj, dict):
        return None, [f"expected a JSON object with format, format_version, metadata and predictions, "
                      f"got {type(obj).__name__}"]
    for key in ("format", "format_version", "metadata", "predictions"):
        if key not in obj:
            problems.append(f"{key}: missing")
    for key in sorted(set(obj) - {"format", "format_version", "metadata", "predictions"}, key=str):
        problems.append(f"{key}: unknown field (allowed: format, format_version, metadata, predictions)")
    if "format" in obj and obj["format"] != FORMAT:
        problems.append(f"format: expected {FORMAT!r}, got {obj['format']!r}")
    if "format_version" in obj and obj["format_version"] != FORMAT_VERSION:
        problems.append(f"format_version: this version of medhorizon-tasks reads format_version "
                        f"{FORMAT_VERSION}, got {obj['format_version']!r}")
    meta = _check_metadata(obj.get("metadata"), problems) if "metadata" in obj else None
    raw_meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    bench = raw_meta.get("benchmark") if raw_meta.get("benchmark") in BENCHMARKS else None
    if data is not None and bench is not None and bench != data.benchmark:
        # One clear reason: its ids and version checked against another benchmark's data would only add noise.
        problems.append(f"metadata.benchmark: this is a {bench} submission, not {data.benchmark}: the data given "
                        f"({data.source}) is {BENCHMARK_NAMES[data.benchmark]} data; validate it against the "
                        f"{BENCHMARK_NAMES[bench]} data (--data {bench}=PATH)")
        bench = None
    if data is not None and bench is not None and isinstance(raw_meta.get("data_version"), str) \
            and raw_meta["data_version"] != data.version:
        problems.append(f"metadata.data_version: data_version mismatch: expected {data.version} (the data given, "
                        f"{data.source}), got {raw_meta['data_version']}; the predictions were made on other data "
                        "and are not comparable")
    preds: dict = {}
    entries = obj.get("predictions")
    if "predictions" in obj and not isinstance(entries, list):
        problems.append(f"predictions: expected a list, got {type(entries).__name__}")
    elif isinstance(entries, list):
        if not entries:
            problems.append("predictions: empty")
        elif bench is not None:
            mode = raw_meta.get("mode") if isinstance(raw_meta.get("mode"), str) else None
            if bench == "surghi":
                preds, seen = _surghi_predictions(entries, problems)
            else:
                preds, seen = _mcq_predictions(entries, mode, problems)
            if data is not None:
                _check_ids(seen, data, problems)
    if problems or meta is None:
        return None, group_problems(problems)
    return Submission(meta, preds, ""), []


# ------------------------------------------------------------------ problems, one line per kind

# "line 7: ...", "predictions[3] (id 12): ...": one item's problem; the same kind for many items is one line
_LOCATED = re.compile(r"(line \d+|predictions\[\d+\](?: \(id [^)]*\))?): (.*)", re.S)
# the item's own value inside the message ("field 'uid': '0' is not an item ...") is a locator too
_ITEM_VALUE = re.compile(r"(field '[^']*': )(.{1,80}?) (is not an item of this benchmark|is predicted more than once"
                         r"|this lmms-eval sample is not from a medhorizon task)", re.S)
_GROUP_SHOW = 3


def group_problems(problems: list[str]) -> list[str]:
    """The same problem of many items as one line with its count and the first few items, in the order each
    kind first appears: 88 lines of ``line N: field 'uid': missing`` become ``field 'uid': missing (88 lines:
    line 1, line 2, line 3, ...)``. A problem of one item stays as it was."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for p in problems:
        m = _LOCATED.fullmatch(p)
        if m is None:
            groups.setdefault(p, []).append(("", p))
            continue
        where, rest = m.groups()
        v = _ITEM_VALUE.fullmatch(rest)
        if v is not None:
            rest, where = v[1] + v[3], f"{where} ({v[2]})"
        groups.setdefault(rest, []).append((where, p))
    out: list[str] = []
    for kind, members in groups.items():
        if len(members) == 1 or not members[0][0]:
            out.extend(dict.fromkeys(p for _, p in members))
            continue
        shown = ", ".join(w for w, _ in members[:_GROUP_SHOW])
        unit = "lines" if members[0][0].startswith("line ") else "items"
        out.append(f"{kind} ({len(members):,} {unit}: {shown}{', ...' if len(members) > _GROUP_SHOW else ''})")
    return [_short(p) for p in out]


def _short(line: str, most: int = 1000) -> str:
    """A problem line that quotes a huge value (a 4 MiB date...) cut to a readable length, saying so."""
    return line if len(line) <= most else f"{line[:most]}... (cut: the line is {len(line):,} characters)"


def validate_submission(obj_or_path: Any, data: BenchmarkData | None = None, *,
                        source: str | None = None) -> Submission:
    """A valid :class:`Submission` from a value or a file path; DataError listing every problem otherwise."""
    if isinstance(obj_or_path, (str, os.PathLike)):
        source = source or str(obj_or_path)
        obj = read_submission(obj_or_path)
    else:
        obj = obj_or_path
    sub, problems = check_submission(obj, data)
    if problems:
        raise DataError(problems, source=source or "submission")
    assert sub is not None
    sub.source = source or "submission"
    return sub


# ------------------------------------------------------------------ making

def recorded_input_protocol(benchmark: str, predictions: str | os.PathLike) -> tuple[dict, str] | None:
    """The input protocol the run that wrote an lmms-eval samples file recorded (its task's
    ``lmms_eval_specific_kwargs`` in the ``<stamp>_results.json`` beside it), as ``({"fps", "cap", "frames"},
    description)``; None for a plain predictions file or a run that records nothing to go by.

    MedHorizon: a text-only run shows 0 frames; a fixed budget N frames; otherwise fps and cap (the oracle's
    evidence frames are capped alike). Sureon: a blind run shows 0 frames; a visual run 4-8 per clip, which
    no single number says, so only its fps, cap and frames stay open (``None``) while 0 frames is refused.
    """
    from ..core.log_samples import run_description

    run = run_description(predictions) if benchmark in ("medhorizon", "sureon") else None
    if run is None:
        return None
    kwargs = run["kwargs"]
    if benchmark == "sureon":
        mode = str(kwargs.get("mode", "visual"))
        return ({"fps": None, "cap": None, "frames": 0}, "a blind run (no frames)") if mode == "blind" else \
            ({"fps": None, "cap": None, "frames": None, "shows_frames": True}, "a visual run (4-8 frames per clip)")
    from ..benchmarks.medhorizon.protocol import FrameSetting

    try:
        setting = FrameSetting.from_kwargs(kwargs)
    except (TypeError, ValueError):
        return None
    if setting.mode == "text":
        protocol = {"fps": None, "cap": None, "frames": 0}
    elif setting.frames:
        protocol = {"fps": None, "cap": None, "frames": setting.frames}
    else:
        protocol = {"fps": setting.fps, "cap": setting.cap, "frames": None}
    return protocol, f"{setting.describe()} (task {run['task']})"


def recorded_departures(benchmark: str, predictions: str | os.PathLike) -> list[str]:
    """How the run that wrote an lmms-eval samples file departs from the standard protocol, from the task and
    kwargs its ``results.json`` recorded (:func:`~..benchmarks.standard.run_departures`); empty without one."""
    from ..benchmarks.standard import run_departures
    from ..core.log_samples import run_description

    run = run_description(predictions)
    return [] if run is None else run_departures(benchmark, run["task"], run["kwargs"])


def _protocol_from_run(benchmark: str, predictions, given: dict) -> dict:
    """The submission's input protocol: what the run recorded (:func:`recorded_input_protocol`), where it
    recorded one; a given value that contradicts it is an error naming both. Else the given values."""
    recorded = recorded_input_protocol(benchmark, predictions)
    if recorded is None:
        return dict(given)
    protocol, described = recorded
    shows = protocol.pop("shows_frames", False)
    for key in _PROTOCOL_KEYS:
        value = given.get(key)
        if value is None:
            continue
        if protocol[key] is None:  # not recorded: open for a Sureon visual run (but 0 frames), else not the run's
            wrong = key == "frames" and value == 0 if shows else True
        else:
            wrong = float(value) != float(protocol[key])
        if wrong:
            has = f"{key} {protocol[key]:g}" if protocol[key] is not None else f"no {key} setting"
            raise DataError(f"--{key} {value:g} contradicts the run that wrote these predictions: it recorded "
                            f"{described}, i.e. {has}; leave --fps, --cap and --frames out (a submission made "
                            "from lmms-eval samples takes its input protocol from the run)",
                            source=str(predictions))
    if shows:
        return {k: given.get(k) for k in _PROTOCOL_KEYS}
    return protocol


def make_submission(data: BenchmarkData, predictions: str | os.PathLike, *, model: str, size: str,
                    fps: float | None = None, cap: int | None = None, frames: int | None = None,
                    date: str | None = None, mode: str | None = None, notes: str | None = None,
                    url: str | None = None, missing_as_wrong: bool = False,
                    departures: list[str] | None = None) -> dict:
    """A submission (a JSON-ready dict) from an existing predictions file, validated against ``data``.

    ``predictions``: what ``medhorizon-tasks score`` reads. MedHorizon /
    Sureon: ``{"uid", "prediction"|"pred"|"answer"}`` JSONL or an lmms-eval
    ``--log_samples`` file (``scoring.read_predictions``); SurgHiBench: frame
    rows (JSONL/CSV) or an lmms-eval samples file of a surghi task
    (``surghi.scoring.read_predictions``, which parses the model's text with
    the task's own parser). ``mode`` defaults to the one recorded in the
    samples (Sureon: ``visual`` when none is). Items the file does not cover
    make the submission invalid, unless ``missing_as_wrong``: they are then
    written with ``"output": null`` (scored invalid, i.e. wrong). The input protocol (``fps``, ``cap``,
    ``frames``) of a samples file is what its run recorded (:func:`recorded_input_protocol`): a value given
    here that contradicts it is a DataError. ``departures`` from the paper's protocol
    (default: those the predictions' records name, such as Sureon's ``no blur``) go into the metadata.
    """
    if data.benchmark == "surghi":
        from ..benchmarks.surghi.scoring import read_predictions as read_surghi

        read = _grouped(read_surghi, predictions, data.hierarchies)
        entries = []
        for key in data.ids:
            p = read.get(key)
            if p is None and not missing_as_wrong:
                continue
            e = {"dataset": key[0], "video": key[1], "frame": key[2],
                 "phase": p.phase if p else None, "step": p.step if p else None}
            if p is not None and p.error:
                e["error"] = p.error
            if p is not None and p.raw is not None:
                e["output"] = p.raw
            entries.append(e)
        known = set(data.ids)
        for key in sorted(k for k in read if k not in known):  # invalid: validation names them
            p = read[key]
            entries.append({"dataset": key[0], "video": key[1], "frame": key[2], "phase": p.phase, "step": p.step})
        modes: set = set()
    else:
        from ..core.predictions import read_predictions

        read = _grouped(read_predictions, predictions, data.ids)
        entries = []
        for uid in data.ids:
            p = read.get(uid)
            if p is None:
                if missing_as_wrong:
                    entries.append({"id": uid, "output": None})
                continue
            e = {"id": uid, "output": p["raw"]}
            if p.get("error"):
                e["error"] = p["error"]
            entries.append(e)
        modes = {p["mode"] for p in read.values() if p.get("mode")}
        if departures is None:
            from ..core.predictions import departures_of

            departures = departures_of(read)
    departures = list(dict.fromkeys([*(departures or []), *recorded_departures(data.benchmark, predictions)]))
    if mode is None and len(modes) == 1:
        mode = next(iter(modes))
    if mode is None and data.benchmark == "sureon":
        mode = "visual"
    protocol = _protocol_from_run(data.benchmark, predictions, {"fps": fps, "cap": cap, "frames": frames})
    meta: dict[str, Any] = {"model": model, "size": size, "input_protocol": protocol,
                            "date": date or _dt.date.today().isoformat(),
                            "benchmark": data.benchmark, "data_version": data.version}
    if mode is not None:
        meta["mode"] = mode
    if notes:
        meta["notes"] = notes
    if url:
        meta["url"] = url
    if departures:
        meta["departures"] = list(departures)
    sub = {"format": FORMAT, "format_version": FORMAT_VERSION, "metadata": meta, "predictions": entries}
    validate_submission(sub, data, source=f"submission made from {predictions}")
    return sub


def _number_or_none(v):
    return None if v is None else float(v)


def content_key(sub: Submission) -> str:
    """The SHA-256 of a validated submission's content: benchmark, data version, protocol (input protocol,
    mode, departures) and the sorted (item, output) pairs; not its bytes, model name, date or notes. The same
    run sent with other white space, or as its samples and as the submission JSON made from them, has one key.
    """
    import hashlib

    m = sub.metadata
    from ..benchmarks.standard import entry_departures

    protocol = {k: _number_or_none((m.get("input_protocol") or {}).get(k)) for k in _PROTOCOL_KEYS}
    if sub.benchmark == "surghi":
        items = sorted([list(map(str, key)), p.phase, p.step, p.error] for key, p in sub.predictions.items())
    else:
        items = sorted([str(uid), p.get("raw"), p.get("error")] for uid, p in sub.predictions.items())
    head = {"benchmark": sub.benchmark, "data_version": m["data_version"], "input_protocol": protocol,
            "mode": m.get("mode") or "visual", "departures": sorted(entry_departures(m))}
    digest = hashlib.sha256(json.dumps(head, sort_keys=True, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    for item in items:  # one item at a time: no second copy of a large submission's text in memory
        digest.update(b"\n" + json.dumps(item, ensure_ascii=False, separators=(",", ":")).encode("utf-8",
                                                                                              "surrogatepass"))
    return digest.hexdigest()


def _grouped(read, *args):
    """``read(*args)``, its DataError's problems one line per kind (:func:`group_problems`)."""
    try:
        return read(*args)
    except DataError as exc:
        raise DataError(group_problems(exc.problems), source=exc.source) from None


def model_label(metadata: dict) -> str:
    """An entry's model name with its run's departures from the paper's protocol: ``"M [no blur]"``."""
    deps = metadata.get("departures") or []
    return metadata["model"] + (f" [{', '.join(deps)}]" if deps else "")


def dumps_submission(sub: dict) -> str:
    """The submission as JSON text: metadata indented, one prediction per line."""
    head = {k: v for k, v in sub.items() if k != "predictions"}
    text = json.dumps(head, indent=2, ensure_ascii=False)
    preds = ",\n    ".join(json.dumps(p, ensure_ascii=False) for p in sub.get("predictions", []))
    return text[:-2] + ',\n  "predictions": [\n    ' + preds + "\n  ]\n}\n"


def write_submission(sub: dict, path: str | os.PathLike) -> Path:
    """Write the submission atomically; a failure (full disk...) is one WriteError naming the path."""
    return atomic_write_text(path, dumps_submission(sub))
