"""The diagnostics behave as the paper's logic predicts on the synthetic benchmark (needle probe, real lmms-eval)."""

import pytest

from medhorizon_tasks.adapters.lmms_eval.runner import run_lmms_eval
from medhorizon_tasks.benchmarks.medhorizon import scoring
from medhorizon_tasks.benchmarks.medhorizon.release import load_release

pytestmark = pytest.mark.e2e

TASKS = ["frames4", "frames64", "frames512", "order_original", "order_reverse", "order_block_shuffle",
         "sampling_uniform_32", "sampling_frame_change_32", "sampling_hybrid_32"]


@pytest.fixture(scope="module")
def results(synthetic, tmp_path_factory):
    run = run_lmms_eval("medhorizon_needle", [f"medhorizon_synthetic_{t}" for t in TASKS],
                        tmp_path_factory.mktemp("diag"))
    items = load_release(synthetic.data_path)
    out = {}
    for t in TASKS:
        preds = scoring.read_predictions(run.samples[f"medhorizon_synthetic_{t}"], [it.uid for it in items])
        out[t] = {r["uid"]: r for r in scoring.score_predictions(items, preds)}
    return items, out


def _acc(records, uids):
    return sum(records[u]["correct"] for u in uids) / len(uids)


def test_accuracy_rises_with_the_frame_budget_on_long_videos(results):
    items, res = results
    long_uids = [it.uid for it in items if it.duration_s >= 3600]
    a4, a64, a512 = (_acc(res[t], long_uids) for t in ("frames4", "frames64", "frames512"))
    assert a4 < a64 < a512, (a4, a64, a512)
    assert a512 >= 0.8


def test_order_perturbation_breaks_exactly_the_order_items(results):
    items, res = results
    order_uids = [it.uid for it in items if "first-seen]" in it.question]
    other_uids = [it.uid for it in items if it.uid not in order_uids]
    assert len(order_uids) == 8
    original, reverse = res["order_original"], res["order_reverse"]
    assert _acc(original, order_uids) == 1.0, "256 frames see both windows of every order item, in order"
    assert _acc(reverse, order_uids) == 0.0, "reversed, the decoy window is seen first"
    assert [original[u]["correct"] for u in other_uids] == [reverse[u]["correct"] for u in other_uids]
    assert _acc(res["order_block_shuffle"], order_uids) < 1.0


def test_frame_change_sampling_finds_abrupt_evidence(results):
    items, res = results
    all_uids = [it.uid for it in items]
    uniform, change, hybrid = (_acc(res[t], all_uids) for t in
                               ("sampling_uniform_32", "sampling_frame_change_32", "sampling_hybrid_32"))
    # The synthetic evidence frames are the most abrupt changes in each video, so a change detector finds them.
    assert change > uniform and hybrid > uniform
