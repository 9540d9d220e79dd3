"""The oracle row (issue 27, item 2; issue 40, item 4): every one of the release's own evidence images when a
record lists them, however many (MedHorizon section 8 RQ2); otherwise the package's fallback, the evidence
windows' 1 FPS frames uniformly thinned to the cap when more; the report gives the distribution of frames per
item, and per kind (listed images, windows fallback, whole-video fallback)."""

import json

import pytest

from medhorizon_tasks.benchmarks.medhorizon import scoring
from medhorizon_tasks.benchmarks.medhorizon.protocol import FrameSetting, plan_for
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.core.errors import DataError
from medhorizon_tasks.core.sampling import VideoMeta, fps_candidates


def _release(tmp_path, evidences):
    """A 2-hour, 25 fps video with one PR question per evidence given (phase-length windows included)."""
    qa = [{"uid": k, "question": "Which phase?", "options": ["a", "b", "c", "d"], "answer": "A", "task_id": "PR",
           "evidence": ev} for k, ev in enumerate(evidences)]
    rec = {"key": "v", "dataset": "MultiBypass", "video_path": "v.mp4", "num_frames": 180000, "fps": 25.0,
           "duration_seconds": 7200.0, "qa": qa}
    p = tmp_path / "release.jsonl"
    p.write_text(json.dumps(rec) + "\n", encoding="utf-8")
    return load_release(p)


PHASES = [
    {"support": "local", "frame_windows": [[0, 179999]]},                      # the whole video: 7,200 grid frames
    {"support": "local", "frame_windows": [[25000, 75000], [100000, 150000]]},  # two phases: 4,002
    {"support": "local", "frame_windows": [[500, 1500]]},                       # 41 s: below every cap here but 8
    {"support": "local", "frame_windows": [[1000, 1000]]},                      # one frame
]


@pytest.mark.parametrize("cap", [8, 64, 256])
def test_oracle_frame_counts_never_exceed_the_cap(tmp_path, cap):
    items = _release(tmp_path, PHASES)
    meta = VideoMeta(180000, 25.0)
    grid = set(int(i) for i in fps_candidates(meta, 1.0))
    counts = []
    for it in items:
        plan = plan_for(it, FrameSetting(mode="oracle", cap=cap))
        inside = [i for i in sorted(grid) if any(a <= i <= b for a, b in it.evidence_windows)]
        assert len(plan) <= cap
        assert len(plan) == min(len(inside), cap) or len(inside) == 0
        assert set(plan.indices) <= set(inside) or len(inside) == 0
        if len(inside) > cap:  # thinned uniformly: first and last evidence frames kept
            assert plan.indices[0] == inside[0] and plan.indices[-1] == inside[-1]
        counts.append(len(plan))
    records = [scoring.record_for(it, "A", "oracle", None, n) for it, n in zip(items, counts)]
    rep = scoring.report(records)
    assert rep["oracle_frames"]["max"] <= cap and rep["oracle_frames"]["n"] == len(items)
    assert sum(rep["oracle_frames"]["counts"].values()) == len(items)
    assert any(line.startswith("oracle frames per item (n 4): min 1") for line in scoring.fallback_lines(rep))


def test_the_phase_length_windows_were_larger_than_the_cap(tmp_path):
    """What the cap is for: without it the first item would be shown 7,200 frames."""
    it = _release(tmp_path, PHASES)[0]
    assert len(fps_candidates(VideoMeta(180000, 25.0), 1.0)) == 7200
    assert len(plan_for(it, FrameSetting(mode="oracle", cap=64))) == 64


def test_a_records_own_evidence_images_are_shown_exactly(tmp_path):
    images = [250, 2500, 90000, 179975]
    many = list(range(0, 180000, 1000))  # 180 images, more than the cap
    a, b = _release(tmp_path, [{"support": "local", "frame_windows": [[0, 179999]], "images": images},
                               {"images": [{"frame": f} for f in many]}])
    assert a.evidence_frames == tuple(images) and b.evidence_support == "local"
    plan = plan_for(a, FrameSetting(mode="oracle", cap=64))
    assert plan.indices == tuple(images)  # the listed images, not the window's 7,200 grid frames
    assert plan.policy == "oracle(images)"
    every = plan_for(b, FrameSetting(mode="oracle", cap=64))  # more images than the cap: every one, as the paper
    assert every.indices == tuple(many) and len(every) == 180
    assert scoring.record_for(a, "A", "oracle", None)["oracle_frames"] == 4  # planned on the data by default
    assert scoring.record_for(b, "A", "oracle", None)["oracle_frames"] == 180
    assert scoring.record_for(a, "A", "oracle", "video missing")["oracle_frames"] == 0


def test_the_report_says_what_each_kind_of_item_was_shown(tmp_path):
    """Listed images (the paper's oracle) apart from the package's two fallbacks, each with its frames
    min / median / max; the cap bounds the fallbacks only."""
    items = _release(tmp_path, [{"images": [100, 2000, 9000]},                              # 3 images
                                {"images": list(range(0, 100000, 1000))},                    # 100 images
                                {"support": "local", "frame_windows": [[0, 179999]]},        # windows: 7,200 -> 64
                                {"support": "local", "frame_windows": [[500, 1500]]},        # windows: 41
                                {"support": "global"}])                                      # no evidence: 64
    records = [scoring.record_for(it, "A", "oracle", None) for it in items]
    assert [r["oracle_source"] for r in records] == ["images", "images", "windows", "windows", "fps_cap"]
    assert [r["oracle_frames"] for r in records] == [3, 100, 64, 41, 64]
    rep = scoring.report(records)
    assert rep["oracle_sources"] == {"images": {"n": 2, "min": 3, "median": 51.5, "max": 100},
                                     "windows": {"n": 2, "min": 41, "median": 52.5, "max": 64},
                                     "fps_cap": {"n": 1, "min": 64, "median": 64, "max": 64}}
    lines = scoring.fallback_lines(rep)
    assert ("oracle: 2 items shown the release's listed evidence images, every one (the paper's oracle): "
            "frames min 3 / median 51.5 / max 100") in lines
    assert ("oracle: 2 items shown the package's fallback: the evidence windows' 1 FPS frames, thinned to the cap: "
            "frames min 41 / median 52.5 / max 64") in lines
    assert any(line.startswith("oracle: 1 item shown the package's fallback: no evidence listed") for line in lines)
    assert plan_for(items[2], FrameSetting(mode="oracle", cap=64)).policy == \
        "oracle(windows_fallback,fps=1,cap=64)"
    assert "oracle_sources" not in scoring.report([scoring.record_for(it, "A", "visual", None) for it in items])


def test_bad_evidence_images_name_the_item_and_field(tmp_path):
    with pytest.raises(DataError) as e:
        _release(tmp_path, [{"images": [12, "frame_0042.jpg"]}])
    assert "item 0: field 'evidence.images'" in str(e.value) and "frame_0042.jpg" in str(e.value)


def test_a_release_without_evidence_images_keeps_its_data_version(tmp_path):
    """``evidence_frames`` joined the item records later: the version of a release that lists no images is the
    hash of the records as they were; listing images makes it another version."""
    from medhorizon_tasks.benchmarks.data import BenchmarkData, canonical_content, hash_content

    plain, with_images = _release(tmp_path, [{"support": "local", "frame_windows": [[0, 100]]},
                                             {"support": "local", "frame_windows": [[0, 100]], "images": [50]}])
    content = canonical_content(BenchmarkData("medhorizon", "x", [plain.uid], items=[plain]))
    old = plain.to_record()
    del old["evidence_frames"]
    assert content["items"] == [old]
    assert hash_content(content) == hash_content({"benchmark": "medhorizon", "scheme": 1, "items": [old]})
    assert "evidence_frames" in canonical_content(BenchmarkData("medhorizon", "x", [with_images.uid],
                                                                items=[with_images]))["items"][0]
