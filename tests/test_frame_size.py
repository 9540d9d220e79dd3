"""Frames at the model's own size: the size rules against their references, and a bridge's frames decoded
straight at its processor's size from a 1920x1080 source (never a full-size RGB array first)."""

from __future__ import annotations

import functools
from fractions import Fraction
from types import SimpleNamespace

import av
import numpy as np
import pytest

from medhorizon_tasks.adapters.lmms_eval import medhorizon as hooks
from medhorizon_tasks.adapters.lmms_eval.bridges.base import PlannedFramesBridge
from medhorizon_tasks.core.sampling import FramePlan
from medhorizon_tasks.core.video import decode as decode_module
from medhorizon_tasks.core.video.prepared import PreparedVideo, decode_prepared, video_index
from medhorizon_tasks.core.video.size import InternVLTiles, MaxSide, PixelBudget, QwenVideo, requested_size

HD = (1920, 1080)


def _official_qwen(n: int, factor: int, width: int, height: int) -> tuple[int, int]:
    """(width, height) of each of n frames by qwen-vl-utils' own fetch_video budget and smart_resize."""
    from qwen_vl_utils import vision_process as Q

    min_pixels = Q.VIDEO_MIN_TOKEN_NUM * factor * factor
    total = Q.MODEL_SEQ_LEN * factor * factor * 0.9
    max_pixels = max(min(Q.VIDEO_MAX_TOKEN_NUM * factor * factor, total / n * Q.FRAME_FACTOR), int(min_pixels * 1.05))
    h, w = Q.smart_resize(height, width, factor=factor, min_pixels=min_pixels, max_pixels=max_pixels)
    return w, h


@pytest.mark.parametrize("factor", [28, 32])  # Qwen2.5-VL, Qwen3-VL
@pytest.mark.parametrize("n", [4, 64, 1248])
def test_the_qwen_rule_is_qwen_vl_utils_budget(n, factor):
    assert QwenVideo(factor).size(n, *HD) == _official_qwen(n, factor, *HD)


def test_the_pixel_budget_bounds_a_request_and_never_enlarges():
    rule = PixelBudget(90_316_800)
    assert rule.size(4, *HD) == HD                      # 4 full-HD frames fit
    for n in (64, 512, 1248):
        w, h = rule.size(n, *HD)
        assert n * w * h <= 90_316_800 and w % 2 == 0 and h % 2 == 0
        assert abs(w / h - 16 / 9) < 0.02
    assert MaxSide(448).size(1248, *HD) == (448, 252)


def test_internvl_tiles_follow_the_closest_grid():
    assert InternVLTiles(448, 1).size(64, *HD) == (448, 448)
    assert InternVLTiles(448, 6).size(64, *HD) == (448 * 2, 448 * 1)  # 16:9 is closest to 2:1 within 6 tiles


@pytest.fixture(scope="module")
def hd_video(tmp_path_factory):
    path = tmp_path_factory.mktemp("hd") / "hd.mp4"
    with av.open(str(path), "w", format="mp4") as c:
        s = c.add_stream("libx264", rate=Fraction(25), options={"g": "25", "bf": "2", "preset": "ultrafast"})
        s.width, s.height, s.pix_fmt = HD[0], HD[1], "yuv420p"
        rng = np.random.default_rng(0)
        base = rng.integers(0, 255, (HD[1], HD[0], 3), dtype=np.uint8)
        for i in range(70):
            frame = av.VideoFrame.from_ndarray(np.roll(base, 8 * i, axis=1), format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, 25)
            for p in s.encode(frame):
                c.mux(p)
        for p in s.encode(None):
            c.mux(p)
    return path


@pytest.fixture()
def rgb_spy(monkeypatch):
    """Every array the decoder makes from a decoded picture: its shape."""
    made = []
    real = decode_module._rgb

    def spy(frame, width, height):
        out = real(frame, width, height)
        made.append(out.shape)
        return out

    monkeypatch.setattr(decode_module, "_rgb", spy)
    return made


class _StubBridge(PlannedFramesBridge):
    """The bridges' routing with a model that records the size of the frames it receives."""

    rank = 0

    def __init__(self, rule, docs):
        self.frame_size_rule = rule
        self.task_dict = {"t": {"test": docs}}
        self.cache_hook = SimpleNamespace(add_partial=lambda *a: None)
        self.received = []

    def generate_from_frames(self, context, frames, gen_kwargs):
        self.received.append((len(frames), {im.size for im in frames}))
        return "A"


@pytest.mark.parametrize("factor", [28, 32])
def test_a_bridge_receives_frames_at_its_processors_size_decoded_at_that_size(synthetic, hd_video, rgb_spy, factor):
    from lmms_eval.api.instance import Instance

    doc = dict(hooks.process_docs_synthetic(None)[0])
    doc.update(video_path=hd_video.name, video_root=str(hd_video.parent), num_frames=70, fps=25.0, duration_s=2.8,
               evidence_windows=[[0, 10]])
    requests = []
    for n in (4, 64):
        kwargs = {"mode": "visual", "frames": n}
        visual = functools.partial(hooks.doc_to_visual, lmms_eval_specific_kwargs=kwargs)
        requests.append(Instance(request_type="generate_until", arguments=("q", {}, visual, 0, "t", "test"), idx=0,
                                 metadata={"task": "t", "doc_id": 0, "repeats": 1}))
    bridge = _StubBridge(QwenVideo(factor), [doc])
    assert bridge.generate_until(requests) == ["A", "A"]
    assert bridge.received == [(4, {_official_qwen(4, factor, *HD)}), (64, {_official_qwen(64, factor, *HD)})]
    assert rgb_spy and all(shape[:2] != (HD[1], HD[0]) for shape in rgb_spy), "a full-size array was made"


def test_1248_frames_are_decoded_at_the_official_size(hd_video, rgb_spy):
    index = video_index(hd_video)
    indices = tuple(i % 70 for i in range(1248))
    plan = FramePlan(indices, tuple(i / 25 for i in indices), "test-1248")
    video = PreparedVideo(hd_video, index, plan, 2.8)
    with requested_size(QwenVideo(28)):
        frames = decode_prepared(video, PixelBudget(), "hd-1248")
    w, h = _official_qwen(1248, 28, *HD)
    assert frames.shape == (1248, h, w, 3)
    assert len(rgb_spy) == 70 and set(rgb_spy) == {(h, w, 3)}, "each distinct frame converted once, at the size"
    del frames


def test_qwen_and_internvl_bridges_ask_for_their_processors_size():
    from medhorizon_tasks.adapters.lmms_eval.bridges import internvl, qwen

    stub = SimpleNamespace(processor=SimpleNamespace(video_processor=SimpleNamespace(patch_size=16, merge_size=2)))
    qwen.Qwen3_VL._set_budget(stub, None, None, None)
    assert stub.frame_size_rule is stub.video_budget and stub.frame_size_rule.size(64, *HD) == _official_qwen(64, 32, *HD)
    tiles = SimpleNamespace(config=SimpleNamespace(force_image_size=448))
    internvl.InternVL3._set_tiles(tiles, 1)
    assert tiles.frame_size_rule.size(64, *HD) == (448, 448)


def test_sureon_blurs_the_full_resolution_frame_then_scales(hd_video, monkeypatch):
    """Text and face detection see every pixel the recording has (issue 27 item 4); the model gets its size."""
    from medhorizon_tasks.benchmarks.sureon import protocol as sureon

    seen = []

    class Spy:
        def describe(self):
            return "blur(spy)"

        def apply(self, frames):
            seen.append(frames.shape)
            return frames.copy()

    monkeypatch.setattr(sureon, "BLUR", Spy())
    index = video_index(hd_video)
    plan = FramePlan((0, 10, 20, 30), (0.0, 0.4, 0.8, 1.2), "clip", redaction="blur(spy)")
    video = PreparedVideo(hd_video, index, plan, 2.8)
    with requested_size(QwenVideo(28)):
        frames = sureon.decode_frames(video, "s1")
    w, h = _official_qwen(4, 28, *HD)
    assert seen == [(4, HD[1], HD[0], 3)], "the detectors got the full-resolution frames"
    assert frames.shape == (4, h, w, 3), "the model gets its own size"
