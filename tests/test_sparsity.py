"""Evidence sparsity (paper appendix 6.4), on hand-computed items."""

import json

import pytest

from medhorizon_tasks.benchmarks.medhorizon.release import Item
from medhorizon_tasks.benchmarks.medhorizon.sparsity import (
    evidence_frames,
    evidence_ratio,
    format_sparsity,
    sparsity_report,
)
from medhorizon_tasks.benchmarks.medhorizon.taxonomy import task_type

_n = iter(range(10_000))


def item(windows, num_frames, *, support="local", task="PR", source="AutoLaparo") -> Item:
    t = task_type(task)
    return Item(
        uid=str(next(_n)), video_key="v", source=source, organ="", scene_type="", video_path="v.mp4",
        num_frames=num_frames, fps=25.0, duration_s=num_frames / 25.0, question="q?",
        options=("a", "b", "c", "d"), answer="A", task=task, task_name=t.name, family=t.family, hop=t.hop or 0,
        evidence_support=support, evidence_windows=tuple(tuple(w) for w in windows),
    )


def test_union_of_inclusive_windows_counts_overlaps_once():
    assert evidence_frames([(0, 9)], 1000) == 10
    assert evidence_frames([(0, 4), (3, 9)], 2000) == 10
    assert evidence_frames([(3, 9), (0, 4)], 2000) == 10, "order does not matter"
    assert evidence_frames([(0, 4), (5, 9)], 2000) == 10, "adjacent windows"
    assert evidence_frames([(0, 4), (6, 9)], 2000) == 9
    assert evidence_frames([(5, 5), (5, 5)], 100) == 1
    assert evidence_frames([(2, 8), (0, 20)], 100) == 21, "a window inside another"
    assert evidence_frames([(90, 150)], 100) == 10, "clipped to the video"
    assert evidence_frames([], 100) == 0


def test_worked_example_from_the_brief():
    items = [
        item([(0, 9)], 1000),                           # 10 / 1000 = 1%
        item([(0, 4), (3, 9)], 2000, support="proxy"),  # union 10 / 2000 = 0.5%
        item([], 5000, support="global", task="BPQ"),   # excluded
    ]
    assert evidence_ratio(items[0]) == pytest.approx(0.01)
    rep = sparsity_report(items)
    assert rep["n_items"] == 3
    assert rep["n_localizable"] == 2
    assert rep["n_global_excluded"] == 1
    assert rep["n_without_windows_excluded"] == 0
    assert rep["mean"] == pytest.approx(0.0075)
    assert rep["median"] == pytest.approx(0.0075)
    assert rep["evidence_frames_per_1000"] == pytest.approx(7.5)
    assert rep["by_support"] == {"local": {"n": 1, "mean": pytest.approx(0.01), "median": pytest.approx(0.01)},
                                 "proxy": {"n": 1, "mean": pytest.approx(0.005), "median": pytest.approx(0.005)}}
    assert rep["by_task"]["PR"]["n"] == 2 and rep["by_task"]["BPQ"] == {
        "n": 0, "mean": None, "median": None, "n_excluded": 1}
    json.dumps(rep)  # serialisable


def test_global_items_with_windows_are_still_excluded_and_windowless_items_are_counted():
    items = [
        item([(0, 99)], 1000, support="global"),
        item([], 1000, support="local"),
        item([], 1000, support=""),
        item([(10, 19)], 1000, support=""),  # windows without a support kind: localizable, "unspecified"
    ]
    rep = sparsity_report(items)
    assert rep["n_localizable"] == 1 and rep["n_global_excluded"] == 1 and rep["n_without_windows_excluded"] == 2
    assert list(rep["by_support"]) == ["unspecified"]
    assert rep["mean"] == pytest.approx(0.01)


def test_median_mean_split_and_grouping_orders():
    items = [
        item([(0, 0)], 1000, task="Size", source="REAL-Colon", support="proxy"),   # 0.1%
        item([(0, 1)], 1000, task="PR", source="GraSP"),                          # 0.2%
        item([(0, 9)], 1000, task="IR", source="GraSP"),                          # 1%
        item([(0, 99)], 1000, task="PR", source="AutoLaparo"),                    # 10%
        item([(0, 2)], 1000, task="Site", source="REAL-Colon", support="proxy"),  # 0.3%
    ]
    rep = sparsity_report(items)
    assert rep["mean"] == pytest.approx((0.001 + 0.002 + 0.01 + 0.1 + 0.003) / 5)
    assert rep["median"] == pytest.approx(0.003)
    assert rep["by_support"]["local"]["n"] == 3 and rep["by_support"]["proxy"]["n"] == 2
    assert rep["by_support"]["local"]["median"] == pytest.approx(0.01)
    assert rep["by_support"]["proxy"]["mean"] == pytest.approx(0.002)
    assert list(rep["by_task"]) == ["PR", "Site", "Size", "IR"], "taxonomy order"
    assert rep["by_task"]["PR"]["mean"] == pytest.approx(0.051)
    assert list(rep["by_source"]) == ["AutoLaparo", "GraSP", "REAL-Colon"]
    assert rep["by_source"]["GraSP"]["median"] == pytest.approx(0.006)


def test_no_localizable_items():
    rep = sparsity_report([item([], 100, support="global")])
    assert rep["n_localizable"] == 0 and rep["mean"] is None and rep["median"] is None
    assert rep["evidence_frames_per_1000"] is None
    assert "nothing to estimate" in format_sparsity(rep)
    assert sparsity_report([])["n_items"] == 0


def test_format_shows_percent_and_the_exclusions():
    items = [item([(0, 9)], 1000), item([(0, 4), (3, 9)], 2000, support="proxy"),
             item([], 5000, support="global", task="BPQ")]
    text = format_sparsity(sparsity_report(items))
    assert "0.750%" in text and "7.5 evidence frames per 1,000" in text
    assert "1 global-support" in text
    assert "exact (local)" in text and "proxy (lesion union)" in text
    assert "1.000%" in text and "0.500%" in text
    assert "paper's audit: 1,035 localizable" in text
