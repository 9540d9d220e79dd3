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

from ..errors import VideoError
from ..file_identity import stat_key
from ..paths import resolve_video_path
from ..sampling import ChangeSignal, FramePlan
from .decode import VideoIndex
from .frame_cache import CACHE_ENV, FrameCache
from .frame_change import change_signal
from .index_store import stored_index

__all__ = ["DEFAULT_MAX_SIDE", "PreparedVideo", "video_file", "video_index", "video_change_signal",
           "frame_cache_from_env"]

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
    return FrameCache() if os.environ.get(CACHE_ENV) else None
