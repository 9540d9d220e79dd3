"""Loading the MedHorizon release: flattening, accepted shapes, and a clear error for each bad input."""

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from medhorizon_tasks.benchmarks.medhorizon.release import Item, items_to_dataset, load_release
from medhorizon_tasks.core.errors import DataError, VideoError
from medhorizon_tasks.core.paths import resolve_video_path


def video(qa, **over):
    rec = {"key": "v1", "dataset": "REAL-Colon", "organ": "colon", "scene_type": "examination",
           "duration_tier": "10-60min", "video_path": "real_colon/002-010.mp4", "num_frames": 45000,
           "fps": 25.0, "duration_seconds": 1800.0, "split": "test", "qa": qa}
    rec.update(over)
    return rec


def q(uid=0, **over):
    d = {"uid": uid, "question": "Where is the largest lesion?", "options": ["Cecum", "Ascending colon",
         "Transverse colon", "Sigmoid"], "answer": "B", "task_id": "Site", "task_name": "Lesion Site Binding",
         "task_class": "Fine-grained Understanding", "category": "Lesion"}
    d.update(over)
    return d


def write(tmp_path, records, name="release.jsonl"):
    p = tmp_path / name
    p.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records), encoding="utf-8")
    return p


def load_error(tmp_path, records) -> str:
    with pytest.raises(DataError) as e:
        load_release(write(tmp_path, records))
    return str(e.value)


def test_flattens_one_item_per_question(tmp_path):
    items = load_release(write(tmp_path, [video([q(0), q(1, task_id="LA", task_name="Lesion Analysis")]),
                                          video([q(2, task_id="IR")], key="v2", dataset="GraSP")]))
    assert [it.uid for it in items] == ["0", "1", "2"]
    a, b, c = items
    assert (a.task, a.family, a.hop) == ("Site", "fine_grained", 0)
    assert (b.task, b.family, b.hop) == ("LA", "semantic_reasoning", 3)
    assert (c.task, c.hop, c.source, c.video_key) == ("IR", 1, "GraSP", "v2")
    assert a.options == ("Cecum", "Ascending colon", "Transverse colon", "Sigmoid") and a.answer == "B"
    assert a.num_frames == 45000 and a.duration_s == 1800.0


@pytest.mark.parametrize("task,code,hop", [("PR", "PR", 0), ("phase recognition", "PR", 0), ("wr", "WR", 2),
                                           ("Ranked Step Retrieval", "RSR", 2), ("Count-Proportion Reasoning", "CPR", 3),
                                           ("LLS", "LLS", 0), ("hist", "Hist", 0)])
def test_task_given_as_code_or_name(tmp_path, task, code, hop):
    item = load_release(write(tmp_path, [video([q(task_id=None, task_name=task)])]))[0]
    assert (item.task, item.hop) == (code, hop)


def test_option_mapping_with_letter_prefixes_is_stripped(tmp_path):
    opts = {"A": "A. Cecum", "B": "B) Ascending colon", "C": "(C) Transverse colon", "D": "D: Sigmoid"}
    item = load_release(write(tmp_path, [video([q(options=opts, answer="(b)")])]))[0]
    assert item.options == ("Cecum", "Ascending colon", "Transverse colon", "Sigmoid")
    assert item.answer == "B"


def test_answer_given_as_option_text(tmp_path):
    item = load_release(write(tmp_path, [video([q(answer="Transverse colon")])]))[0]
    assert item.answer == "C"


def test_evidence_shapes(tmp_path):
    items = load_release(write(tmp_path, [video([
        q(0, evidence={"support": "exact", "frame_windows": [[100, 200], [5000, 5100]]}),
        q(1, evidence={"type": "lesion_union", "frames": [7, 9]}),
        q(2, evidence={"support": "global"}),
        q(3, evidence_time_windows=[[10.0, 12.0]], evidence_support="local"),
        q(4),
    ])]))
    assert items[0].evidence_support == "local" and items[0].evidence_windows == ((100, 200), (5000, 5100))
    assert items[1].evidence_support == "proxy" and items[1].evidence_windows == ((7, 7), (9, 9))
    assert items[2].evidence_support == "global" and items[2].evidence_windows == ()
    assert items[3].evidence_windows == ((250, 300),)
    assert items[4].evidence_support == "" and items[4].evidence_windows == ()


def test_json_list_and_dataset_folder(tmp_path):
    recs = [video([q(0)]), video([q(1)], key="v2")]
    (tmp_path / "a.json").write_text(json.dumps(recs))
    assert len(load_release(tmp_path / "a.json")) == 2
    folder = tmp_path / "hub_snapshot"
    folder.mkdir()
    write(folder, recs, name="mlvbench_test.jsonl")
    assert len(load_release(folder)) == 2


def test_saved_dataset_folder(tmp_path):
    from datasets import Dataset

    recs = [video([q(0)]), video([q(1)], key="v2")]
    Dataset.from_list(recs).save_to_disk(str(tmp_path / "saved"))
    assert [it.uid for it in load_release(tmp_path / "saved")] == ["0", "1"]


def test_items_round_trip_through_datasets_features(tmp_path):
    items = load_release(write(tmp_path, [video([q(0, evidence={"frame_windows": [[1, 2]]}), q(1)])]))
    ds = items_to_dataset(items)
    assert ds.features["options"].length == 4
    assert [Item.from_record(r) for r in ds.to_list()] == items


# ------------------------------------------------------------ bad input

@pytest.mark.parametrize("records,expected", [
    (['{"key": "v1", "qa": [}'], "line 1: not valid JSON"),
    ([video([q(5), q(5)])], "item 5: field 'uid' is duplicated"),
    ([video([q(5)]), video([q(5)], key="v2")], "item 5: field 'uid' is duplicated"),
    ([video([{k: v for k, v in q(3).items() if k != "question"}])], "item 3: field 'question'"),
    ([video([{k: v for k, v in q(3).items() if k != "options"}])], "item 3: field 'options': missing"),
    ([video([{k: v for k, v in q(3).items() if k != "answer"}])], "item 3: field 'answer': missing"),
    ([video([q(3, options=["a", "b", "c"])])], "item 3: field 'options': expected exactly 4"),
    ([video([q(3, options=["a", "b", "c", "A"])])], "item 3: field 'options': options must be distinct"),
    ([video([q(3, options={"A": "x", "B": "y", "C": "z", "E": "w"})])], "item 3: field 'options': a mapping"),
    ([video([q(3, answer="E")])], "item 3: field 'answer': 'E' is not among the options"),
    ([video([q(3, answer="Descending colon")])], "item 3: field 'answer'"),
    ([video([q(3, task_id="XYZ", task_name="Colour Naming")])], "item 3: field 'task_id': unknown task 'XYZ'"),
    ([video([q(None)])], "field 'qa[0].uid'"),
    ([video([q(3, evidence={"frame_windows": [[10, 99999]]})])], "item 3: field 'evidence.frame_windows'"),
    ([video([q(3, evidence={"frame_windows": [[20, 10]]})])], "item 3: field 'evidence.frame_windows'"),
    ([video([q(3, evidence={"support": "somewhere"})])], "item 3: field 'evidence.support'"),
    ([video([q(3)], num_frames=-4)], "line 1: video 'v1' field 'num_frames'"),
    ([video([q(3)], fps=0)], "line 1: video 'v1' field 'fps'"),
    ([video([q(3)], duration_seconds=99999)], "field 'duration_seconds'"),
    ([{k: v for k, v in video([q(3)]).items() if k != "video_path"}], "field 'video_path'"),
    ([video([])], "field 'qa'"),
    (["[1, 2]"], "line 1: expected a JSON object"),
])
def test_each_bad_input_names_item_and_field(tmp_path, records, expected):
    assert expected in load_error(tmp_path, records)


def test_all_problems_are_reported_at_once(tmp_path):
    msg = load_error(tmp_path, [video([q(1, answer="Z"), q(2, task_id="nope", task_name=None)])])
    assert "item 1:" in msg and "item 2:" in msg and "2 problem(s)" in msg


def test_missing_file_and_env(tmp_path, monkeypatch):
    with pytest.raises(DataError, match="file not found"):
        load_release(tmp_path / "absent.jsonl")
    monkeypatch.delenv("MEDHORIZON_DATA", raising=False)
    with pytest.raises(DataError, match="MEDHORIZON_DATA"):
        load_release()


# ------------------------------------------------------------ video root containment

@pytest.mark.parametrize("rel", ["../secret.mp4", "a/../../secret.mp4", "/etc/passwd", "C:\\videos\\x.mp4",
                                 "..\\x.mp4"])
def test_video_path_may_not_escape_the_root(tmp_path, rel):
    with pytest.raises(VideoError) as e:
        resolve_video_path(tmp_path, rel, uid="12")
    assert "item 12" in str(e.value) and "video_path" in str(e.value)


def test_symlink_out_of_the_root_is_refused(tmp_path):
    root = tmp_path / "videos"
    root.mkdir()
    outside = tmp_path / "outside.mp4"
    outside.write_bytes(b"x")
    os.symlink(outside, root / "link.mp4")
    os.symlink(tmp_path, root / "dirlink")
    (root / "inside.mp4").write_bytes(b"x")
    with pytest.raises(VideoError, match="outside the video root"):
        resolve_video_path(root, "link.mp4", uid="1")
    with pytest.raises(VideoError, match="outside the video root"):
        resolve_video_path(root, "dirlink/outside.mp4", uid="1")
    assert resolve_video_path(root, "inside.mp4") == root.resolve() / "inside.mp4"


# ------------------------------------------------------------ fuzzing: no traceback escapes

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 10**6) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=6), inner, max_size=5),
    max_leaves=20)
field_names = st.sampled_from(["uid", "question", "options", "answer", "task_id", "task_name", "evidence",
                               "evidence_frame_windows", "evidence_support"])


@st.composite
def mutated_records(draw):
    rec = video([q(0), q(1)])
    for _ in range(draw(st.integers(1, 4))):
        target = draw(st.sampled_from(["video", "qa"]))
        if target == "video":
            key = draw(st.sampled_from(["num_frames", "fps", "duration_seconds", "video_path", "dataset", "qa", "key"]))
            rec[key] = draw(json_values)
        elif isinstance(rec.get("qa"), list) and rec["qa"] and isinstance(rec["qa"][0], dict):
            rec["qa"][0][draw(field_names)] = draw(json_values)
    return rec


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(mutated_records(), min_size=1, max_size=3))
def test_fuzzed_records_load_or_raise_data_error(tmp_path, records):
    p = tmp_path / "fuzz.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    try:
        items = load_release(p)
    except DataError as e:
        assert str(e)
    else:
        assert all(isinstance(it, Item) and it.answer in "ABCD" for it in items)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=300))
def test_fuzzed_bytes_load_or_raise_data_error(tmp_path, blob):
    p = tmp_path / "bytes.jsonl"
    p.write_bytes(blob)
    try:
        load_release(p)
    except DataError:
        pass
