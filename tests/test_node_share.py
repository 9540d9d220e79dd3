"""A node's cores and decode memory shared by the ranks on it (core/video/share.py), and the decode settings
parsed by one helper that names the variable, the value and what it accepts (core/settings.py)."""

from __future__ import annotations

import io

import numpy as np
import pytest

from medhorizon_tasks.core.sampling import FramePlan
from medhorizon_tasks.core.settings import SettingError, env_flag, env_number
from medhorizon_tasks.core.video import ahead as ahead_module
from medhorizon_tasks.core.video import decode as decode_module
from medhorizon_tasks.core.video import share
from medhorizon_tasks.data.synthetic.video_writer import write_video

MB = 1 << 20
SETTINGS = ("LOCAL_WORLD_SIZE", "LOCAL_RANK", "WORLD_SIZE", share.THREADS_ENV, share.NODE_MEMORY_ENV,
            share.AHEAD_MB_ENV, share.STORE_ENV, share.LOOKAHEAD_ENV)


@pytest.fixture
def fresh(monkeypatch):
    """No launcher, no setting, and a process that has not computed its share nor made its store yet."""
    for name in SETTINGS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(share, "_SHARE", None)
    monkeypatch.setattr(ahead_module, "_RUN", None)
    monkeypatch.setattr(share.os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    return monkeypatch


def _rank_of(monkeypatch, ranks: int, rank: int = 0):
    monkeypatch.setenv("LOCAL_WORLD_SIZE", str(ranks))
    monkeypatch.setenv("LOCAL_RANK", str(rank))
    monkeypatch.setattr(share, "_SHARE", None)
    monkeypatch.setattr(ahead_module, "_RUN", None)


def test_a_rank_of_four_gets_a_quarter_of_the_cores_and_of_the_byte_budget(fresh):
    fresh.setenv(share.NODE_MEMORY_ENV, "4000")
    alone = share.process_share()
    assert (alone.ranks, alone.threads) == (1, 16)
    alone_store, alone_ahead = ahead_module.run_plans().budget_bytes, ahead_module.ahead_budget()
    assert alone_store == alone_ahead == 2000 * MB  # half of the node's 4000 MB each, one process

    _rank_of(fresh, 4, rank=3)
    mine = share.process_share()
    assert (mine.rank, mine.ranks, mine.threads) == (3, 4, 4)
    assert ahead_module.ahead_budget() * 4 == alone_ahead
    assert ahead_module.run_plans().budget_bytes * 4 == alone_store

    # the default node budget: a stated share of the memory available at the start
    s = share.node_share({"LOCAL_WORLD_SIZE": "4"}, cores=32, memory=16_000 * MB)
    assert s.node_bytes == int(16_000 * MB * share.NODE_MEMORY_SHARE)
    assert s.ahead_bytes == s.store_bytes == s.node_bytes // 4 // 2 and s.threads == 8
    # a big node: one process holds what it held before (2 GiB each); 128 ranks on 96 cores: one thread each
    assert share.node_share({}, cores=32, memory=1 << 40).store_bytes == share.PROCESS_CAP_BYTES
    assert share.node_share({"LOCAL_WORLD_SIZE": "128"}, cores=96, memory=1 << 40).threads == 1
    # the existing settings still decide when given
    s = share.node_share({"LOCAL_WORLD_SIZE": "4", share.STORE_ENV: "100", share.THREADS_ENV: "3",
                          share.AHEAD_MB_ENV: "50"}, cores=32, memory=16_000 * MB)
    assert (s.store_bytes, s.ahead_bytes, s.threads) == (100 * MB, 50 * MB, 3)


def _multi_gop_video(tmp_path):
    path = tmp_path / "six_gops.mp4"
    frames = (np.full((24, 32, 3), (7 * i) % 250, dtype=np.uint8) for i in range(300))
    write_video(path, frames, 25.0, 32, 24)  # GOP 50: six GOPs
    return path


def test_the_decoder_of_a_rank_of_four_starts_a_quarter_of_the_cores_in_threads(fresh, tmp_path):
    path = _multi_gop_video(tmp_path)
    plan = FramePlan(tuple(range(10, 300, 50)), tuple(i / 25 for i in range(10, 300, 50)), "one-a-gop")
    started = []
    real = decode_module._decode_in_threads

    def spy(groups, demuxer, decoders):
        started.append(len(decoders))
        return real(groups, demuxer, decoders)

    fresh.setattr(decode_module, "_decode_in_threads", spy)
    alone = decode_module.decode_plan(path, plan)
    _rank_of(fresh, 4)
    shared = decode_module.decode_plan(path, plan)
    assert started == [6, 4], "one thread per GOP alone (6 <= 16 cores); 16 cores / 4 ranks on the node"
    assert np.array_equal(alone, shared)


def test_the_look_ahead_of_a_rank_runs_at_most_its_share_of_decodes_at_once(fresh):
    pools = []
    real = ahead_module.ThreadPoolExecutor

    def pool(max_workers, **kw):
        pools.append(max_workers)
        return real(max_workers, **kw)

    fresh.setattr(ahead_module, "ThreadPoolExecutor", pool)
    _rank_of(fresh, 16)  # 16 cores, 16 ranks: one core each
    assert [a.value for a in ahead_module.ahead(range(4), lambda i: i, nbytes=lambda v: 1)] == [0, 1, 2, 3]
    _rank_of(fresh, 1)
    list(ahead_module.ahead(range(4), lambda i: i, nbytes=lambda v: 1))
    assert pools == [1, ahead_module.DEFAULT_AHEAD_WORKERS]


def test_each_rank_says_its_share_once_under_a_launcher_and_a_lone_process_says_nothing():
    s = share.NodeShare(3, 8, 32, 4, 50_000_000_000, 3_100_000_000, 3_100_000_000, "test")
    assert s.line().startswith("rank 3 of 8 on this node: 4 decoder threads, 3.1 GB look-ahead, 3.1 GB plan store")
    out = io.StringIO()
    share.announce_share(s, {"LOCAL_WORLD_SIZE": "8"}, out)
    share.announce_share(s, {}, out)
    assert out.getvalue() == f"medhorizon: {s.line()}\n"


@pytest.mark.parametrize("name, value", [(share.STORE_ENV, "inf"), (share.STORE_ENV, "-5"), (share.STORE_ENV, "nan"),
                                         (share.STORE_ENV, "2GB"), (share.NODE_MEMORY_ENV, "1e400"),
                                         (share.THREADS_ENV, "0"), (share.THREADS_ENV, "2.5"),
                                         (share.LOOKAHEAD_ENV, "-1"), (share.AHEAD_MB_ENV, "lots")])
def test_a_decode_setting_it_cannot_take_is_refused_naming_variable_value_and_what_it_accepts(name, value):
    with pytest.raises(SettingError) as err:
        share.check_settings({name: value})
    text = str(err.value)
    assert f"${name}={value!r}" in text and "expected a" in text and "\n" not in text
    share.check_settings({name: ""})  # blank: the default


def test_the_helper_reads_numbers_and_yes_no_and_refuses_the_rest():
    assert env_number("X", 7, environ={}) == 7
    assert env_number("X", 7, environ={"X": " 0 "}) == 0  # 0 is a value (the store off), not the default
    assert env_number("X", None, integer=True, environ={"X": "3"}) == 3
    assert env_flag("X", environ={"X": "On"}) is True and env_flag("X", True, environ={"X": "no"}) is False
    assert env_flag("X", True, environ={}) is True
    with pytest.raises(SettingError, match=r"\$X='ture' .*expected yes or no"):
        env_flag("X", environ={"X": "ture"})
