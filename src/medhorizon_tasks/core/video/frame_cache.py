"""Decoded frames cached on disk, shareable between processes and machines.

One entry holds the output of :func:`~medhorizon_tasks.core.video.decode.decode_plan` for
one (video, plan, ``max_side``): an uncompressed ``.npy`` file, so a hit costs
one read of the array and is bit-exact, plus a small JSON sidecar saying what
it is. Layout: ``root/ab/abcdef....npy`` and ``root/ab/abcdef....json``
(sharded by the first two hex digits of the key).

The key combines

* the video's identity (:func:`medhorizon_tasks.core.file_identity.file_identity`: a digest of all of
  its bytes: one read of the whole file the first time, then a ``stat`` while it is unchanged). It is content, not
  path or time: the same bytes copied to another machine hit, and a file whose bytes changed anywhere
  -- a re-download that repairs only its middle, same size and ends -- gets new entries;
* the plan's frame indices and its redaction pass, if any (:attr:`FramePlan.key`): an entry
  holds the pixels after that pass (Sureon's blurring), never raw frames under a blurred key;
* the output size: ``(width, height)``, or the older ``max_side`` (which fixes it for a given video).

The cache marks its folder with :data:`MARK` (written with the first entry) and removes only what it
recognises as its own (:meth:`FrameCache.clear`): entries and sidecars named by their key in the shard
folder of that key, and its own leftover temporary files. Anything else in the folder is left alone.

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
import hashlib
import json
import os
import re
import time
import warnings
from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import MedHorizonError
from ..file_identity import file_identity
from ..safeio import atomic_write_with, read_json
from ..sampling import FramePlan
from ..settings import env_text
from .decode import VideoIndex, decode_plan
from .redact import Redaction, apply_plan_redaction, check_plan_redaction

__all__ = ["FrameCache", "CacheWriteError", "cached_decode", "CACHE_ENV", "MARK"]

CACHE_ENV = "MEDHORIZON_FRAME_CACHE"
# Part of every key: bump it when decode_plan's output for the same inputs changes (another resize
# filter, say), so that old entries are no longer found.
# 3: the video's identity is the digest of all its bytes (2: its size and both ends, which a repaired middle kept)
# 4: frames scaled while converted to RGB (one swscale pass), sizes given as width x height
_FORMAT = 4
#: The file that marks a folder as a frame cache (written with its first entry).
MARK = "medhorizon_frame_cache.json"
# what the cache writes in a shard folder: <key>.npy, <key>.json, and safeio's temporaries of those
_OWN_FILE = re.compile(r"(?P<key>[0-9a-f]{40})\.(?:npy|json)|\.(?P<tmp>[0-9a-f]{40})\.(?:npy|json)\.\d+\.[0-9a-f]{8}\.tmp")


def _default_root() -> Path:
    return Path(env_text(CACHE_ENV) or Path.home() / ".cache" / "medhorizon_tasks" / "frames")


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

    def key(self, video_path: str | os.PathLike, plan: FramePlan, max_side: int | tuple[int, int] | None) -> str:
        """Hex key of the frames ``plan`` selects from this video at this size.

        Raises ``OSError`` (``FileNotFoundError``...) if the video cannot be read."""
        video = file_identity(video_path)
        if isinstance(max_side, tuple):
            size = f"size={int(max_side[0])}x{int(max_side[1])}"
        else:
            size = f"max_side={max_side}" if max_side else "full"
        return hashlib.sha256(f"v{_FORMAT}|{video}|{plan.key}|{size}".encode()).hexdigest()[:40]

    def _entry(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.npy"

    def get(self, video_path: str | os.PathLike, plan: FramePlan, max_side: int | tuple[int, int] | None) -> np.ndarray | None:
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

    def put(self, video_path: str | os.PathLike, plan: FramePlan, max_side: int | tuple[int, int] | None,
            frames: np.ndarray) -> Path:
        """Store ``frames`` (``decode_plan``'s output for these arguments); returns the entry's path."""
        if frames.dtype != np.uint8 or frames.ndim != 4 or frames.shape[0] != len(plan) or frames.shape[3] != 3:
            raise ValueError(f"expected ({len(plan)}, H, W, 3) uint8 frames, got {frames.shape} {frames.dtype}")
        entry = self._entry(self.key(video_path, plan, max_side))
        if not self.is_marked():
            mark = {"what": "medhorizon-tasks frame cache", "format": _FORMAT,
                    "layout": "<key[:2]>/<key>.npy and <key>.json; nothing else here is the cache's"}
            _write_atomically(self.root / MARK, lambda f: f.write(json.dumps(mark, indent=1).encode()))
        _write_atomically(entry, lambda f: np.save(f, np.ascontiguousarray(frames), allow_pickle=False))
        sidecar = {"video": os.path.abspath(video_path), "video_bytes": os.stat(video_path).st_size,
                   "policy": plan.policy, "redaction": plan.redaction, "plan_key": plan.key,
                   "max_side": list(max_side) if isinstance(max_side, tuple) else max_side,
                   "shape": list(frames.shape), "dtype": "uint8", "written": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        _write_atomically(entry.with_suffix(".json"), lambda f: f.write(json.dumps(sidecar, indent=1).encode()))
        return entry

    def is_marked(self) -> bool:
        """Whether the folder carries the cache's :data:`MARK` (written with the first entry)."""
        try:
            mark = read_json(self.root / MARK)
        except MedHorizonError:
            return False
        return isinstance(mark, dict) and mark.get("what") == "medhorizon-tasks frame cache"

    def _scan(self) -> tuple[list[os.DirEntry], int]:
        """``(the cache's own files, the number of other files)`` in the two-letter shard folders: an entry or
        sidecar named by its key in the shard of that key, or a temporary file of one; nothing else is ours."""
        if not self.root.is_dir():
            return [], 0
        with os.scandir(self.root) as top:
            shards = [d.path for d in top if d.is_dir(follow_symlinks=False) and len(d.name) == 2]
        own, other = [], 0
        for shard in shards:
            name = os.path.basename(shard)
            with os.scandir(shard) as entries:
                for f in entries:
                    m = _OWN_FILE.fullmatch(f.name)
                    key = m and (m.group("key") or m.group("tmp"))
                    if key and key[:2] == name and f.is_file(follow_symlinks=False):
                        own.append(f)
                    else:
                        other += 1
        return own, other

    def info(self) -> dict:
        """``{"root", "entries", "bytes"}``: number of cached arrays and bytes on disk (sidecars included)."""
        entries = total = 0
        for f in self._scan()[0]:
            entries += f.name.endswith(".npy") and not f.name.startswith(".")
            with contextlib.suppress(FileNotFoundError):  # removed by another process meanwhile
                total += f.stat().st_size
        return {"root": str(self.root), "entries": entries, "bytes": total}

    def clear(self) -> dict:
        """Remove the cache's own files (see :meth:`_scan`), never another file of the folder.

        ``{"root", "entries" (arrays removed), "files" (files removed), "kept" (other files left alone),
        "marked" (the folder carries :data:`MARK`)}``."""
        own, kept = self._scan()
        marked = self.is_marked()
        removed = files = 0
        shards = set()
        for f in own:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(f.path)
                files += 1
                removed += f.name.endswith(".npy") and not f.name.startswith(".")
            shards.add(os.path.dirname(f.path))
        for shard in shards:
            with contextlib.suppress(OSError):  # not empty: another process is writing into it, or not ours
                os.rmdir(shard)
        return {"root": str(self.root), "entries": removed, "files": files, "kept": kept, "marked": marked}


def cached_decode(path: str | os.PathLike, plan: FramePlan, *, max_side: int | tuple[int, int] | None = None,
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
    size = max_side if isinstance(max_side, tuple) else None
    frames = decode_plan(path, plan, max_side=None if size else max_side, size=size, uid=uid, index=index,
                         expected_frames=expected_frames)
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
