"""Decoding exactly the planned frames, and clear per-item errors for broken videos."""

from fractions import Fraction

import av
import numpy as np
import pytest

from medhorizon_tasks.errors import VideoError
from medhorizon_tasks.sampling import FpsCap, FramePlan, Uniform, plan_frames
from medhorizon_tasks.video import decode_plan, index_video, output_size


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


def test_truncated_video_is_reported_not_silently_short(tmp_path):
    # Index at the front (faststart) so the file opens; cut off the last 30% of the bytes.
    src = _write(tmp_path / "src.mp4", n=300)
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
    cut.write_bytes(data[: int(len(data) * 0.7)])
    with pytest.raises(VideoError) as e:
        decode_plan(cut, _plan([0, 150, 299]), uid="9", expected_frames=300)
    msg = str(e.value)
    assert "item 9" in msg and "cut.mp4" in msg and ("truncated" in msg or "corrupt" in msg or "cannot" in msg)


def test_memory_is_bounded_by_the_plan_not_the_video(clip):
    plan = plan_frames(index_video(clip).meta(), Uniform(4))
    out = decode_plan(clip, plan)
    assert out.nbytes == 4 * 48 * 64 * 3
