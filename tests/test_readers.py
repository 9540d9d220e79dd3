"""The safe reading / writing layer (``safeio``) and every reader and writer routed through it.

Every reader of a user's file either returns a result or raises one DataError that names the
file (and the line and field where there is one), whatever bytes the file holds; every writer
turns an OS failure (disk full, a folder in the way) into one MedHorizonError naming the path
and leaves no temporary file behind.
"""

import csv
import errno
import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from medhorizon_tasks import plots
from medhorizon_tasks.benchmarks import data as lb_data
from medhorizon_tasks.benchmarks.medhorizon import scoring as mh_scoring
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.benchmarks.sureon import scoring as sureon_scoring
from medhorizon_tasks.benchmarks.sureon.items import load_items
from medhorizon_tasks.benchmarks.surghi import scoring as surghi_scoring
from medhorizon_tasks.benchmarks.surghi.frames import load_hierarchy_file, read_frame_rows, resolve_hierarchies
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.core import jsonl
from medhorizon_tasks.core.errors import DataError, MedHorizonError
from medhorizon_tasks.leaderboard.submission import FORMAT, read_submission, validate_submission

# ------------------------------------------------------------------ valid skeletons, one per reader

TASKS = ["PR", "Site"]


def release_records():
    qa = [{"uid": k, "question": f"Question {k}?", "options": [f"opt{k}-{j}" for j in range(4)], "answer": "B",
           "task_id": TASKS[k], "evidence": {"support": "local", "frame_windows": [[0, 10]]}} for k in range(2)]
    return [{"key": "v0", "dataset": "GraSP", "video_path": "v0.mp4", "num_frames": 1000, "fps": 25.0,
             "duration_seconds": 40.0, "qa": qa}]


def sureon_records():
    return [{"uid": "q0", "category": "AD", "question": "What happens?", "video_path": "clips/q0.mp4",
             "start_s": 0, "end_s": 10, "options": [f"option {j}" for j in range(7)], "answer": "C"},
            {"uid": "t0", "category": "TO", "question": "Order these.", "video_path": "clips/t0.mp4",
             "start_s": 0, "end_s": 60, "events": ["Dissection", "Clipping", "Cutting"],
             "answer": ["Clipping", "Dissection", "Cutting"]},
            {"uid": "m0", "category": "SM", "question": "Summarise.", "video_path": "clips/m0.mp4",
             "start_s": 0, "end_s": 60, "reference": "Dissect, clip, cut."}]


HIERARCHY = {"toyA": {"phases": {"Prep": ["Incision", "Exposure"], "Repair": ["Suture", "Clip"]},
                      "semantic_groups": {"closing": ["Suture", "Clip"]}}}


def surghi_rows():
    return [{"dataset": "toyA", "video": "vid0", "frame": f * 25, "phase": p, "step": s, "timestamp_s": f,
             "video_path": "vid0.mp4"}
            for f, (p, s) in enumerate([("Prep", "Incision"), ("Repair", "Suture"), ("Repair", "Clip")])]


def mh_predictions():
    return [{"uid": 0, "prediction": "B"}, {"uid": 1, "prediction": "The answer is A."}]


def mh_samples():
    return [{"doc_id": k, "resps": [["B"]], "filtered_resps": ["B"], "accuracy": {"uid": k, "mode": "visual"}}
            for k in range(2)]


def surghi_samples():
    return [{"doc_id": k, "resps": [['{"phase": "Prep", "step": "Incision"}']],
             "phase_acc": {"dataset": r["dataset"], "video": r["video"], "frame": r["frame"], "phase": "Prep",
                           "step": "Incision"}}
            for k, r in enumerate(surghi_rows())]


def submission():
    return {"format": FORMAT, "format_version": 1,
            "metadata": {"model": "m", "size": "7B", "input_protocol": {"fps": 1, "cap": 64, "frames": None},
                         "date": "2025-06-30", "benchmark": "medhorizon", "data_version": MH_DATA.version},
            "predictions": [{"id": 0, "output": "B"}, {"id": 1, "output": None}]}


def score_report():
    return {"overall": {"accuracy": 0.5, "n": 2}, "by_task": {"PR": {"accuracy": 0.25}},
            "by_family": {"fine_grained": {"accuracy": 0.5}}}


def _fixed_data():
    """The data the predictions / submission readers check against (built once, from the skeletons)."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="readers-data-"))
    release = folder / "release.jsonl"
    release.write_text("".join(json.dumps(r) + "\n" for r in release_records()))
    rows = read_frame_rows(_write_jsonl(folder / "rows.jsonl", surghi_rows()), role="annotations")
    return lb_data.load_benchmark_data("medhorizon", release), resolve_hierarchies(rows)


def _write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


MH_DATA, SURGHI_HIERARCHIES = _fixed_data()
MH_UIDS = ["0", "1"]
SUREON_UIDS = ["q0", "t0", "m0"]

# name -> (file name, reader, skeleton, layout); layout: "jsonl" (one value per line), "json" (the whole
# value) or "csv" / "tsv" (rows of a table)
READERS = {
    "release.jsonl": ("release.jsonl", load_release, release_records, "jsonl"),
    "release.json": ("release.json", load_release, release_records, "json"),
    "sureon items": ("items.jsonl", load_items, sureon_records, "jsonl"),
    "surghi annotations.jsonl": ("rows.jsonl", lambda p: read_frame_rows(p, role="annotations"), surghi_rows, "jsonl"),
    "surghi items.jsonl": ("items.jsonl", lambda p: read_frame_rows(p, role="items"), surghi_rows, "jsonl"),
    "surghi annotations.csv": ("rows.csv", lambda p: read_frame_rows(p, role="annotations"), surghi_rows, "csv"),
    "surghi items.tsv": ("rows.tsv", lambda p: read_frame_rows(p, role="items"), surghi_rows, "tsv"),
    "surghi hierarchy": ("hierarchy.json", load_hierarchy_file, lambda: HIERARCHY, "json"),
    "surghi single hierarchy": ("hierarchy.json", load_hierarchy_file, lambda: HIERARCHY["toyA"], "json"),
    "medhorizon predictions": ("preds.jsonl", lambda p: mh_scoring.read_predictions(p, MH_UIDS), mh_predictions,
                               "jsonl"),
    "medhorizon lmms samples": ("samples.jsonl", lambda p: mh_scoring.read_predictions(p, MH_UIDS), mh_samples,
                                "jsonl"),
    "sureon predictions": ("preds.jsonl", lambda p: sureon_scoring.read_predictions(p, SUREON_UIDS),
                           lambda: [{"uid": u, "prediction": "A"} for u in SUREON_UIDS], "jsonl"),
    "surghi predictions.jsonl": ("preds.jsonl", lambda p: surghi_scoring.read_predictions(p, SURGHI_HIERARCHIES),
                                 surghi_rows, "jsonl"),
    "surghi predictions.csv": ("preds.csv", lambda p: surghi_scoring.read_predictions(p, SURGHI_HIERARCHIES),
                               surghi_rows, "csv"),
    "surghi lmms samples": ("samples.jsonl", lambda p: surghi_scoring.read_predictions(p, SURGHI_HIERARCHIES),
                            surghi_samples, "jsonl"),
    "submission": ("sub.json", lambda p: validate_submission(p, MH_DATA), submission, "json"),
    "submission (no data)": ("sub.json", read_submission, submission, "json"),
    "accuracy file": ("results.json", plots.load_accuracy_file, score_report, "json"),
}
JSON_READERS = [n for n, r in READERS.items() if r[3] in ("json", "jsonl")]
CSV_READERS = [n for n, r in READERS.items() if r[3] in ("csv", "tsv")]


class Raw:
    """JSON text put into a document as is (what ``json.dumps`` cannot or would not write)."""

    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return f"Raw({self.text[:30]!r}...)" if len(self.text) > 30 else f"Raw({self.text!r})"


def render_json(value, *, ascii_only=True) -> str:
    raws = []

    def encode(v):
        if isinstance(v, Raw):
            raws.append(v.text)
            return f"@@RAW{len(raws) - 1}@@"
        if isinstance(v, dict):
            return {(encode(k) if isinstance(k, Raw) else k): encode(x) for k, x in v.items()}
        if isinstance(v, list):
            return [encode(x) for x in v]
        return v

    text = json.dumps(encode(value), ensure_ascii=ascii_only)
    for i, raw in enumerate(raws):
        text = text.replace(f'"@@RAW{i}@@"', raw)
    return text


def render_table(rows, delimiter) -> str:
    buf = io.StringIO()
    fields = list(rows[0]) if rows and isinstance(rows[0], dict) else ["dataset", "video", "frame", "phase", "step"]
    w = csv.writer(buf, delimiter=delimiter, lineterminator="\n")
    w.writerow(fields)
    for r in rows:
        w.writerow([str(r.get(f, "")) for f in fields] if isinstance(r, dict) else [str(r)])
    return buf.getvalue()


def render(name, value, *, ascii_only=True) -> str:
    layout = READERS[name][3]
    if layout == "json":
        return render_json(value, ascii_only=ascii_only)
    if layout == "jsonl":
        rows = value if isinstance(value, list) else [value]
        return "".join(render_json(r, ascii_only=ascii_only) + "\n" for r in rows)
    return render_table(value, "\t" if layout == "tsv" else ",")


def read(name, path):
    return READERS[name][1](path)


def expect_data_error(name, path, *fragments) -> str:
    """The reader's DataError text: it names the file and holds every fragment (regular expressions)."""
    with pytest.raises(DataError) as ei:
        read(name, path)
    text = str(ei.value)
    assert str(path) in text, text
    for f in fragments:
        assert re.search(f, text), (f, text)
    return text


def put(tmp_path, name, content) -> Path:
    path = tmp_path / READERS[name][0]
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return path


# ------------------------------------------------------------------ the skeletons are valid

@pytest.mark.parametrize("name", READERS)
def test_every_skeleton_reads(tmp_path, name):
    read(name, put(tmp_path, name, render(name, READERS[name][2]())))


# ------------------------------------------------------------------ targeted regressions: JSON text

def _second_value(name, inner):
    """A document whose SECOND record (or, for one JSON value, a field of it) holds ``inner``."""
    value = READERS[name][2]()
    if READERS[name][3] == "jsonl":
        value = [value[0], {**value[min(1, len(value) - 1)], "extra": inner}]
    else:
        value = {**value, "extra": inner} if isinstance(value, dict) else [*value, {"extra": inner}]
    return value


@pytest.mark.parametrize("name", JSON_READERS)
def test_integer_over_the_conversion_limit_is_a_data_error(tmp_path, name):
    path = put(tmp_path, name, render(name, _second_value(name, Raw("7" * 5000))))
    text = expect_data_error(name, path, r"integer with 5000 digits")
    if READERS[name][3] == "jsonl":
        assert "line 2: field 'extra': integer with 5000 digits" in text
    else:
        assert re.search(r"line 1: field '(\[1\]\.)?extra': integer with 5000 digits", text), text


@pytest.mark.parametrize("name", JSON_READERS)
def test_json_nested_200k_deep_is_a_data_error(tmp_path, name):
    deep = Raw("[" * 200_000 + "]" * 200_000)
    path = put(tmp_path, name, render(name, _second_value(name, deep)))
    expect_data_error(name, path, r"nested more than \d+ levels deep",
                      r"line 2" if READERS[name][3] == "jsonl" else "")


@pytest.mark.parametrize("name", JSON_READERS)
def test_json_nested_within_the_recursion_limit_but_too_deep_is_a_data_error(tmp_path, name):
    deep = Raw("[" * 900 + "]" * 900)  # json.loads reads it; repr() of it in a message would not
    path = put(tmp_path, name, render(name, _second_value(name, deep)))
    expect_data_error(name, path, r"nested more than \d+ levels deep")


@pytest.mark.parametrize("name", JSON_READERS)
def test_lone_surrogate_is_a_data_error_naming_line_and_field(tmp_path, name):
    path = put(tmp_path, name, render(name, _second_value(name, "bad \ud800 text")))
    text = expect_data_error(name, path, r"field '(\[1\]\.)?extra': lone surrogate '\\ud800'")
    assert ("line 2" if READERS[name][3] == "jsonl" else "line 1") in text


@pytest.mark.parametrize("name", JSON_READERS)
def test_invalid_utf8_is_a_data_error_naming_the_line(tmp_path, name):
    text = render(name, READERS[name][2]()).encode()
    bad = text.replace(b"\n", b"\n\xff\xfe", 1) if READERS[name][3] == "jsonl" else b'{\n"a": "\xc3\x28"}'
    path = put(tmp_path, name, bad)
    expect_data_error(name, path, r"line 2: not UTF-8 text \(invalid .* at byte \d+ of the line\)")


@pytest.mark.parametrize("name", JSON_READERS)
def test_utf8_bom_is_read_like_plain_utf8(tmp_path, name):
    path = put(tmp_path, name, b"\xef\xbb\xbf" + render(name, READERS[name][2]()).encode())
    read(name, path)


@pytest.mark.parametrize("name", READERS)
def test_a_folder_where_a_file_is_expected(tmp_path, name):
    path = tmp_path / READERS[name][0]
    path.mkdir()
    if name.startswith("release"):
        (path / "notes.txt").write_text("a folder named like a file, with no release in it")
    expect_data_error(name, path, r"folder")


@pytest.mark.parametrize("name", READERS)
def test_missing_file(tmp_path, name):
    expect_data_error(name, tmp_path / READERS[name][0], r"file not found")


# ------------------------------------------------------------------ targeted regressions: CSV

@pytest.mark.parametrize("name", CSV_READERS)
def test_non_utf8_csv_is_a_data_error_naming_the_line(tmp_path, name):
    text = render(name, READERS[name][2]()).encode()
    lines = text.split(b"\n")
    lines[2] = lines[2].replace(b"Suture", b"Sut\xe9ure")  # latin-1 e-acute
    path = put(tmp_path, name, b"\n".join(lines))
    expect_data_error(name, path, r"line 3: not UTF-8 text")


@pytest.mark.parametrize("name", CSV_READERS)
def test_csv_field_over_the_field_limit_is_a_data_error_naming_the_line(tmp_path, name):
    rows = READERS[name][2]()
    rows[1]["phase"] = "x" * (200 * 1024)
    path = put(tmp_path, name, render(name, rows))
    expect_data_error(name, path, r"line 3: .*field .*longer than \d+ characters")


@pytest.mark.parametrize("name", CSV_READERS)
def test_csv_with_a_utf8_bom_reads_its_header(tmp_path, name):
    path = put(tmp_path, name, b"\xef\xbb\xbf" + render(name, READERS[name][2]()).encode())
    read(name, path)


# ------------------------------------------------------------------ targeted regressions: release folders

@pytest.fixture(scope="module")
def saved_dataset(tmp_path_factory):
    from datasets import Dataset

    folder = tmp_path_factory.mktemp("ds") / "release"
    Dataset.from_list(release_records()).save_to_disk(str(folder))
    return folder


def test_a_saved_dataset_folder_reads(saved_dataset):
    assert [it.uid for it in load_release(saved_dataset)] == ["0", "1"]


def test_dataset_folder_with_only_state_json(tmp_path):
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "state.json").write_text('{"_data_files": [{"filename": "data-00000-of-00001.arrow"}]}')
    with pytest.raises(DataError) as ei:
        load_release(folder)
    assert str(folder) in str(ei.value) and "dataset folder" in str(ei.value)


def test_dataset_folder_with_a_damaged_arrow_file(tmp_path, saved_dataset):
    import shutil

    folder = tmp_path / "ds"
    shutil.copytree(saved_dataset, folder)
    arrow = next(folder.glob("*.arrow"))
    arrow.write_bytes(arrow.read_bytes()[:100])
    with pytest.raises(DataError) as ei:
        load_release(folder)
    assert str(folder) in str(ei.value)


def test_garbage_parquet_is_a_data_error(tmp_path):
    folder = tmp_path / "release"
    folder.mkdir()
    (folder / "test-00000.parquet").write_bytes(b"PAR1 this is not parquet PAR1")
    with pytest.raises(DataError) as ei:
        load_release(folder)
    assert f"{folder / 'test-00000.parquet'}: not a readable Parquet file" in str(ei.value)


def test_parquet_release_reads(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "release"
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist(release_records()), folder / "test.parquet")
    assert len(load_release(folder)) == 2


# ------------------------------------------------------------------ property: any bytes, every reader

def _paths(value, prefix=()):
    yield prefix
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _paths(v, (*prefix, i))


def _replace(value, path, new):
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {k: (_replace(v, rest, new) if k == head else v) for k, v in value.items()}
    return [(_replace(v, rest, new) if i == head else v) for i, v in enumerate(value)]


SURROGATE_TEXT = st.sampled_from(["\ud800", "a\udfffb", "\udc00\ud800", "ok \ud83d", "\ud83d\ude00"])
NASTY_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20), SURROGATE_TEXT,
    st.sampled_from([Raw("9" * 5000), Raw("-" + "1" * 4301), Raw("1" + "0" * 400), Raw("1e999"), Raw("-1e999"),
                     Raw("NaN"), Raw("Infinity"), Raw("1" * 309 + ".5"), Raw("[" * 200_000 + "]" * 200_000),
                     Raw("[" * 150 + "]" * 150), Raw('{"a":' * 2000 + "1" + "}" * 2000), 10**19, -(2**63),
                     "", " ", "\x00", "A", "B", 0, -1, 1e308, 1e-320]),
)
NASTY = st.recursive(NASTY_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.one_of(st.text(max_size=5), SURROGATE_TEXT), inner, max_size=3)),
    max_leaves=6)


@st.composite
def mutated_document(draw, name):
    """A reader's valid skeleton with a few values (or keys) replaced, then rendered and maybe damaged as bytes."""
    value = READERS[name][2]()
    layout = READERS[name][3]
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(value))
        path = draw(st.sampled_from(paths))
        if layout in ("csv", "tsv"):
            cell = draw(st.one_of(st.text(max_size=30),
                                  st.sampled_from(["x" * (130 * 1024), '"', '"a""b', "a\nb", "a\rb", "\x00", "-1",
                                                   "1e999", "9" * 5000, "nan", "\ufeffBOM", "\u2028"])))
            if len(path) == 2:
                value = _replace(value, path, cell)
            continue
        value = _replace(value, path, draw(NASTY))
    ascii_only = draw(st.booleans())
    try:
        text = render(name, value, ascii_only=ascii_only)
    except (ValueError, RecursionError):  # a value json.dumps itself refuses: write the skeleton instead
        text = render(name, READERS[name][2]())
    data = text.encode("utf-8", "surrogatepass")  # lone surrogates as CESU bytes: invalid UTF-8 on purpose
    damage = draw(st.sampled_from(["none", "bom", "insert", "truncate", "crlf", "nul"]))
    if damage == "bom":
        data = b"\xef\xbb\xbf" + data
    elif damage == "insert":
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(st.binary(min_size=1, max_size=4)) + data[at:]
    elif damage == "truncate":
        data = data[:draw(st.integers(0, len(data)))]
    elif damage == "crlf":
        data = data.replace(b"\n", b"\r\n")
    elif damage == "nul":
        data = data.replace(b",", b"\x00,", 1)
    return data


def check_any_bytes(name, folder, data: bytes) -> None:
    path = folder / READERS[name][0]
    path.write_bytes(data)
    try:
        read(name, path)
    except DataError as exc:
        text = str(exc)
        assert str(path) in text, text


FUZZ = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                      HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("name", READERS)
@FUZZ
@given(data=st.data())
def test_any_document_reads_or_is_one_data_error(tmp_path, name, data):
    check_any_bytes(name, tmp_path, data.draw(mutated_document(name)))


@pytest.mark.parametrize("name", READERS)
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blob=st.one_of(st.binary(max_size=300), st.binary(max_size=40).map(lambda b: b"\xef\xbb\xbf" + b)))
def test_any_bytes_read_or_are_one_data_error(tmp_path, name, blob):
    check_any_bytes(name, tmp_path, blob)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_dataset_folder_reads_or_is_one_data_error(tmp_path_factory, saved_dataset, data):
    import shutil

    folder = tmp_path_factory.mktemp("fuzz") / "release"
    shutil.copytree(saved_dataset, folder)
    victim = data.draw(st.sampled_from(sorted(p.name for p in folder.iterdir())))
    original = (folder / victim).read_bytes()
    how = data.draw(st.sampled_from(["bytes", "truncate", "flip"]))
    if how == "bytes":
        new = data.draw(st.binary(max_size=200))
    elif how == "truncate":
        new = original[:data.draw(st.integers(0, len(original)))]
    else:
        at = data.draw(st.integers(0, max(0, len(original) - 1)))
        new = original[:at] + bytes([original[at] ^ 0xFF]) + original[at + 1:] if original else b"x"
    (folder / victim).write_bytes(new)
    try:
        load_release(folder)
    except DataError as exc:
        assert str(folder) in str(exc)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blob=st.one_of(st.binary(max_size=200), st.binary(max_size=200).map(lambda b: b"PAR1" + b + b"PAR1")))
def test_any_parquet_reads_or_is_one_data_error(tmp_path_factory, blob):
    folder = tmp_path_factory.mktemp("pq")
    (folder / "test.parquet").write_bytes(blob)
    try:
        load_release(folder)
    except DataError as exc:
        assert str(folder) in str(exc)


@settings(max_examples=40, deadline=None)
@given(value=NASTY)
def test_loads_json_never_raises_anything_but_data_error(value):
    try:
        text = render_json(value)
    except (ValueError, RecursionError):
        return
    from medhorizon_tasks.core import safeio

    try:
        safeio.loads_json(text, source="doc.json")
    except DataError as exc:
        assert str(exc).startswith("doc.json: ")


# ------------------------------------------------------------------ writers

@pytest.fixture()
def disk_full(monkeypatch):
    """os.write raises ENOSPC for files under the folders given to ``disk_full(folder)``."""
    real = os.write
    full: list[str] = []

    def write(fd, data):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            target = ""
        if any(target.startswith(f) for f in full):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)
    return lambda folder: full.append(str(Path(folder).resolve()))


def leftovers(folder):
    return sorted(p.name for p in Path(folder).rglob("*") if p.name.endswith(".tmp"))


def test_write_jsonl_round_trips_lone_surrogates_and_leaves_no_temporary_file(tmp_path):
    records = [{"uid": "1", "raw": "model said \ud800 then stopped"}, {"uid": "2", "raw": "fine é"}]
    path = tmp_path / "records.jsonl"
    jsonl.write_jsonl(path, records)
    assert leftovers(tmp_path) == []
    path.read_bytes().decode("utf-8")  # valid UTF-8 on disk
    assert [json.loads(line) for line in path.read_text().splitlines()] == records


def test_write_jsonl_on_a_full_disk_names_the_path_and_keeps_the_old_file(tmp_path, disk_full):
    path = tmp_path / "records.jsonl"
    path.write_text('{"old": true}\n')
    disk_full(tmp_path)
    with pytest.raises(MedHorizonError) as ei:
        jsonl.write_jsonl(path, [{"uid": "1"}])
    assert str(ei.value) == f"cannot write {path}: No space left on device"
    assert path.read_text() == '{"old": true}\n' and leftovers(tmp_path) == []


def test_write_jsonl_where_a_folder_is(tmp_path):
    (tmp_path / "records.jsonl").mkdir()
    with pytest.raises(MedHorizonError, match=r"cannot write .*records.jsonl: Is a directory"):
        jsonl.write_jsonl(tmp_path / "records.jsonl", [{"uid": "1"}])
    assert leftovers(tmp_path) == []


def test_write_jsonl_fails_cleanly_on_a_record_that_is_not_json(tmp_path):
    with pytest.raises(MedHorizonError, match=r"cannot write .*r.jsonl: record 2 is not JSON"):
        jsonl.write_jsonl(tmp_path / "r.jsonl", [{"a": 1}, {"b": object()}])
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_creates_the_folder_and_keeps_the_umask(tmp_path):
    from medhorizon_tasks.core import safeio

    path = safeio.atomic_write_text(tmp_path / "new" / "x.txt", "hello")
    assert path.read_text() == "hello"
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask


def test_append_jsonl_on_a_full_disk(tmp_path, disk_full):
    disk_full(tmp_path)
    with pytest.raises(MedHorizonError, match=r"cannot write .*log.jsonl: No space left on device"):
        jsonl.append_jsonl(tmp_path / "log.jsonl", {"a": 1})


def test_score_records_on_a_full_disk_is_one_message(tmp_path, disk_full, capsys):
    release = _write_jsonl(tmp_path / "release.jsonl", release_records())
    preds = _write_jsonl(tmp_path / "preds.jsonl", mh_predictions())
    out = tmp_path / "out"
    out.mkdir()
    disk_full(out)
    rc = main(["score", "--benchmark", "medhorizon", "--data", str(release), "--predictions", str(preds),
               "--out", str(out / "records.jsonl")])
    err = capsys.readouterr().err
    assert rc == 2
    assert err == f"medhorizon-tasks score: error: cannot write {out / 'records.jsonl'}: No space left on device\n"
    assert leftovers(out) == []


def test_diagnose_outputs_on_a_full_disk(tmp_path, disk_full):
    from medhorizon_tasks.commands.jobs import diagnose

    rows = [{"diagnostic": "budgets", "label": "4 frames", "group": "uniform", "x": 4, "task": "t", "model": "m",
             "accuracy": 0.5, "fine_grained": 0.5, "semantic_reasoning": 0.5}]
    out = tmp_path / "diag"
    diagnose.write_outputs("budgets", rows, out, model="m")
    assert sorted(p.name for p in out.iterdir()) == ["budgets.csv", "budgets.json", "budgets.png"]
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    disk_full(out)
    with pytest.raises(MedHorizonError) as ei:
        diagnose.write_outputs("budgets", rows, out, model="m")
    assert "No space left on device" in str(ei.value) and str(out) in str(ei.value)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before and leftovers(out) == []


def test_diagnose_png_on_a_full_disk(tmp_path, monkeypatch):
    from medhorizon_tasks.commands.jobs import diagnose

    rows = [{"diagnostic": "budgets", "label": "4 frames", "group": "uniform", "x": 4, "task": "t", "model": "m",
             "accuracy": 0.5, "fine_grained": 0.5, "semantic_reasoning": 0.5}]

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    from matplotlib.figure import Figure

    monkeypatch.setattr(Figure, "savefig", full)
    out = tmp_path / "diag"
    with pytest.raises(MedHorizonError, match=r"cannot write .*budgets.png: No space left on device"):
        diagnose.write_outputs("budgets", rows, out, model="m")
    assert leftovers(out) == [] and not (out / "budgets.png").exists()


# ------------------------------------------------------------------ the command line and a closed pipe

def test_stats_into_a_closed_pipe_exits_quietly(tmp_path):
    release = _write_jsonl(tmp_path / "release.jsonl", release_records())
    proc = subprocess.Popen([sys.executable, "-m", "medhorizon_tasks.commands.main", "stats", "--json", "--data", str(release)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before the first byte is written, like `| head -0`
    err = proc.stderr.read().decode()
    rc = proc.wait()
    assert "Traceback" not in err and "BrokenPipeError" not in err and err == ""
    assert rc in (0, 141)


def test_stats_through_head_exits_quietly(tmp_path):
    recs = release_records()
    big = [{**recs[0], "key": f"v{v}", "video_path": f"v{v}.mp4", "dataset": f"source-{v:05d}-" + "x" * 60,
            "qa": [{**q, "uid": v * 2 + k} for k, q in enumerate(recs[0]["qa"])]} for v in range(2000)]
    release = _write_jsonl(tmp_path / "release.jsonl", big)
    cmd = f"{sys.executable} -m medhorizon_tasks.commands.main stats --json --data {release} | head -1"
    r = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd}"], capture_output=True, text=True)
    assert r.stdout == "{\n"
    assert "Traceback" not in r.stderr and r.stderr == ""
    assert r.returncode in (0, 141)


def test_accuracy_file_with_a_section_that_is_not_an_object(tmp_path):
    path = tmp_path / "results.json"
    path.write_text('{"overall": {"accuracy": 0.5}, "by_family": true}')
    with pytest.raises(DataError, match=r"results.json: field 'by_family': expected an object"):
        plots.load_accuracy_file(path)
