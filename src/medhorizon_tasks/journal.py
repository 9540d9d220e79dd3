"""An append-only response journal: nothing lost on interruption, nothing done twice.

Each finished response is appended as one JSON line and fsync'ed before the
next request starts, so a run killed at any point (SIGKILL included) loses at
most the request in flight. On reopening, a torn last line (the process died
mid-write) is cut off, and every complete line is a cached response.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path


def request_key(*parts: object) -> str:
    """A stable key for a request (task, doc id, prompt, generation settings, ...)."""
    blob = json.dumps([str(p) for p in parts], ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class Journal:
    """``key -> response`` persisted as JSON lines in ``path``; one writer per file."""

    def __init__(self, path: str | os.PathLike, read_also: list[Path] | None = None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._done: dict[str, object] = {}
        for p in [*(read_also or []), self.path]:
            if p.exists():
                self._load(p, repair=(p == self.path))

    def _load(self, path: Path, repair: bool) -> None:
        data = path.read_bytes()
        end = data.rfind(b"\n") + 1
        if repair and end < len(data):  # a torn last line from a killed writer
            with open(path, "r+b") as fh:
                fh.truncate(end)
        for line in data[:end].splitlines():
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                self._done.setdefault(rec["key"], rec["response"])
            except (ValueError, KeyError, TypeError):
                continue  # a line we cannot trust is simply recomputed

    def __contains__(self, key: str) -> bool:
        return key in self._done

    def __len__(self) -> int:
        return len(self._done)

    def get(self, key: str):
        return self._done.get(key)

    def add(self, key: str, response, **meta) -> None:
        if key in self._done:
            return
        line = json.dumps({"key": key, "response": response, **meta}, ensure_ascii=False) + "\n"
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
        self._done[key] = response
