"""Decoded frames cached on disk, shareable between processes and machines.

One entry holds the output of :func:`~medhorizon_tasks.core.video.decode.decode_plan` for
one (video, plan, ``max_side``): an uncompressed ``.npy`` file, so a hit costs
one read of the array and is bit-exact, plus a small JSON sidecar saying what
it is. Layout: ``root/ab/abcdef....npy`` and ``root/ab/abcdef....json``
(sharded by the first two hex digits of the key).

The key combines

* the video's identity: its size and a sha256 of its first and last MiB. This
  is content, not path or mtime, so the same bytes copied to another machine
  hit. An edit that keeps the size and both ends would not be noticed; video
  files are not edited in place in practice, and hashing the whole file would
  cost more than the hit saves. The hash is remembered per process while the
  file's (path, size, mtime_ns) stay the same;
* the plan's frame indices and its redaction pass, if any (:attr:`FramePlan.key`): an entry
  holds the pixels after that pass (Sureon's blurring), never raw frames under a blurred key;
* ``max_side`` (which fixes the output size for a given video).

Concurrency: every file is written to a unique temporary name in the entry's
folder, flushed to disk and renamed into place (``os.replace``, atomic on POSIX
and on NFS). Several processes or machines writing the same entry write
identical bytes and the last rename wins; a reader sees a complete old file or
a complete new one, never a partial one. An entry that cannot be read back as
an array of the expected shape (truncated, overwritten by something else) is a
miss, and the next write replaces it.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import time
import warnings
from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import MedHorizonError
from ..safeio import atomic_write_with
from ..sampling import FramePlan
from .decode import VideoIndex, decode_plan
from .redact import Redaction, apply_plan_redaction, check_plan_redaction

__all__ = ["FrameCache", "CacheWriteError", "cached_decode", "CACHE_ENV"]

CACHE_ENV = "MEDHORIZON_FRAME_CACHE"
# Part of every key: bump it when decode_plan's output for the same inputs changes (another resize
# filter, say), so that old entries are no longer found.
_FORMAT = 2  # 2: frames as a player shows them (display rotation; edit-list pre-roll is not a frame)
_END_BYTES = 1 << 20  # how much of each end of the video is hashed


def _default_root() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "medhorizon_tasks" / "frames")


@functools.lru_cache(maxsize=4096)
def _video_identity(path: str, size: int, mtime_ns: int) -> str:
    """sha256 of the size and the first and last MiB (the whole file when it is smaller).

    ``mtime_ns`` is only part of the memo's key: a rewritten file is hashed again.
    """
    digest = hashlib.sha256(f"{size}:".encode())
    with open(path, "rb") as f:
        digest.update(f.read(_END_BYTES))
        if size > _END_BYTES:
            f.seek(max(_END_BYTES, size - _END_BYTES))
            digest.update(f.read())
    return digest.hexdigest()


def file_identity(path: str | os.PathLike) -> str | None:
    """The content identity of a video file (size and both ends, memoized while size and mtime are unchanged);
    None when it cannot be read (a missing video)."""
    try:
        st = os.stat(path)
        return _video_identity(os.fspath(path), st.st_size, st.st_mtime_ns)
    except OSError:
        return None


def _write_atomically(path: Path, write: Callable) -> None:
    """``write(file)`` into a unique temporary file beside ``path``, flushed to disk, then renamed over ``path``
    (:func:`~.safeio.atomic_write_with`; the temporary file is removed on any failure). On disk before the
    rename: after a crash the entry is the old file or the whole new one, never a renamed file whose blocks
    were not written yet (which could read back as zeros). 0644: the cache may be shared between users."""
    atomic_write_with(path, write, mode=0o644)


class CacheWriteError(MedHorizonError):
    """A strict cache (:class:`FrameCache` ``strict=True``) could not store an entry (full disk, read-only)."""


class FrameCache:
    """Decoded frame arrays on disk under ``root``
    (default: ``$MEDHORIZON_FRAME_CACHE``, else ``~/.cache/medhorizon_tasks/frames``)."""

    def __init__(self, root: str | os.PathLike | None = None, *, strict: bool = False):
        """``strict``: an entry that cannot be written raises :class:`CacheWriteError` in
        :func:`cached_decode` instead of a warning -- for ``prepare-frames``, whose only product is the cache."""
        self.root = Path(root) if root is not None else _default_root()
        self.strict = strict

    def __repr__(self) -> str:
        return f"FrameCache({str(self.root)!r})"

    def key(self, video_path: str | os.PathLike, plan: FramePlan, max_side: int | None) -> str:
        """Hex key of the frames ``plan`` selects from this video at this size.

        Raises ``OSError`` (``FileNotFoundError``...) if the video cannot be read."""
        st = os.stat(video_path)
        video = _video_identity(os.fspath(video_path), st.st_size, st.st_mtime_ns)
        size = f"max_side={max_side}" if max_side else "full"
        return hashlib.sha256(f"v{_FORMAT}|{video}|{plan.key}|{size}".encode()).hexdigest()[:40]

    def _entry(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.npy"

    def get(self, video_path: str | os.PathLike, plan: FramePlan, max_side: int | None) -> np.ndarray | None:
        """The cached frames, or ``None`` on a miss (including an unreadable or damaged entry)."""
        entry = self._entry(self.key(video_path, plan, max_side))
        try:
            frames = np.load(entry, allow_pickle=False)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, EOFError):  # truncated or not an .npy file: a miss, replaced by the next put
            return None
        if frames.dtype != np.uint8 or frames.ndim != 4 or frames.shape[0] != len(plan) or frames.shape[3] != 3:
            return None
        return frames

    def put(self, video_path: str | os.PathLike, plan: FramePlan, max_side: int | None,
            frames: np.ndarray) -> Path:
        """Store ``frames`` (``decode_plan``'s output for these arguments); returns the entry's path."""
        if frames.dtype != np.uint8 or frames.ndim != 4 or frames.shape[0] != len(plan) or frames.shape[3] != 3:
            raise ValueError(f"expected ({len(plan)}, H, W, 3) uint8 frames, got {frames.shape} {frames.dtype}")
        entry = self._entry(self.key(video_path, plan, max_side))
        _write_atomically(entry, lambda f: np.save(f, np.ascontiguousarray(frames), allow_pickle=False))
        sidecar = {"video": os.path.abspath(video_path), "video_bytes": os.stat(video_path).st_size,
                   "policy": plan.policy, "redaction": plan.redaction, "plan_key": plan.key, "max_side": max_side,
                   "shape": list(frames.shape), "dtype": "uint8", "written": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        _write_atomically(entry.with_suffix(".json"), lambda f: f.write(json.dumps(sidecar, indent=1).encode()))
        return entry

    def _files(self) -> list[os.DirEntry]:
        """Every file in the shard folders (entries, sidecars, temporary files)."""
        if not self.root.is_dir():
            return []
        with os.scandir(self.root) as top:
            shards = [d.path for d in top if d.is_dir(follow_symlinks=False) and len(d.name) == 2]
        files = []
        for shard in shards:
            with os.scandir(shard) as entries:
                files.extend(f for f in entries if f.is_file(follow_symlinks=False))
        return files

    def info(self) -> dict:
        """``{"root", "entries", "bytes"}``: number of cached arrays and bytes on disk (sidecars included)."""
        entries = total = 0
        for f in self._files():
            entries += f.name.endswith(".npy")
            with contextlib.suppress(FileNotFoundError):  # removed by another process meanwhile
                total += f.stat().st_size
        return {"root": str(self.root), "entries": entries, "bytes": total}

    def clear(self) -> int:
        """Remove every entry, sidecar and leftover temporary file; returns the number of entries removed."""
        removed = 0
        shards = set()
        for f in self._files():
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f.path)
                removed += f.name.endswith(".npy")
            shards.add(os.path.dirname(f.path))
        for shard in shards:
            with contextlib.suppress(OSError):  # not empty: another process is writing into it
                os.rmdir(shard)
        return removed


def cached_decode(path: str | os.PathLike, plan: FramePlan, *, max_side: int | None = None,
                  uid: str | None = None, index: VideoIndex | None = None, expected_frames: int | None = None,
                  cache: FrameCache | None = None, redaction: Redaction | None = None) -> np.ndarray:
    """:func:`~medhorizon_tasks.core.video.decode.decode_plan` through the frame cache: a hit decodes nothing.

    ``redaction``: the pass the plan names (:attr:`FramePlan.redaction`; ValueError when they differ), applied
    after decoding and before storing, so a hit returns the blurred frames without running the detectors again.

    A cache that cannot be written (read-only, full disk) only costs a warning, unless it is ``strict``:
    then :class:`CacheWriteError` naming the item and the reason.
    """
    cache = cache if cache is not None else FrameCache()
    check_plan_redaction(plan, redaction)  # before a hit is returned, too
    try:
        frames = cache.get(path, plan, max_side)
    except OSError:
        frames = None  # the video is missing or unreadable: decode_plan reports it, naming the item
    if frames is not None:
        return frames
    frames = decode_plan(path, plan, max_side=max_side, uid=uid, index=index, expected_frames=expected_frames)
    frames = apply_plan_redaction(frames, plan, redaction)
    try:
        cache.put(path, plan, max_side, frames)
    except OSError as exc:
        if cache.strict:
            where = f"item {uid}: " if uid is not None else ""
            raise CacheWriteError(f"{where}frame cache {cache.root} not written ({exc})") from None
        warnings.warn(f"frame cache {cache.root} not written ({exc}); continuing without it",
                      RuntimeWarning, stacklevel=2)
    return frames
