"""The run's store of decoded plans and the look-ahead (core/video/ahead.py): order, errors, bytes."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from medhorizon_tasks.core.errors import VideoError
from medhorizon_tasks.core.video.ahead import DecodedPlans, ahead, decoded_once


class Ledger:
    """Spied sizes: bytes a work item made that its consumer has not released yet, and the peak of that."""

    def __init__(self):
        self.lock = threading.Lock()
        self.alive = self.peak = 0

    def make(self, size: int) -> np.ndarray:
        with self.lock:
            self.alive += size
            self.peak = max(self.peak, self.alive)
        return np.zeros(size, dtype=np.uint8)

    def release(self, value: np.ndarray) -> None:
        with self.lock:
            self.alive -= value.nbytes


def test_results_come_in_item_order_whatever_order_they_finish_in():
    gates = {i: threading.Event() for i in range(8)}
    done_order = []

    def work(i):
        # after the first (whose size the look-ahead waits for), later items finish first: item i waits
        # until item i+1 has finished
        if 0 < i < 7:
            gates[i + 1].wait(timeout=5)
        done_order.append(i)
        gates[i].set()
        return np.full(4, i, dtype=np.uint8)

    got = [(a.index, a.item, int(a.value[0])) for a in ahead(range(8), work, depth=8, workers=8)]
    assert got == [(i, i, i) for i in range(8)]
    assert done_order[1:] == list(range(7, 0, -1))  # the work really ran ahead, out of order


def test_a_broken_item_gets_its_error_and_no_other_item_does():
    def work(i):
        if i in (2, 5):
            raise VideoError("video cannot be opened", uid=f"item{i}")
        return np.full(3, i, dtype=np.uint8)

    out = list(ahead(range(7), work, depth=3, workers=2))
    assert [a.index for a in out] == list(range(7))
    for a in out:
        if a.index in (2, 5):
            assert isinstance(a.error, VideoError) and f"item{a.index}" in str(a.error) and a.value is None
        else:
            assert a.error is None and int(a.value[0]) == a.index


@pytest.mark.parametrize("budget,size", [(10_000, 1_000), (10_000, 3_000), (10_000, 6_000), (10_000, 12_000)])
def test_peak_bytes_stay_within_the_budget(budget, size):
    ledger = Ledger()
    for a in ahead(range(20), lambda i: ledger.make(size), depth=16, workers=4, budget_bytes=budget):
        assert a.error is None
        ledger.release(a.value)
    assert ledger.alive == 0
    # the result in use plus everything ahead of it; a result over the whole budget runs alone (serially)
    assert ledger.peak <= max(budget, size)
    if 2 * size <= budget:
        assert ledger.peak >= 2 * size  # and it did look ahead


def test_depth_zero_is_serial():
    ledger = Ledger()
    for a in ahead(range(5), lambda i: ledger.make(100), depth=0):
        assert ledger.alive == 100
        ledger.release(a.value)


def test_a_plan_is_decoded_once_and_shared_read_only(tmp_path):
    video = tmp_path / "v.mp4"
    video.write_bytes(b"x")
    store = DecodedPlans(1 << 20)
    calls = []

    def decode():
        calls.append(1)
        return np.ones((2, 4, 4, 3), dtype=np.uint8)

    a = decoded_once(video, "plan-a", (4, 4), decode, store)
    b = decoded_once(video, "plan-a", (4, 4), decode, store)
    assert a is b and len(calls) == 1 and not a.flags.writeable
    decoded_once(video, "plan-a", (8, 8), decode, store)   # another size: another entry
    decoded_once(video, "plan-b", (4, 4), decode, store)   # another plan
    assert len(calls) == 3 and store.decodes == 3
    video.write_bytes(b"changed")                          # the file changed: decoded again
    decoded_once(video, "plan-a", (4, 4), decode, store)
    assert len(calls) == 4


def test_threads_asking_for_one_plan_at_once_share_one_decode(tmp_path):
    video = tmp_path / "v.mp4"
    video.write_bytes(b"x")
    store = DecodedPlans(1 << 20)
    started, release = threading.Event(), threading.Event()
    calls = []

    def decode():
        calls.append(1)
        started.set()
        release.wait(timeout=5)
        return np.zeros((1, 2, 2, 3), dtype=np.uint8)

    results = []
    threads = [threading.Thread(target=lambda: results.append(decoded_once(video, "p", (2, 2), decode, store)))
               for _ in range(4)]
    threads[0].start()
    started.wait(timeout=5)
    for t in threads[1:]:
        t.start()
    release.set()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(results) == 4 and all(r is results[0] for r in results)


def test_errors_are_not_kept_and_the_store_is_bounded(tmp_path):
    video = tmp_path / "v.mp4"
    video.write_bytes(b"x")
    store = DecodedPlans(1000)

    def broken(uid):
        def decode():
            raise VideoError("corrupt", uid=uid)
        return decode

    for uid in ("a", "b"):
        with pytest.raises(VideoError, match=f"item {uid}|{uid}"):
            decoded_once(video, "p", (1, 1), broken(uid), store)
    for k in range(5):
        decoded_once(video, f"p{k}", (1, 1), lambda: np.zeros(400, dtype=np.uint8), store)
    assert store.bytes <= 1000 and len(store._entries) == 2
    decoded_once(video, "big", (1, 1), lambda: np.zeros(5000, dtype=np.uint8), store)  # over the budget: not kept
    assert store.bytes <= 1000
