"""A bounded local stand-in for OpenAI-compatible providers: 127.0.0.1, an ephemeral port, one thread, a bounded
number of requests, and it stops by itself.

It refuses what each provider documents it refuses -- written here from the providers' pages, independently of
the package's own registry (``benchmarks/request_rules.py``), so that a wrong rule there is caught here:

* OpenAI reasoning models (gpt-5.x, o-series): ``max_tokens`` ("Use 'max_completion_tokens' instead"), any
  ``temperature``, a ``reasoning_effort`` outside the model's values, unknown fields;
* OpenAI GPT-4.x: ``reasoning_effort``;
* Gemini 3 through its OpenAI endpoint: a temperature below 1.0 (Google: "may lead to unexpected behavior,
  looping"), an effort outside low / medium / high; Gemini 2.5: an effort outside none / low / medium / high;
* DashScope (qwen*): the deprecated ``max_tokens``, OpenAI's ``reasoning_effort``, a non-boolean
  ``enable_thinking``;
* Moonshot (kimi-k2*): any ``temperature`` ("only 1 is allowed"), ``max_tokens``, a ``thinking`` other than
  ``{"type": "enabled" | "disabled"}``.

With ``vllm=True`` it also reads ``video_url`` parts as a vLLM server does (``VideoMediaIO.load_base64``, read
from vLLM's public code): a ``data:video/jpeg;base64,<f1>,<f2>,...`` URL is split at its commas and each part
decoded as a JPEG; ``media_io_kwargs.video.num_frames`` (the server's default 32 when the request has none) keeps
the FIRST that many, ``-1`` all, 0 is refused; ``frames_indices`` must be integers, one per frame kept;
``total_num_frames`` an integer >= the frames kept; the times the model's processor would see are
``frames_indices / fps`` (fps default 1). What it read is kept per request (``videos``).

What it answers is a script: one action per request, in arrival order (``answer``, ``status``, ``sleep``,
``trickle``: an answer whose bytes are sent a few at a time over some seconds, each wait far shorter than the
client's timeout), then its default answer. Every request body is kept (``bodies``).
"""

from __future__ import annotations

import base64
import io
import json
import threading
import time
from fnmatch import fnmatchcase
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_REASONING = {"gpt-5.[2-9]*": ("none", "low", "medium", "high", "xhigh"), "gpt-5.1*": ("none", "low", "medium", "high"),
              "gpt-5*": ("minimal", "low", "medium", "high"), "o[134]*": ("low", "medium", "high")}
_OPENAI_FIELDS = {"model", "messages", "max_completion_tokens", "max_tokens", "temperature", "reasoning_effort",
                  "response_format", "stream", "n", "top_p"}


def _efforts(model: str) -> tuple | None:
    return next((v for pattern, v in _REASONING.items() if fnmatchcase(model, pattern)), None)


def provider_refusal(body: dict) -> str | None:
    """What the provider of ``body["model"]`` says when it refuses the request (None: accepted)."""
    model = str(body.get("model", ""))
    effort = body.get("reasoning_effort")
    if model.startswith(("gpt", "o1", "o3", "o4")):
        unknown = sorted(set(body) - _OPENAI_FIELDS)
        if unknown:
            return f"Unrecognized request argument supplied: {unknown[0]}"
        allowed = _efforts(model)
        if allowed is None:  # a chat model
            return "Unsupported parameter: 'reasoning_effort' is not supported with this model." if effort else None
        if "max_tokens" in body:
            return ("Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                    "'max_completion_tokens' instead.")
        if "temperature" in body:
            return ("Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) "
                    "value is supported.")
        if effort is not None and effort not in allowed:
            return f"Unsupported value: 'reasoning_effort' does not support '{effort}' with this model."
    elif model.startswith("gemini-3"):
        if body.get("temperature", 1.0) < 1.0:
            return "temperature below 1.0 degrades Gemini 3 (looping)"
        if effort is not None and effort not in ("low", "medium", "high"):
            return f"Invalid reasoning_effort: {effort}. Valid values are: high, low, medium"
    elif model.startswith("gemini-2.5"):
        if effort is not None and effort not in ("none", "low", "medium", "high"):
            return f"Invalid reasoning_effort: {effort}. Valid values are: high, low, medium, none"
    elif model.startswith("qwen"):
        if "max_tokens" in body:
            return "max_tokens is deprecated: use max_completion_tokens"
        if "reasoning_effort" in body:
            return "Unrecognized request argument supplied: reasoning_effort"
        if "enable_thinking" in body and not isinstance(body["enable_thinking"], bool):
            return "enable_thinking must be a boolean"
    elif model.startswith("kimi-k2"):
        if "temperature" in body:
            return "invalid temperature: only 1 is allowed for this model"
        if "max_tokens" in body:
            return "max_tokens is deprecated, please refer to max_completion_tokens"
        if "thinking" in body and body["thinking"] not in ({"type": "enabled"}, {"type": "disabled"}):
            return "invalid thinking: expected {\"type\": \"enabled\" | \"disabled\"}"
    return None


VLLM_DEFAULT_NUM_FRAMES = 32  # VideoMediaIO(num_frames=32) unless --media-io-kwargs or the request says otherwise


def vllm_videos(body: dict, server_num_frames: int = VLLM_DEFAULT_NUM_FRAMES) -> list[dict]:
    """Every ``video_url`` of ``body`` as a vLLM server loads it: ``frames`` (PIL images), ``times`` (seconds),
    ``metadata``; ValueError with vLLM's complaint for what it refuses."""
    from PIL import Image

    kwargs = dict((body.get("media_io_kwargs") or {}).get("video") or {})
    num_frames = int(kwargs.pop("num_frames", server_num_frames))
    out = []
    for message in body.get("messages", []):
        content = message.get("content")
        for part in content if isinstance(content, list) else []:
            if part.get("type") != "video_url":
                continue
            url = part["video_url"]["url"]
            header, _, data = url.partition(",")
            if header != "data:video/jpeg;base64":
                raise ValueError(f"mock vLLM reads only video/jpeg frame sequences, got {header!r}")
            if num_frames > 0:
                pieces = data.split(",", num_frames)[:num_frames]
            elif num_frames == 0:
                raise ValueError("num_frames must be greater than 0 or -1")
            else:
                pieces = data.split(",")
            frames = [Image.open(io.BytesIO(base64.b64decode(p))).convert("RGB") for p in pieces]
            fps = float(kwargs.get("fps", 1))
            indices = kwargs.get("frames_indices")
            if indices is None:
                indices = list(range(len(frames)))
            elif not (isinstance(indices, list) and all(isinstance(i, int) for i in indices)):
                raise ValueError("frames_indices must be a list of integers")
            elif len(indices) != len(frames):
                raise ValueError(f"frames_indices length ({len(indices)}) must match number of frames sent "
                                 f"({len(frames)})")
            total = kwargs.get("total_num_frames", len(frames))
            if not isinstance(total, int) or total < len(frames):
                raise ValueError(f"total_num_frames ({total}) must be an integer >= number of frames sent")
            processor = body.get("mm_processor_kwargs") or {}
            out.append({"frames": frames, "times": [i / fps for i in indices], "fps": fps, "indices": indices,
                        "total_num_frames": total, "do_sample_frames": processor.get("do_sample_frames", True),
                        "mm_processor_kwargs": processor, "sent": data.count(",") + 1})
    return out


def send_json(handler: BaseHTTPRequestHandler, code: int, payload: dict, headers: dict | None = None) -> None:
    """Answer a request with ``payload`` as JSON; a client that gave up (its timeout) gets nothing."""
    data = json.dumps(payload).encode()
    try:
        handler.send_response(code)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            handler.send_header(k, v)
        handler.end_headers()
        handler.wfile.write(data)
    except OSError:
        pass


def answer(content: str = "B", finish_reason: str = "stop") -> tuple:
    return ("answer", content, finish_reason)


def status(code: int, message: str = "", headers: dict | None = None, error_code=None) -> tuple:
    """An HTTP error; ``error_code`` is the body's ``error.code`` (the HTTP status when None)."""
    return ("status", code, message or f"status {code}", headers or {}, code if error_code is None else error_code)


def sleep(seconds: float, then: tuple | None = None) -> tuple:
    return ("sleep", seconds, then or answer())


def trickle(seconds: float, then: tuple | None = None, pieces: int = 40) -> tuple:
    """``then`` (an answer) sent in ``pieces`` parts spread over ``seconds``: no wait for a byte is long, the
    whole reply is."""
    return ("trickle", seconds, then or answer(), pieces)


def trickle_json(handler: BaseHTTPRequestHandler, payload: dict, seconds: float, pieces: int) -> None:
    data = json.dumps(payload).encode()
    step = max(1, -(-len(data) // pieces))
    try:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.flush()
        for start in range(0, len(data), step):
            handler.wfile.write(data[start:start + step])
            handler.wfile.flush()
            time.sleep(seconds / pieces)
    except OSError:
        pass  # the client gave up


class MockProvider:
    """``with MockProvider(script) as mock:`` ... ``mock.base_url``; stops after ``limit`` requests (answering 503
    to any later one) or ``lifetime_s`` seconds, whichever comes first."""

    def __init__(self, script=(), default=answer(), limit: int = 50, lifetime_s: float = 900, enforce: bool = True,
                 vllm: bool = False):
        self.script, self.default, self.limit, self.enforce = list(script), default, limit, enforce
        self.vllm = vllm
        self.bodies: list[dict] = []
        self.videos: list[list[dict]] = []
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with owner._lock:
                    owner.bodies.append(body)
                    n = len(owner.bodies)
                    action = owner.script.pop(0) if owner.script else owner.default
                if n > owner.limit:
                    action = status(503, "mock provider: request limit reached")
                refusal = provider_refusal(body) if owner.enforce else None
                if owner.vllm:
                    try:
                        videos = vllm_videos(body)
                    except ValueError as exc:
                        videos, refusal = [], str(exc)
                    with owner._lock:
                        owner.videos.append(videos)
                if refusal is not None:
                    action = status(400, refusal)
                owner._act(self, action, body)
                if n >= owner.limit:
                    threading.Thread(target=owner.close, daemon=True).start()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._timer = threading.Timer(lifetime_s, self.close)
        self._timer.daemon = True
        self._closed = False

    def _act(self, handler, action, body) -> None:
        kind = action[0]
        slow = None
        if kind == "trickle":
            slow, action = (action[1], action[3]), action[2]
            kind = action[0]
        if kind == "sleep":
            time.sleep(action[1])
            action = action[2]
            kind = action[0]
        if kind == "status":
            _, code, message, headers, error_code = action
            payload = {"error": {"message": message, "type": "invalid_request_error", "code": error_code}}
            send_json(handler, code, payload, headers)
            return
        _, content, finish = action
        payload = {"id": "mock", "object": "chat.completion", "created": 0, "model": body.get("model"),
                   "choices": [{"index": 0, "finish_reason": finish,
                                "message": {"role": "assistant", "content": content}}],
                   "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
        if slow is not None:
            trickle_json(handler, payload, *slow)
            return
        send_json(handler, 200, payload, {})


    def __enter__(self) -> "MockProvider":
        self._thread.start()
        self._timer.start()
        return self

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._timer.cancel()
        self.server.shutdown()
        self.server.server_close()

    def __exit__(self, *exc) -> None:
        self.close()
