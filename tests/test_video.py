"""Decoding exactly the planned frames, and clear per-item errors for broken videos."""

import importlib.util
import re
import sys
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

from medhorizon_tasks.errors import VideoError
from medhorizon_tasks.sampling import FpsCap, FramePlan, Uniform, VideoMeta, plan_frames
from medhorizon_tasks.video import VideoIndex, decode_plan, index_video, output_size


def _write(path, n, fps=25, size=(64, 48), gop=12, bframes=2, codec="libx264"):
    rng = np.random.default_rng(0)
    with av.open(str(path), "w", format="mp4") as c:
        s = c.add_stream(codec, rate=Fraction(fps), options={"g": str(gop), "bf": str(bframes), "crf": "20"})
        s.width, s.height, s.pix_fmt = size[0], size[1], "yuv420p"
        base = rng.integers(0, 255, (size[1], size[0], 3), dtype=np.uint8)
        for i in range(n):
            img = np.roll(base, i, axis=1)
            img[:8, :8] = (i * 7) % 256
            f = av.VideoFrame.from_ndarray(img, format="rgb24")
            f.pts = i
            f.time_base = Fraction(1, fps)
            for p in s.encode(f):
                c.mux(p)
        for p in s.encode(None):
            c.mux(p)
    return path


def _full_decode(path):
    with av.open(str(path)) as c:
        return np.stack([f.to_ndarray(format="rgb24") for f in c.decode(c.streams.video[0])])


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    return _write(tmp_path_factory.mktemp("v") / "clip.mp4", n=400)


def _plan(indices):
    return FramePlan(tuple(indices), tuple(i / 25 for i in indices), "test")


def test_index_counts_every_frame(clip):
    idx = index_video(clip)
    assert idx.num_frames == 400
    assert idx.key_positions[0] == 0 and len(idx.key_positions) >= 400 // 12
    assert abs(idx.fps - 25) < 1e-6


@pytest.mark.parametrize("indices", [
    [0], [399], [0, 1, 2, 3], [5, 17, 18, 250, 399], list(range(0, 400, 7)), list(range(400)),
])
def test_frames_are_bit_identical_to_a_full_decode(clip, indices):
    full = _full_decode(clip)
    got = decode_plan(clip, _plan(indices))
    assert got.shape == (len(indices), 48, 64, 3)
    assert np.array_equal(got, full[indices])


def test_plan_order_is_preserved_for_perturbed_plans(clip):
    full = _full_decode(clip)
    order = [300, 10, 200, 11]
    assert np.array_equal(decode_plan(clip, _plan(order)), full[order])


def test_fps_cap_plan_on_a_real_file(clip):
    idx = index_video(clip)
    plan = plan_frames(idx.meta(), FpsCap(1.0, 8))
    # 16 candidates (0, 25, ..., 375); 8 kept at positions round(linspace(0, 15, 8))
    assert plan.indices == (0, 50, 100, 150, 225, 275, 325, 375)
    assert np.array_equal(decode_plan(clip, plan), _full_decode(clip)[list(plan.indices)])


def test_resize_bounds_the_longer_side(clip):
    got = decode_plan(clip, _plan([3]), max_side=32)
    assert got.shape == (1, 24, 32, 3)
    assert output_size(1920, 1080, 448) == (448, 252)
    assert output_size(64, 48, 448) == (64, 48)


def test_missing_video_names_item_and_path(tmp_path):
    with pytest.raises(VideoError) as e:
        decode_plan(tmp_path / "nope.mp4", _plan([0]), uid="17")
    assert "item 17" in str(e.value) and "nope.mp4" in str(e.value) and "not found" in str(e.value)


def test_unreadable_file_names_item_and_path(tmp_path):
    bad = tmp_path / "bad.mp4"
    bad.write_bytes(b"this is not a video" * 100)
    with pytest.raises(VideoError) as e:
        decode_plan(bad, _plan([0]), uid="3")
    assert "item 3" in str(e.value) and "bad.mp4" in str(e.value)


def _cut_faststart(tmp_path, n=300, keep=0.7):
    """An mp4 with its index at the front (so it opens and claims all ``n`` frames), cut after ``keep`` of its bytes."""
    src = _write(tmp_path / "src.mp4", n=n)
    fast = tmp_path / "fast.mp4"
    with av.open(str(src)) as i, av.open(str(fast), "w", format="mp4", options={"movflags": "faststart"}) as o:
        s_in = i.streams.video[0]
        s_out = o.add_stream_from_template(s_in)
        for pkt in i.demux(s_in):
            if pkt.dts is None:
                continue
            pkt.stream = s_out
            o.mux(pkt)
    data = fast.read_bytes()
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[: int(len(data) * keep)])
    return cut


def test_truncated_video_is_reported_not_silently_short(tmp_path):
    # Index at the front (faststart) so the file opens; cut off the last 30% of the bytes.
    cut = _cut_faststart(tmp_path)
    with pytest.raises(VideoError) as e:
        decode_plan(cut, _plan([0, 150, 299]), uid="9", expected_frames=300)
    msg = str(e.value)
    assert "item 9" in msg and "cut.mp4" in msg and ("truncated" in msg or "corrupt" in msg or "cannot" in msg)


def test_memory_is_bounded_by_the_plan_not_the_video(clip):
    plan = plan_frames(index_video(clip).meta(), Uniform(4))
    out = decode_plan(clip, plan)
    assert out.nbytes == 4 * 48 * 64 * 3


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_every_worker_count_gives_the_same_exact_frames(clip, workers):
    full = _full_decode(clip)
    indices = [0, 1, 11, 12, 13, 100, 101, 250, 251, 398, 399]
    assert np.array_equal(decode_plan(clip, _plan(indices), workers=workers), full[indices])


def test_repeated_frames_in_a_plan_are_all_filled(clip):
    full = _full_decode(clip)
    order = [5, 5, 300, 5, 0]
    assert np.array_equal(decode_plan(clip, _plan(order)), full[order])


def test_skipping_non_reference_pictures_is_exact(tmp_path):
    """Long GOPs with B-frames: most of the decoding happens far from a target, where H.264's
    non-reference pictures are skipped. The clip must really have such pictures; the frames must not change."""
    path = _write(tmp_path / "bframes.mp4", n=300, gop=150, bframes=3)
    with av.open(str(path)) as c:
        c.streams.video[0].codec_context.skip_frame = "NONREF"
        kept = sum(1 for _ in c.decode(c.streams.video[0]))
    assert kept < 250  # a sixth or more of the pictures are non-reference
    indices = [3, 70, 149, 150, 151, 298, 299]
    assert np.array_equal(decode_plan(path, _plan(indices)), _full_decode(path)[indices])


@pytest.mark.parametrize("codec", ["libx265", "mpeg4", "libvpx-vp9"])
def test_other_codecs_are_exact(tmp_path, codec):
    assert codec in av.codecs_available, f"{codec} encoder missing from this PyAV/FFmpeg build (its wheels bundle it)"
    path = _write(tmp_path / f"{codec}.mp4", n=120, gop=24, codec=codec)
    indices = [0, 5, 30, 31, 77, 119]
    assert np.array_equal(decode_plan(path, _plan(indices), workers=2), _full_decode(path)[indices])


@pytest.mark.parametrize("workers", [1, 2])
def test_decoding_past_a_cut_is_reported_by_any_worker(tmp_path, workers):
    cut = _cut_faststart(tmp_path)
    n = index_video(cut).num_frames  # the packet pass stops at the cut...
    assert 0 < n < 300
    assert decode_plan(cut, _plan([0, 10]), workers=workers).shape == (2, 48, 64, 3)
    with pytest.raises(VideoError, match=r"item 5: video is corrupt or truncated near frame .*cut\.mp4"):
        decode_plan(cut, _plan([0, 10, n - 1]), uid="5", workers=workers)  # ...whose last packet is cut short
    stale = index_video(tmp_path / "fast.mp4")  # an index made before the file was cut
    with pytest.raises(VideoError, match=r"item 6: frames \[(250|299)\] could not be decoded.*cut\.mp4"):
        decode_plan(cut, _plan([0, 10, 250, 299]), uid="6", index=stale, workers=workers)


def test_constant_rate_meta_plans_like_explicit_frame_times(clip):
    idx = index_video(clip)
    meta = idx.meta()
    assert meta.frame_times is None and meta.fps == 25  # one rate, not 400 floats
    times = tuple(((idx.pts - idx.pts[0]) * idx.time_base).tolist())
    explicit = VideoMeta(idx.num_frames, idx.fps, times)
    for policy in (FpsCap(1.0, 8), FpsCap(2.0, 64), FpsCap(0.3, 3), Uniform(7)):
        assert plan_frames(meta, policy).indices == plan_frames(explicit, policy).indices


def test_variable_rate_meta_keeps_the_real_frame_times():
    pts = np.array([0, 512, 1024, 2048, 2560, 4096], dtype=np.int64)
    idx = VideoIndex(pts, np.array([0]), 1 / 12800, 20.0, 64, 48)
    meta = idx.meta()
    assert meta.frame_times == (0.0, 0.04, 0.08, 0.16, 0.2, 0.32)


def test_index_is_compact(clip):
    idx = index_video(clip)
    assert idx.pts.dtype == np.int64 and idx.pts.nbytes == 8 * 400
    assert np.all(np.diff(idx.pts) > 0)


def _load_benchmark(monkeypatch):
    """benchmarks/decode.py as a module (it is a script, not part of the package)."""
    path = Path(__file__).resolve().parents[1] / "benchmarks" / "decode.py"
    spec = importlib.util.spec_from_file_location("bench_decode", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_benchmark_script_runs_end_to_end_on_a_tiny_video(tmp_path, monkeypatch):
    """Keeps benchmarks/decode.py from rotting: every step on a few seconds of 64x48 video."""
    bench = _load_benchmark(monkeypatch)
    assert not bench.missing_reader("lmms"), "lmms-eval is part of the test environment (the lmms extra)"
    setup = bench.Setup(seconds=8, width=64, height=48, gop=25, caps=(6,), headline_cap=6, runs=1,
                        long_segment_s=4, long_copies=3, directory=tmp_path)
    lines = []
    speedup = bench.run(setup, out=lines.append)
    assert speedup > 0
    assert re.fullmatch(r"admission speed-up vs fastest reference at cap 6: \d+\.\d+x", lines[-1])
    assert not any("DIFFER" in line for line in lines)  # every reader agreed with the sequential decode
    assert sum("identical" in line for line in lines) == len(bench.READERS) - sum(
        bool(bench.missing_reader(r)) for r in bench.READERS)
