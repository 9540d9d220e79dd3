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
puts them back on replay (:meth:`VideoOutcomes.restore`). When an outcome is
still unknown at scoring time (e.g. a response from a framework's own cache),
the scoring hook decodes the plan once to find out instead of assuming the
frames were fine.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping

__all__ = ["VideoOutcomes", "OUTCOMES", "outcome_key", "UNKNOWN"]

UNKNOWN = object()  # get() of a key nobody recorded


def outcome_key(benchmark: str, video_root: str, uid: str, setting: Mapping) -> str:
    """A stable text key for one item's frames under one frame setting."""
    return json.dumps([benchmark, str(video_root), str(uid), dict(sorted(setting.items()))],
                      sort_keys=True, default=str, ensure_ascii=False)


class VideoOutcomes:
    """``key -> error text, or None when the frames decoded``; safe to share between threads
    (lmms-eval runs ``process_results`` in a thread pool)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_key: dict[str, str | None] = {}
        self._log: list[tuple[str, str | None]] = []  # in recording order, for mark()/since()

    def record(self, key: str, error: str | None) -> None:
        with self._lock:
            self._by_key[key] = error
            self._log.append((key, error))

    def get(self, key: str):
        """The error text, None (decoded fine), or :data:`UNKNOWN` (never recorded in this process)."""
        with self._lock:
            return self._by_key.get(key, UNKNOWN)

    def mark(self) -> int:
        """A position in the log; :meth:`since` returns what was recorded after it."""
        with self._lock:
            return len(self._log)

    def since(self, mark: int) -> list[dict]:
        with self._lock:
            return [{"key": k, "error": e} for k, e in self._log[mark:]]

    def restore(self, entries: Iterable[Mapping]) -> None:
        """Put back outcomes journaled with a response (``since()``'s shape); bad entries are ignored."""
        for entry in entries or ():
            if isinstance(entry, Mapping) and isinstance(entry.get("key"), str):
                error = entry.get("error")
                self.record(entry["key"], error if isinstance(error, str) else None)

    def clear(self) -> None:
        with self._lock:
            self._by_key.clear()
            self._log.clear()


#: The process-wide outcomes every task hook shares.
OUTCOMES = VideoOutcomes()
