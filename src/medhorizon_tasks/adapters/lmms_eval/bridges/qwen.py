"""``medhorizon_qwen2_5_vl`` and ``medhorizon_qwen3_vl``: the planned frames as ONE Qwen video with its real times.

lmms-eval's wrappers give a list of frames to Qwen as N independent images
(each upscaled to the image ``min_pixels``, twice the visual tokens of one
video, no temporal position ids). Here the frames become one video, resized
by qwen-vl-utils' video budget (:class:`~medhorizon_tasks.core.video.size.QwenVideo`; model args
``frame_min_pixels``, ``frame_max_pixels``, ``video_total_pixels``): the decoder
scales each frame to that size while decoding (the bridge asks for it), handed to
the processor with ``do_sample_frames=False, do_resize=False`` (nothing is
resampled or resized again), so that:

* Qwen2.5-VL: ``video_grid_thw = [[ceil(n/2), h, w]]`` and
  ``second_per_grid_ts = 2 * span / (n - 1)``, span = last - first time (the
  processor derives it from the video metadata's sampled fps);
* Qwen3-VL: each two-frame temporal patch is labelled ``<t seconds>`` with t
  the mean of its two frames' planned times (the processor computes the
  labels from ``frames_indices / fps``; we pass millisecond indices at 1000 fps).

A benchmark that fixes its own layout of text and frames (Sureon, appendix D.1 and
Fig. 17: the clip's range, then each frame right after its ``Frame k at t s:``
line, then the question; ``PlannedFrames.interleaved``) gets exactly that
layout, each frame as one image where the layout places it (Sureon's Table 3:
"Each model is evaluated with image inputs"): Qwen's video input holds two
frames per temporal patch and cannot have a text line between them. The
images are sized by the processor's image rule (the wrapper's ``min_pixels`` /
``max_pixels``).

Frames whose order was perturbed on purpose get evenly spaced times
(:func:`~.frames.shown_times`). Model args of the wrapper (``pretrained``,
``device``, ``system_prompt``, ``min_pixels``/``max_pixels`` for images, ...) keep
their meaning; ``max_num_frames``/``fps`` only apply to video files of other
tasks. Requests without planned frames go to the wrapper unchanged.
"""

from __future__ import annotations

import torch
from lmms_eval.models.simple.qwen2_5_vl import Qwen2_5_VL as _Qwen2_5_VL
from lmms_eval.models.simple.qwen3_vl import Qwen3_VL as _Qwen3_VL
from torchvision.transforms import InterpolationMode
from torchvision.transforms import functional as tvF
from transformers.video_utils import VideoMetadata

from ....core.video.planned_frames import PlannedFrames
from .base import PlannedFramesBridge
from .frames import (
    QwenPixelBudget,
    frames_array,
    interleaved_content,
    interleaved_images,
    pad_to_even,
    qwen2_5_second_per_grid,
    shown_times,
)

__all__ = ["Qwen2_5_VL", "Qwen3_VL"]

MS = 1000.0  # Qwen3-VL labels come from frames_indices / fps: millisecond "indices" carry the exact times


class _QwenVideoBridge(PlannedFramesBridge):
    def _set_budget(self, frame_min_pixels, frame_max_pixels, video_total_pixels) -> None:
        vp = self.processor.video_processor
        self.video_budget = QwenPixelBudget(vp.patch_size * vp.merge_size, frame_min_pixels, frame_max_pixels,
                                            video_total_pixels)
        self.frame_size_rule = self.video_budget  # frames are decoded at this size: no second resize here

    def _video(self, frames: PlannedFrames) -> tuple[torch.Tensor, list[float]]:
        """The frames (padded to an even count) as a uint8 tensor (n, 3, h, w) at the budget's size, and the
        time shown for each."""
        images, times = pad_to_even(list(frames), shown_times(frames))
        video = torch.from_numpy(frames_array(images)).permute(0, 3, 1, 2).contiguous()
        h, w = self.video_budget.frame_size(video.shape[2], video.shape[3], video.shape[0])
        if (h, w) != tuple(video.shape[2:]):  # frames decoded at another size (a task's fixed size, say)
            video = tvF.resize(video, [h, w], interpolation=InterpolationMode.BICUBIC, antialias=True)
        return video, times

    def _messages(self, context: str) -> list[dict]:
        """The wrapper's conversation (system prompt, reasoning prompt, no stray ``<image>``), with one video."""
        context = context.replace("<image>", "")
        if self.reasoning_prompt:
            context = context.strip() + self.reasoning_prompt
        return [{"role": "system", "content": self.system_prompt},
                {"role": "user", "content": [{"type": "video"}, {"type": "text", "text": context}]}]

    def image_inputs(self, frames: PlannedFrames, template):
        """The processor's inputs for the benchmark's own layout (module doc): its text parts, and each frame as
        one image where the layout places it; ``template`` is the wrapper's chat-template call."""
        content = interleaved_content(frames, suffix=self.reasoning_prompt)
        text = template([[{"role": "system", "content": self.system_prompt}, {"role": "user", "content": content}]])
        inputs = self.processor(text=text, images=interleaved_images(frames), padding=True, return_tensors="pt")
        return self._inputs_to_device(inputs)

    def _until(self, gen_kwargs: dict) -> list[str]:
        until = gen_kwargs.get("until", [self.tokenizer.decode(self.eot_token_id)])
        until = [until] if isinstance(until, str) else list(until)
        return [u for u in until if u and u != "\n\n"]

    def _inputs_to_device(self, inputs):
        return inputs.to("cuda") if self.device_map == "auto" else inputs.to(self.device)

    def _answer(self, inputs, generated, gen_kwargs: dict) -> str:
        trimmed = [out[len(inp):] for inp, out in zip(inputs.input_ids, generated)]
        answer = self.processor.batch_decode(trimmed, skip_special_tokens=True, clean_up_tokenization_spaces=False)[0]
        for term in self._until(gen_kwargs):
            answer = answer.split(term)[0]
        return answer


class Qwen2_5_VL(_QwenVideoBridge, _Qwen2_5_VL):
    """lmms-eval's simple ``qwen2_5_vl`` wrapper; planned frames become one video (module docstring)."""

    def __init__(self, frame_min_pixels: int | None = None, frame_max_pixels: int | None = None,
                 video_total_pixels: int | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self._set_budget(frame_min_pixels, frame_max_pixels, video_total_pixels)

    def frame_inputs(self, context: str, frames: PlannedFrames):
        """The processor's inputs for a request: the benchmark's own layout as images when it fixes one, else one
        video (module doc)."""
        if frames.interleaved is not None:
            return self.image_inputs(frames, lambda messages: self.processor.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True))
        return self.video_inputs(context, frames)

    def video_inputs(self, context: str, frames: PlannedFrames):
        """The processor's inputs (on the model's device) for ``context`` about ``frames``."""
        video, _ = self._video(frames)
        temporal = self.processor.video_processor.temporal_patch_size
        # the processor sets second_per_grid_ts = temporal_patch_size / metadata.sampled_fps
        sampled_fps = temporal / qwen2_5_second_per_grid(shown_times(frames), temporal)
        metadata = VideoMetadata(total_num_frames=len(video), fps=sampled_fps, frames_indices=list(range(len(video))))
        message = self._messages(context)
        text = self.processor.apply_chat_template([message], tokenize=False, add_generation_prompt=True)
        inputs = self.processor(text=text, videos=[video], video_metadata=[metadata], do_sample_frames=False,
                                do_resize=False, padding=True, return_tensors="pt")
        return self._inputs_to_device(inputs)

    def generate_from_frames(self, context: str, frames: PlannedFrames, gen_kwargs: dict) -> str:
        inputs = self.frame_inputs(context, frames)
        settings = {"max_new_tokens": 32768, "temperature": 0.0, "top_p": None, "num_beams": 1, **gen_kwargs}
        sample = bool(settings["temperature"] and settings["temperature"] > 0)
        generated = self.model.generate(
            **inputs, eos_token_id=self.tokenizer.eos_token_id, pad_token_id=self.tokenizer.pad_token_id,
            do_sample=sample, temperature=settings["temperature"] if sample else None,
            top_p=settings["top_p"] if sample else None, num_beams=settings["num_beams"],
            max_new_tokens=settings["max_new_tokens"], use_cache=self.use_cache)
        return self._answer(inputs, generated, gen_kwargs)


class Qwen3_VL(_QwenVideoBridge, _Qwen3_VL):
    """lmms-eval's simple ``qwen3_vl`` wrapper; planned frames become one video with ``<t seconds>`` labels."""

    def __init__(self, frame_min_pixels: int | None = None, frame_max_pixels: int | None = None,
                 video_total_pixels: int | None = None, **kwargs) -> None:
        super().__init__(**kwargs)
        self._set_budget(frame_min_pixels, frame_max_pixels, video_total_pixels)

    def frame_inputs(self, context: str, frames: PlannedFrames):
        """The processor's inputs for a request: the benchmark's own layout as images when it fixes one, else one
        video with its ``<t seconds>`` labels (module doc)."""
        if frames.interleaved is not None:
            return self.image_inputs(frames, self._apply_chat_template)
        return self.video_inputs(context, frames)

    def video_inputs(self, context: str, frames: PlannedFrames):
        """The processor's inputs (on the model's device) for ``context`` about ``frames``."""
        video, times = self._video(frames)
        metadata = VideoMetadata(total_num_frames=len(video), fps=MS, frames_indices=[round(t * MS) for t in times])
        message = self._messages(context)
        text = self._apply_chat_template([message])
        # The chat template wraps the video in vision_start/vision_end, and transformers 5's processor wraps
        # every frame again ("<t seconds><|vision_start|>...<|vision_end|>"); Qwen3-VL's released processor
        # replaced the whole wrapped placeholder, so the bare video token gives the layout the model knows.
        p = self.processor
        text = [t.replace(f"{p.vision_start_token}{p.video_token}{p.vision_end_token}", p.video_token) for t in text]
        inputs = p(text=text, videos=[video], video_metadata=[metadata], do_sample_frames=False, do_resize=False,
                   return_tensors="pt")
        return self._inputs_to_device(inputs)

    def generate_from_frames(self, context: str, frames: PlannedFrames, gen_kwargs: dict) -> str:
        inputs = self.frame_inputs(context, frames)
        generated = self.model.generate(**inputs, **self._build_generate_kwargs(gen_kwargs))
        return self._strip_thinking(self._answer(inputs, generated, gen_kwargs))
