"""One packet index per video file, kept on disk and reused by every later decode, process and run.

The packet pass of :func:`~.decode.index_video` reads every packet of the file (about 0.6 s for two
hours of 25 fps video, most of a cap-64 admission). The pre-flight of a run indexes every video, then each
task process and every later run (a budget sweep is seven) would index it again. Here the index is built
once per file content and stored:

* **Key**: the file's identity (:func:`~medhorizon_tasks.core.file_identity.file_identity`: XXH3-128 of all
  its bytes, remembered while the file's inode, size and times are unchanged, so asking costs a ``stat``).
  A file rewritten in place -- even with its size, both ends and its mtime kept -- has another identity
  and is indexed again; a copy of the same bytes elsewhere shares the index.
* **What else decides the index**: this format's version and the PyAV / FFmpeg build that demuxed the
  file (a demuxer's handling of edit lists or timestamps can change between releases). They are part
  of the entry's name and are checked again inside the entry.
* **Validation**: an entry is read back whole (its zip CRCs checked) and its arrays checked for type,
  shape, order and agreement with each other and with the key it was found under. A damaged,
  truncated, foreign (another file's, another build's) or implausible entry is rebuilt, never trusted.
* **Writing**: atomically (:mod:`medhorizon_tasks.core.safeio`), under a per-entry file lock so that the
  ranks of one run index a file once between them. A store that cannot be written (read-only, full
  disk) costs one warning and the time to index again next time, never a failure.

Where: ``$MEDHORIZON_INDEX_CACHE`` (default ``~/.cache/medhorizon_tasks/index``), one ``.npz`` file per
(video content, build), about 8 bytes per frame (1.4 MB for two hours at 25 fps). Deleting the folder
(or ``medhorizon-tasks cache clear --index``) costs one packet pass per video on its next use.

Within a process the last indices used are also kept in memory, so the items of one video load its
index once.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import os
import re
import threading
import warnings
import zipfile
from collections import OrderedDict
from pathlib import Path

import numpy as np

from ..errors import DataError
from ..file_identity import file_identity
from ..safeio import atomic_write_bytes, read_bytes
from ..settings import env_text
from . import decode
from .decode import VideoIndex

__all__ = ["INDEX_ENV", "IndexStore", "stored_index", "forget"]

INDEX_ENV = "MEDHORIZON_INDEX_CACHE"
# Bump when index_video's output for the same file changes (a new field, another meaning of frame i):
# older entries are then neither found nor trusted.
_FORMAT = 1
_ARRAYS = ("pts", "key_positions", "key_pts", "key_dts", "key_packets")
_MEMORY = 64          # indices kept in memory per process
_LOCK_TIMEOUT_S = 900  # longer than any packet pass: past it, index without the lock


# what the store writes: <digest>-<build>.npz, its .lock, and safeio's temporaries of the .npz
_OWN_FILE = re.compile(r"\.?[0-9a-f]{32}-[0-9a-f]{8}\.(?:npz|lock|npz\.\d+\.[0-9a-f]{8}\.tmp)")


@functools.lru_cache(maxsize=1)
def build_tag() -> str:
    """What besides the file decides its index: this format and the PyAV / FFmpeg build (8 hex digits)."""
    import av

    libs = sorted((name, tuple(v)) for name, v in av.library_versions.items())
    return hashlib.sha256(f"{_FORMAT}|{av.__version__}|{libs}".encode()).hexdigest()[:8]


def _default_root() -> Path:
    return Path(env_text(INDEX_ENV) or Path.home() / ".cache" / "medhorizon_tasks" / "index")


class IndexStore:
    """Packet indices on disk under ``root`` (default ``$MEDHORIZON_INDEX_CACHE``, else
    ``~/.cache/medhorizon_tasks/index``), one file per video content and PyAV build."""

    def __init__(self, root: str | os.PathLike | None = None):
        self.root = Path(root) if root is not None else _default_root()

    def __repr__(self) -> str:
        return f"IndexStore({str(self.root)!r})"

    def entry(self, identity: str) -> Path:
        """Where the index of the content ``identity`` is kept."""
        digest = identity.split(":", 1)[-1]
        if not digest or not all(c in "0123456789abcdef" for c in digest):
            raise ValueError(f"not a file identity: {identity!r}")
        return self.root / f"{digest}-{build_tag()}.npz"

    def load(self, identity: str) -> VideoIndex | None:
        """The stored index of ``identity``; None when there is none or it cannot be trusted."""
        try:
            data = read_bytes(self.entry(identity))
        except DataError:
            return None
        try:
            with np.load(io.BytesIO(data), allow_pickle=False) as npz:
                header = json.loads(str(npz["header"][()]))
                arrays = {name: npz[name] for name in _ARRAYS}  # read whole: every member's CRC is checked
        except (OSError, ValueError, KeyError, TypeError, EOFError, RecursionError, zipfile.BadZipFile):
            return None
        return _checked(header, arrays, identity)

    def save(self, identity: str, index: VideoIndex) -> Path:
        """Store ``index`` as the index of ``identity`` (atomically); WriteError (an OSError) on failure."""
        key_pts, key_dts, key_packets, first = index._keyframes()
        header = {"format": _FORMAT, "build": build_tag(), "identity": identity,
                  "time_base": index.time_base, "fps": index.fps, "width": index.width, "height": index.height,
                  "rotation": index.rotation, "first_packet": list(first), "packet_slack": index.packet_slack,
                  "num_frames": index.num_frames}
        buf = io.BytesIO()
        np.savez(buf, header=np.array(json.dumps(header)), pts=index.pts, key_positions=index.key_positions,
                 key_pts=key_pts, key_dts=key_dts, key_packets=key_packets)
        return atomic_write_bytes(self.entry(identity), buf.getvalue(), mode=0o644)

    def _own(self) -> tuple[list[Path], int]:
        """``(the store's own files, the number of other files)`` in its folder: an index, its lock or a
        temporary file of one, each named by a file identity and a build tag; nothing else is the store's."""
        if not self.root.is_dir():
            return [], 0
        own, kept = [], 0
        for p in self.root.iterdir():
            if p.is_file() and _OWN_FILE.fullmatch(p.name):
                own.append(p)
            else:
                kept += 1
        return own, kept

    def _entries(self) -> list[Path]:
        return [p for p in self._own()[0] if p.suffix == ".npz"]

    def info(self) -> dict:
        """``{"root", "entries", "bytes"}``."""
        total = 0
        entries = self._entries()
        for p in entries:
            with contextlib.suppress(FileNotFoundError):
                total += p.stat().st_size
        return {"root": str(self.root), "entries": len(entries), "bytes": total}

    def clear(self) -> dict:
        """Remove the store's own files (see :meth:`_own`), never another file of the folder: ``{"root",
        "entries" (indices removed), "files" (files removed), "kept" (other files left alone), "marked"}`` --
        the shape of :meth:`~.frame_cache.FrameCache.clear` (the store has no mark: its file names are its own)."""
        own, kept = self._own()
        entries = files = 0
        for p in own:
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
                files += 1
                entries += p.suffix == ".npz"
        return {"root": str(self.root), "entries": entries, "files": files, "kept": kept, "marked": False}


def _int64(arrays: dict, name: str) -> np.ndarray:
    a = arrays[name]
    if a.dtype != np.int64 or a.ndim != 1:
        raise ValueError(name)
    return a


def _checked(header, arrays: dict, identity: str) -> VideoIndex | None:
    """The index the entry describes, if everything in it is consistent; else None."""
    try:
        if not isinstance(header, dict) or header.get("format") != _FORMAT or header.get("build") != build_tag() \
                or header.get("identity") != identity:
            return None  # another format, another build's or another file's index
        pts, keys = _int64(arrays, "pts"), _int64(arrays, "key_positions")
        key_pts, key_dts, key_packets = (_int64(arrays, n) for n in ("key_pts", "key_dts", "key_packets"))
        n = len(pts)
        ints = [header[k] for k in ("width", "height", "rotation", "packet_slack", "num_frames")]
        first = header["first_packet"]
        time_base, fps = float(header["time_base"]), float(header["fps"])
        if not (all(type(v) is int for v in ints + list(first)) and len(first) == 2 and header["num_frames"] == n
                and n > 0 and header["width"] > 0 and header["height"] > 0 and header["rotation"] in (0, 90, 180, 270)
                and header["packet_slack"] >= 0 and time_base > 0 and fps > 0
                and len(key_pts) == len(key_dts) == len(key_packets)
                and np.all(pts[1:] >= pts[:-1]) and np.all(key_pts[1:] >= key_pts[:-1])
                and (not len(keys) or (keys[0] >= 0 and keys[-1] < n and np.all(keys[1:] > keys[:-1])))
                and (not len(key_packets) or key_packets.min() >= 0)):
            return None
    except (KeyError, TypeError, ValueError, OverflowError):
        return None
    return VideoIndex(pts, keys, time_base, fps, header["width"], header["height"], rotation=header["rotation"],
                      key_pts=key_pts, key_dts=key_dts, key_packets=key_packets, first_packet=tuple(first),
                      packet_slack=header["packet_slack"])


_memory: OrderedDict[str, VideoIndex] = OrderedDict()
_memory_lock = threading.Lock()
_unwritable: set[str] = set()  # store roots already warned about


def _remembered(identity: str) -> VideoIndex | None:
    with _memory_lock:
        index = _memory.get(identity)
        if index is not None:
            _memory.move_to_end(identity)
        return index


def _remember(identity: str, index: VideoIndex) -> VideoIndex:
    with _memory_lock:
        _memory[identity] = index
        while len(_memory) > _MEMORY:
            _memory.popitem(last=False)
    return index


def stored_index(path: str | os.PathLike, *, uid: str | None = None, store: IndexStore | None = None) -> VideoIndex:
    """The packet index of the video at ``path``: from memory, else from the store, else built by
    :func:`~.decode.index_video` and stored. A VideoError (naming ``uid`` and the path) when the file is
    missing or cannot be indexed."""
    try:
        identity = file_identity(path)
    except OSError:
        return decode.index_video(path, uid=uid)  # missing, a folder, unreadable: its own clear VideoError
    index = _remembered(identity)
    if index is not None:
        return index
    store = store if store is not None else IndexStore()
    index = store.load(identity)
    if index is not None:
        return _remember(identity, index)
    with _entry_lock(store, identity):
        index = store.load(identity)  # another process may have built it while we waited
        if index is None:
            index = decode.index_video(path, uid=uid)
            try:
                store.save(identity, index)
            except OSError as exc:
                if str(store.root) not in _unwritable:
                    _unwritable.add(str(store.root))
                    warnings.warn(f"packet index store {store.root} not written ({exc}); videos will be indexed "
                                  "again in each process", RuntimeWarning, stacklevel=2)
    return _remember(identity, index)


@contextlib.contextmanager
def _entry_lock(store: IndexStore, identity: str):
    """A file lock on the entry while it is built; none where the store cannot hold one (read-only)."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(store.entry(identity).with_suffix(".lock")), timeout=_LOCK_TIMEOUT_S)
    try:
        store.root.mkdir(parents=True, exist_ok=True)
        lock.acquire()
    except (OSError, Timeout):
        yield
        return
    try:
        yield
    finally:
        lock.release()


def forget() -> None:
    """Drop the indices kept in this process's memory (the stored ones stay)."""
    with _memory_lock:
        _memory.clear()

