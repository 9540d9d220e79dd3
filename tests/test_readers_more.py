"""The readers that ``test_readers.py`` does not reach: upstream label files, checksum lists, VLMEvalKit's
prediction files, launcher configs and frame manifests, and the files the task hooks and launchers read back
from a finished run. Whatever bytes they hold: a result, or one DataError naming the file; a file the package
only reads back from its own earlier run (a frame manifest, a samples file) is at worst treated as absent.
"""

from __future__ import annotations

import argparse
import json
import pickle

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from medhorizon_tasks.adapters.vlmeval import launch
from medhorizon_tasks.adapters.vlmeval.outputs import read_predictions
from medhorizon_tasks.benchmarks.surghi import upstream as U
from medhorizon_tasks.core.errors import DataError
from medhorizon_tasks.core.sampling import FramePlan
from medhorizon_tasks.data.reconstruct import read_checksums
from medhorizon_tasks.runs.launch import RunStart
from test_readers import NASTY, _paths, _replace, render_json

HEX = "ab" * 32


def _bypass_labels():
    iv = lambda a, b, k: {"start": a * 1000, "end": b * 1000 - 1, "label_id": k, "label_name": ""}
    return {"phases": [iv(0, 4, 0), iv(4, 8, 1)], "steps": [iv(0, 2, 1), iv(2, 8, 39)]}


def _grasp_labels():
    return {"images": [{"id": 1, "file_name": "CASE041/000000000.jpg", "video_name": "CASE041", "frame_num": 0},
                       {"id": 2, "file_name": "CASE041/000000030.jpg", "video_name": "CASE041", "frame_num": 30}],
            "annotations": [{"id": 1, "image_id": 1, "phases": 1, "steps": 1},
                            {"id": 2, "image_id": 2, "phases": 2, "steps": 17}]}


def _config():
    return {"model": {"medhorizon_needle": {}}, "data": {"MedHorizon_Synthetic_cap64": {},
                                                        "mine": {"class": "MedHorizonDataset",
                                                                 "dataset": "MedHorizon_cap64"}}}


# name -> (file name, reader, skeleton, layout)
READERS = {
    "MultiBypass140 label JSON": ("BBP01.mp4.json", lambda p: U.import_multibypass140(p.parent), _bypass_labels,
                                  "json"),
    "GraSP long-term JSON": ("grasp_long-term_test.json", lambda p: U.import_grasp(p.parent), _grasp_labels, "json"),
    "launcher --config": ("config.json", lambda p: launch._requested(argparse.Namespace(config=str(p), model=None,
                                                                                         data=None)),
                          _config, "json"),
    "label pickle": ("1fps_100_0.pickle", U.load_pickle,
                     lambda: {"SBP02": [{"Frame_id": "SBP02_00000001", "Phase_gt": np.int64(3), "Step_gt": 15}]},
                     "pickle"),
    "checksums": ("sha256.txt", read_checksums, lambda: [f"{HEX}  grasp/CASE041.mp4", f"{HEX} *a/b.mp4"], "lines"),
    "VLMEvalKit predictions": ("m_MedHorizon_cap64.tsv", read_predictions,
                               lambda: [["index", "question", "prediction"], ["0", "q", "NA"], ["1", "q", "=A+1"]],
                               "tsv"),
}


def render(name, value, ascii_only=True) -> bytes:
    layout = READERS[name][3]
    if layout == "json":
        return render_json(value, ascii_only=ascii_only).encode("utf-8", "surrogatepass")
    if layout == "pickle":
        return pickle.dumps(value)
    if layout == "lines":
        return "".join(x + "\n" for x in value).encode("utf-8", "surrogatepass")
    return "".join("\t".join(map(str, row)) + "\n" for row in value).encode("utf-8", "surrogatepass")


def check(name, folder, data: bytes):
    path = folder / READERS[name][0]
    path.write_bytes(data)
    try:
        READERS[name][1](path)
    except DataError as exc:
        assert str(path) in str(exc) or str(folder) in str(exc), str(exc)


@pytest.mark.parametrize("name", READERS)
def test_every_skeleton_reads(tmp_path, name):
    check(name, tmp_path, render(name, READERS[name][2]()))
    READERS[name][1](tmp_path / READERS[name][0])  # no error at all


@pytest.mark.parametrize("name", READERS)
def test_a_folder_where_a_file_is_expected(tmp_path, name):
    (tmp_path / READERS[name][0]).mkdir()
    with pytest.raises(DataError):
        READERS[name][1](tmp_path / READERS[name][0])


@st.composite
def mutated(draw, name):
    value = READERS[name][2]()
    layout = READERS[name][3]
    if layout in ("json", "pickle"):
        for _ in range(draw(st.integers(1, 3))):
            value = _replace(value, draw(st.sampled_from(list(_paths(value)))), draw(NASTY))
    else:
        for _ in range(draw(st.integers(1, 3))):
            cell = draw(st.one_of(st.text(max_size=20), st.sampled_from(
                ["\ud800", "\u2028", "\x85", "\x00", '"', "x" * (200 * 1024), "\ufeff", "\r", "nan", "9" * 5000])))
            if layout == "lines":
                value[draw(st.integers(0, len(value) - 1))] += cell
            else:
                row = draw(st.integers(0, len(value) - 1))
                value[row][draw(st.integers(0, len(value[row]) - 1))] = cell
    try:
        data = render(name, value, ascii_only=draw(st.booleans()))
    except (ValueError, RecursionError, pickle.PicklingError, TypeError):
        data = render(name, READERS[name][2]())
    how = draw(st.sampled_from(["none", "bom", "truncate", "flip"]))
    if how == "bom":
        data = b"\xef\xbb\xbf" + data
    elif how == "truncate":
        data = data[:draw(st.integers(0, len(data)))]
    elif how == "flip" and data:
        at = draw(st.integers(0, len(data) - 1))
        data = data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:]
    return data


FUZZ = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                      HealthCheck.function_scoped_fixture])


@pytest.mark.parametrize("name", READERS)
@FUZZ
@given(data=st.data())
def test_any_document_reads_or_is_one_data_error(tmp_path, name, data):
    check(name, tmp_path, data.draw(mutated(name)))


@pytest.mark.parametrize("name", READERS)
@FUZZ
@given(blob=st.binary(max_size=300))
def test_any_bytes_read_or_are_one_data_error(tmp_path, name, blob):
    check(name, tmp_path, blob)


def test_predictions_that_are_not_utf8_name_the_file_and_line(tmp_path):
    path = tmp_path / "m_D.tsv"
    path.write_bytes(b"index\tprediction\n0\tA\n1\tcaf\xe9\n")
    with pytest.raises(DataError, match=r"m_D\.tsv: line 3: not UTF-8"):
        read_predictions(path)


def test_predictions_with_an_index_that_is_not_a_number(tmp_path):
    path = tmp_path / "m_D.tsv"
    path.write_bytes(b"index\tprediction\n0\tA\nzero\tB\n")
    with pytest.raises(DataError, match=r"row 2: field 'index': 'zero' is not a row number"):
        read_predictions(path)


# ------------------------------------------------------------------ files read back from a finished run

@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(blob=st.one_of(st.binary(max_size=200), NASTY.map(lambda v: render_json(v).encode("utf-8", "surrogatepass"))))
def test_a_damaged_frame_manifest_is_a_cache_miss(tmp_path_factory, blob):
    from medhorizon_tasks.adapters.vlmeval.frames import MANIFEST, _complete

    folder = tmp_path_factory.mktemp("frames")
    (folder / MANIFEST).write_bytes(blob)
    plan = FramePlan(indices=(0, 5), timestamps=(0.0, 1.0), policy="uniform(2)")
    assert _complete(folder, plan) is None  # FrameStore then decodes the plan again


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=NASTY)
def test_a_damaged_status_or_report_file_is_a_reason_never_a_traceback(tmp_path_factory, value):

    work = tmp_path_factory.mktemp("work")
    since = RunStart(work)
    (work / "m").mkdir()
    text = render_json(value).encode("utf-8", "surrogatepass")
    (work / "m" / "status.json").write_bytes(text)
    (work / "m" / "m_MedHorizon_Synthetic_cap64_report.json").write_bytes(text)
    (work / "m" / "m_MedHorizon_Synthetic_cap64_records.jsonl").write_bytes(text + b"\n")
    from medhorizon_tasks.adapters.vlmeval.presets import PRESETS

    v = launch.judge_vlmeval_run(work, ["m"], {"MedHorizon_Synthetic_cap64": PRESETS["MedHorizon_Synthetic_cap64"]},
                                 since)
    assert all(isinstance(r, str) for r in v.reasons) and isinstance(v.summary(), str)


def test_the_sureon_task_reads_its_items_as_the_scorer_does(tmp_path):
    """The lmms-eval task builds its documents with the same reader as ``load_items``: a byte-order mark,
    and a U+2028 or U+0085 in a question (``str.splitlines`` splits on both), are read as they are."""
    from medhorizon_tasks.adapters.lmms_eval import sureon as task
    from test_readers import sureon_records

    records = sureon_records()
    records[0]["question"] = "What happens\u2028next\x85?"
    path = tmp_path / "items.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode())
    docs = task._dataset(path, tmp_path).to_list()
    assert [d["uid"] for d in docs] == ["q0", "t0", "m0"]
    assert task._item(docs[0]).question == "What happens\u2028next\x85?"


@pytest.mark.parametrize("digit", ["7", "\u0663"])  # an ASCII digit, an Arabic-Indic one (both \d)
def test_an_over_long_integer_is_found_wherever_it_starts(digit):
    """loads_json searches for a run of over 308 digits only where one may be (a digit at a multiple of 309): a run
    starting at any offset is still found."""
    from medhorizon_tasks.core import safeio

    for at in range(0, 2 * (safeio.MAX_INT_DIGITS + 1) + 3):
        text = " " * at + '{"x": "' + digit * (safeio.MAX_INT_DIGITS + 1) + '"}'
        assert safeio._may_hold_long_digits(text), at
        assert safeio._may_hold_long_digits(text) >= (safeio._LONG_DIGITS.search(text) is not None)
    assert not safeio._may_hold_long_digits('{"x": "' + "ab" * 400 + '"}')
    with pytest.raises(safeio.DataError, match="digits"):
        safeio.loads_json(" " * 100 + "9" * 400, source="s")
