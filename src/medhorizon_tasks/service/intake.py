"""From received bytes to a validated submission, or every reason it is refused; nothing here touches the web.

The same checks as ``leaderboard validate`` (:func:`~..leaderboard.submission.check_submission`), after three
that protect the server from what a hostile upload can be:

* text that is not UTF-8 is refused; a leading byte-order mark is dropped, as every reader of the package
  drops it (:func:`~..core.safeio.read_text`), so ``leaderboard validate``, the API and the form read one file
  alike;
* JSON is parsed by :func:`~..core.safeio.loads_json` (no nesting beyond ``MAX_DEPTH``, no integer of more
  digits than a float holds);
* before parsing, the number of JSON values is bounded by what a submission of the benchmarks the server holds
  can need (:func:`structure_limit`): a file of millions of tiny values, which would take many times its size
  in memory once parsed, is refused before it is parsed.

Every step is linear in the upload's size (:func:`count_values` finds strings with ``str.find``, never a
regular expression that walks an unterminated string again from each of its quotes), and the service runs
them in worker processes (:mod:`.workers`), so that no upload holds the interpreter lock of the process that
answers the other requests.

An uploaded samples or predictions file is made into a submission by
:func:`~..leaderboard.submission.make_submission` (what ``leaderboard make`` does), from a temporary file whose
name is fixed here: no text of the submitter ever becomes a path.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..benchmarks.data import BENCHMARK_NAMES, BENCHMARKS, BenchmarkData
from ..core.errors import DataError
from ..core.safeio import loads_json, outside_strings
from ..leaderboard.submission import Submission, check_submission, dumps_submission, group_problems, make_submission
from ..leaderboard.upload_kind import guess_upload

__all__ = ["Intake", "Refused", "structure_limit", "count_values", "without_bom", "read_submission_upload",
           "make_from_samples", "FORM_FIELDS"]

# A submission needs at most this many JSON values (objects, arrays, and the values in them) per item of
# the data: a MedHorizon/Sureon prediction is an object of 2-3 fields, a SurgHiBench one 5-7; with metadata.
_VALUES_PER_ITEM = 12
_VALUES_SLACK = 10_000
_BOM = b"\xef\xbb\xbf"

FORM_FIELDS = ("benchmark", "model", "size", "fps", "cap", "frames", "date", "mode", "notes", "url")


class Refused(Exception):
    """A refused submission: ``problems``, one line each, as ``leaderboard validate`` lists them."""

    def __init__(self, problems: list[str] | str, status: int = 422):
        self.problems = [p if len(p) <= 1000 else f"{p[:1000]}... (cut: the line is {len(p):,} characters)"
                         for p in ([problems] if isinstance(problems, str) else problems)]
        self.status = status
        super().__init__("; ".join(self.problems))

    def __reduce__(self):  # back from a worker process whole, not as one joined line
        return Refused, (self.problems, self.status)


@dataclass
class Intake:
    """A valid submission ready to be kept: the value that is scored and its JSON bytes."""

    value: dict
    data: BenchmarkData
    submission_bytes: bytes
    kind: str                      # "submission" or "samples"
    submission: Submission         # the validated value, as the scorers take it

    @property
    def metadata(self) -> dict:
        return self.value["metadata"]


def structure_limit(datas: Mapping[str, BenchmarkData]) -> int:
    """The most JSON values a submission for any benchmark the server holds may have."""
    return _VALUES_PER_ITEM * max((len(d.ids) for d in datas.values()), default=0) + _VALUES_SLACK


def count_values(text: str, stop_after: int | None = None, *, steps: list | None = None) -> int:
    """About how many JSON values ``text`` holds: separators and openings outside strings, plus one; stops
    counting once past ``stop_after``. Linear: the stretches outside strings are found by
    :func:`~..core.safeio.outside_strings`, counted at C speed; a valid file has at most two strings (a key
    and its value) per value, so more strings than that also stop the count. ``steps``: characters examined
    (a one-item list, for the tests)."""
    n, strings = 1, 0
    for _, part in outside_strings(text, steps=steps):
        n += part.count(",") + part.count("[") + part.count("{")
        strings += 1
        if stop_after is not None and (n > stop_after or strings > 2 * stop_after + 2):
            return max(n, stop_after + 1)
    return n


def _refuse_oversized_shape(text: str, datas: Mapping[str, BenchmarkData], what: str) -> None:
    """Refused (413) before parsing: more JSON values than a submission to this server can need."""
    limit = structure_limit(datas)
    if count_values(text, limit) > limit:
        raise Refused(f"{what}: more JSON values than any submission to this server can hold (at most {limit:,}): "
                      "refused before reading it", status=413)


def _private_paths_out(problems: list[str], datas: Mapping[str, BenchmarkData]) -> list[str]:
    """The problems with the server's own paths (its data files, which messages for a local user name) replaced
    by what they are: no reply names a path of the server."""
    out = []
    for p in problems:
        for b, d in datas.items():
            if d.source:
                p = p.replace(d.source, f"the server's {BENCHMARK_NAMES[b]} data")
        out.append(p)
    return out


def held_versions(datas: Mapping[str, BenchmarkData]) -> str:
    return "; ".join(f"{BENCHMARK_NAMES[b]} ({b}) data {datas[b].version}" for b in BENCHMARKS if b in datas)


def without_bom(body: bytes) -> bytes:
    """``body`` without a leading UTF-8 byte-order mark (an editor's, never part of the JSON)."""
    return body[len(_BOM):] if body.startswith(_BOM) else body


def _text(body: bytes, what: str) -> str:
    try:
        return without_bom(body).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(f"{what}: not UTF-8 text (byte {exc.start}): a submission is a UTF-8 JSON file") from None


def _refuse_foreign(obj: Any, datas: Mapping[str, BenchmarkData]) -> BenchmarkData:
    """The data of the submission's benchmark, or a refusal naming what this server holds."""
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    bench = meta.get("benchmark") if isinstance(meta, dict) else None
    if isinstance(bench, str) and bench in datas:
        return datas[bench]
    if bench in BENCHMARKS:
        raise Refused(f"metadata.benchmark: this server holds no {BENCHMARK_NAMES[bench]} data; it holds "
                      f"{held_versions(datas)}")
    # no usable benchmark: check_submission lists the problem with every other one
    _, problems = check_submission(obj, None)
    raise Refused(problems + [f"this server holds {held_versions(datas)}"])


def read_submission_upload(body: bytes, datas: Mapping[str, BenchmarkData], *,
                           what: str = "submission") -> Intake:
    """A submission JSON as ``leaderboard make`` writes it, checked as ``leaderboard validate`` checks it."""
    if not without_bom(body).strip():
        raise Refused(f"{what}: empty")
    text = _text(body, what)
    _refuse_oversized_shape(text, datas, what)
    try:
        obj = loads_json(text, source=what)
    except DataError as exc:
        raise Refused(exc.problems + _guess(text, None, datas)) from None
    return _checked(obj, datas, body, "submission", text=text)


def _guess(text: str, chosen: str | None, datas: Mapping[str, BenchmarkData], value=None) -> list[str]:
    """One line saying what the upload looks like and what to upload instead, when that can be told."""
    hint = guess_upload(text, chosen, datas, value)
    return [hint] if hint else []


def _checked(obj: Any, datas: Mapping[str, BenchmarkData], body: bytes, kind: str, *,
             text: str | None = None) -> Intake:
    try:
        data = _refuse_foreign(obj, datas)
    except Refused as exc:
        if text is not None and exc.status == 422:
            exc.problems += _guess(text, None, datas, obj)
        raise
    sub, problems = check_submission(obj, data)
    if problems:
        if any(p.startswith("metadata.data_version") for p in problems):
            problems.append(f"this server holds {held_versions(datas)}")
        if text is not None:
            problems += _guess(text, data.benchmark, datas, obj)
        raise Refused(_private_paths_out(problems, datas))
    return Intake(obj, data, body, kind, sub)


def looks_like_submission(body: bytes) -> bool:
    """Whether an upload is a submission JSON (an object with ``"format"``) rather than samples / predictions."""
    head = without_bom(body).lstrip()[:4096]
    return head.startswith(b"{") and b'"format"' in head and b"medhorizon-tasks-submission" in head


def _number(form: Mapping[str, str], key: str, kind: type):
    value = (form.get(key) or "").strip()
    if not value:
        return None
    try:
        return kind(value)
    except ValueError:
        raise Refused(f"{key}: expected {'a whole number' if kind is int else 'a number'}, got {value!r}") from None


_TASK = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
_SAMPLES_NAME = re.compile(r"(?:.*[/\\])?[^/\\]*_samples_([A-Za-z0-9][A-Za-z0-9_.-]{0,99})\.jsonl")


def _run_config(config: bytes, filename: str | None, datas) -> tuple[str, dict]:
    """The task and the minimal ``results.json`` (its ``config`` and that task's ``configs`` entry) of an
    uploaded lmms-eval results file: what :func:`~..core.log_samples.run_description` reads. The task is the
    one the results name, or, when they name several, the one in the samples file's name
    (``<stamp>_samples_<task>.jsonl``, as lmms-eval names it)."""
    text = _text(config, "config")
    _refuse_oversized_shape(text, datas, "config")
    try:
        obj = loads_json(text, source="config")
    except DataError as exc:
        raise Refused(exc.problems) from None
    configs = obj.get("configs") if isinstance(obj, dict) else None
    if not isinstance(configs, dict) or not configs:
        raise Refused("config: not an lmms-eval results file (no \"configs\" object naming the run's task): upload "
                      "the <stamp>_results.json written beside the samples file")
    named = _SAMPLES_NAME.fullmatch(filename or "")
    task = named.group(1) if named and named.group(1) in configs else next(iter(configs)) if len(configs) == 1 \
        else None
    if task is None:
        raise Refused(f"config: the results name several tasks ({', '.join(sorted(map(str, configs))[:8])}) and the "
                      "samples file's name does not say which it holds: upload it as lmms-eval named it "
                      "(<stamp>_samples_<task>.jsonl)")
    if not _TASK.fullmatch(str(task)):
        raise Refused(f"config: {str(task)[:100]!r} is not a task name (letters, digits, _ . -)")
    kept = {"config": obj.get("config") if isinstance(obj.get("config"), dict) else {},
            "configs": {task: configs[task]}}
    return task, kept


def _refuse_unknown_protocol(sub: dict, had_config: bool) -> None:
    """A MedHorizon run whose input protocol neither the upload nor the form says is refused: stored, it
    would show "—" where the run had one."""
    meta = sub["metadata"]
    if meta["benchmark"] != "medhorizon" or any(v is not None for v in meta["input_protocol"].values()):
        return
    raise Refused("input protocol: the upload does not say how the run admitted its frames"
                  + (" (its results file records no frame setting)" if had_config else
                     " (an lmms-eval samples file alone does not record it)")
                  + ": add the run's <stamp>_results.json (the form's run config field; `leaderboard submit` sends "
                    "it by itself), or give fps and cap (or frames)")


def make_from_samples(body: bytes, form: Mapping[str, str], datas: Mapping[str, BenchmarkData], *,
                      filename: str | None = None, config: bytes | None = None) -> Intake:
    """A submission made from an uploaded samples / predictions file and the form's metadata fields; with the
    run's lmms-eval ``results.json`` (``config``), its input protocol and departures come from the run, as
    ``leaderboard make`` takes them from the file beside the samples."""
    bench = (form.get("benchmark") or "").strip()
    if bench not in datas:
        raise Refused(f"benchmark: choose one this server holds ({', '.join(b for b in BENCHMARKS if b in datas)}), "
                      f"got {bench!r}")
    missing = [k for k in ("model", "size") if not (form.get(k) or "").strip()]
    if missing:
        raise Refused([f"{k}: required with a samples or predictions file" for k in missing])
    text = _text(body, "file")
    _refuse_oversized_shape(text, datas, "file")
    data = datas[bench]
    # a fixed name in a private folder: the submitter's file name only chooses between two endings
    suffix = ".csv" if bench == "surghi" and (filename or "").lower().endswith(".csv") else ".jsonl"
    run = _run_config(config, filename, datas) if config and config.strip() else None
    with tempfile.TemporaryDirectory(prefix="mh-upload-") as tmp:
        path = Path(tmp) / f"upload{suffix}"
        if run is not None:  # the names lmms-eval gives a run's files, so the run's description is read as theirs
            path = Path(tmp) / f"upload_samples_{run[0]}.jsonl"
            (Path(tmp) / "upload_results.json").write_text(json.dumps(run[1]), encoding="utf-8")
        path.write_bytes(without_bom(body))
        try:
            sub = make_submission(data, path, model=form["model"].strip(), size=form["size"].strip(),
                                  fps=_number(form, "fps", float), cap=_number(form, "cap", int),
                                  frames=_number(form, "frames", int), date=(form.get("date") or "").strip() or None,
                                  mode=(form.get("mode") or "").strip() or None,
                                  notes=(form.get("notes") or "").strip() or None,
                                  url=(form.get("url") or "").strip() or None)
        except DataError as exc:
            # the temporary file's name means nothing to the submitter (and is the server's own)
            problems = group_problems([p.replace(str(path), "the uploaded file").replace(tmp, "")
                                       for p in exc.problems])
            raise Refused(problems + _guess(text, bench, datas)) from None
    _refuse_unknown_protocol(sub, run is not None)
    text = dumps_submission(sub)
    return _checked(json.loads(text), datas, text.encode("utf-8"), "samples")
