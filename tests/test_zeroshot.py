"""SurgHiBench zero-shot, unit by unit: the centred clip, the similarities against hand-computed values, window
averaging, one decode and one encode per distinct frame, the prompts, and bad input named."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from medhorizon_tasks.adapters.encoders import load_encoder, parse_args
from medhorizon_tasks.benchmarks.surghi.frames import read_frame_rows
from medhorizon_tasks.benchmarks.surghi.prompts import resolve_prompts, shipped_prompts
from medhorizon_tasks.benchmarks.surghi.vocab import MIPO
from medhorizon_tasks.benchmarks.surghi.zeroshot import (
    EncoderError,
    Setting,
    as_embeddings,
    cosine_scores,
    exp_map0,
    lorentz_distance,
    lorentz_scores,
)
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.core.errors import DataError, MedHorizonError
from medhorizon_tasks.core.sampling import CentredClip, FramePlan, VideoMeta, plan_frames
from medhorizon_tasks.core.video.decode import decode_plan
from medhorizon_tasks.core.video.prepared import video_index
from medhorizon_tasks.runs.zeroshot import load_inputs
from medhorizon_tasks.runs.zeroshot_video import Labeller, embed_texts
from tiny_encoders import FrameProjection

# ------------------------------------------------------------------ the clip

def _surgclip_centred(anchor: int, n: int, frames: int) -> list[int]:
    """The reference: ``surgclip`` 0.1.0 ``VideoPreprocessor(mode="centered")`` on a frame list of length n
    (positions; start = max(0, a - T//2), end = start + T, shifted back at the end, the last repeated)."""
    half = frames // 2
    start = max(0, anchor - half)
    end = start + frames
    if end > n:
        end = n
        start = max(0, end - frames)
    got = list(range(start, end))
    return got + [got[-1]] * (frames - len(got))


@pytest.mark.parametrize("seconds", [5, 16, 40])
@pytest.mark.parametrize("frames", [1, 2, 5, 16, 17])
def test_the_centred_clip_is_surgclips_rule_on_the_1fps_grid(seconds, frames):
    meta = VideoMeta(num_frames=seconds * 4, fps=4.0)  # 4 fps video, 1 FPS annotations at whole seconds
    for anchor in range(seconds):
        plan = plan_frames(meta, CentredClip(float(anchor), frames, 1.0))
        assert [t for t in plan.timestamps] == [float(s) for s in _surgclip_centred(anchor, seconds, frames)]
        assert len(plan) == frames and float(anchor) in plan.timestamps


def test_the_centred_clip_away_from_the_ends_puts_the_frame_at_t_half_and_takes_the_nearest_frames():
    meta = VideoMeta(num_frames=240, fps=4.0)
    plan = plan_frames(meta, CentredClip(30.0))
    assert plan.timestamps == tuple(float(t) for t in range(22, 38)) and plan.timestamps[8] == 30.0
    # variable frame rate: the frame nearest to each grid time (equally near: the earlier one)
    times = tuple(round(0.3 * i + (0.1 if i % 2 else 0.0), 3) for i in range(60))
    vfr = VideoMeta(num_frames=60, fps=3.0, frame_times=times)
    plan = plan_frames(vfr, CentredClip(9.0, frames=3))
    want = [min(range(60), key=lambda i: (abs(times[i] - t), i)) for t in (8.0, 9.0, 10.0)]
    assert list(plan.indices) == want
    with pytest.raises(ValueError, match="after the end"):
        plan_frames(meta, CentredClip(61.0))


# ------------------------------------------------------------------ similarity

def test_lorentz_distance_against_hand_computed_values():
    # c = 1, v = (ln 2, 0), w = (0, ln 2): sinh(ln 2) = 3/4, cosh(ln 2) = 5/4, so exp_o(v) = (5/4; 3/4, 0) and
    # exp_o(w) = (5/4; 0, 3/4); <x, y>_L = -25/16 and d = acosh(25/16) = ln(25/16 + 15/16 * sqrt(... )) below.
    v, w = np.array([[math.log(2), 0.0]]), np.array([[0.0, math.log(2)]])
    assert exp_map0(v, 1.0) == pytest.approx(np.array([[0.75, 0.0]]))
    want = math.log(25 / 16 + math.sqrt((25 / 16) ** 2 - 1))
    assert lorentz_scores(v, w, 1.0)[0, 0] == pytest.approx(-want, abs=1e-12)
    # c = 4, v = (ln 2 / 2, 0) and -v: exp_o gives space components +-3/8, time 5/8; -c <x, y>_L = 4 (25 + 9) / 64
    # = 2.125 = cosh(ln 4), so d = ln 4 / 2 = ln 2 (= |v| + |-v|: both on one geodesic through the origin)
    v = np.array([[math.log(2) / 2, 0.0]])
    assert exp_map0(v, 4.0) == pytest.approx(np.array([[0.375, 0.0]]))
    assert lorentz_scores(v, -v, 4.0)[0, 0] == pytest.approx(-math.log(2), abs=1e-12)
    # the distance from the origin is the tangent vector's length, and a point's distance to itself is 0
    u = np.array([[0.3, -0.4, 1.2]])
    for c in (0.1, 0.815, 10.0):
        assert lorentz_distance(np.zeros((1, 3)), exp_map0(u, c), c)[0, 0] == pytest.approx(1.3, abs=1e-9)
        assert lorentz_scores(u, u, c)[0, 0] == pytest.approx(0.0, abs=1e-6)
    # points already on the hyperboloid are taken as they are
    x = exp_map0(u, 2.0)
    assert lorentz_scores(x, x * 0, 2.0, on_hyperboloid=True)[0, 0] == pytest.approx(-1.3, abs=1e-9)


def test_cosine_is_normalised_on_both_sides():
    x = np.array([[3.0, 4.0], [0.0, 0.0]])
    t = np.array([[10.0, 0.0], [0.0, -2.0]])
    assert cosine_scores(x, t) == pytest.approx(np.array([[0.6, -0.8], [0.0, 0.0]]))


def test_embeddings_of_the_wrong_shape_or_nan_are_named():
    name = lambda i: f"frame {i} of v.mp4"  # noqa: E731
    with pytest.raises(EncoderError, match=r"returned shape \(2, 4\) for 3 input\(s\) \(frame 0 of v.mp4"):
        as_embeddings(np.ones((2, 4)), 3, "encode_images", name)
    bad = np.ones((3, 4))
    bad[2, 1] = np.nan
    with pytest.raises(EncoderError, match="encode_images returned NaN or infinity for frame 2 of v.mp4"):
        as_embeddings(bad, 3, "encode_images", name)
    with pytest.raises(EncoderError, match="5-dimensional embeddings .* text embeddings have 4"):
        as_embeddings(np.ones((3, 5)), 3, "encode_images", name, dim=4)


# ------------------------------------------------------------------ one video

@pytest.fixture(scope="module")
def one_video(surghi_sample):
    inputs = load_inputs(surghi_sample.annotations_path)
    rows = [r for r in inputs.rows if r.video == "synthtree_02"]
    return inputs, rows, surghi_sample.video_root / rows[0].video_path


def test_window_averaging_equals_the_mean_of_the_per_frame_similarities(one_video):
    """An image encoder's score of an evaluated frame is the mean over its clip's 16 frames of each frame's own
    similarity, recomputed here frame by frame from a plain decode of that frame alone."""
    inputs, rows, path = one_video
    enc = FrameProjection()
    setting = Setting()
    text = embed_texts(enc, "SynthTree", inputs.prompts["SynthTree"], 4)
    results, stats = Labeller(enc, "image", setting, batch_size=7, k=20, block_frames=10).label_video(path, rows, text)
    t_phase = text.embeddings[text.spans["phases"]]
    labels = inputs.prompts["SynthTree"]["phases"].labels
    seen = set()
    for row, got in zip(rows, results):
        per_frame = []
        for second in _surgclip_centred(int(row.timestamp_s), 60, 16):  # 60 s at 4 fps: frame 4 s at s seconds
            frame = decode_plan(path, FramePlan((4 * second,), (float(second),), "one frame"))
            per_frame.append(cosine_scores(enc.encode_images(frame), t_phase)[0])
            seen.add(second)
        mean = np.mean(per_frame, axis=0)
        best = int(np.argmax(mean))
        assert got["phases"][0] == labels[best]
        assert dict(got["phases"][1]) == pytest.approx({lab: round(float(mean[k]), 6) for k, lab in enumerate(labels)},
                                                       abs=2e-6)
    assert stats.distinct == stats.decoded == stats.encoded_frames == len(seen)


def test_every_distinct_frame_is_decoded_once_and_every_distinct_clip_encoded_once(one_video):
    inputs, rows, path = one_video
    for kind, block in (("image", 5), ("image", 1000), ("video", 17), ("video", 40)):
        enc = FrameProjection()
        enc.kind = kind
        enc.encode_clips = lambda clips, e=enc: e.encode_images(clips[:, clips.shape[1] // 2])
        text = embed_texts(enc, "SynthTree", inputs.prompts["SynthTree"], 8)
        _, stats = Labeller(enc, kind, Setting(), batch_size=3, block_frames=block).label_video(path, rows, text)
        index = video_index(path)
        plans = [plan_frames(index.meta(), CentredClip(r.timestamp_s)).indices for r in rows]
        assert stats.distinct == stats.decoded == len(set().union(*plans)), (kind, block)
        if kind == "image":
            assert stats.encoded_frames == sum(enc.calls) == stats.distinct
        else:
            assert stats.encoded_clips == sum(enc.calls) == len(set(plans))


# ------------------------------------------------------------------ prompts

def test_the_shipped_mipo_prompts_are_tables_6_and_7_one_per_class():
    mipo = shipped_prompts()["MIPO"]
    assert "Table 6" in mipo["source"] and "Table 7" in mipo["source"]
    resolved, notes = resolve_prompts({"MIPO": MIPO}, {"MIPO": ("phases", "steps")})
    assert resolved["MIPO"]["phases"].labels == MIPO.phases and resolved["MIPO"]["steps"].labels == MIPO.steps
    assert all(len(p) == 1 for lp in resolved["MIPO"].values() for p in lp.prompts)
    assert resolved["MIPO"]["phases"].paper and resolved["MIPO"]["steps"].paper and not notes
    fixation = resolved["MIPO"]["phases"].prompts[MIPO.phases.index("fixation")][0]
    assert fixation.startswith("I place the volar locking plate and secure the distal radius fracture with K-wires")


def test_prompt_files_are_checked_against_the_hierarchy(tmp_path, one_video):
    inputs, _, _ = one_video
    h = {ds: hh for ds, (hh, _) in inputs.hierarchies.items()}
    levels = {"SynthTree": ("phases", "steps"), "SynthDAG": ("phases",)}
    resolved, notes = resolve_prompts(h, levels, user={"synthtree": {"phases": {
        "Preparation": ["a", "b"], "dissection": ["c"], "CLOSURE": ["d"]}}, "Cholec80": {}}, user_source="p.json")
    assert resolved["SynthTree"]["phases"].prompts == (("a", "b"), ("c",), ("d",))
    assert resolved["SynthTree"]["steps"].source == "label template '{label}', not the paper's"
    assert set(resolved["SynthDAG"]) == {"phases"}
    assert notes == ["prompts for dataset 'Cholec80' in p.json: not in the data, ignored"]
    scores = np.array([[1.0, 3.0, 5.0, 7.0]])
    assert resolved["SynthTree"]["phases"].class_means(scores).tolist() == [[2.0, 5.0, 7.0]]
    with pytest.raises(DataError) as e:
        resolve_prompts(h, levels, user={"SynthTree": {"phases": {"preparation": ["a"], "dissection": ["b"],
                                                                  "suturing": ["c"]}}}, user_source="p.json")
    text = str(e.value)
    assert "SynthTree: phases: 'suturing' is not a phase of the SynthTree hierarchy" in text
    assert "SynthTree: phases: no prompt for 'closure'" in text
    with pytest.raises(MedHorizonError, match="must contain"):
        resolve_prompts(h, levels, template="a surgical frame")


# ------------------------------------------------------------------ bad input, through the command

def _run(capsys, *args) -> tuple[int, str]:
    status = main(["surghi", "zeroshot", *args])
    return status, capsys.readouterr().err


@pytest.fixture(scope="module")
def items(surghi_sample, tmp_path_factory):
    """Items of two videos of the sample (so each bad-input run is short), its hierarchies beside them."""
    folder = tmp_path_factory.mktemp("zs_items")
    rows = [json.loads(x) for x in surghi_sample.annotations_path.read_text().splitlines()]
    keep = [r for r in rows if r["video"] in ("synthtree_01", "synthdag_01")]
    (folder / "items.jsonl").write_text("".join(json.dumps(r) + "\n" for r in keep))
    (folder / "hierarchies.json").write_text(surghi_sample.hierarchy_path.read_text())
    return folder / "items.jsonl", surghi_sample.video_root


def test_an_encoder_that_breaks_the_interface_gets_one_message_naming_what(items, tmp_path, capsys):
    data, root = items
    common = ["--data", str(data), "--video-root", str(root), "--quiet"]
    cases = {
        "nan_text": ("the step 'exposure' of SynthTree (prompt 'exposure')", ["--encoder-arg", "at=exposure"]),
        "nan_frame": ("encode_images returned NaN or infinity for frame 0 (at 0.00 s) of", []),
        "shape": ("encode_images returned shape (15, 4) for 16 input(s) (frame 0 (at 0.00 s) of", []),
        "dim": ("encode_images returned 5-dimensional embeddings for frame 0", []),
        "no_method": ("(video): no method encode_clips", []),
    }
    for fault, (needle, extra) in cases.items():
        status, err = _run(capsys, "--encoder", "tiny_encoders:BrokenEncoder", "--encoder-arg", f"fault={fault}",
                           *extra, "--out", str(tmp_path / fault), *common, "--batch-size", "16")
        assert status == 2 and needle in err and "Traceback" not in err, (fault, err)
    status, err = _run(capsys, "--encoder", "no_such_encoder", "--out", str(tmp_path / "x"), *common)
    assert status == 2 and "registered: surgclip, synthetic_probe" in err
    status, err = _run(capsys, "--encoder", "tiny_encoders:Nope", "--out", str(tmp_path / "x"), *common)
    assert status == 2 and "module 'tiny_encoders' has no 'Nope'" in err


def test_bad_items_prompts_and_flags_are_named_before_any_model_is_loaded(items, tmp_path, capsys):
    data, root = items
    rows = [json.loads(x) for x in data.read_text().splitlines()]
    rows[3]["phase"] = "exploration"
    bad = tmp_path / "items.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "hierarchies.json").write_text((data.parent / "hierarchies.json").read_text())
    common = ["--encoder", "tiny_encoders:BrokenEncoder", "--encoder-arg", "fault=shape", "--video-root", str(root),
              "--out", str(tmp_path / "o")]
    status, err = _run(capsys, "--data", str(bad), *common)
    assert status == 2 and "frame SynthTree/synthtree_01/10: phase 'exploration' is not a phase of the SynthTree" in err
    prompts = tmp_path / "prompts.json"
    prompts.write_text(json.dumps({"SynthDAG": {"steps": {"inspection": "a", "Stapling": ["b"], "lavage": "c"}}}))
    status, err = _run(capsys, "--data", str(data), "--prompts", str(prompts), *common)
    assert status == 2 and "SynthDAG: steps: 'lavage' is not a step of the SynthDAG hierarchy" in err
    assert "SynthDAG: steps: no prompt for 'dissection', 'anastomosis', 'suturing', 'irrigation'" in err
    status, err = _run(capsys, "--data", str(data), "--frames", "0", *common)
    assert status == 2 and "--frames must be >= 1" in err
    status, err = _run(capsys, "--data", str(data), "--video-root", str(tmp_path), *common[:-4], "--out",
                       str(tmp_path / "o"))
    assert status == 2 and "surghi pre-flight: 2 of 2 videos cannot be used" in err


def test_encoder_specs_and_arguments():
    assert parse_args(["kind=video", "delay=0.5", "flag=true", "path=/a/b", "n=3"]) == \
        {"kind": "video", "delay": 0.5, "flag": True, "path": "/a/b", "n": 3}
    with pytest.raises(MedHorizonError, match="KEY=VALUE"):
        parse_args(["novalue"])
    probe = load_encoder("synthetic_probe", device="cpu", dtype="float32", args={"similarity": "lorentz"})
    assert probe.kind == "image" and probe.similarity == "lorentz"
    with pytest.raises(MedHorizonError, match="checkpoint file /no/such.pt not found"):
        load_encoder("open_clip:ViT-B-16//no/such.pt", device="cpu", dtype="float32")


def test_phase_only_items_are_read(tmp_path):
    p = tmp_path / "items.csv"
    p.write_text("dataset,video,frame,phase,timestamp_s,video_path\nCholec80,v,0,Preparation,0,v.mp4\n")
    assert read_frame_rows(p, role="items")[0].step is None


def test_outputs_found_written_are_reported_by_one_process_only():
    """Two processes that both finish find the outputs written: the one that wrote them printed the report, the
    other one must not print it again (it did, under load); a rerun of a finished run prints it once (rank 0)."""
    from medhorizon_tasks.runs.zeroshot import already_reported

    assert not already_reported((0, 1), {"videos_labelled": 0, "videos_reused": 6})   # one process: it reports
    assert already_reported((0, 2), {"videos_labelled": 3, "videos_reused": 0})       # the other one wrote them
    assert already_reported((1, 2), {"videos_selected": 3, "videos_reused": 0})
    assert not already_reported((0, 2), {"videos_labelled": 0, "videos_reused": 3})   # a rerun: rank 0 reports
    assert already_reported((1, 2), {"videos_labelled": 0, "videos_reused": 3})
