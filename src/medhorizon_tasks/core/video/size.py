"""The size frames are decoded at: the consumer's decision, one rule per consumer.

A rule answers one question: given ``n`` frames of a ``width x height``
(displayed) source, at which ``(width, height)`` does this consumer want them?
The decoder then scales while it converts to RGB (one swscale pass in its own
threads, never a full-size RGB array first), and every key of decoded frames
(the run's store, the on-disk frame cache, VLMEvalKit's frame folders) carries
the resulting size.

* :class:`QwenVideo`: Qwen2.5-VL / Qwen3-VL's official video path,
  qwen-vl-utils 0.0.14's ``fetch_video`` budget (see the class);
* :class:`InternVLTiles`: InternVL's ``dynamic_preprocess`` grid of 448 px tiles;
* :class:`PixelBudget`: a total-pixel budget per request that a task declares,
  for generic wrappers (the source size, shrunk only when ``n`` frames would
  exceed it);
* :class:`MaxSide`: the older fixed bound on the longer side.

A bridge states its rule for the requests it decodes with
:func:`requested_size` (thread-local, so look-ahead workers state it too); a
task's own rule applies otherwise (:func:`size_rule`).
"""

from __future__ import annotations

import contextlib
import math
import threading
from dataclasses import dataclass
from typing import Iterator, Protocol

__all__ = ["SizeRule", "MaxSide", "PixelBudget", "QwenVideo", "QwenPixelBudget", "InternVLTiles", "smart_resize",
           "requested_size", "size_rule", "DEFAULT_FRAME_PIXELS", "rule_from_kwargs"]

# qwen-vl-utils 0.0.14 (vision_process.py, the reference video path of Qwen2.5-VL and Qwen3-VL), in vision
# tokens of factor x factor pixels (factor = patch size x spatial merge: 28 for Qwen2.5-VL, 32 for Qwen3-VL).
QWEN_VIDEO_MIN_TOKENS = 128             # VIDEO_MIN_TOKEN_NUM
QWEN_VIDEO_MAX_TOKENS = 768             # VIDEO_MAX_TOKEN_NUM
QWEN_VIDEO_TOTAL_TOKENS = 128000 * 0.9  # MODEL_SEQ_LEN * 0.9 (fetch_video's default total_pixels)
QWEN_FRAME_FACTOR = 2                   # FRAME_FACTOR: frames come in pairs (one temporal patch)

#: The total-pixel budget per request of a task that does not know its model (a generic wrapper): the same
#: total as Qwen2.5-VL's official video path (qwen-vl-utils 0.0.14: 115,200 tokens of 28 x 28 pixels), so a
#: 1,248-frame request of a 16:9 source gets ~358 x 202 frames (271 MB of RGB) and a 4-frame one full HD.
DEFAULT_FRAME_PIXELS = int(QWEN_VIDEO_TOTAL_TOKENS * 28 * 28)


class SizeRule(Protocol):
    def size(self, n: int, width: int, height: int) -> tuple[int, int]:
        """(width, height) of each of ``n`` frames of a ``width x height`` source."""

    def describe(self) -> str:
        """A short text naming the rule and its numbers (shown in reports and keys)."""


def _even(x: float) -> int:
    return max(2, int(round(x / 2)) * 2)


@dataclass(frozen=True)
class MaxSide:
    """The longer side at most ``side`` (never enlarged; even sides): the package's older fixed size."""

    side: int

    def size(self, n: int, width: int, height: int) -> tuple[int, int]:
        if not self.side or max(width, height) <= self.side:
            return width, height
        scale = self.side / max(width, height)
        return _even(width * scale), _even(height * scale)

    def describe(self) -> str:
        return f"max_side={self.side}"


@dataclass(frozen=True)
class PixelBudget:
    """At most ``total`` pixels over a request's ``n`` frames: the source size, shrunk (aspect kept, even sides,
    never enlarged) only when ``n`` source frames would exceed it. Memory is bounded per request (``3 * total``
    bytes of RGB), not by a fixed side."""

    total: int = DEFAULT_FRAME_PIXELS

    def size(self, n: int, width: int, height: int) -> tuple[int, int]:
        per_frame = self.total / max(n, 1)
        if width * height <= per_frame:
            return width, height
        scale = math.sqrt(per_frame / (width * height))
        w, h = _even(width * scale), _even(height * scale)
        while w * h > per_frame and min(w, h) > 2:  # rounding up to even sides may pass the budget
            w, h = _even(w * 0.99 - 1), _even(h * 0.99 - 1)
        return w, h

    def describe(self) -> str:
        return f"frame_pixels={self.total}"


def smart_resize(height: int, width: int, factor: int, min_pixels: float, max_pixels: float) -> tuple[int, int]:
    """Qwen's ``smart_resize`` (qwen-vl-utils): sides rounded to multiples of ``factor``, aspect ratio kept,
    area within [min_pixels, max_pixels]. (height, width)."""
    h_bar = max(factor, round(height / factor) * factor)
    w_bar = max(factor, round(width / factor) * factor)
    if h_bar * w_bar > max_pixels:
        beta = math.sqrt(height * width / max_pixels)
        h_bar = max(factor, math.floor(height / beta / factor) * factor)
        w_bar = max(factor, math.floor(width / beta / factor) * factor)
    elif h_bar * w_bar < min_pixels:
        beta = math.sqrt(min_pixels / (height * width))
        h_bar = math.ceil(height * beta / factor) * factor
        w_bar = math.ceil(width * beta / factor) * factor
    return h_bar, w_bar


class QwenVideo:
    """Per-frame pixel budget of a Qwen video, the rule of qwen-vl-utils' ``fetch_video``.

    Each frame is resized (aspect kept, sides multiples of ``factor``) to at
    least ``min_pixels`` and at most ``min(max_pixels, total_pixels / n * 2)``
    pixels (but never below ``1.05 * min_pixels``), where n is the number of
    frames: a long video gets smaller frames, so its token count stays within
    ``total_pixels``. Defaults (None) are qwen-vl-utils': 128 and 768 tokens per
    frame, 115,200 tokens per video, i.e. Qwen2.5-VL (factor 28) 100,352 /
    602,112 / 90,316,800 pixels and Qwen3-VL (factor 32) 131,072 / 786,432 /
    117,964,800 pixels. An odd count is counted as the next even one (the
    bridge repeats the last frame to fill the last two-frame temporal patch).
    """

    def __init__(self, factor: int, min_pixels: int | None = None, max_pixels: int | None = None,
                 total_pixels: int | None = None):
        self.factor = int(factor)
        unit = self.factor * self.factor
        self.min_pixels = int(min_pixels) if min_pixels else QWEN_VIDEO_MIN_TOKENS * unit
        self.max_pixels = int(max_pixels) if max_pixels else QWEN_VIDEO_MAX_TOKENS * unit
        self.total_pixels = int(total_pixels) if total_pixels else int(QWEN_VIDEO_TOTAL_TOKENS * unit)
        if self.max_pixels < self.min_pixels:
            raise ValueError(f"frame_max_pixels ({self.max_pixels}) is below frame_min_pixels ({self.min_pixels})")

    def frame_size(self, height: int, width: int, n_frames: int) -> tuple[int, int]:
        """(height, width) of every frame of an ``n_frames`` video whose frames are ``height`` x ``width``."""
        ceiling = max(min(self.max_pixels, self.total_pixels / max(n_frames, 1) * QWEN_FRAME_FACTOR),
                      int(self.min_pixels * 1.05))
        return smart_resize(height, width, self.factor, self.min_pixels, ceiling)

    def size(self, n: int, width: int, height: int) -> tuple[int, int]:
        h, w = self.frame_size(height, width, n + n % QWEN_FRAME_FACTOR)
        return w, h

    def describe(self) -> str:
        return (f"{self.min_pixels}..{self.max_pixels} px per frame, {self.total_pixels} px per video "
                f"(factor {self.factor})")


QwenPixelBudget = QwenVideo  # the bridges' earlier name


@dataclass(frozen=True)
class InternVLTiles:
    """InternVL's ``dynamic_preprocess``: a frame becomes a grid of ``tile`` px tiles (at most ``max_tiles``),
    the grid whose aspect ratio is closest to the frame's (ties: the larger grid when the frame has the pixels
    to fill it), so the frame is decoded straight at the grid's size (InternVL3 / 3.5 model cards, tile 448)."""

    tile: int = 448
    max_tiles: int = 1

    def size(self, n: int, width: int, height: int) -> tuple[int, int]:
        aspect = width / height
        grids = sorted({(i, j) for k in range(1, self.max_tiles + 1) for i in range(1, k + 1)
                        for j in range(1, k + 1) if i * j <= self.max_tiles}, key=lambda g: g[0] * g[1])
        best, best_diff = (1, 1), float("inf")
        for cols, rows in grids:
            diff = abs(aspect - cols / rows)
            if diff < best_diff:
                best, best_diff = (cols, rows), diff
            elif diff == best_diff and width * height > 0.5 * self.tile * self.tile * cols * rows:
                best = (cols, rows)
        return self.tile * best[0], self.tile * best[1]

    def describe(self) -> str:
        return f"internvl tiles {self.tile}px x{self.max_tiles}"


_local = threading.local()


@contextlib.contextmanager
def requested_size(rule: SizeRule | None) -> Iterator[None]:
    """Within the block (this thread), frames are decoded at ``rule``'s size instead of the task's own."""
    before = getattr(_local, "rule", None)
    _local.rule = rule
    try:
        yield
    finally:
        _local.rule = before


def size_rule(task_rule: SizeRule | None) -> SizeRule | None:
    """The rule frames are decoded at in this thread: a consumer's :func:`requested_size`, else the task's."""
    return getattr(_local, "rule", None) or task_rule


def rule_from_kwargs(kw: dict, default_max_side: int | None = None) -> SizeRule | None:
    """A task's own rule from its keys: ``frame_pixels`` (a total per request; 0: native size), else the older
    ``max_side``, else ``default_max_side`` (None: the default pixel budget)."""
    if "frame_pixels" in kw:
        total = int(kw["frame_pixels"] or 0)
        return PixelBudget(total) if total > 0 else None
    side = kw.get("max_side", default_max_side)
    if "max_side" in kw or default_max_side is not None:
        return MaxSide(int(side)) if side else None
    return PixelBudget()
