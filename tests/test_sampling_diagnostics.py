"""The paper's diagnostic samplers: order perturbations (RQ3) and frame-change / hybrid sampling (RQ4)."""

from fractions import Fraction

import av
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medhorizon_tasks.core.errors import VideoError
from medhorizon_tasks.core.sampling import (
    PERTURBATION_KINDS,
    ChangeSignal,
    FpsCap,
    FrameChange,
    FramePlan,
    Hybrid,
    Perturbation,
    VideoMeta,
    fps_candidates,
    perturb,
    plan_frames,
)
from medhorizon_tasks.core.video.frame_change import change_signal, small_size

HOUR = VideoMeta(3600 * 25, 25.0)  # one hour at 25 fps: 3600 candidates on the 1 FPS grid


@pytest.fixture(scope="module")
def plan256():
    return plan_frames(HOUR, FpsCap(1.0, 256))


def _plan(n: int) -> FramePlan:
    return FramePlan(tuple(range(0, 10 * n, 10)), tuple(float(i) for i in range(n)), "test")


# ------------------------------------------------------------------ perturbations

@pytest.mark.parametrize("kind", PERTURBATION_KINDS)
def test_perturbations_are_permutations_with_timestamps_attached(plan256, kind):
    out = perturb(plan256, kind, seed=3)
    assert sorted(out.indices) == list(plan256.indices)
    assert len(out) == len(plan256)
    pairs = dict(zip(plan256.indices, plan256.timestamps))
    assert all(pairs[i] == t for i, t in zip(out.indices, out.timestamps)), "timestamps travel with frames"
    assert out == perturb(plan256, kind, seed=3), "deterministic for a seed"


def test_original_is_the_plan_itself(plan256):
    assert perturb(plan256, "original", seed=5) is plan256


def test_reverse_is_the_exact_reverse(plan256):
    out = perturb(plan256, "reverse")
    assert out.indices == plan256.indices[::-1]
    assert out.timestamps == plan256.timestamps[::-1]
    assert out.policy == "fps_cap(fps=1,cap=256)|reverse"


@pytest.mark.parametrize("kind", ["block_shuffle", "local_shuffle"])
def test_different_seeds_give_different_orders(plan256, kind):
    orders = {perturb(plan256, kind, seed=s).indices for s in range(6)}
    assert len(orders) == 6
    assert all(o != plan256.indices for o in orders)


def test_policy_string_records_kind_parameter_and_seed(plan256):
    assert perturb(plan256, "block_shuffle").policy == "fps_cap(fps=1,cap=256)|block_shuffle(blocks=8,seed=0)"
    assert perturb(plan256, "local_shuffle", window=16, seed=7).policy == \
        "fps_cap(fps=1,cap=256)|local_shuffle(window=16,seed=7)"


def _blocks_of(n, blocks):
    sizes = [len(b) for b in np.array_split(np.arange(n), min(blocks, n))]
    starts = np.cumsum([0] + sizes[:-1])
    return [tuple(range(s, s + z)) for s, z in zip(starts, sizes)]


def test_block_shuffle_moves_whole_contiguous_blocks(plan256):
    out = perturb(plan256, "block_shuffle", blocks=8, seed=0)
    pos = {i: k for k, i in enumerate(plan256.indices)}
    order = [pos[i] for i in out.indices]  # old position shown at each new position
    blocks = _blocks_of(256, 8)
    assert all(len(b) == 32 for b in blocks)
    # every block appears contiguously and intact
    flat = [tuple(order[s:s + 32]) for s in range(0, 256, 32)]
    assert sorted(flat) == sorted(blocks)
    assert flat != blocks


def test_block_sizes_are_near_equal_when_not_divisible():
    plan = _plan(19)
    out = Perturbation("block_shuffle", blocks=4, seed=1).order(19)
    blocks = _blocks_of(19, 4)
    assert [len(b) for b in blocks] == [5, 5, 5, 4]
    # the new order is a concatenation of the original blocks
    rest, used = list(out), []
    while rest:
        b = next(b for b in blocks if tuple(rest[:len(b)]) == b)
        used.append(b)
        rest = rest[len(b):]
    assert sorted(used) == sorted(blocks) and used != blocks
    assert perturb(plan, "block_shuffle", blocks=4, seed=1).indices == tuple(plan.indices[k] for k in out)


def test_local_shuffle_keeps_each_frame_in_its_window(plan256):
    out = perturb(plan256, "local_shuffle", window=16, seed=0)
    pos = {i: k for k, i in enumerate(plan256.indices)}
    for new_k, i in enumerate(out.indices):
        assert pos[i] // 16 == new_k // 16
    for w in range(0, 256, 16):
        assert out.indices[w:w + 16] != plan256.indices[w:w + 16], "every window is permuted"


def test_shuffles_are_never_the_identity_even_when_tiny():
    for seed in range(200):
        assert perturb(_plan(2), "block_shuffle", blocks=8, seed=seed).indices == (10, 0)
        assert perturb(_plan(2), "local_shuffle", window=16, seed=seed).indices == (10, 0)
        assert perturb(_plan(5), "block_shuffle", blocks=2, seed=seed).indices == (30, 40, 0, 10, 20)
    # a last window of one frame cannot move
    assert perturb(_plan(5), "local_shuffle", window=2, seed=0).indices[4] == 40
    assert perturb(_plan(1), "block_shuffle").indices == (0,)
    assert perturb(_plan(0), "local_shuffle").indices == ()


def test_pinned_orders_reproducible_across_machines():
    # Pinned for numpy's PCG64 default_rng: if these change, earlier perturbation runs are not comparable.
    plan = FramePlan(tuple(range(16)), tuple(float(i) for i in range(16)), "x")
    assert perturb(plan, "block_shuffle", blocks=4, seed=0).indices == (
        12, 13, 14, 15, 8, 9, 10, 11, 4, 5, 6, 7, 0, 1, 2, 3)
    assert perturb(plan, "block_shuffle", blocks=4, seed=1).indices == (
        8, 9, 10, 11, 0, 1, 2, 3, 12, 13, 14, 15, 4, 5, 6, 7)
    assert perturb(plan, "local_shuffle", window=4, seed=0).indices == (
        3, 2, 1, 0, 6, 7, 4, 5, 11, 8, 10, 9, 13, 15, 14, 12)


def test_perturbation_value_and_validation(plan256):
    p = Perturbation("local_shuffle", seed=2, window=8)
    assert p.apply(plan256) == perturb(plan256, "local_shuffle", seed=2, window=8)
    assert p.describe() == "local_shuffle(window=8,seed=2)"
    assert Perturbation("reverse").describe() == "reverse"
    assert Perturbation("block_shuffle").describe() == "block_shuffle(blocks=8,seed=0)"
    assert hash(p) == hash(Perturbation("local_shuffle", seed=2, window=8))
    for bad in (dict(kind="shuffle"), dict(kind="reverse", seed=-1), dict(kind="block_shuffle", blocks=0),
                dict(kind="local_shuffle", window=0)):
        with pytest.raises(ValueError):
            Perturbation(**bad)
    with pytest.raises(ValueError):
        perturb(plan256, "sideways")


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 300), st.sampled_from(["reverse", "block_shuffle", "local_shuffle"]),
       st.integers(0, 2**32), st.integers(1, 40), st.integers(1, 40))
def test_perturbation_properties(n, kind, seed, blocks, window):
    plan = _plan(n)
    out = perturb(plan, kind, seed=seed, blocks=blocks, window=window)
    assert sorted(out.indices) == list(plan.indices)
    assert out == perturb(plan, kind, seed=seed, blocks=blocks, window=window)
    moves = {"reverse": n >= 2, "block_shuffle": n >= 2 and blocks >= 2, "local_shuffle": n >= 2 and window >= 2}
    if moves[kind]:
        assert out.indices != plan.indices
    else:
        assert out.indices == plan.indices
    if kind == "local_shuffle":
        assert all(i // 10 // window == k // window for k, i in enumerate(out.indices))


# ------------------------------------------------------------------ frame-change sampling

def _signal(spikes: dict[float, float], every: float = 2.0, duration: float = 3600.0, base: float = 0.5):
    """Keyframe-like signal every ``every`` s with a low background and planted spikes."""
    pts = {round(t, 6): base for t in np.arange(0.0, duration, every)}
    pts[0.0] = 0.0
    pts.update(spikes)
    times = sorted(pts)
    return ChangeSignal(tuple(times), tuple(pts[t] for t in times))


def test_frame_change_picks_the_planted_change_points():
    sig = _signal({100.2: 50.0, 1234.7: 80.0, 2500.0: 30.0, 3000.5: 60.0})
    plan = plan_frames(HOUR, FrameChange(4, sig))
    # nearest 1 FPS candidates: 100 s, 1235 s, 2500 s, 3000.5 s is equally near 3000 and 3001 -> the earlier
    assert plan.indices == (100 * 25, 1235 * 25, 2500 * 25, 3000 * 25)
    assert plan.timestamps == (100.0, 1235.0, 2500.0, 3000.0)
    assert plan.policy == "frame_change(n=4)"
    top2 = plan_frames(HOUR, FrameChange(2, sig))
    assert top2.indices == (1235 * 25, 3000 * 25), "highest scores first"


def test_frame_change_takes_the_next_best_point_when_a_candidate_is_taken():
    sig = _signal({100.1: 90.0, 100.3: 80.0, 700.0: 70.0})
    assert plan_frames(HOUR, FrameChange(2, sig)).indices == (100 * 25, 700 * 25)


def test_frame_change_ties_go_to_the_earlier_point():
    sig = _signal({500.0: 40.0, 1500.0: 40.0, 2500.0: 40.0})
    assert plan_frames(HOUR, FrameChange(2, sig)).indices == (500 * 25, 1500 * 25)


def test_static_or_short_signal_is_filled_uniformly_and_says_so():
    flat = ChangeSignal((0.0, 10.0, 20.0), (0.0, 0.0, 0.0))
    plan = plan_frames(HOUR, FrameChange(8, flat))
    assert plan.indices == plan_frames(HOUR, FpsCap(1.0, 8)).indices
    assert plan.policy == "frame_change(n=8)->uniform_fill(8)"
    one = ChangeSignal((0.0, 1800.0), (0.0, 5.0))
    plan = plan_frames(HOUR, FrameChange(3, one))
    assert 1800 * 25 in plan.indices and len(set(plan.indices)) == 3
    assert plan.policy.endswith("uniform_fill(2)")


def test_hybrid_is_uniform_half_plus_change_half():
    sig = _signal({100.2: 50.0, 1234.7: 80.0, 2500.0: 30.0, 3000.5: 60.0})
    plan = plan_frames(HOUR, Hybrid(8, sig))
    uniform4 = plan_frames(HOUR, FpsCap(1.0, 4)).indices
    assert set(uniform4) <= set(plan.indices)
    assert plan.indices[0] == 0 and plan.indices[-1] == 3599 * 25, "first and last candidate"
    assert {100 * 25, 1235 * 25, 2500 * 25, 3000 * 25} <= set(plan.indices)
    assert len(plan) == 8 and list(plan.indices) == sorted(set(plan.indices))
    assert plan.policy == "hybrid(n=8)"
    # odd budget: the uniform half gets the extra frame (ceil)
    odd = plan_frames(HOUR, Hybrid(5, sig))
    assert Hybrid(5, sig).n_uniform == 3
    assert set(plan_frames(HOUR, FpsCap(1.0, 3)).indices) <= set(odd.indices)
    assert {1235 * 25, 3000 * 25} <= set(odd.indices) and len(odd) == 5


def test_hybrid_skips_change_points_the_uniform_half_already_has():
    # the best change point sits on the first candidate, which the uniform half already took
    sig = _signal({0.2: 99.0, 777.0: 10.0})
    plan = plan_frames(HOUR, Hybrid(4, sig))
    assert len(plan) == 4 and 777 * 25 in plan.indices and 0 in plan.indices


def test_short_video_gives_every_candidate():
    meta = VideoMeta(20 * 30, 30.0)  # 20 s
    sig = ChangeSignal((0.0, 5.0), (0.0, 9.0))
    cands = tuple(fps_candidates(meta, 1.0).tolist())
    assert plan_frames(meta, FrameChange(32, sig)).indices == cands
    assert plan_frames(meta, Hybrid(64, sig)).indices == cands


def test_policies_describe_and_validate():
    sig = ChangeSignal((0.0,), (0.0,))
    assert FrameChange(32, sig).describe() == "frame_change(n=32)"
    assert Hybrid(64, sig).describe() == "hybrid(n=64)"
    assert FrameChange(32, sig, fps=2.0).describe() == "frame_change(n=32,fps=2)"
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError):
            FrameChange(bad, sig)
        with pytest.raises(ValueError):
            Hybrid(bad, sig)
    with pytest.raises(TypeError):
        FrameChange(4, [(0.0, 1.0)])
    with pytest.raises(ValueError):
        ChangeSignal((0.0, 1.0), (0.0,))
    with pytest.raises(ValueError):
        ChangeSignal((1.0, 1.0), (0.0, 1.0))
    with pytest.raises(ValueError):
        ChangeSignal((0.0, 1.0), (0.0, -1.0))
    assert ChangeSignal([0, 1], [0, 2]) == ChangeSignal((0.0, 1.0), (0.0, 2.0), method="other")


@st.composite
def signals(draw, duration):
    k = draw(st.integers(0, 60))
    times = sorted(set(draw(st.lists(st.floats(0, duration * 1.1, allow_nan=False), min_size=k, max_size=k))))
    scores = draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, 5.5, 9.0]), min_size=len(times), max_size=len(times)))
    return ChangeSignal(tuple(times), tuple(scores))


@settings(max_examples=200, deadline=None)
@given(st.data(), st.sampled_from([1.0, 12.5, 25.0, 29.97]), st.floats(0.5, 3 * 3600),
       st.integers(1, 300), st.sampled_from([FrameChange, Hybrid]))
def test_change_policy_properties(data, fps, seconds, n, policy_cls):
    meta = VideoMeta(max(1, int(seconds * fps)), fps)
    sig = data.draw(signals(seconds))
    cands = fps_candidates(meta, 1.0)
    plan = plan_frames(meta, policy_cls(n, sig))
    idx = list(plan.indices)
    assert idx == sorted(set(idx)), "chronological, distinct"
    assert len(idx) == min(n, len(cands))
    assert set(idx) <= set(cands.tolist()) and 0 <= idx[0] and idx[-1] < meta.num_frames
    assert plan == plan_frames(meta, policy_cls(n, sig))
    if policy_cls is Hybrid and n >= 3 and len(cands) > n:
        assert idx[0] == cands[0] and idx[-1] == cands[-1]


# ------------------------------------------------------------------ change_signal on real video

CUTS = ((10.5, 180), (25.0, 100), (40.25, 220))


def _write_scenes(path, *, gop: int, fps: int = 12, seconds: int = 50, size=(64, 48)):
    """Static grey scenes with abrupt cuts at CUTS (seconds); x264 scene-cut keyframes disabled."""
    tex = np.random.default_rng(1).integers(-10, 10, (size[1], size[0], 1))
    with av.open(str(path), "w", format="mp4") as c:
        s = c.add_stream("libx264", rate=Fraction(fps),
                         options={"g": str(gop), "sc_threshold": "0", "crf": "20", "preset": "ultrafast"})
        s.width, s.height, s.pix_fmt = size[0], size[1], "yuv420p"
        for i in range(seconds * fps):
            level = 60
            for t, lv in CUTS:
                if i / fps >= t:
                    level = lv
            img = np.clip(level + tex, 0, 255).astype(np.uint8).repeat(3, axis=2)
            f = av.VideoFrame.from_ndarray(img, format="rgb24")
            f.pts, f.time_base = i, Fraction(1, fps)
            for p in s.encode(f):
                c.mux(p)
        for p in s.encode(None):
            c.mux(p)
    return path


@pytest.fixture(scope="module")
def scene_videos(tmp_path_factory):
    d = tmp_path_factory.mktemp("scenes")
    return {"gop12": _write_scenes(d / "gop12.mp4", gop=12), "onekey": _write_scenes(d / "onekey.mp4", gop=100000)}


def _top_times(sig, k=3):
    order = np.argsort(-np.asarray(sig.scores), kind="stable")[:k]
    return sorted(sig.times[j] for j in order)


def test_change_signal_from_keyframes_finds_the_cuts(scene_videos):
    sig = change_signal(scene_videos["gop12"], side=32)
    assert sig.method == "keyframes(side=32)"
    assert len(sig) == 50 and sig.times[0] == 0.0 and sig.scores[0] == 0.0  # one keyframe per second
    assert all(b > a for a, b in zip(sig.times, sig.times[1:]))
    for found, (cut, _) in zip(_top_times(sig), CUTS):
        assert cut <= found <= cut + 1.0, (found, cut)  # the first keyframe showing the new scene
    # the cuts are far above the encoding noise of the static scenes
    top, rest = sorted(sig.scores)[-3:], sorted(sig.scores)[:-3]
    assert min(top) > 10 * max(rest) + 1
    plan = plan_frames(VideoMeta(50 * 12, 12.0), FrameChange(3, sig))
    assert [t for t in plan.timestamps] == [11.0, 25.0, 41.0]


def test_change_signal_falls_back_to_steps_without_keyframes(scene_videos):
    sig = change_signal(scene_videos["onekey"], side=32, fallback_step_s=2.0)
    assert sig.method.startswith("step(step=2s")
    assert len(sig) == 25
    for found, (cut, _) in zip(_top_times(sig), CUTS):
        assert cut <= found <= cut + 2.0, (found, cut)


def test_missing_or_unreadable_video_is_a_video_error_naming_uid_and_path(tmp_path):
    missing = tmp_path / "nope.mp4"
    with pytest.raises(VideoError) as e:
        change_signal(missing, uid="q17")
    assert "q17" in str(e.value) and str(missing) in str(e.value)
    assert e.value.uid == "q17" and e.value.path == str(missing)
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"not a video at all" * 100)
    with pytest.raises(VideoError) as e:
        change_signal(junk, uid=42)
    assert "42" in str(e.value) and str(junk) in str(e.value)


def test_small_size_keeps_aspect():
    assert small_size(1920, 1080, 32) == (32, 18)
    assert small_size(480, 640, 32) == (24, 32)
    assert small_size(4000, 10, 32) == (32, 1)
