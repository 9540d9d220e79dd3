"""``medhorizon_openai`` with ``frames_as=video`` against the mock vLLM server (tests/openai_mock.py, ``vllm=True``),
which reads the frame-sequence data URL as vLLM's ``VideoMediaIO.load_base64`` does: every planned frame arrives,
at its planned time (millisecond ``frames_indices`` at fps 1000), with ``do_sample_frames`` off; without
``num_frames: -1`` the server would keep the first 32 frames silently."""

import copy

import pytest
from PIL import Image

from medhorizon_tasks.adapters.lmms_eval.bridges.openai import OpenAICompatible
from medhorizon_tasks.adapters.lmms_eval.bridges.vllm_video import MS_FPS, frame_sequence_url, media_io_kwargs
from medhorizon_tasks.core.errors import MedHorizonError
from medhorizon_tasks.core.video.planned_frames import PlannedFrames
from openai_mock import MockProvider, vllm_videos

TASK = {"max_new_tokens": 16, "temperature": 0, "do_sample": False}
MODEL = "Qwen/Qwen3-VL-8B-Instruct"  # a served checkpoint: lmms-eval's request (max_tokens, temperature)


def _frames(n=40, step=2.5, start=3600.0, size=(64, 48), chronological=True):
    images = [Image.new("RGB", size, (6 * k % 256, 255 - 6 * k % 256, 90)) for k in range(n)]
    return PlannedFrames(images, timestamps=[start + step * k for k in range(n)], duration_s=start + step * n,
                         chronological=chronological)


def _bridge(mock, **args) -> OpenAICompatible:
    return OpenAICompatible(**{"model": MODEL, "api_key": "test", "max_retries": 1, "retry_backoff_s": 0,
                               "base_url": mock.base_url, **args})


def _send(bridge, frames):
    payload = bridge.planned_payload("Which phase?", frames, dict(TASK))
    return payload, bridge._send(payload).text


def test_every_planned_frame_reaches_the_server_at_its_time():
    frames = _frames(40)
    with MockProvider(limit=2, vllm=True) as mock:
        payload, text = _send(_bridge(mock, frames_as="video"), frames)
        (video,) = mock.videos[0]
    assert text == "B"
    content = mock.bodies[0]["messages"][0]["content"]
    assert [p["type"] for p in content] == ["video_url", "text"], "one video, then the question; no image parts"
    assert content[1]["text"] == "Which phase?"
    assert len(video["frames"]) == video["sent"] == 40
    assert video["times"] == pytest.approx(list(frames.timestamps), abs=1e-3)
    assert video["fps"] == MS_FPS and video["do_sample_frames"] is False
    assert video["total_num_frames"] >= 40
    assert mock.bodies[0]["media_io_kwargs"]["video"]["num_frames"] == -1
    assert "do_resize" not in mock.bodies[0]["mm_processor_kwargs"], "no client budget: the server sizes frames"
    # the frames themselves, in order (JPEG: colours within a few levels)
    for k in (0, 17, 39):
        got = video["frames"][k].getpixel((10, 10))
        want = frames[k].getpixel((10, 10))
        assert all(abs(a - b) <= 6 for a, b in zip(got, want)), k


def test_the_32_frame_trap_without_num_frames():
    """The same request without ``num_frames: -1``: the server keeps the first 32 of 40 frames and refuses the
    now mismatched frames_indices; without indices either, it silently answers about 32 frames."""
    frames = _frames(40)
    with MockProvider(limit=1, vllm=True) as mock:
        payload = _bridge(mock, frames_as="video").planned_payload("Q?", frames, dict(TASK))
    body = copy.deepcopy(payload)
    del body["media_io_kwargs"]["video"]["num_frames"]
    with pytest.raises(ValueError, match=r"frames_indices length \(40\) must match number of frames sent \(32\)"):
        vllm_videos(body)
    del body["media_io_kwargs"]["video"]["frames_indices"]
    (video,) = vllm_videos(body)
    assert len(video["frames"]) == 32 and video["sent"] == 40
    (video,) = vllm_videos(payload)
    assert len(video["frames"]) == 40


def test_a_perturbed_order_gets_evenly_spaced_times():
    frames = _frames(8, chronological=False)
    frames = PlannedFrames(list(reversed(frames)), timestamps=list(reversed(frames.timestamps)),
                           chronological=False)
    with MockProvider(limit=1, vllm=True) as mock:
        _send(_bridge(mock, frames_as="video"), frames)
        (video,) = mock.videos[0]
    assert video["times"] == pytest.approx([3600.0 + 2.5 * k for k in range(8)], abs=1e-3)


def test_the_client_pixel_budget_is_kept_by_the_server():
    frames = _frames(4, size=(640, 480))
    with MockProvider(limit=1, vllm=True) as mock:
        _send(_bridge(mock, frames_as="video", pixel_factor=28, frame_min_pixels=28 * 28 * 16,
                      frame_max_pixels=28 * 28 * 64), frames)
        (video,) = mock.videos[0]
        body = mock.bodies[0]
    w, h = video["frames"][0].size
    assert w % 28 == 0 and h % 28 == 0 and w * h <= 28 * 28 * 64
    assert body["mm_processor_kwargs"] == {"do_sample_frames": False, "do_resize": False}


def test_images_stay_the_default():
    with MockProvider(limit=1, vllm=True) as mock:
        _send(_bridge(mock), _frames(3))
        body = mock.bodies[0]
    types = [p["type"] for p in body["messages"][0]["content"]]
    assert types == ["text", "image_url"] * 3 + ["text"] and "media_io_kwargs" not in body


@pytest.mark.parametrize("args, match", [
    ({"frame_as": "video"}, "unknown model arg.*frame_as"),
    ({"frames_as": "clip"}, "frames_as must be one of images, video"),
    ({"frames_as": "video", "image_format": "PNG"}, "JPEG frame sequence"),
    ({"frame_max_pixels": 1000}, "frames_as=video only"),
])
def test_a_model_arg_it_does_not_take_stops_the_run(args, match):
    with MockProvider(limit=1) as mock:
        with pytest.raises(MedHorizonError, match=match):
            _bridge(mock, **args)
        assert mock.bodies == []


def test_lmms_evals_own_args_are_still_taken():
    with MockProvider(limit=1) as mock:
        bridge = _bridge(mock, num_concurrent=8, device="cuda", max_batch_size=None, batch_size=4)
    assert bridge.num_concurrent == 8


def test_the_data_url_and_kwargs_are_what_vllm_parses():
    frames = _frames(3)
    url = frame_sequence_url(frames)
    assert url.startswith("data:video/jpeg;base64,") and url.count(",") == 3
    assert media_io_kwargs([0.0, 1.5, 2.0004]) == {"video": {"num_frames": -1, "fps": 1000,
                                                             "frames_indices": [0, 1500, 2000],
                                                             "total_num_frames": 2001}}
