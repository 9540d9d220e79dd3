"""One identity for a file, for every cache, journal, store and pre-flight result.

A file's identity is a digest of **all of its bytes** (XXH3-128, ``"xxh128:<32 hex digits>"``). Two
files with the same bytes have the same identity wherever they are (a copy, a hard link, another
machine), and a file whose bytes changed anywhere -- its middle included -- has another one. Nothing
else of the file takes part: not its path, its name, its size alone, or its times.

Hashing reads the whole file once (about 1.5 GB/s on one core here; a disk is usually slower), so the
digest is remembered in a small database, keyed by the file's path and what no copy can keep:
``(device, inode, size, mtime_ns, ctime_ns)``. While all five are unchanged the file is not read again:
asking costs one ``stat`` (cheap on a terabyte of video). Any write to the file, a rename over it,
``cp -p`` / ``rsync -a`` (which keep the size and mtime but not the inode change time), ``touch`` or a
new hard link changes ``ctime`` (which a user cannot set back), so the file is hashed again and its
identity follows its bytes. A file that changes while it is being hashed is hashed again.

The database is ``$MEDHORIZON_IDENTITY_DB`` (default ``~/.cache/medhorizon_tasks/file_identity.sqlite3``),
SQLite, safe with several processes (every rank of a multi-process run) and never required: where it
cannot be written the digests are remembered for the process only. Nor is it ever waited for: a database
that another process keeps locked for more than :data:`BUSY_TIMEOUT_S` is given up for the rest of this
process, with one warning, and the digests are remembered in its own memory (a wait per file would add a
minute per video to a run). Deleting it costs one more read of every file.
"""

from __future__ import annotations

import os
import threading
import warnings
from pathlib import Path

import xxhash

from .settings import env_text

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing
if TYPE_CHECKING:
    import sqlite3

__all__ = ["IDENTITY_ENV", "ALGORITHM", "file_identity", "stat_key", "same_file"]

IDENTITY_ENV = "MEDHORIZON_IDENTITY_DB"
ALGORITHM = "xxh128"
_CHUNK = 1 << 22
_RETRIES = 3
#: Longest wait for a database another process holds locked, in seconds, before it is given up.
BUSY_TIMEOUT_S = 2.0

_lock = threading.Lock()
_memo: dict[tuple, str] = {}  # (realpath, stat key) -> identity, this process
_db: dict[str, sqlite3.Connection | None] = {}  # database path -> connection (None: not usable)


def stat_key(path: str | os.PathLike) -> tuple[int, int, int, int, int]:
    """``(device, inode, size, mtime_ns, ctime_ns)`` of a file: changes with any change of the file on this
    machine (and when it is copied, re-linked or touched, which the identity itself survives)."""
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _db_path() -> Path:
    return Path(env_text(IDENTITY_ENV) or Path.home() / ".cache" / "medhorizon_tasks" /
                "file_identity.sqlite3")


def _connection() -> sqlite3.Connection | None:
    import sqlite3  # here: a command that never asks a file's identity does not load it (start-up time)

    where = str(_db_path())
    if where in _db:
        return _db[where]
    con = None
    try:
        Path(where).parent.mkdir(parents=True, exist_ok=True)
        con = sqlite3.connect(where, timeout=BUSY_TIMEOUT_S, check_same_thread=False, isolation_level=None)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("CREATE TABLE IF NOT EXISTS identity (path TEXT PRIMARY KEY, stat TEXT NOT NULL, "
                    "identity TEXT NOT NULL)")
    except (OSError, sqlite3.Error) as exc:
        warnings.warn(f"file identities are remembered for this process only ({where}: {exc})", stacklevel=3)
        if con is not None:
            con.close()
        con = None
    _db[where] = con
    return con


def _give_up(exc: sqlite3.Error) -> None:
    """A database locked by another process past the busy timeout: this process remembers in its own memory
    from now on (one warning), rather than wait for it on every file."""
    where = str(_db_path())
    with _lock:
        con = _db.get(where)
        if con is None:
            return
        _db[where] = None
    warnings.warn(f"file identities are remembered for this process only: {where} is locked by another process "
                  f"({exc}; waited {BUSY_TIMEOUT_S:g} s)", stacklevel=3)
    con.close()


def _busy(exc: sqlite3.Error) -> bool:
    import sqlite3

    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc).lower()


def _remembered(real: str, key: tuple) -> str | None:
    import sqlite3

    con = _connection()
    if con is None:
        return None
    try:
        row = con.execute("SELECT stat, identity FROM identity WHERE path = ?", (real,)).fetchone()
    except sqlite3.Error as exc:
        if _busy(exc):
            _give_up(exc)
        return None
    if row and row[0] == repr(key) and str(row[1]).startswith(ALGORITHM + ":"):
        return row[1]
    return None


def _remember(real: str, key: tuple, identity: str) -> None:
    import sqlite3

    con = _connection()
    if con is None:
        return
    try:
        con.execute("INSERT OR REPLACE INTO identity (path, stat, identity) VALUES (?, ?, ?)",
                    (real, repr(key), identity))
    except sqlite3.Error as exc:  # a busy or read-only database costs a re-read next time, never a wrong answer
        if _busy(exc):
            _give_up(exc)


def _digest(path: str) -> str:
    h = xxhash.xxh3_128()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return f"{ALGORITHM}:{h.hexdigest()}"


def file_identity(path: str | os.PathLike) -> str:
    """The identity of the file's content (see the module's text); OSError when it cannot be read."""
    real = os.path.realpath(path)
    key = stat_key(real)
    with _lock:
        hit = _memo.get((real, key))
    if hit is not None:
        return hit
    hit = _remembered(real, key)
    if hit is None:
        for _ in range(_RETRIES):
            digest = _digest(real)
            after = stat_key(real)
            if after == key:
                hit = digest
                _remember(real, key, digest)
                break
            key = after  # written while we read it: read it again
        else:
            return digest  # still changing: this read's digest, remembered nowhere
    with _lock:
        if len(_memo) > 65536:
            _memo.clear()
        _memo[(real, key)] = hit
    return hit


def same_file(path: str | os.PathLike, identity: str | None) -> bool:
    """Whether ``path`` now holds the content ``identity`` was taken of (False when it cannot be read)."""
    if not identity:
        return False
    try:
        return file_identity(path) == identity
    except OSError:
        return False
