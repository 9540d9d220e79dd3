"""``medhorizon_videollama3``: the planned frames as VideoLLaMA3's video input, with their times.

VideoLLaMA3's processor takes a video as decoded frames plus their
``timestamps`` (lmms-eval's wrapper uses exactly that form for its
``use_custom_video_loader`` path); the model reads a ``Time {t:.1f}s:`` label
before each frame. lmms-eval's wrapper given a frame list uses only the first
frame. Frames are sized by VideoLLaMA3's own processor (its video settings);
they arrive at the task's ``max_side``. Perturbed orders get evenly spaced
times (:func:`~.frames.shown_times`).

The generation settings are the wrapper's; inputs go to the model's device
(the wrapper calls ``.cuda()``). Requests without planned frames go to the
wrapper unchanged, except an item whose video failed (its answer is not
scored): the wrapper would send an empty conversation, so it gets the
question alone.
"""

from __future__ import annotations

import torch
from lmms_eval.models.simple.videollama3 import VideoLLaMA3 as _VideoLLaMA3

from ....core.video.planned_frames import PlannedFrames
from .base import PlannedFramesBridge, model_device
from .frames import frames_array, shown_times

__all__ = ["VideoLLaMA3", "HuluMed", "video_message"]


def video_message(context: str, frames: PlannedFrames) -> list[dict]:
    """One user turn: the video (frames, times, count) then the question; the question alone without frames."""
    text = {"type": "text", "text": context}
    if not frames:
        return [{"role": "user", "content": [text]}]
    times = shown_times(frames)
    return [{"role": "user", "content": [
        {"type": "video", "video": frames_array(frames), "timestamps": times, "num_frames": len(times)}, text]}]


class VideoLLaMA3(PlannedFramesBridge, _VideoLLaMA3):
    """lmms-eval's ``videollama3`` wrapper; planned frames become one video with its timestamps."""

    answers_failed_plans = True  # the wrapper sends an empty conversation for a request without visuals

    def generate_extra(self, frames: PlannedFrames) -> dict:
        return {}

    def decode_extra(self) -> dict:
        return {}

    def generate_from_frames(self, context: str, frames: PlannedFrames, gen_kwargs: dict) -> str:
        inputs = self.processor(conversation=video_message(context, frames), return_tensors="pt",
                                add_generation_prompt=True)
        device = model_device(self)
        inputs = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
        if "pixel_values" in inputs:
            inputs["pixel_values"] = inputs["pixel_values"].to(torch.bfloat16)
        sample = bool(gen_kwargs.get("do_sample", False))
        with torch.inference_mode():
            output_ids = self.model.generate(
                **inputs, do_sample=sample, temperature=gen_kwargs.get("temperature", 0.2 if sample else 1.0),
                max_new_tokens=gen_kwargs.get("max_new_tokens", 2048), top_p=gen_kwargs.get("top_p", 0.9 if sample else 1.0),
                top_k=gen_kwargs.get("top_k", 20 if sample else 50), use_cache=True,
                pad_token_id=self.processor.tokenizer.eos_token_id, **self.generate_extra(frames))
        return self.processor.batch_decode(output_ids, skip_special_tokens=True, **self.decode_extra())[0].strip()


class HuluMed(VideoLLaMA3):
    """Hulu-Med (no lmms-eval wrapper): loaded as lmms-eval's ``videollama3`` wrapper loads a model
    (``AutoModelForCausalLM`` + ``AutoProcessor``, remote code); its processor is VideoLLaMA3's, so the planned
    frames go as one video with their ``timestamps`` (its chat template prints ``Time {t}s:`` before each frame),
    ``modals=["video"]`` to ``generate`` and ``use_think=False`` to the decoding, as its README does. Its remote
    code pins transformers 4.51.2 (its requirements.txt)."""

    def __init__(self, pretrained: str = "ZJU-AI4H/Hulu-Med-7B", **kwargs) -> None:
        super().__init__(pretrained=pretrained, **kwargs)

    def generate_extra(self, frames: PlannedFrames) -> dict:
        return {"modals": ["video" if frames else "text"]}

    def decode_extra(self) -> dict:
        return {"use_think": False}
