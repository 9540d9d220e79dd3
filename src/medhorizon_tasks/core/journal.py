"""An append-only response journal: nothing lost on interruption, nothing done twice, nothing reused wrongly.

Each finished response is appended as one JSON line and fsync'ed before the
next request starts, so a run killed at any point (SIGKILL included) loses at
most the request in flight. On reopening, a torn last line (the process died
mid-write) is cut off, and every complete line is a cached response.

A response may only be reused by the run that would have produced it. Its key
(:func:`request_key`) therefore covers the whole identity of the run
(:func:`run_identity`: the model, every model argument that can change a
response, this package's version) and of the request (task, its configuration, the document, prompt,
generation settings). A journal written by another checkpoint, seed or model
argument is still read, but none of its responses match: they are counted
(:attr:`Journal.foreign`) and reported, never returned. How a response was
fetched is not part of it (:data:`TRANSPORT_ARGS`: retries, timeout,
concurrency, backoff, the API key): a rerun with more retries or another key
reuses every answer already given.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from pathlib import Path

__all__ = ["Journal", "request_key", "run_identity", "TRANSPORT_ARGS"]

#: Model arguments that say how a response is fetched, never what it is: not part of a run's identity.
TRANSPORT_ARGS = frozenset({"max_retries", "timeout", "num_concurrent", "retry_backoff_s", "api_key"})


def request_key(*parts: object) -> str:
    """A stable key for a request (identity, task, doc id, prompt, generation settings, ...)."""
    blob = json.dumps([p if isinstance(p, str) else json.dumps(p, sort_keys=True, default=str) for p in parts],
                      ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


def run_identity(model: str, model_args: dict, *, transport: frozenset = frozenset(), **extra) -> tuple[str, dict]:
    """``(short hash, description)`` of everything about a run that can change its responses; the model args
    named in ``transport`` (:data:`TRANSPORT_ARGS` for a model server's client) are left out."""
    from .version import __version__

    description = {"model": str(model), "model_args": {str(k): str(v) for k, v in sorted(model_args.items())
                                                       if str(k) not in transport},
                   "package": f"medhorizon-tasks {__version__}", **extra}
    return request_key(description)[:16], description


class Journal:
    """``key -> record`` persisted as JSON lines in ``path``; one writer per file.

    A record is ``{"key", "response", ...meta}``; ``identity`` in the meta is the
    :func:`run_identity` hash of the run that wrote it.
    """

    def __init__(self, path: str | os.PathLike, read_also: list[Path] | None = None, *,
                 identity: str | None = None):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.identity = identity
        self._done: dict[str, dict] = {}
        self.identities: Counter = Counter()  # identity hash -> responses, over every file read
        for p in [*(read_also or []), self.path]:
            if p.exists():
                self._load(p, repair=(p == self.path))

    @property
    def foreign(self) -> int:
        """Responses in the journal written by a run of another identity (never reused)."""
        if self.identity is None:
            return 0
        return sum(n for ident, n in self.identities.items() if ident != self.identity)

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
                key = rec["key"]
                rec["response"]
            except (ValueError, KeyError, TypeError, RecursionError):
                continue  # a line we cannot trust is simply recomputed
            if not isinstance(key, str):
                continue
            self._keep(key, rec)  # a later line of a key replaces an earlier one (add(replace=True))

    def __contains__(self, key: str) -> bool:
        return key in self._done

    def __len__(self) -> int:
        return len(self._done)

    def get(self, key: str):
        rec = self._done.get(key)
        return None if rec is None else rec["response"]

    def record(self, key: str) -> dict | None:
        """The whole journaled record (response and meta) of ``key``."""
        return self._done.get(key)

    def _keep(self, key: str, rec: dict) -> None:
        old = self._done.get(key)
        if old is not None:
            self.identities[str(old.get("identity"))] -= 1
        self._done[key] = rec
        self.identities[str(rec.get("identity"))] += 1

    def add(self, key: str, response, *, replace: bool = False, **meta) -> None:
        """Journal ``response`` for ``key`` (fsync'ed); a key already journaled is kept unless ``replace``."""
        if key in self._done and not replace:
            return
        rec = {"key": key, "response": response, **({"identity": self.identity} if self.identity else {}), **meta}
        # ASCII escapes: any text a model returns (lone surrogates included) round-trips exactly
        line = json.dumps(rec, ensure_ascii=True) + "\n"
        with open(self.path, "a", encoding="ascii") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())
        self._keep(key, rec)
