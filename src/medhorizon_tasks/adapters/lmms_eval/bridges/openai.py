"""``medhorizon_openai``: the planned frames to any OpenAI-compatible chat API, as timed images.

The chat completions API has no video content type, so a video is what
lmms-eval itself sends to OpenAI-compatible Qwen3-VL servers
(``ChatMessages.to_qwen3_vl_openai_messages``): each frame as an image, right
after a text part with its time, ``<12.0 seconds>``; then the question. Frames
whose order was perturbed on purpose get no time labels. lmms-eval's ``openai``
wrapper puts the question first and the frames after it, unlabelled.

Model args beyond the wrapper's (``model``, ``base_url``, ``api_key``,
``max_retries``, ``num_concurrent``, ...):

* ``image_format`` (``JPEG``; ``PNG`` or ``WEBP``) and ``image_quality`` (90):
  1,248 PNG frames make a request of hundreds of MB, JPEG a few tens;
* ``image_detail`` (unset): OpenAI's ``detail`` (``low``, ``high``, ``auto``)
  for every frame; unset leaves the provider's default.

Frames are sent at the size the task decoded them (``max_side``, 448 px by
default); the provider scales them further as it does for any image. Requests
run ``num_concurrent`` at a time, each request's frames encoded only when it
is sent. Requests without planned frames go to the wrapper unchanged.
"""

from __future__ import annotations

import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from lmms_eval.api.instance import GenerationResult, TokenCounts
from lmms_eval.models.model_utils.media_encoder import encode_image_to_base64
from lmms_eval.models.model_utils.usage_metrics import is_budget_exceeded, log_usage
from lmms_eval.models.simple.openai import OpenAICompatible as _OpenAICompatible
from lmms_eval.models.simple.openai import _get_max_new_tokens, _normalize_openai_message_content
from loguru import logger
from tqdm import tqdm

from ....core.video.planned_frames import PlannedFrames
from .base import request_frames

__all__ = ["OpenAICompatible", "frame_label"]

MIME = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}


def frame_label(t: float) -> str:
    return f"<{t:.1f} seconds>"


class OpenAICompatible(_OpenAICompatible):
    """lmms-eval's simple ``openai`` wrapper; planned frames become timed images before the question."""

    def __init__(self, image_format: str = "JPEG", image_quality: int = 90, image_detail: str | None = None,
                 **kwargs) -> None:
        super().__init__(**kwargs)
        self.image_format = str(image_format).upper().replace("JPG", "JPEG")
        if self.image_format not in MIME:
            raise ValueError(f"image_format must be one of {', '.join(MIME)}, got {image_format!r}")
        self.image_quality = int(image_quality)
        self.image_detail = str(image_detail) if image_detail else None

    def frame_content(self, frames: PlannedFrames) -> list[dict]:
        """The message parts for the frames: ``[<t seconds>, image]`` per frame (no labels out of order)."""
        quality = self.image_quality if self.image_format in ("JPEG", "WEBP") else None
        parts = []
        for image, t in zip(frames, frames.timestamps):
            if frames.chronological:
                parts.append({"type": "text", "text": frame_label(t)})
            data = encode_image_to_base64(image, image_format=self.image_format, convert_rgb=True, quality=quality)
            url = {"url": f"data:{MIME[self.image_format]};base64,{data}"}
            if self.image_detail:
                url["detail"] = self.image_detail
            parts.append({"type": "image_url", "image_url": url})
        return parts

    def planned_payload(self, context: str, frames: PlannedFrames, gen_kwargs: dict) -> dict:
        """The chat completions request for one item, with the wrapper's generation fields."""
        max_new_tokens = _get_max_new_tokens(gen_kwargs)
        content = [*self.frame_content(frames), {"type": "text", "text": context}]
        payload = {"model": self.model_version, "messages": [{"role": "user", "content": content}],
                   "max_tokens": max_new_tokens, "temperature": gen_kwargs.get("temperature", 0)}
        if "o1" in self.model_version or "o3" in self.model_version:  # as the wrapper does for reasoning models
            payload.pop("temperature")
            payload["reasoning_effort"] = "medium"
            payload["response_format"] = {"type": "text"}
            payload.pop("max_tokens")
            payload["max_completion_tokens"] = max_new_tokens
        return payload

    def _send(self, payload: dict) -> GenerationResult:
        """One request with the wrapper's retry policy; after the last failure, the wrapper's failure text."""
        error = "unknown error"
        for attempt in range(self.max_retries):
            try:
                response = self.client.chat.completions.create(**payload)
            except Exception as exc:  # noqa: BLE001 - any client error is retried, as the wrapper does
                error = str(exc)
                logger.info(f"[medhorizon_openai] attempt {attempt + 1}/{self.max_retries} failed: {error}")
                if attempt + 1 < self.max_retries:
                    time.sleep(self.retry_backoff_s)
                continue
            text = _normalize_openai_message_content(response.choices[0].message.content)
            usage = getattr(response, "usage", None)
            if not usage:
                return GenerationResult(text=text)
            counts = TokenCounts(input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                                 output_tokens=getattr(usage, "completion_tokens", 0) or 0)
            log_usage(model_name=self.model_version, input_tokens=counts.input_tokens,
                      output_tokens=counts.output_tokens, source="model")
            return GenerationResult(text=text, token_counts=counts)
        preview = error.replace("\n", " ")[:200]
        return GenerationResult(text=f"[LMMS_EVAL_REQUEST_FAILED after {self.max_retries} retries] {preview}")

    def generate_until(self, requests) -> list:
        results: list = [None] * len(requests)
        others: list[int] = []
        window = max(1, self.num_concurrent)
        bar = tqdm(total=len(requests), disable=self.rank != 0, desc="medhorizon_openai (planned frames)")
        with ThreadPoolExecutor(max_workers=window) as pool:
            in_flight: dict = {}

            def collect(block_until_below: int) -> None:
                while len(in_flight) > block_until_below:
                    done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                    for future in done:
                        results[in_flight.pop(future)] = future.result()
                        bar.update(1)

            for i, request in enumerate(requests):
                frames = request_frames(self, request)
                if frames is None:
                    others.append(i)
                    continue
                if is_budget_exceeded():
                    results[i] = GenerationResult(text="")
                    continue
                collect(window - 1)  # payloads are built only when a slot is free: bounded memory
                payload = self.planned_payload(request.args[0], frames, dict(request.args[1]))
                in_flight[pool.submit(self._send, payload)] = i
            collect(0)
        bar.close()
        for i, result in enumerate(results):
            if result is not None:
                self.cache_hook.add_partial("generate_until", (requests[i].args[0], requests[i].args[1]), result.text)
        if others:
            for i, answer in zip(others, super().generate_until([requests[i] for i in others])):
                results[i] = answer
        return results
