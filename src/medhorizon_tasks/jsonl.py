"""Reading and appending JSON Lines with line-numbered errors."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

from .errors import DataError


def iter_jsonl(path: str | os.PathLike) -> Iterator[tuple[int, object]]:
    """Yield ``(line_number, value)`` for each non-blank line; bad JSON -> DataError naming the line."""
    path = Path(path)
    try:
        fh = open(path, encoding="utf-8")
    except FileNotFoundError:
        raise DataError(f"file not found: {path}") from None
    except (IsADirectoryError, PermissionError) as exc:
        raise DataError(f"cannot read {path}: {exc.strerror}") from None
    with fh:
        try:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    yield n, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataError(f"line {n}: not valid JSON ({exc.msg} at column {exc.colno})", source=str(path)) from None
        except UnicodeDecodeError as exc:
            raise DataError(f"not UTF-8 text ({exc.reason} at byte {exc.start})", source=str(path)) from None


def append_jsonl(path: str | os.PathLike, record: dict) -> None:
    """Append one record and flush it to disk, so an interrupted run loses at most the line being written."""
    line = json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(line)
        fh.flush()
        os.fsync(fh.fileno())


def write_jsonl(path: str | os.PathLike, records) -> None:
    """Write records atomically (temp file + rename)."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        for r in records:
            fh.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")
    os.replace(tmp, path)
