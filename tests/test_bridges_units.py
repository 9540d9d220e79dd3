"""The bridges' rules one at a time: times shown, Qwen's spacing and pixel budget, the OpenAI message, the
entry point."""

import base64
import io

import numpy as np
import pytest
from PIL import Image

from medhorizon_tasks.adapters.lmms_eval.bridges import frames as F
from medhorizon_tasks.adapters.lmms_eval.bridges.manifest import BRIDGES, manifests
from medhorizon_tasks.core.video.planned_frames import PlannedFrames


def _frames(times, chronological=True, size=(128, 96)):
    images = [Image.new("RGB", size, (i * 20 % 256, 0, 0)) for i in range(len(times))]
    return PlannedFrames(images, timestamps=times, chronological=chronological, duration_s=600.0)


def test_only_non_empty_frame_plans_are_planned_frames():
    assert F.planned_frames(_frames([0.0, 1.0])) is not None
    assert F.planned_frames(PlannedFrames(error="missing video")) is None
    assert F.planned_frames([Image.new("RGB", (4, 4))]) is None  # another task's image list
    assert F.planned_frames(["video.mp4"]) is None and F.planned_frames(None) is None


def test_shown_times_are_real_unless_the_order_was_perturbed():
    assert F.shown_times(_frames([0.0, 10.0, 25.0])) == [0.0, 10.0, 25.0]
    shuffled = _frames([30.0, 0.0, 90.0, 60.0], chronological=False)
    assert F.shown_times(shuffled) == [0.0, 30.0, 60.0, 90.0], "evenly spaced over the span, order hidden"
    assert F.shown_times(_frames([5.0], chronological=False)) == [5.0]


def test_qwen2_5_second_per_grid_is_twice_the_mean_spacing():
    assert F.qwen2_5_second_per_grid([0.0, 6.0, 11.0, 17.0]) == pytest.approx(2 * 17 / 3)
    assert F.qwen2_5_second_per_grid([100.0, 100.5]) == pytest.approx(1.0)
    assert F.qwen2_5_second_per_grid([42.0]) == 2.0 and F.qwen2_5_second_per_grid([3.0, 3.0]) == 2.0


def test_pad_to_even_repeats_the_last_frame():
    assert F.pad_to_even(["a", "b", "c"], [0.0, 1.0, 2.0]) == (["a", "b", "c", "c"], [0.0, 1.0, 2.0, 2.0])
    assert F.pad_to_even(["a", "b"], [0.0, 1.0]) == (["a", "b"], [0.0, 1.0])


def test_qwen_budget_defaults_are_qwen_vl_utils():
    from qwen_vl_utils import vision_process as V

    for factor, expected in ((28, (100352, 602112, 90316800)), (32, (131072, 786432, 117964800))):
        b = F.QwenPixelBudget(factor)
        assert (b.min_pixels, b.max_pixels, b.total_pixels) == expected
        assert b.min_pixels == V.VIDEO_MIN_TOKEN_NUM * factor**2 and b.max_pixels == V.VIDEO_MAX_TOKEN_NUM * factor**2
    with pytest.raises(ValueError):
        F.QwenPixelBudget(28, min_pixels=10_000, max_pixels=5_000)


@pytest.mark.parametrize("factor", [28, 32])
def test_qwen_frame_size_is_fetch_videos_rule(factor):
    """Per-frame size as qwen-vl-utils' fetch_video sizes a decoded video: smart_resize within
    [min_pixels, max(min(max_pixels, total_pixels / n * 2), 1.05 * min_pixels)]. (Its path for a list of
    frames is not the reference: it first resizes each frame as an image, to multiples of twice the factor.)"""
    from qwen_vl_utils.vision_process import smart_resize

    for (h, w), n, total in [((252, 448), 64, None), ((96, 128), 8, None), ((1080, 1920), 1248, None),
                             ((1080, 1920), 768, None), ((720, 1280), 16, 16 * 200_000), ((448, 448), 2, None)]:
        b = F.QwenPixelBudget(factor, total_pixels=total)
        ceiling = max(min(b.max_pixels, b.total_pixels / n * 2), int(b.min_pixels * 1.05))
        assert b.frame_size(h, w, n) == smart_resize(h, w, factor, b.min_pixels, ceiling), (h, w, n)


def test_openai_frames_are_timed_images_in_the_configured_format():
    from medhorizon_tasks.adapters.lmms_eval.bridges.openai import OpenAICompatible

    model = OpenAICompatible(model="m", api_key="x", base_url="http://127.0.0.1:9/v1", image_detail="low")
    parts = model.frame_content(_frames([0.0, 12.0]))
    assert [p["type"] for p in parts] == ["text", "image_url", "text", "image_url"]
    assert [parts[0]["text"], parts[2]["text"]] == ["<0.0 seconds>", "<12.0 seconds>"]
    head, data = parts[1]["image_url"]["url"].split(",", 1)
    assert head == "data:image/jpeg;base64" and parts[1]["image_url"]["detail"] == "low"
    assert Image.open(io.BytesIO(base64.b64decode(data))).format == "JPEG"
    untimed = model.frame_content(_frames([30.0, 0.0], chronological=False))
    assert [p["type"] for p in untimed] == ["image_url", "image_url"], "no times for a perturbed order"
    payload = model.planned_payload("Question?", _frames([0.0]), {"max_new_tokens": 7})
    assert payload["messages"][0]["content"][-1] == {"type": "text", "text": "Question?"}
    assert payload["max_tokens"] == 7 and payload["model"] == "m"
    with pytest.raises(ValueError, match="image_format"):
        OpenAICompatible(model="m", api_key="x", image_format="gif")


def test_frames_array_is_the_pixels():
    frames = _frames([0.0, 1.0])
    arr = F.frames_array(frames)
    assert arr.shape == (2, 96, 128, 3) and arr.dtype == np.uint8
    assert np.array_equal(arr[1], np.asarray(frames[1]))


def test_entry_point_registers_every_bridge_under_a_new_name():
    from lmms_eval.models import AVAILABLE_CHAT_TEMPLATE_MODELS, AVAILABLE_SIMPLE_MODELS, MODEL_ALIASES, get_model

    built_in = set(AVAILABLE_SIMPLE_MODELS) | set(AVAILABLE_CHAT_TEMPLATE_MODELS)
    built_in |= {a for aliases in MODEL_ALIASES.values() for a in aliases}
    found = {m.model_id: m for m in manifests()}
    assert set(found) == set(BRIDGES) and not set(found) & built_in
    for name, (path, wrapper) in BRIDGES.items():
        assert found[name].simple_class_path == path and found[name].chat_class_path is None
        assert wrapper in AVAILABLE_SIMPLE_MODELS, f"{name} subclasses lmms-eval's {wrapper}"
    for name in ("medhorizon_qwen2_5_vl", "medhorizon_qwen3_vl", "medhorizon_internvl3", "medhorizon_videollama3",
                 "medhorizon_openai", "medhorizon_needle"):
        cls = get_model(name)
        assert cls.is_simple
    from lmms_eval.models.simple.qwen2_5_vl import Qwen2_5_VL

    assert issubclass(get_model("medhorizon_qwen2_5_vl"), Qwen2_5_VL)


def test_routing_planned_frames_to_the_bridge_and_the_rest_to_the_wrapper_unchanged():
    from lmms_eval.api.instance import Instance
    from lmms_eval.api.model import CacheHook

    from medhorizon_tasks.adapters.lmms_eval.bridges.base import PlannedFramesBridge

    class Wrapper:
        rank = 0

        def generate_until(self, requests):
            self.received = requests
            return [f"wrapper:{r.args[0]}" for r in requests]

    class Bridge(PlannedFramesBridge, Wrapper):
        def generate_from_frames(self, context, frames, gen_kwargs):
            return f"bridge:{context}:{len(frames)}"

    docs = {0: _frames([0.0, 5.0, 10.0]), 1: [Image.new("RGB", (4, 4))], 2: PlannedFrames(error="gone"), 3: []}
    model = Bridge()
    model.task_dict = {"t": {"test": docs}}
    model.cache_hook = CacheHook(None)
    requests = [Instance("generate_until", (f"q{i}", {}, lambda d: d, i, "t", "test"), 0,
                         metadata={"task": "t", "doc_id": i, "repeats": 1}) for i in (1, 0, 2, 3)]
    assert model.generate_until(requests) == ["wrapper:q1", "bridge:q0:3", "wrapper:q2", "wrapper:q3"]
    assert model.received == [requests[0], requests[2], requests[3]], "the wrapper gets the very same requests"


def test_the_requests_of_a_video_are_answered_together_and_the_answers_come_back_in_request_order():
    """lmms-eval orders requests by prompt length; the bridges answer a video's requests one after the other
    (so the model works through them while the next video decodes) and return the answers in request order."""
    from lmms_eval.api.instance import Instance
    from lmms_eval.api.model import CacheHook

    from medhorizon_tasks.adapters.lmms_eval.bridges.base import PlannedFramesBridge

    answered = []

    class Bridge(PlannedFramesBridge):
        rank = 0

        def generate_from_frames(self, context, frames, gen_kwargs):
            answered.append(context)
            return f"answer:{context}"

    videos = ["a.mp4", "b.mp4", "a.mp4", "c.mp4", "b.mp4", "a.mp4"]
    docs = {i: {"video_root": "/r", "video_path": v, "frames": _frames([0.0, float(i + 1)])}
            for i, v in enumerate(videos)}
    model = Bridge()
    model.task_dict = {"t": {"test": docs}}
    model.cache_hook = CacheHook(None)
    requests = [Instance("generate_until", (f"q{i}", {}, lambda d: d["frames"], i, "t", "test"), 0,
                         metadata={"task": "t", "doc_id": i, "repeats": 1}) for i in range(len(videos))]
    assert model.generate_until(requests) == [f"answer:q{i}" for i in range(len(videos))]
    assert answered == ["q0", "q2", "q5", "q1", "q4", "q3"], "a's requests, then b's, then c's"


def test_by_video_groups_positions_by_first_appearance_and_keeps_videoless_ones_apart():
    from medhorizon_tasks.core.video.ahead import by_video

    assert by_video(["a", "b", "a", None, "c", "b", None]) == [0, 2, 1, 5, 3, 4, 6]
    assert by_video([]) == [] and by_video([None, None]) == [0, 1]
