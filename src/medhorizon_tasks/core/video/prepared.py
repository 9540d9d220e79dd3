"""An item's video, prepared for decoding: resolved, indexed, checked, and its frame plan.

Shared by every benchmark's protocol (MedHorizon, Sureon, SurgHiBench): each
builds its own plan, and all of them hand a :class:`PreparedVideo` to the
decoder. The packet index of a file is built once per content and kept on disk
(:mod:`.index_store`); its picture-change signal is computed once per process
while the file is unchanged (its :func:`~medhorizon_tasks.core.file_identity.stat_key`:
device, inode, size, mtime and ctime, which any write, copy over it or ``touch``
changes).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import VideoError
from ..file_identity import stat_key
from ..paths import resolve_video_path
from ..sampling import ChangeSignal, FramePlan
from ..settings import env_text
from .ahead import decoded_once
from .decode import VideoIndex, decode_plan, target_size
from .frame_cache import CACHE_ENV, FrameCache, cached_decode
from .frame_change import change_signal
from .index_store import stored_index
from .redact import Redaction, apply_plan_redaction
from .size import SizeRule, size_rule

__all__ = ["DEFAULT_MAX_SIDE", "PreparedVideo", "video_file", "video_index", "video_change_signal",
           "frame_cache_from_env", "frame_size", "decode_prepared", "scale_frames"]

DEFAULT_MAX_SIDE = 448     # frames are shrunk so the longer side is at most this (0 = native)


@dataclass(frozen=True)
class PreparedVideo:
    """An item's video, measured and checked against the data, and its frame plan."""

    path: Path
    index: VideoIndex
    plan: FramePlan
    duration_s: float  # the file's, within tolerance of the data's


def video_file(item, video_root: str | os.PathLike) -> Path:
    """``item.video_path`` under the video root (never outside it), naming ``item.uid`` in errors."""
    return resolve_video_path(video_root, item.video_path, uid=item.uid)


def video_index(path: Path, uid: str | None = None) -> VideoIndex:
    """The packet index of a video: built once per file content and kept on disk for every later process and
    run (:mod:`.index_store`, ``$MEDHORIZON_INDEX_CACHE``)."""
    return stored_index(path, uid=uid)


@functools.lru_cache(maxsize=64)
def _cached_signal(path: str, stat: tuple) -> ChangeSignal:
    return change_signal(path)


def video_change_signal(path: Path, uid: str | None = None) -> ChangeSignal:
    """The low-resolution picture-change signal of a video, computed once per process while unchanged."""
    stat = stat_key(path)
    try:
        return _cached_signal(str(path), stat)
    except VideoError as exc:
        raise VideoError(str(exc).split(" (video:")[0], path=str(path), uid=uid) from None


def frame_cache_from_env() -> FrameCache | None:
    """The frame cache when ``$MEDHORIZON_FRAME_CACHE`` names its folder (opt-in: it can grow large)."""
    return FrameCache() if env_text(CACHE_ENV) else None


def frame_size(video: PreparedVideo, task_rule: SizeRule | None) -> tuple[int, int]:
    """(width, height) the plan's frames are decoded at: the consumer's rule (:func:`.size.requested_size`), else
    the task's, for this many frames of this source (its displayed size); None: the source size."""
    rule = size_rule(task_rule)
    return target_size(video.index.display_size, len(video.plan), size=rule) if rule else video.index.display_size


def decode_prepared(video: PreparedVideo, task_rule: SizeRule | None, uid: str | None = None, *,
                    cache: FrameCache | None = None, redaction: Redaction | None = None,
                    size: tuple[int, int] | None = None) -> np.ndarray:
    """The plan's frames at :func:`frame_size`, decoded once per run (:func:`.ahead.decoded_once`; read-only), and
    through the on-disk frame cache when there is one (``cache``, else ``$MEDHORIZON_FRAME_CACHE``); ``redaction``
    (the plan's pass) is applied before anything is kept. ``size``: this (width, height), whatever the rules say."""
    size = size or frame_size(video, task_rule)
    cache = cache if cache is not None else frame_cache_from_env()

    def decode() -> np.ndarray:
        if cache is not None:
            return cached_decode(video.path, video.plan, max_side=size, uid=uid, index=video.index, cache=cache,
                                 redaction=redaction)
        frames = decode_plan(video.path, video.plan, size=size, uid=uid, index=video.index)
        return apply_plan_redaction(frames, video.plan, redaction)

    return decoded_once(video.path, video.plan.key, size, decode)


def scale_frames(frames: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``frames`` (n, h, w, 3) at ``size`` (width, height), bicubic, antialiased (PIL); the same array when it is
    that size already. For frames that had to be decoded at full size first (Sureon's redaction)."""
    from PIL import Image

    w, h = size
    if frames.shape[1:3] == (h, w):
        return frames
    out = np.empty((len(frames), h, w, 3), dtype=np.uint8)
    for i, frame in enumerate(frames):
        out[i] = np.asarray(Image.fromarray(frame).resize((w, h), Image.Resampling.BICUBIC, reducing_gap=None))
    out.setflags(write=False)
    return out
