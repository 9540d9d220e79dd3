"""Decoding exactly the planned frames, and clear per-item errors for broken videos."""

import dataclasses
import importlib.util
import re
import sys
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
import pytest

import videos_for_tests as V
from medhorizon_tasks.core.errors import VideoError
from medhorizon_tasks.core.sampling import FpsCap, FramePlan, Uniform, VideoMeta, plan_frames
from medhorizon_tasks.core.video import decode as video
from medhorizon_tasks.core.video.decode import VideoIndex, decode_plan, index_video, output_size


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
    """perf/decode_speed.py as a module (it is a script, not part of the package)."""
    path = Path(__file__).resolve().parents[1] / "perf" / "decode_speed.py"
    spec = importlib.util.spec_from_file_location("bench_decode", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_benchmark_script_runs_end_to_end_on_a_tiny_video(tmp_path, monkeypatch):
    """Keeps perf/decode_speed.py from rotting: every step on a few seconds of 64x48 video, every reader that
    can run here checked frame by frame, the headline at every cap."""
    bench = _load_benchmark(monkeypatch)
    assert not bench.missing_reader("lmms"), "lmms-eval is part of the test environment (the lmms extra)"
    caps = (6,)  # one cap: each torchcodec read imports torch, each lmms-eval read lmms_eval (~10-20 s here)
    setup = bench.Setup(seconds=8, width=64, height=48, gop=25, caps=caps, headline_cap=6, runs=1,
                        long_segment_s=4, long_copies=3, long_bframes=(3,), directory=tmp_path)
    lines = []
    summary = bench.run(setup, out=lines.append)
    text = "\n".join(lines)
    assert set(summary) == set(caps)
    for cap in caps:
        assert summary[cap]["peer"] in bench.PEERS and summary[cap]["speedup"] > 0 and summary[cap]["bound_ratio"] > 0
    assert re.fullmatch(r"  cap 6: \d+\.\d+x the fastest peer \(\w+ .*\): (met|short of 3x by .*); "
                        r"\d+\.\d+x the limit \(.*\): (met|over 1.2x by .*); an exact reader at the limit would "
                        r"be \d+\.\d+x the fastest peer", lines[-3]), lines[-3]
    assert re.fullmatch(r"admission speed-up vs the fastest peer, warm index: cap 6 \d+\.\d+x \(\w+\)", lines[-2])
    assert re.fullmatch(r"ours / decode-work bound, warm index: cap 6 \d+\.\d+x", lines[-1])
    assert "DIFFER" not in text  # every reader, the bound included, agreed with the sequential decode
    agreed = [line.strip() for line in lines if line.endswith("cap 6: identical")]
    ran = [r for r in bench.READERS if not bench.missing_reader(r)]
    assert [a.split("  ")[0] for a in agreed] == [bench.LABELS[r] for r in ran]
    # An optional peer that cannot run here is named with how to install it, never silently dropped.
    for reader in ("decord", "torchcodec", "torchcodec_approx"):
        if bench.missing_reader(reader):
            assert f"NOTE: {bench.missing_reader(reader)}: left out" in lines
            assert "install" in bench.missing_reader(reader)
        else:
            assert bench.LABELS[reader] in [a.split("  ")[0] for a in agreed]
    assert "ours" in ran and "ours_cold" in ran and "bound" in ran
    # ours decodes the minimal pictures (the references the targets need, and the targets), counted both ways
    video = next(tmp_path.glob("pan_*_8s_*.mp4"))
    assert summary[6]["ours_decoded"] == summary[6]["minimal"] >= len(bench.plan_indices(index_video(video), 6))
    # the release projection: a line per cap from a measured rate
    projected = bench.projection({(64, 48): summary[6]["rate_fps"]})
    assert "projection" in projected[0] and len(projected) == 4
    assert all(re.fullmatch(r"  projection, cap \d+: 1 core [\d.]+ (h|min), 2 cores .*, 64 cores [\d.]+ (h|min)", x)
               for x in projected[1:]), projected


def test_the_decode_work_bound_decodes_only_from_each_needed_keyframe(tmp_path, monkeypatch):
    """The bound's packets: from the keyframe opening each needed GOP to its last target's packet, nothing
    of the GOPs no target is in; and its frames are the plan's."""
    _load_benchmark(monkeypatch)
    bench = sys.modules["bench_readers"]  # the readers, the bound's among them, shared by every perf script
    path = V.encode(tmp_path / "b.mp4", 200, gop=25, bframes=2)
    truth = V.sequential_frames(path)
    indices = [3, 30, 31, 160, 3]  # GOPs 0, 1 and 6; a repeated frame
    groups, rows, size, containers = work = bench.bound_work(path, indices)
    assert [len(g) > 0 and g[0].is_keyframe for g in groups] == [True, True, True]
    assert [{p.pts for p in g} >= {int(index_video(path).pts[i]) for i in wanted}
            for g, wanted in zip(groups, ([3], [30, 31], [160]))] == [True, True, True]
    assert sum(len(g) for g in groups) < 3 * 25  # not whole GOPs: up to the last target's packet
    assert np.array_equal(bench.read_bound(work), truth[indices])
    for c in containers:
        c.close()
    assert size == (48, 64) and sorted(r for rs in rows.values() for r in rs) == list(range(len(indices)))


# ---- files whose packets are not all frames, demuxers that seek imprecisely, display rotation ----
# Ground truth throughout: frame i is the i-th frame a plain decode from the start outputs.

def _spread(n, gop):
    """First and last frames, and around every other keyframe: the frames just before, at and after it."""
    picks = {0, 1, n - 2, n - 1}
    for k in range(gop, n, 2 * gop):
        picks.update(i for i in (k - 1, k, k + 1) if 0 <= i < n)
    return sorted(picks)


def _assert_exact(path, *, gop, expect_frames=None, workers=(1, 2)):
    truth = V.sequential_frames(path)
    idx = index_video(path)
    assert idx.num_frames == len(truth)
    if expect_frames is not None:
        assert len(truth) == expect_frames  # the file really has the shape the test is about
    for w in workers:
        picks = _spread(len(truth), gop)
        assert np.array_equal(decode_plan(path, _plan(picks), workers=w), truth[picks]), f"workers={w}"
    everything = list(range(len(truth)))
    assert np.array_equal(decode_plan(path, _plan(everything), index=idx), truth)
    return idx


@pytest.fixture(scope="module")
def ts_clip(tmp_path_factory):
    return V.encode(tmp_path_factory.mktemp("ts") / "clip.ts", 300, fmt="mpegts", gop=25, bframes=2)


def test_mpegts_frames_are_exact(ts_clip):
    """MPEG-TS has no index: FFmpeg seeks it by decode time, by a binary search over the file. Seeking to a
    keyframe's presentation time lands after the keyframe (its B-frames come later in decode order)."""
    with av.open(str(ts_clip)) as c:
        assert c.format.name == "mpegts"
        first = next(p for p in c.demux(c.streams.video[0]) if p.size)
        assert first.is_keyframe and first.pts > first.dts  # B-frames: presentation after decode time
    _assert_exact(ts_clip, gop=25, expect_frames=300)


@pytest.mark.parametrize("bframes", [0, 3])
def test_mpegts_other_gop_shapes_are_exact(tmp_path, bframes):
    path = V.encode(tmp_path / "clip.ts", 160, fmt="mpegts", gop=40, bframes=bframes)
    _assert_exact(path, gop=40, expect_frames=160)


@pytest.mark.parametrize("landing", ["past", "before"])
def test_a_seek_landing_off_the_keyframe_is_corrected(ts_clip, monkeypatch, landing):
    """Whatever the demuxer's seek does, decoding starts exactly at the group's keyframe: a landing past it
    (as seeking MPEG-TS by presentation time does) is retried earlier, one before it is skipped forward."""
    seek_targets = video._Demuxer._seek_targets
    used = []

    def off_target(self, key):
        targets = list(seek_targets(self, key))
        if key >= 0:
            other = key + 2 if landing == "past" else key - 3
            if 0 <= other < len(self.key_dts):
                targets.insert(0, int(self.key_pts[other]))
        used.append(targets)
        return iter(targets)

    monkeypatch.setattr(video._Demuxer, "_seek_targets", off_target)
    truth = V.sequential_frames(ts_clip)
    picks = [3, 50, 74, 75, 76, 149, 150, 151, 299]
    assert np.array_equal(decode_plan(ts_clip, _plan(picks)), truth[picks])
    assert len(used) >= 4


@pytest.mark.parametrize("skip", [10, 24])
def test_mpegts_starting_mid_gop_skips_undecodable_lead_in(tmp_path, skip):
    """A TS cut out of a stream: its first packets precede the first keyframe and lack their references.
    H.264 outputs none of them, so they are not frames; every later frame keeps its number."""
    full = V.encode(tmp_path / "full.ts", 200, fmt="mpegts", gop=25, bframes=2)
    cut = V.remux(full, tmp_path / "cut.ts", fmt="mpegts", skip=skip)
    with av.open(str(cut)) as c:
        assert not next(p for p in c.demux(c.streams.video[0]) if p.size).is_keyframe
    idx = _assert_exact(cut, gop=25, expect_frames=175)
    assert idx.key_positions[0] == 0


def test_open_gop_leading_pictures_at_the_start_are_not_frames(tmp_path):
    """MPEG-2 open GOP cut at a keyframe: the B-pictures after it in decode order but shown before it
    reference the previous (missing) GOP; the decoder drops them."""
    full = V.encode(tmp_path / "full.ts", 150, fmt="mpegts", gop=25, bframes=2, codec="mpeg2video")
    with av.open(str(full)) as c:
        packets = [p for p in c.demux(c.streams.video[0]) if p.size]
    second_key = [i for i, p in enumerate(packets) if p.is_keyframe][1]
    assert packets[second_key + 1].pts < packets[second_key].pts  # an open GOP: leading pictures
    cut = V.remux(full, tmp_path / "cut.ts", fmt="mpegts", skip=second_key)
    truth = V.sequential_frames(cut)
    assert len(truth) < len(packets) - second_key  # the decoder really drops them
    _assert_exact(cut, gop=24)


def test_hevc_lead_in_that_the_decoder_shows_is_decoded_from_the_start(tmp_path):
    """HEVC's decoder does output a lead-in without references (from generated grey references): those
    pictures are frames, and decoding them means decoding from the stream's first packet."""
    full = V.encode(tmp_path / "full.ts", 100, fmt="mpegts", gop=25, bframes=2, codec="libx265")
    cut = V.remux(full, tmp_path / "cut.ts", fmt="mpegts", skip=30)
    idx = _assert_exact(cut, gop=25, expect_frames=70)
    assert idx.key_positions[0] > 0  # frames shown before the first keyframe


@pytest.mark.parametrize("pre_roll", [5, 24])
def test_mp4_edit_list_hides_pre_roll_packets(tmp_path, pre_roll):
    """``ffmpeg -ss T -c copy`` starts at the keyframe before T and writes an edit list: the pre-roll
    packets are decoded (as references) but never shown, and frame 0 is the first one after them."""
    src = V.encode(tmp_path / "src.mp4", 200, gop=25, bframes=2)
    tick = 12800 // 25
    cut = V.remux(src, tmp_path / "cut.mp4", fmt="mp4", shift=pre_roll * tick)
    with av.open(str(cut)) as c:
        packets = [p for p in c.demux(c.streams.video[0]) if p.size]
    assert len(packets) == 200 and sum(p.is_discard for p in packets) == pre_roll
    truth = V.sequential_frames(cut)
    assert np.array_equal(truth[0], V.sequential_frames(src)[pre_roll])
    idx = _assert_exact(cut, gop=25, expect_frames=200 - pre_roll)
    assert idx.pts[0] == 0


def test_trimmed_phone_video_keeps_its_rotation(tmp_path):
    """A phone video cut with ``-c copy``: its first keyframe is hidden by the edit list (and more than a
    reorder window of pre-roll follows it); the display rotation still comes through."""
    src = V.encode(tmp_path / "src.mp4", 120, gop=40, bframes=2)
    cut = V.set_display_matrix(V.remux(src, tmp_path / "cut.mp4", fmt="mp4", shift=35 * 512), 90)
    idx = index_video(cut)
    assert idx.rotation == 90 and idx.num_frames == 85
    shown = np.rot90(V.sequential_frames(cut), -1, axes=(1, 2))
    picks = [0, 4, 5, 6, 84]
    assert np.array_equal(decode_plan(cut, _plan(picks), index=idx), shown[picks])


@pytest.mark.parametrize("degrees", [90, 180, 270])
def test_display_rotation_is_applied(tmp_path, degrees):
    """A phone's portrait video: landscape pictures and a display matrix. Frames come out as shown."""
    path = V.set_display_matrix(V.encode(tmp_path / "phone.mp4", 60, gop=20), degrees)
    assert V.sequential_rotation(path) == {90: -90, 180: -180, 270: 90}[degrees]  # FFmpeg reads the matrix back
    idx = index_video(path)
    assert idx.rotation == degrees and (idx.width, idx.height) == (64, 48)
    shown = np.rot90(V.sequential_frames(path), -degrees // 90, axes=(1, 2))  # clockwise
    picks = [0, 19, 20, 21, 59]
    got = decode_plan(path, _plan(picks), workers=2)
    assert got.shape == (5, *shown.shape[1:]) and np.array_equal(got, shown[picks])
    small = decode_plan(path, _plan(picks), max_side=32)  # the displayed frame's longer side
    assert small.shape == ((5, 32, 24, 3) if degrees != 180 else (5, 24, 32, 3))


def test_unrotated_video_has_no_rotation(clip):
    assert index_video(clip).rotation == 0


def test_a_target_that_never_comes_stops_within_its_gop(tmp_path, monkeypatch):
    """An index that does not match the file (frame 150's timestamp is not in it): reading stops a GOP's
    worth of packets after the keyframe and names the frame, instead of reading on to the end."""
    path = V.encode(tmp_path / "long.mp4", 600, gop=25, bframes=2)
    good = index_video(path)
    pts = good.pts.copy()
    pts[150] += 1  # between frames 150 and 151: no packet has it
    bad = dataclasses.replace(good, pts=pts)
    read = []
    packets = video._Demuxer.packets

    def counting(self, group):
        for packet in packets(self, group):
            read.append(packet)
            yield packet

    monkeypatch.setattr(video._Demuxer, "packets", counting)
    with pytest.raises(VideoError, match=r"item 4: frames \[150\] did not come within \d+ packets.*long\.mp4"):
        decode_plan(path, _plan([150]), uid="4", index=bad)
    assert len(read) <= 25 + good.packet_slack + 17


def test_long_groups_are_decoded_in_bounded_chunks(tmp_path, monkeypatch):
    """One keyframe for the whole video: the group is read and decoded a chunk at a time, and is exact."""
    path = V.encode(tmp_path / "one_gop.mp4", 300, gop=300, bframes=3)
    monkeypatch.setattr(video, "_CHUNK_PACKETS", 16)
    sizes = []
    chunks = video._chunks

    def recording(packets, release):
        for chunk in chunks(packets, release):
            sizes.append(len(chunk))
            yield chunk

    monkeypatch.setattr(video, "_chunks", recording)
    truth = V.sequential_frames(path)
    picks = [0, 100, 299]
    for w in (1, 2):
        assert np.array_equal(decode_plan(path, _plan(picks), workers=w), truth[picks])
    assert max(sizes) == 16 and sum(sizes) >= 300


@pytest.mark.parametrize("fmt", ["matroska", "mpeg"])
def test_other_containers_are_exact(tmp_path, fmt):
    """mkv seeks by presentation time through its cues, MPEG-PS like MPEG-TS by decode time."""
    codec = "libx264" if fmt == "matroska" else "mpeg2video"
    src = V.encode(tmp_path / "src.ts", 160, fmt="mpegts", gop=40, bframes=2, codec=codec)
    path = V.remux(src, tmp_path / f"clip.{fmt}", fmt=fmt)
    _assert_exact(path, gop=40)
