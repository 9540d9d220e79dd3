"""Frame admission: the paper's rule (appendix 7.1), exactly, as properties and worked examples."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medhorizon_tasks.core.sampling import (
    FpsCap,
    Oracle,
    Uniform,
    VideoMeta,
    fps_candidates,
    perturb,
    plan_frames,
    uniform_subsample,
)

video_fps = st.sampled_from([1.0, 2.0, 5.0, 12.5, 23.976, 25.0, 29.97, 30.0, 50.0, 60.0])


@st.composite
def videos(draw):
    fps = draw(video_fps)
    seconds = draw(st.floats(min_value=0.05, max_value=37.2 * 3600))
    return VideoMeta(max(1, int(seconds * fps)), fps)


@settings(max_examples=300, deadline=None)
@given(videos(), st.integers(min_value=1, max_value=2000), st.sampled_from([0.5, 1.0, 2.0]))
def test_fps_cap_properties(meta, cap, sample_fps):
    cands = fps_candidates(meta, sample_fps)
    plan = plan_frames(meta, FpsCap(sample_fps, cap))
    idx = np.array(plan.indices)
    assert len(cands) >= 1
    assert len(plan) == min(cap, len(cands))
    assert np.all(np.diff(idx) > 0), "chronological, no repeats"
    assert idx[0] >= 0 and idx[-1] < meta.num_frames
    assert set(plan.indices) <= set(cands.tolist()), "only frames on the fps grid"
    assert plan.indices[0] == cands[0]
    if cap >= 2:
        assert plan.indices[-1] == cands[-1], "last candidate kept: never a prefix"
    assert plan == plan_frames(meta, FpsCap(sample_fps, cap)), "deterministic"
    assert len(plan.timestamps) == len(plan)
    assert all(abs(t - i / meta.fps) < 1e-5 for i, t in zip(plan.indices, plan.timestamps))


def test_candidates_one_per_second_of_the_whole_video():
    meta = VideoMeta(250, 25.0)  # 10 s
    assert fps_candidates(meta, 1.0).tolist() == [0, 25, 50, 75, 100, 125, 150, 175, 200, 225]
    # 29.97 fps: the first frame at or after each whole second
    meta = VideoMeta(300, 29.97)
    c = fps_candidates(meta, 1.0)
    assert c.tolist()[:4] == [0, 30, 60, 90] and len(c) == 11 - 1  # frames 0..299 span 0..9.98 s


def test_cap_keeps_uniformly_spaced_candidates_first_to_last():
    cands = np.arange(0, 7200)  # a 2 h video at 1 FPS
    kept = uniform_subsample(cands, 64)
    assert len(kept) == 64 and kept[0] == 0 and kept[-1] == 7199
    gaps = np.diff(kept)
    assert gaps.max() - gaps.min() <= 1, "uniform spacing up to rounding"


def test_small_video_keeps_every_candidate():
    meta = VideoMeta(10 * 30, 30.0)  # 10 s
    plan = plan_frames(meta, FpsCap(1.0, 64))
    assert len(plan) == 10


def test_37_hour_video_covers_its_whole_extent():
    meta = VideoMeta(int(37.2 * 3600 * 25), 25.0)
    plan = plan_frames(meta, FpsCap(1.0, 1248))
    assert len(plan) == 1248
    assert plan.timestamps[0] == 0.0
    assert plan.timestamps[-1] >= 37.2 * 3600 - 1.0
    assert max(np.diff(plan.timestamps)) < 37.2 * 3600 / 1247 + 1.0


def _prefix_planner(meta, cap):
    """What a prefix-truncating loader does: the first ``cap`` candidates."""
    return fps_candidates(meta, 1.0)[:cap]


def test_prefix_truncation_misses_late_evidence_and_the_rule_does_not():
    # A one-hour video at 2 fps with a 4-second evidence window in its last tenth.
    meta = VideoMeta(3600 * 2, 2.0)
    window = (int(3400 * 2), int(3404 * 2))
    hit = lambda idx: any(window[0] <= i <= window[1] for i in idx)  # noqa: E731
    assert not hit(_prefix_planner(meta, 1248))
    assert hit(plan_frames(meta, FpsCap(1.0, 1248)).indices)


def test_uniform_fixed_budget_over_the_decoded_sequence():
    meta = VideoMeta(1001, 25.0)
    plan = plan_frames(meta, Uniform(5))
    assert plan.indices == (0, 250, 500, 750, 1000)
    assert plan_frames(VideoMeta(3, 25.0), Uniform(8)).indices == (0, 1, 2)


@settings(max_examples=200, deadline=None)
@given(videos(), st.integers(min_value=1, max_value=512))
def test_uniform_properties(meta, n):
    plan = plan_frames(meta, Uniform(n))
    assert len(plan) == min(n, meta.num_frames)
    assert list(plan.indices) == sorted(set(plan.indices))
    assert plan.indices[0] == 0
    if n >= 2:
        assert plan.indices[-1] == meta.num_frames - 1


def test_oracle_takes_grid_points_inside_windows_and_middle_of_narrow_ones():
    meta = VideoMeta(25 * 600, 25.0)  # 10 min at 25 fps
    plan = plan_frames(meta, Oracle(((100.0, 104.0), (280.4, 280.8))))
    # 1 FPS grid points 2500, 2525, 2550, 2575, 2600 (100-104 s) in the first window; the second is
    # narrower than one second and contributes the frame nearest its middle (280.6 s = frame 7015).
    assert plan.indices == (2500, 2525, 2550, 2575, 2600, 7015)
    assert plan.policy.startswith("oracle")


def test_oracle_without_windows_falls_back_to_the_fps_cap_rule_and_says_so():
    meta = VideoMeta(25 * 600, 25.0)
    plan = plan_frames(meta, Oracle((), fallback_cap=16))
    assert plan.indices == plan_frames(meta, FpsCap(1.0, 16)).indices
    assert "no_windows" in plan.policy


def test_variable_frame_rate_uses_real_timestamps():
    times = tuple(np.cumsum([0.0] + [0.02] * 100 + [0.1] * 50)[:-1].tolist())  # 50 fps then 10 fps
    meta = VideoMeta(len(times), 30.0, frame_times=times)
    c = fps_candidates(meta, 1.0)
    # first frame at or after t = 0, 1, 2, ... seconds
    for k, i in enumerate(c):
        assert times[i] >= k - 1e-6 and (i == 0 or times[i - 1] < k - 1e-6)


def test_plan_key_is_stable_and_depends_on_frames():
    meta = VideoMeta(7200, 1.0)
    a, b = plan_frames(meta, FpsCap(1.0, 64)), plan_frames(meta, FpsCap(1.0, 64))
    assert a.key == b.key
    assert a.key != plan_frames(meta, FpsCap(1.0, 128)).key


@pytest.mark.parametrize("bad", [0, -3])
def test_bad_cap_is_rejected(bad):
    with pytest.raises(ValueError):
        plan_frames(VideoMeta(100, 25.0), FpsCap(1.0, bad))


def test_clip_frames_are_up_to_eight_of_the_clips_own_frames():
    """Sureon (appendix D.1): "uniformly sample up to 8 frames across its duration at the video's frame rate,
    clamped to a minimum of 4" -- over the clip's own frames, not a 1 FPS grid."""
    from medhorizon_tasks.core.sampling import Clip

    # 4 fps, clip [1, 3] s: own frames 4..12 (nine); a 1 FPS grid has only 1, 2, 3 s (three points)
    p = plan_frames(VideoMeta(40, 4.0), Clip(1.0, 3.0))
    assert p.indices == (4, 5, 6, 7, 9, 10, 11, 12)  # positions round(linspace(0, 8, 8)), half up
    assert p.timestamps == (1.0, 1.25, 1.5, 1.75, 2.25, 2.5, 2.75, 3.0)
    meta = VideoMeta(25 * 600, 25.0)
    five = plan_frames(meta, Clip(10.0, 15.0))  # a 5 s clip: 8 frames (the 1 FPS grid gave 6)
    assert len(five) == 8 and (five.timestamps[0], five.timestamps[-1]) == (10.0, 15.0)
    own = np.arange(250, 376)
    assert five.indices == tuple(int(i) for i in own[np.floor(np.linspace(0, 125, 8) + 0.5).astype(int)])
    assert len(plan_frames(meta, Clip(20.0, 21.0))) == 8  # 26 own frames (the grid gave 2, topped up to 4)
    long_clip = plan_frames(meta, Clip(100.0, 160.0))
    assert len(long_clip) == 8 and long_clip.timestamps[0] == 100.0 and long_clip.timestamps[-1] == 160.0
    # between 4 and 8 own frames: all of them
    assert plan_frames(VideoMeta(40, 4.0), Clip(1.0, 2.25)).indices == (4, 5, 6, 7, 8, 9)
    assert plan_frames(VideoMeta(40, 4.0), Clip(1.0, 1.75)).indices == (4, 5, 6, 7)
    # variable frame rate: the frames whose own timestamps fall inside the clip
    vfr = VideoMeta(10, 4.0, frame_times=(0.0, 0.1, 0.5, 0.6, 0.65, 0.7, 0.9, 1.6, 1.7, 2.0))
    assert plan_frames(vfr, Clip(0.5, 1.7)).indices == (2, 3, 4, 5, 6, 7, 8)
    with pytest.raises(ValueError, match="holds no frame"):
        plan_frames(meta, Clip(700.0, 710.0))


def test_clip_frames_are_clamped_to_at_least_four():
    """A clip of fewer than 4 frames still gives 4 (its frames spread over them, some shown twice)."""
    from medhorizon_tasks.core.sampling import Clip

    two = plan_frames(VideoMeta(40, 2.0), Clip(3.0, 3.5))  # frames 6 and 7 only
    assert two.indices == (6, 6, 7, 7) and two.timestamps == (3.0, 3.0, 3.5, 3.5)
    assert two.policy.endswith("->repeat")
    three = plan_frames(VideoMeta(40, 4.0), Clip(1.0, 1.5))  # frames 4, 5, 6
    assert three.indices == (4, 5, 5, 6)
    one = plan_frames(VideoMeta(40, 4.0), Clip(1.0, 1.1))
    assert one.indices == (4, 4, 4, 4)
    assert "->repeat" not in plan_frames(VideoMeta(40, 4.0), Clip(1.0, 3.0)).policy


def test_redaction_is_part_of_the_plan_key():
    """Blurred and raw frames of the same indices must never share a cache entry or frame folder."""
    from medhorizon_tasks.core.sampling import Clip

    raw = plan_frames(VideoMeta(40, 4.0), Clip(1.0, 3.0))
    blurred = raw.with_redaction("blur(text=x)")
    other = raw.with_redaction("blur(text=y)")
    assert blurred.indices == raw.indices and blurred.timestamps == raw.timestamps
    assert len({raw.key, blurred.key, other.key}) == 3
    assert blurred.with_redaction("").key == raw.key, "a raw plan keeps the key it always had"
    assert perturb(blurred, "reverse").redaction == "blur(text=x)", "an order perturbation keeps the pass"
