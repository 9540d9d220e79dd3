"""What became of each item's frames in this process: decoded, or a video error.

A task hook that decodes frames (``doc_to_visual``) records the outcome here;
the hook that scores the model's answer (``process_results``) reads it back,
so an item whose video failed is scored as a video error, never as an answer.

Outcomes are keyed by :func:`outcome_key`: the benchmark, the video root, the
item and the whole frame setting (everything that decides which frames are
decoded, hence whether decoding fails). Two tasks over the same item with
different settings (4 frames vs. 64; uniform vs. oracle) therefore never see
each other's errors: a video corrupt near frame 85 breaks the plans that ask
for frame 85 and no other.

A response that is replayed from a journal skips ``doc_to_visual``; the
journal therefore stores, with each response, the outcomes recorded while it
was produced (:meth:`VideoOutcomes.mark` / :meth:`VideoOutcomes.since`) and
puts them back on replay (:meth:`VideoOutcomes.restore`). Each outcome keeps
the state of the file its frames came from (:func:`file_state`: its identity,
a digest of all of its bytes), so a journaled response is known to be stale
once that file's content changes anywhere, or it appears where it was missing
(:meth:`VideoOutcomes.unchanged`). When an outcome is
still unknown at scoring time (e.g. a response from a framework's own cache),
the scoring hook decodes the plan once to find out instead of assuming the
frames were fine.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterable, Mapping

from ..file_identity import file_identity

__all__ = ["VideoOutcomes", "OUTCOMES", "outcome_key", "file_state", "UNKNOWN"]

UNKNOWN = object()  # get() of a key nobody recorded


def outcome_key(benchmark: str, video_root: str, uid: str, setting: Mapping) -> str:
    """A stable text key for one item's frames under one frame setting."""
    return json.dumps([benchmark, str(video_root), str(uid), dict(sorted(setting.items()))],
                      sort_keys=True, default=str, ensure_ascii=False)


def file_state(video: str | os.PathLike) -> dict:
    """What is kept of the file an outcome came from, to tell later whether it is still the same file.

    ``identity`` is :func:`medhorizon_tasks.core.file_identity.file_identity` (all of its bytes: a copy or a
    new link is the same video, a file changed anywhere -- a repaired middle, a rewrite that kept size and
    mtime -- is another), None while it is missing or unreadable.
    """
    path = os.fspath(video)
    try:
        identity = file_identity(path)
    except OSError:
        identity = None
    return {"path": path, "identity": identity}


class VideoOutcomes:
    """``key -> error text, or None when the frames decoded``; safe to share between threads
    (lmms-eval runs ``process_results`` in a thread pool)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_key: dict[str, str | None] = {}
        self._log: list[dict] = []  # in recording order, for mark()/since()
        self._local = threading.local()

    @contextlib.contextmanager
    def unrecorded(self):
        """Outcomes of frames decoded in this thread meanwhile are not recorded: a decode ahead of the model
        only fills the store of decoded plans, and its outcome would otherwise land among what :meth:`since`
        gives for the requests being answered now (the model's own call for the item records it)."""
        before = getattr(self._local, "quiet", False)
        self._local.quiet = True
        try:
            yield
        finally:
            self._local.quiet = before

    def record(self, key: str, error: str | None, video: str | os.PathLike | None = None) -> None:
        """``video``: the file the frames come (or failed to come) from; its state is kept with the outcome
        (:func:`file_state`)."""
        entry: dict = {"key": key, "error": error}
        if video is not None:
            entry["file"] = file_state(video)
        self._put(entry)

    def _put(self, entry: dict) -> None:
        if getattr(self._local, "quiet", False):
            return
        with self._lock:
            self._by_key[entry["key"]] = entry["error"]
            self._log.append(entry)

    def get(self, key: str):
        """The error text, None (decoded fine), or :data:`UNKNOWN` (never recorded in this process)."""
        with self._lock:
            return self._by_key.get(key, UNKNOWN)

    def mark(self) -> int:
        """A position in the log; :meth:`since` returns what was recorded after it."""
        with self._lock:
            return len(self._log)

    def since(self, mark: int) -> list[dict]:
        """The outcomes recorded after ``mark``: ``{"key", "error"[, "file": file_state(...)]}``."""
        with self._lock:
            return [dict(e) for e in self._log[mark:]]

    def restore(self, entries: Iterable[Mapping]) -> None:
        """Put back outcomes journaled with a response (``since()``'s shape); bad entries are ignored."""
        for entry in entries or ():
            if isinstance(entry, Mapping) and isinstance(entry.get("key"), str):
                error = entry.get("error")
                restored = {"key": entry["key"], "error": error if isinstance(error, str) else None}
                if isinstance(entry.get("file"), Mapping):
                    restored["file"] = dict(entry["file"])
                self._put(restored)

    @staticmethod
    def unchanged(entries: Iterable[Mapping] | None) -> bool:
        """Whether every file these journaled outcomes came from is still the same (or still missing).

        False once a video was replaced, repaired or put in place: the response journaled
        with these outcomes was produced from other frames (or from none) and must be asked again.
        """
        for entry in entries or ():
            file = entry.get("file") if isinstance(entry, Mapping) else None
            if isinstance(file, Mapping) and isinstance(file.get("path"), str):
                if file_state(file["path"]) != dict(file):  # an entry of an older form differs too
                    return False
        return True

    def clear(self) -> None:
        with self._lock:
            self._by_key.clear()
            self._log.clear()


#: The process-wide outcomes every task hook shares.
OUTCOMES = VideoOutcomes()
