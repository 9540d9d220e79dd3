"""``medhorizon_gemma4``, ``medhorizon_molmo2`` (one video with its timestamps) and ``medhorizon_gemma3`` (timed images).

Gemma 4 (transformers >= 5.5) and Molmo2 (>= 5.20) take a video with its
``VideoMetadata``: their processors print each frame's time before its tokens
(Gemma 4 ``mm:ss``, Molmo2 seconds with one decimal), computed as
``frames_indices / fps``. The planned frames go as one uint8 video with
millisecond indices at fps 1000 and ``do_sample_frames=False``, so the times
the model reads are the plan's and no frame is dropped or added; frames are
sized by the model's own video processor (Gemma 4: ``max_soft_tokens`` per
frame, the wrapper's model arg, default 280). lmms-eval 0.7.3's ``gemma4``
wrapper sends a frame list as N images; it has no Molmo2 wrapper, so
``medhorizon_molmo2`` reuses the ``gemma4`` wrapper's loading
(``AutoModelForImageTextToText`` + ``AutoProcessor``, both generic) and only
this module's video path.

A benchmark that fixes its own layout of text and frames (Sureon, appendix
D.1 and Fig. 17: each frame right after its ``Frame k at t s:`` line;
``PlannedFrames.interleaved``) gets exactly that layout, each frame as one image
where the layout places it, through the model's image processor (Sureon's
Table 3: "Each model is evaluated with image inputs"; Gemma 4: ``max_soft_tokens``
per image): the video input puts the processor's own time label before each
frame, not the benchmark's line. Gemma 3 likewise, without its ``<t seconds>``
labels (the layout's lines carry the times).

Gemma 3 (MedGemma 1.5) has no video input: each planned frame becomes an
image right after a ``<t seconds>`` text part (no labels when the order was
perturbed on purpose), then the question, through lmms-eval's ``gemma3``
wrapper's own chat template call. Perturbed orders get evenly spaced times
(:func:`~.frames.shown_times`). Requests without planned frames go to the
wrapper unchanged.
"""

from __future__ import annotations

import torch
from lmms_eval.models.simple.gemma3 import Gemma3 as _Gemma3
from lmms_eval.models.simple.gemma4 import Gemma4 as _Gemma4
from transformers.video_utils import VideoMetadata

from ....core.video.planned_frames import PlannedFrames
from .base import PlannedFramesBridge, model_device
from .frames import frames_array, interleaved_content, interleaved_images, shown_times
from .openai import frame_label

__all__ = ["Gemma4", "Molmo2", "Gemma3", "video_metadata"]

MS = 1000.0  # frames_indices in milliseconds at fps 1000: index / fps is the planned time


def video_metadata(frames: PlannedFrames) -> VideoMetadata:
    """The metadata whose ``timestamps`` (``frames_indices / fps``) are the frames' shown times."""
    indices = [round(t * MS) for t in shown_times(frames)]
    return VideoMetadata(total_num_frames=max(max(indices) + 1, len(indices)), fps=MS, frames_indices=indices)


def _settings(gen_kwargs: dict) -> dict:
    settings = {"max_new_tokens": 128, "temperature": 0.0, "top_p": None, "num_beams": 1, **gen_kwargs}
    sample = bool(settings["temperature"] and settings["temperature"] > 0)
    return {"do_sample": sample, "temperature": settings["temperature"] if sample else None,
            "top_p": settings["top_p"] if sample else None, "num_beams": settings["num_beams"],
            "max_new_tokens": settings["max_new_tokens"]}


def _until(model, gen_kwargs: dict) -> list[str]:
    until = gen_kwargs.get("until", [model.tokenizer.decode(model.eot_token_id)])
    until = [until] if isinstance(until, str) else list(until)
    return [u for u in until if u and u != "\n\n"]


def _decode(model, inputs, generated, gen_kwargs: dict) -> str:
    trimmed = [out[len(inp):] for inp, out in zip(inputs["input_ids"], generated)]
    answer = model.processor.batch_decode(trimmed, skip_special_tokens=True, clean_up_tokenization_spaces=False)[0]
    for term in _until(model, gen_kwargs):
        answer = answer.split(term)[0]
    return answer


def _user_text(model, context: str) -> str:
    context = context.replace("<image>", "")
    return context.strip() + model.reasoning_prompt if model.reasoning_prompt else context


class _TimedVideoBridge(PlannedFramesBridge):
    """Planned frames as one video with ``VideoMetadata`` through the model's own processor."""

    def video_kwargs(self) -> dict:
        return {}

    def image_kwargs(self) -> dict:
        return {}

    def _system(self) -> dict:
        return {"role": "system", "content": [{"type": "text", "text": self.system_prompt}]}

    def frame_inputs(self, context: str, frames: PlannedFrames) -> dict:
        """The processor's inputs: the benchmark's own layout with each frame an image when it fixes one, else one
        video with its times (module doc)."""
        content = interleaved_content(frames, suffix=self.reasoning_prompt)
        if content is not None:
            text = self.processor.apply_chat_template([[self._system(), {"role": "user", "content": content}]],
                                                      tokenize=False, add_generation_prompt=True)
            return self.processor(text=text, images=interleaved_images(frames), return_tensors="pt",
                                  **self.image_kwargs())
        video = torch.from_numpy(frames_array(frames)).permute(0, 3, 1, 2).contiguous()  # (n, 3, h, w) uint8
        messages = [self._system(),
                    {"role": "user", "content": [{"type": "video"}, {"type": "text", "text": _user_text(self, context)}]}]
        text = self.processor.apply_chat_template([messages], tokenize=False, add_generation_prompt=True)
        return self.processor(text=text, videos=[video], video_metadata=[video_metadata(frames)],
                              do_sample_frames=False, return_tensors="pt", **self.video_kwargs())

    def generate_from_frames(self, context: str, frames: PlannedFrames, gen_kwargs: dict) -> str:
        inputs = self.frame_inputs(context, frames)
        device = model_device(self)
        inputs = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
        for key in ("pixel_values_videos", "pixel_values"):
            if key in inputs and inputs[key].is_floating_point():
                inputs[key] = inputs[key].to(next(self.model.parameters()).dtype)
        with torch.inference_mode():
            generated = self.model.generate(**inputs, use_cache=self.use_cache, **_settings(gen_kwargs))
        return _decode(self, inputs, generated, gen_kwargs)


class Gemma4(_TimedVideoBridge, _Gemma4):
    """lmms-eval's ``gemma4`` wrapper; planned frames become one video with its timestamps (module docstring)."""

    def video_kwargs(self) -> dict:
        return {"max_soft_tokens": self.max_soft_tokens}

    def image_kwargs(self) -> dict:
        return {"max_soft_tokens": self.max_soft_tokens}


class Molmo2(_TimedVideoBridge, _Gemma4):
    """Molmo2 (transformers >= 5.20) loaded as lmms-eval's ``gemma4`` wrapper loads a model; planned frames become
    one video with its timestamps. Requests without planned frames: the ``gemma4`` wrapper's path."""

    def __init__(self, pretrained: str = "allenai/Molmo2-8B", **kwargs) -> None:
        super().__init__(pretrained=pretrained, **kwargs)


class Gemma3(PlannedFramesBridge, _Gemma3):
    """lmms-eval's ``gemma3`` wrapper (MedGemma 1.5 is a Gemma 3 model); planned frames become timed images."""

    def frame_content(self, frames: PlannedFrames) -> list[dict]:
        """The frames as images, each after its ``<t seconds>`` label (none out of order)."""
        parts = []
        for image, t in zip(frames, shown_times(frames)):
            if frames.chronological:
                parts.append({"type": "text", "text": frame_label(t)})
            parts.append({"type": "image", "image": image.convert("RGB")})
        return parts

    def generate_from_frames(self, context: str, frames: PlannedFrames, gen_kwargs: dict) -> str:
        content = interleaved_content(frames, lambda image: {"type": "image", "image": image.convert("RGB")},
                                      suffix=self.reasoning_prompt)  # the benchmark's own layout (module doc)
        if content is None:
            content = [*self.frame_content(frames), {"type": "text", "text": _user_text(self, context)}]
        messages = [{"role": "system", "content": [{"type": "text", "text": self.system_prompt}]},
                    {"role": "user", "content": content}]
        inputs = self.processor.apply_chat_template([messages], add_generation_prompt=True, tokenize=True,
                                                    return_dict=True, return_tensors="pt")
        device = model_device(self)
        inputs = {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in inputs.items()}
        if "pixel_values" in inputs:
            inputs["pixel_values"] = inputs["pixel_values"].to(next(self.model.parameters()).dtype)
        with torch.inference_mode():
            generated = self.model.generate(**inputs, use_cache=self.use_cache, **_settings(gen_kwargs))
        return _decode(self, inputs, generated, gen_kwargs)
