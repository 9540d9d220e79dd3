"""``medhorizon_openai``: the planned frames to any OpenAI-compatible chat API, as timed images.

The chat completions API has no video content type, so a video is what
lmms-eval itself sends to OpenAI-compatible Qwen3-VL servers
(``ChatMessages.to_qwen3_vl_openai_messages``): each frame as an image, right
after a text part with its time, ``<12.0 seconds>``; then the question. Frames
whose order was perturbed on purpose get no time labels. lmms-eval's ``openai``
wrapper puts the question first and the frames after it, unlabelled.

The request follows the model's provider rule
(:mod:`medhorizon_tasks.benchmarks.request_rules`): ``max_completion_tokens``
and no temperature for OpenAI's reasoning models, ``max_tokens`` and the
task's temperature for GPT-4.x, Gemini's, DashScope's and Moonshot's own
rules; lmms-eval's wrapper sends ``max_tokens`` and ``temperature: 0`` to every
model whose name lacks "o1"/"o3", a request GPT-5.x refuses.

Model args beyond the wrapper's (``model``, ``base_url``, ``api_key``,
``num_concurrent``, ...):

* ``reasoning_effort`` (unset: the provider's default), ``thinking`` (``on`` /
  ``off``, where the provider has a switch), ``max_completion_tokens`` or
  ``max_tokens`` (that key and that limit instead of the task's
  ``max_new_tokens``): checked against the rule before any request is sent;
* ``timeout`` (600 s, the OpenAI client's own default): the deadline of one
  attempt, from sending the request to the last byte of the reply (a reply
  trickled more slowly is cut there, however steadily its bytes come: the
  HTTP client's own timeout only bounds each wait for the next byte); the
  wrapper stores it and never uses it;
  ``max_retries`` (5: attempts per request, lmms-eval's meaning) and
  ``retry_backoff_s`` (1 s: the first wait);
* ``image_format`` (``JPEG``; ``PNG`` or ``WEBP``) and ``image_quality`` (90):
  1,248 PNG frames make a request of hundreds of MB, JPEG a few tens;
  ``image_detail`` (unset): OpenAI's ``detail`` (``low``, ``high``, ``auto``).

Failures are never answers (:mod:`medhorizon_tasks.core.responses`): a 408, a
409, a 429, a 5xx, a connection error or a missed ``timeout`` is retried with
bounded exponential backoff and jitter (:mod:`medhorizon_tasks.core.retry`); a
request that still fails is recorded as ``request_error``. An item the provider
refuses for its content (a 400 saying the input was flagged by its usage or
content policy, or a reply stopped with ``finish_reason: content_filter``) is
recorded as ``refused`` and the run goes on with the other items. Any other
HTTP status (400 for a parameter the model does not take, 401, 403, 404) stops
the run with the provider's message: the first request is sent alone (and the
next ones alone until one is not refused for its content), so a refused request
is sent once, not once per item. An empty reply, or one cut at the token limit
(``finish_reason: length``), is recorded as ``truncated``.

Frames are sent at the size the task decoded them (its total-pixel budget per
request, ``frame_pixels``), decoded ahead while earlier requests are sent.
``frames_as=video`` (default ``images``) sends them instead as ONE
frame-sequence video with their times, for a vLLM server
(:mod:`.vllm_video`: ``media_io_kwargs``, ``mm_processor_kwargs``, the client's
pixel budget ``frame_min_pixels`` / ``frame_max_pixels`` /
``video_total_pixels`` / ``pixel_factor``). A model arg that neither this
bridge nor lmms-eval's wrapper takes stops the run (the wrapper only warns and
drops it). Requests run ``num_concurrent`` at a time, each request's frames
encoded only when it is sent. Text-only requests (the text and blind tasks, an
item whose video failed) follow the same rule; requests whose visuals are
anything else (another package's video paths or images) go to the wrapper
unchanged.
"""

from __future__ import annotations

import inspect
import json
import queue
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

import openai
from lmms_eval.api.instance import GenerationResult, TokenCounts
from lmms_eval.models.model_utils.media_encoder import encode_image_to_base64
from lmms_eval.models.model_utils.usage_metrics import is_budget_exceeded, log_usage
from lmms_eval.models.simple.openai import OpenAICompatible as _OpenAICompatible
from lmms_eval.models.simple.openai import _get_max_new_tokens, _normalize_openai_message_content
from loguru import logger
from openai.types.chat import ChatCompletion
from tqdm import tqdm

from ....benchmarks.request_rules import request_fields, rule_for
from ....core.errors import MedHorizonError
from ....core.responses import REFUSED, refused_text, request_error_text, response_failure, truncated_text
from ....core.retry import backoff_wait, content_refusal, retry_after, transient_status
from ....core.video.planned_frames import PlannedFrames
from ..model_args import CheckedModelArgs
from .base import visuals_ahead
from .frames import planned_frames
from .vllm_video import BUDGET_ARGS, FRAMES_AS, VideoRequest

__all__ = ["OpenAICompatible", "ProviderRefused", "frame_label"]

MIME = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}
# what lmms-eval's evaluator hands every model besides --model_args (batch_size is the wrapper's own)
_EVALUATOR_ARGS = ("device", "max_batch_size")
DEFAULT_TIMEOUT_S = 600.0  # the OpenAI client's own default: what a reply was waited for before `timeout` counted


class ProviderRefused(MedHorizonError):
    """The provider refused a request for good (a 4xx other than 429): every other item would be refused too."""


def _known_args(cls) -> set[str]:
    """The named parameters of every ``__init__`` from ``cls`` down to lmms-eval's wrapper (what a model arg may be)."""
    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is not None:
            names |= {p.name for p in inspect.signature(init).parameters.values()
                      if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    return names - {"self"}


def frame_label(t: float) -> str:
    return f"<{t:.1f} seconds>"


class _ReplyDeadline(Exception):
    """No complete reply within the timeout (the attempt's deadline)."""


def _provider_code(exc: openai.APIStatusError):
    """The ``error.code`` of the provider's JSON body (``content_filter``, ``invalid_prompt``, ...), or None."""
    body = exc.body
    err = body.get("error", body) if isinstance(body, dict) else None
    return err.get("code") if isinstance(err, dict) else None


def _provider_message(exc: openai.APIStatusError) -> str:
    """The provider's own words: ``error.message`` of the JSON body, else the client's message."""
    body = exc.body
    if isinstance(body, dict):
        err = body.get("error", body)
        message = err.get("message") if isinstance(err, dict) else err
        if isinstance(message, str) and message.strip():
            return message.strip()
    return str(exc.message or exc)


class OpenAICompatible(CheckedModelArgs, _OpenAICompatible):
    """lmms-eval's simple ``openai`` wrapper; planned frames become timed images before the question, requests
    follow the provider's rule, and a failed request or a cut-off reply is never an answer."""

    def __init__(self, image_format: str = "JPEG", image_quality: int = 90, image_detail: str | None = None,
                 timeout: float = DEFAULT_TIMEOUT_S, reasoning_effort: str | None = None,
                 max_completion_tokens: int | None = None, max_tokens: int | None = None,
                 thinking: str | bool | None = None, frames_as: str = "images", **kwargs) -> None:
        video_args = {k: kwargs.pop(k) for k in BUDGET_ARGS if k in kwargs}
        for k in _EVALUATOR_ARGS:
            kwargs.pop(k, None)
        unknown = sorted(set(kwargs) - _known_args(type(self)))
        if unknown:
            raise MedHorizonError(f"medhorizon_openai: unknown model arg(s) {', '.join(unknown)}; this bridge takes "
                                  f"{', '.join(sorted(_known_args(type(self)) | set(BUDGET_ARGS)))}")
        super().__init__(timeout=timeout, **kwargs)
        if frames_as not in FRAMES_AS:
            raise MedHorizonError(f"medhorizon_openai: frames_as must be one of {', '.join(FRAMES_AS)}, "
                                  f"got {frames_as!r}")
        if video_args and frames_as != "video":
            raise MedHorizonError(f"medhorizon_openai: {', '.join(video_args)} size the frames of frames_as=video "
                                  "only")
        if frames_as == "video" and str(image_format).upper() not in ("JPEG", "JPG"):
            raise MedHorizonError("medhorizon_openai: frames_as=video sends a JPEG frame sequence (vLLM's "
                                  f"video/jpeg), not image_format={image_format}")
        self.frames_as = frames_as
        self.video = VideoRequest(int(image_quality), **video_args) if frames_as == "video" else None
        self.image_format = str(image_format).upper().replace("JPG", "JPEG")
        if self.image_format not in MIME:
            raise ValueError(f"image_format must be one of {', '.join(MIME)}, got {image_format!r}")
        self.image_quality = int(image_quality)
        self.image_detail = str(image_detail) if image_detail else None
        self.timeout = float(timeout)
        if not self.timeout > 0:
            raise ValueError(f"model arg timeout: expected seconds > 0, got {timeout!r}")
        self.attempts = max(1, int(self.max_retries))
        self.rule = rule_for(self.model_version)
        self.request_args = {"reasoning_effort": reasoning_effort, "max_completion_tokens": max_completion_tokens,
                             "max_tokens": max_tokens, "thinking": thinking}
        request_fields(self.model_version, 1, 0, self.request_args, self.rule)  # a bad value stops here, not per item
        self.api = self.client.with_options(max_retries=0)  # the retries are this bridge's, bounded
        logger.info(f"[medhorizon_openai] {self.model_version}: request rule '{self.rule.family}'")

    def _image_part(self, image) -> dict:
        quality = self.image_quality if self.image_format in ("JPEG", "WEBP") else None
        data = encode_image_to_base64(image, image_format=self.image_format, convert_rgb=True, quality=quality)
        url = {"url": f"data:{MIME[self.image_format]};base64,{data}"}
        if self.image_detail:
            url["detail"] = self.image_detail
        return {"type": "image_url", "image_url": url}

    def frame_content(self, frames: PlannedFrames) -> list[dict]:
        """The message parts for the frames: ``[<t seconds>, image]`` per frame (no labels out of order)."""
        parts = []
        for image, t in zip(frames, frames.timestamps):
            if frames.chronological:
                parts.append({"type": "text", "text": frame_label(t)})
            parts.append(self._image_part(image))
        return parts

    def planned_payload(self, context: str, frames: PlannedFrames | None, gen_kwargs: dict) -> dict:
        """The chat completions request for one item (no frames: text only), its fields by the provider's rule.
        With ``frames_as=video`` the frames are one video part (their times in its vLLM kwargs) before the text;
        otherwise frames whose benchmark fixes the layout (``frames.interleaved``: Sureon's Fig. 17) are sent in
        exactly that layout, text parts and images in order, in place of ``context``."""
        video = self.video is not None and bool(frames)
        if video:
            content = [self.video.content_part(frames), {"type": "text", "text": context}]
        elif frames and frames.interleaved is not None:
            content = [self._image_part(frames[p]) if isinstance(p, int) else {"type": "text", "text": p}
                       for p in frames.interleaved]
        else:
            content = [*(self.frame_content(frames) if frames else []), {"type": "text", "text": context}]
        fields = request_fields(self.model_version, _get_max_new_tokens(gen_kwargs), gen_kwargs.get("temperature", 0),
                                self.request_args, self.rule)
        if video:
            fields = {**fields, **self.video.fields(frames)}
        return {"model": self.model_version, "messages": [{"role": "user", "content": content}], **fields}

    def _send(self, payload: dict) -> GenerationResult:
        """One request with bounded retries of transient failures; ProviderRefused for a permanent one; after the
        last attempt, the request-error marker."""
        extra = {k: v for k, v in payload.items() if k not in ("model", "messages")}
        error = "unknown error"
        for attempt in range(self.attempts):
            server_wait = None
            try:
                return self._result(self._reply(payload, extra), extra)
            except openai.APIStatusError as exc:
                message = _provider_message(exc)
                if content_refusal(exc.status_code, _provider_code(exc), message):  # this item's, not the run's
                    return GenerationResult(text=refused_text(f"HTTP {exc.status_code}: {message}"))
                if not transient_status(exc.status_code):
                    raise ProviderRefused(
                        f"medhorizon_openai: {self.client.base_url} refused the request for model "
                        f"{self.model_version!r} with HTTP {exc.status_code}: {message}. No further request is "
                        f"sent: every item would be refused the same way. Request rule: {self.rule.family} "
                        f"(fields {', '.join(sorted(extra))}); override with model args (reasoning_effort, "
                        f"max_completion_tokens / max_tokens, thinking).") from None
                error = f"HTTP {exc.status_code}: {message}"
                response = getattr(exc, "response", None)
                server_wait = retry_after(response.headers.get("retry-after") if response is not None else None)
            except (openai.APITimeoutError, _ReplyDeadline):
                error = f"no complete reply within the {self.timeout:g} s timeout"
            except Exception as exc:  # noqa: BLE001 - a connection error, a malformed reply: retried
                error = f"{type(exc).__name__}: {exc}"
            logger.info(f"[medhorizon_openai] attempt {attempt + 1}/{self.attempts} failed: {error}")
            if attempt + 1 < self.attempts:
                time.sleep(backoff_wait(attempt, self.retry_backoff_s, server_wait))
        return GenerationResult(text=request_error_text(self.attempts, error))

    def _reply(self, payload: dict, extra: dict) -> ChatCompletion:
        """One attempt's reply, read whole by its deadline (``timeout`` after it was sent): _ReplyDeadline when
        it is not. The HTTP client bounds only each wait for a byte, so the reply is read in a thread of its own
        that the deadline abandons; told to stop, it drops the connection at its next chunk of bytes."""
        box: queue.Queue = queue.Queue(maxsize=1)
        stop = threading.Event()

        def read() -> None:
            try:
                with self.api.chat.completions.with_streaming_response.create(
                        model=payload["model"], messages=payload["messages"], extra_body=extra,
                        timeout=self.timeout) as raw:
                    chunks = []
                    for chunk in raw.iter_bytes():
                        if stop.is_set():
                            return
                        chunks.append(chunk)
                box.put((True, ChatCompletion.construct(**json.loads(b"".join(chunks)))))
            except BaseException as exc:  # noqa: BLE001 - handed to the caller, which retries or stops
                box.put((False, exc))

        threading.Thread(target=read, name="medhorizon_openai reply", daemon=True).start()
        try:
            ok, value = box.get(timeout=self.timeout)
        except queue.Empty:
            stop.set()
            raise _ReplyDeadline from None
        if not ok:
            raise value
        return value

    def _result(self, response, fields: dict) -> GenerationResult:
        """The reply's text; an empty reply or one cut at the token limit as the truncated marker, one stopped
        by the provider's content filter as the refused marker (its partial text is never an answer)."""
        choice = response.choices[0]
        text = _normalize_openai_message_content(choice.message.content)
        finish = getattr(choice, "finish_reason", None)
        if finish == "content_filter":
            text = refused_text("finish_reason=content_filter", text)
        elif finish == "length":
            limit = next((f"{k}={fields[k]}" for k in ("max_completion_tokens", "max_tokens") if k in fields), "")
            text = truncated_text(f"finish_reason=length ({limit})" if limit else "finish_reason=length", text)
        elif not text.strip():
            text = truncated_text(f"empty reply, finish_reason={finish}")
        usage = getattr(response, "usage", None)
        if not usage:
            return GenerationResult(text=text)
        details = getattr(usage, "completion_tokens_details", None)
        counts = TokenCounts(input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                             output_tokens=getattr(usage, "completion_tokens", 0) or 0,
                             reasoning_tokens=getattr(details, "reasoning_tokens", 0) or 0)
        log_usage(model_name=self.model_version, input_tokens=counts.input_tokens, output_tokens=counts.output_tokens,
                  reasoning_tokens=counts.reasoning_tokens, source="model")
        return GenerationResult(text=text, token_counts=counts)

    def generate_until(self, requests) -> list:
        results: list = [None] * len(requests)
        others: list[int] = []
        window = max(1, self.num_concurrent)
        probed = False
        bar = tqdm(total=len(requests), disable=self.rank != 0, desc="medhorizon_openai")
        with ThreadPoolExecutor(max_workers=window) as pool:
            in_flight: dict = {}

            def collect(block_until_below: int) -> None:
                while len(in_flight) > block_until_below:
                    done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
                    for future in done:
                        results[in_flight.pop(future)] = future.result()  # ProviderRefused stops the run here
                        bar.update(1)

            for i, visuals in visuals_ahead(self, requests):
                request = requests[i]
                frames = planned_frames(visuals)
                text_only = visuals is None or (isinstance(visuals, list) and not visuals)  # [], a failed plan
                if frames is None and not text_only:
                    others.append(i)
                    continue
                if is_budget_exceeded():
                    results[i] = GenerationResult(text="")
                    continue
                collect(window - 1)  # payloads are built only when a slot is free: bounded memory
                payload = self.planned_payload(request.args[0], frames, dict(request.args[1]))
                if not probed:  # the first request alone: a refused one is sent once, not once per item
                    results[i] = self._send(payload)
                    # an item refused for its content says nothing of the request's form: the next one probes
                    probed = getattr(response_failure(results[i].text), "status", None) != REFUSED
                    bar.update(1)
                    continue
                in_flight[pool.submit(self._send, payload)] = i
            collect(0)
        bar.close()
        for i, result in enumerate(results):
            if result is not None and response_failure(result.text) is None:  # lmms-eval's cache keeps answers only
                self.cache_hook.add_partial("generate_until", (requests[i].args[0], requests[i].args[1]), result.text)
        if others:
            for i, answer in zip(others, super().generate_until([requests[i] for i in others])):
                results[i] = answer
        return results
