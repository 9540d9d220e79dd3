"""A run decodes each distinct plan once, and ahead of the model.

Two pieces, used by the lmms-eval bridges and hooks, the VLMEvalKit datasets
and the zero-shot runner alike (one piece, not one prefetcher per framework):

* :class:`DecodedPlans` / :func:`decoded_once`: the run's in-memory store of
  decoded plans, keyed by (video file, plan, output size), sized in bytes
  (``$MEDHORIZON_PLAN_STORE_MB``; default this process's share of the node's
  budget, at most 2 GiB: a 1,248-frame plan fits at every model's size in
  ``docs/speed.md``; :mod:`.share`; 0 turns it off). Requests that share
  a video and a plan (several questions about one video) share one decode; two
  threads asking for the same plan at once wait for one decode. The on-disk
  frame cache (``$MEDHORIZON_FRAME_CACHE``) stays opt-in.
* :func:`ahead`: results of ``work(item)`` for a sequence of items, in item
  order, computed on worker threads while the caller is busy with the earlier
  ones (the model answers request i while the frames of i+1, i+2, ... decode).
  Bounded in count (``depth``) and in bytes (``budget_bytes``: the result being
  used plus every finished or running one, each running one counted at the
  largest size seen so far); an item whose work raises gets its error, and
  only that item. ``$MEDHORIZON_LOOKAHEAD=0`` makes it serial; its bytes are
  this process's share of the node's budget (:mod:`.share`, at most 2 GiB,
  ``$MEDHORIZON_LOOKAHEAD_MB``).

Each decode itself uses this process's share of the node's cores
(:func:`~.share.process_share`: the cores it may run on divided by the ranks on
its node) across the GOPs of its video; the look-ahead adds decodes across
videos, at most that many at once.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict, deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Hashable, Iterable, Iterator, NamedTuple, TypeVar

import numpy as np

from ..file_identity import stat_key
from .share import DEFAULT_AHEAD_DEPTH, LOOKAHEAD_ENV, PROCESS_CAP_BYTES, STORE_ENV, lookahead_depth, process_share

__all__ = ["DecodedPlans", "decoded_once", "run_plans", "ahead", "ahead_budget", "Ahead", "result_bytes", "by_video",
           "STORE_ENV", "LOOKAHEAD_ENV", "DEFAULT_STORE_BYTES", "DEFAULT_AHEAD_BYTES", "DEFAULT_AHEAD_DEPTH"]

#: at most 2 GiB a process: 1,248 frames of up to 573,000 pixels (Qwen2.5-VL's official size for 1,248 frames is
#: 144,000 px, InternVL's tile 200,704 px, a task's default pixel budget 72,400 px); a rank's share may be less
DEFAULT_STORE_BYTES = PROCESS_CAP_BYTES
#: what the look-ahead may hold beside the result in use (decoded plans as the model is given them), at most
DEFAULT_AHEAD_BYTES = PROCESS_CAP_BYTES
DEFAULT_AHEAD_WORKERS = 2

T = TypeVar("T")
I = TypeVar("I")  # noqa: E741


class DecodedPlans:
    """Decoded plans held in memory for the run, least recently used dropped first, at most ``budget_bytes``
    (a plan larger than the whole budget is not kept). Arrays are handed out read-only: one array serves
    every request of its plan."""

    def __init__(self, budget_bytes: int = DEFAULT_STORE_BYTES):
        self.budget_bytes = int(budget_bytes)
        self._lock = threading.Lock()
        self._entries: OrderedDict[Hashable, np.ndarray] = OrderedDict()
        self._running: dict[Hashable, Future] = {}
        self.bytes = 0
        self.decodes = 0  # decodes run through the store (a hit or a wait runs none)
        self.hits = 0

    def get(self, key: Hashable, decode: Callable[[], np.ndarray]) -> np.ndarray:
        """The frames of ``key``: held ones, the ones another thread is decoding, or ``decode()``'s.

        An error is not kept: every request of a failing plan gets its own (naming its own item)."""
        while True:
            with self._lock:
                frames = self._entries.get(key)
                if frames is not None:
                    self._entries.move_to_end(key)
                    self.hits += 1
                    return frames
                running = self._running.get(key)
                if running is None:
                    running = self._running[key] = Future()
                    self.decodes += 1
                    break
            try:  # another thread decodes it: its frames, or (on its error) decode for this request
                frames = running.result()
                with self._lock:
                    self.hits += 1
                return frames
            except BaseException:
                continue
        try:
            frames = decode()
            frames.setflags(write=False)
        except BaseException as exc:
            with self._lock:
                self._running.pop(key, None)
            running.set_exception(exc)
            raise
        with self._lock:
            self._running.pop(key, None)
            self._put(key, frames)
        running.set_result(frames)
        return frames

    def _put(self, key: Hashable, frames: np.ndarray) -> None:
        if frames.nbytes > self.budget_bytes:
            return
        self._entries[key] = frames
        self.bytes += frames.nbytes
        while self.bytes > self.budget_bytes:
            _, dropped = self._entries.popitem(last=False)
            self.bytes -= dropped.nbytes

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.bytes = 0


def _store_budget() -> int:
    return process_share().store_bytes


def ahead_budget() -> int:
    """The bytes this process's look-ahead may hold: its share of the node's budget (:mod:`.share`)."""
    return process_share().ahead_bytes


_RUN: DecodedPlans | None = None
_RUN_LOCK = threading.Lock()


def run_plans() -> DecodedPlans:
    """The process's store (created on first use: ``$MEDHORIZON_PLAN_STORE_MB``, or the process's share)."""
    global _RUN
    with _RUN_LOCK:
        if _RUN is None:
            _RUN = DecodedPlans(_store_budget())
        return _RUN


def decoded_once(path: str | os.PathLike, plan_key: str, size: Hashable, decode: Callable[[], np.ndarray],
                 store: DecodedPlans | None = None) -> np.ndarray:
    """``decode()``'s frames for (this file as it is now, this plan, this output size), decoded once per run.

    The file is known by its path and :func:`~medhorizon_tasks.core.file_identity.stat_key` (a file replaced
    or written during the run is another file). A file that cannot be stat'ed is decoded (the decoder names
    the item in its error)."""
    store = store if store is not None else run_plans()
    if store.budget_bytes <= 0:
        return decode()
    try:
        identity = stat_key(path)
    except OSError:
        return decode()
    return store.get((os.fspath(path), identity, plan_key, size), decode)


def result_bytes(value) -> int:
    """Bytes a result holds: an array's, a PIL image's pixels, the sum over a list (planned frames); else 0."""
    if isinstance(value, np.ndarray):
        return int(value.nbytes)
    size = getattr(value, "size", None)
    bands = getattr(value, "getbands", None)
    if bands is not None and isinstance(size, tuple) and len(size) == 2:
        return int(size[0] * size[1] * len(bands()))
    if isinstance(value, (list, tuple)):
        return sum(result_bytes(v) for v in value)
    return 0


class Ahead(NamedTuple):
    """One item's outcome: its position, the item, ``work(item)``'s value (None on error) and the error."""

    index: int
    item: object
    value: object
    error: BaseException | None


def _env_depth(depth: int | None) -> int:
    if depth is not None:
        return max(0, int(depth))
    return lookahead_depth()


def by_video(keys: Iterable[Hashable | None]) -> list[int]:
    """An order of positions ``0..n-1`` that puts the requests of one video next to each other (videos in the
    order they first appear, requests of a video in their own order); a ``None`` key (no video) stays a group of
    its own. Answering in this order, the model works through a video's questions while the next video decodes
    (:func:`ahead`), and each plan is needed in one stretch of the run, so the store keeps it only that long;
    callers put the results back in request order."""
    first: dict[Hashable, int] = {}
    ranks = []
    for i, key in enumerate(keys):
        ranks.append(i if key is None else first.setdefault(key, i))
    return sorted(range(len(ranks)), key=lambda i: (ranks[i], i))


def ahead(items: Iterable[I], work: Callable[[I], T], *, depth: int | None = None,
          budget_bytes: int | None = None, workers: int | None = None,
          nbytes: Callable[[object], int] = result_bytes) -> Iterator[Ahead]:
    """``Ahead(i, item, work(item), error)`` for every item, in order, the next ones computed meanwhile.

    Up to ``depth`` items run or wait ahead of the one in use (default ``$MEDHORIZON_LOOKAHEAD`` or 4; 0: none,
    each item is computed when asked for), on ``workers`` threads (default: 2, at most the process's decoder
    threads), while the bytes of the item in use plus the finished and running ones (a running one counted at
    the largest size seen; before any is known, one at a time) stay within ``budget_bytes`` (default: the
    process's share of its node's budget, :func:`ahead_budget`); when the budget holds none beside the one in use, the next starts
    once that one is released (serial). An
    exception of ``work`` is that item's ``error`` (KeyboardInterrupt and SystemExit propagate)."""
    items = list(items)
    depth = _env_depth(depth)
    budget_bytes = ahead_budget() if budget_bytes is None else budget_bytes  # default: the process's share
    workers = min(DEFAULT_AHEAD_WORKERS, process_share().threads) if workers is None else workers
    if depth == 0 or len(items) <= 1:
        for i, item in enumerate(items):
            try:
                yield Ahead(i, item, work(item), None)
            except Exception as exc:  # noqa: BLE001 (the item's error, attributed to it)
                yield Ahead(i, item, None, exc)
        return

    pending: deque[tuple[int, Future]] = deque()
    largest = 0
    known = False
    submitted = 0
    pool = ThreadPoolExecutor(max(1, min(workers, depth)), thread_name_prefix="ahead")

    def size_of(future: Future) -> int:
        if future.done() and not future.cancelled() and future.exception() is None:
            return nbytes(future.result())
        return 0 if future.done() else largest

    def top_up(in_use: int) -> None:
        nonlocal submitted
        while submitted < len(items):
            if pending:
                if len(pending) >= depth or not known:
                    return
                if in_use + sum(size_of(f) for _, f in pending) + largest > budget_bytes:
                    return
            elif in_use and known and in_use + largest > budget_bytes:
                return
            pending.append((submitted, pool.submit(work, items[submitted])))
            submitted += 1

    try:
        while pending or submitted < len(items):
            if not pending:  # nothing ahead (the budget held none beside the one in use): the next one now
                pending.append((submitted, pool.submit(work, items[submitted])))
                submitted += 1
                top_up(0)
            i, future = pending.popleft()
            try:
                value, error = future.result(), None
            except (KeyboardInterrupt, SystemExit):
                raise
            except Exception as exc:  # noqa: BLE001 (the item's error, attributed to it)
                value, error = None, exc
            future = None  # the consumer's reference is the only one while it uses the value
            size = nbytes(value) if error is None else 0
            if error is None:
                largest, known = max(largest, size), True
            top_up(size)
            yield Ahead(i, items[i], value, error)
            value = None
    finally:
        for _, future in pending:
            future.cancel()
        pool.shutdown(wait=True)
