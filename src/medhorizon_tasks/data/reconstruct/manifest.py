"""``.medhorizon_videos.json`` in the video root: where each placed video came from.

Several ``videos link`` may run on one root at once (one per source, or one per machine on a shared disk):
each entry is added under a lock (``filelock``, the lock file beside the manifest), reading the manifest
again inside it, so no writer drops another's entries. A manifest the package cannot read is never
replaced by a new one (that would drop the record of every earlier video): ``link`` stops and names it.
Every text in it is :func:`~...core.text.valid_unicode`, so the package's own reader always reads it back.
"""

from __future__ import annotations

import datetime
from pathlib import Path

from ...core.errors import DataError, MedHorizonError
from ...core.safeio import atomic_write_text, read_json
from ...core.text import report_json

__all__ = ["MANIFEST", "LOCK_TIMEOUT_S", "read_manifest", "record_placed"]

MANIFEST = ".medhorizon_videos.json"
#: How long a ``link`` waits for another one to finish writing the manifest (each write takes milliseconds).
LOCK_TIMEOUT_S = 120


def read_manifest(root: Path, *, strict: bool) -> dict:
    """The manifest of ``root`` (``{}`` when there is none). An unreadable one: MedHorizonError when
    ``strict`` (before anything is written), else ``{}`` (a check only reads it for its messages)."""
    path = root / MANIFEST
    if not path.exists():
        return {}
    try:
        value = read_json(path)
        if not isinstance(value, dict):
            raise DataError("not a JSON object", source=str(path))
    except DataError as exc:
        if strict:
            raise MedHorizonError(f"{exc}: it is not the record `videos link` keeps of the videos it placed, "
                                  f"and it is not replaced (that would lose the record of every earlier video); "
                                  f"move it aside and rerun") from None
        return {}
    return value


def record_placed(root: Path, video_path: str, entry: dict) -> None:
    """Add ``video_path``'s entry (with the time) to the manifest of ``root``, under its lock."""
    from filelock import FileLock, Timeout

    path = root / MANIFEST
    stamped = {**entry, "at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    try:
        with FileLock(str(path) + ".lock", timeout=LOCK_TIMEOUT_S):
            manifest = read_manifest(root, strict=True)
            manifest[video_path] = stamped
            atomic_write_text(path, report_json(manifest) + "\n")  # report_json: every text valid_unicode
    except Timeout:
        raise MedHorizonError(f"{path}: another `videos link` has held its lock for {LOCK_TIMEOUT_S} s "
                              f"({path}.lock); rerun when it has finished") from None

