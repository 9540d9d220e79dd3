"""End to end through the real lmms-eval CLI (subprocesses), asserting on the files it writes.

lmms-eval exits 0 when an evaluation fails, so every assertion here is on the
results and samples files and the numbers in them.
"""

import json
import shutil
from pathlib import Path

import pytest

from medhorizon_tasks.adapters.lmms_eval.runner import run_lmms_eval
from medhorizon_tasks.benchmarks.medhorizon import scoring
from medhorizon_tasks.benchmarks.medhorizon.protocol import FrameSetting, load_frames
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.data.synthetic.probes import image_digest

pytestmark = pytest.mark.e2e

TASKS = ["medhorizon_synthetic", "medhorizon_synthetic_text", "medhorizon_synthetic_oracle"]


def _records(run, task, items):
    preds = scoring.read_predictions(run.samples[task], [it.uid for it in items])
    return {r["uid"]: r for r in scoring.score_predictions(items, preds)}


@pytest.fixture(scope="module")
def needle_run(synthetic, tmp_path_factory):
    out = tmp_path_factory.mktemp("e2e")
    record = out / "received.jsonl"
    run = run_lmms_eval("medhorizon_needle", TASKS, out / "lmms", model_args=f"record_path={record}")
    return run, record


def test_results_and_samples_files(needle_run, synthetic):
    run, _ = needle_run
    items = load_release(synthetic.data_path)
    res = run.results["results"]
    assert set(TASKS) <= set(res)
    assert res["medhorizon_synthetic_oracle"]["accuracy,none"] >= 0.99
    assert res["medhorizon_synthetic_text"]["accuracy,none"] <= 0.35
    long_uids = {it.uid for it in items if it.duration_s >= 3600}
    assert len(long_uids) >= 8
    visual = _records(run, "medhorizon_synthetic", items)
    oracle = _records(run, "medhorizon_synthetic_oracle", items)
    acc = lambda recs: sum(recs[u]["correct"] for u in long_uids) / len(long_uids)  # noqa: E731
    assert acc(oracle) == 1.0
    assert acc(visual) <= 0.5, "cap-64 uniform frames rarely hit sparse evidence in hour-long videos"
    for task in TASKS:
        lines = run.samples[task].read_text().splitlines()
        assert len(lines) == len(items)
        ours = scoring.report(list(_records(run, task, items).values()))["overall"]["accuracy"]
        assert ours == pytest.approx(res[task]["accuracy,none"]), "score and lmms-eval agree"


def test_the_authors_rule_is_reported_beside_the_default(needle_run, synthetic):
    """results.json holds accuracy_authors and rules_disagree for every task, equal to what `score` reports for
    the same samples; the needle probe's styles ("Option X is not supported ... The answer is L", reasoning
    blocks, refusals) make the two rules differ."""
    run, _ = needle_run
    items = load_release(synthetic.data_path)
    res = run.results["results"]
    for task in TASKS:
        o = scoring.report(list(_records(run, task, items).values()))["overall"]
        assert res[task]["accuracy_authors,none"] == pytest.approx(o["accuracy_authors"]), task
        assert res[task]["rules_disagree,none"] == o["rules_disagree"], task
        samples = [json.loads(x) for x in run.samples[task].read_text().splitlines()]
        assert sum(s["rules_disagree"] for s in samples) == o["rules_disagree"]
    oracle = res["medhorizon_synthetic_oracle"]
    assert oracle["rules_disagree,none"] > 0
    assert oracle["accuracy_authors,none"] < oracle["accuracy,none"]


def test_reasoning_blocks_reach_the_scorer_and_are_ignored_by_its_one_rule(needle_run, synthetic):
    """lmms-eval's own --reasoning_tags stripping is off for these tasks (reasoning_tags: none), so the samples
    keep the model's text and the package's one rule (extract.strip_reasoning) decides, as in VLMEvalKit."""
    from lmms_eval.api.reasoning import parse_reasoning_tags_config

    run, _ = needle_run
    items = load_release(synthetic.data_path)
    recs = _records(run, "medhorizon_synthetic_oracle", items)
    thinking = [r for r in recs.values() if r["raw_output"] and "<think>" in r["raw_output"]]
    assert thinking, "the needle probe answers some items with a reasoning block"
    assert all(r["correct"] for r in thinking)
    assert parse_reasoning_tags_config(cli_value='[["<think>", "</think>"]]', task_value="none") is None


def test_model_receives_exactly_the_planned_frames(needle_run, synthetic):
    run, record = needle_run
    items = {it.uid: it for it in load_release(synthetic.data_path)}
    received = [json.loads(x) for x in record.read_text().splitlines()]
    by_task = {}
    for r in received:
        by_task.setdefault(r["task"], []).append(r)
    assert all(r["n_images"] == 0 for r in by_task["medhorizon_synthetic_text"])
    checked = 0
    for task, mode in (("medhorizon_synthetic", "visual"), ("medhorizon_synthetic_oracle", "oracle")):
        samples = [json.loads(x) for x in run.samples[task].read_text().splitlines()]
        uid_of = {s["doc_id"]: s["accuracy"]["uid"] for s in samples}
        for r in by_task[task][:12]:
            item = items[uid_of[r["doc_id"]]]
            plan, frames = load_frames(item, FrameSetting(mode=mode), synthetic.video_root)
            assert r["images"] == [image_digest(f) for f in frames], f"{task} item {item.uid}"
            stamps = ", ".join(f"{t:.1f}" for t in plan.timestamps)
            assert f"Frame timestamps in seconds: {stamps}." in r["prompt"]
            checked += 1
    assert checked == 24


def test_two_processes_give_the_same_per_item_results(needle_run, synthetic, tmp_path):
    run1, _ = needle_run
    items = load_release(synthetic.data_path)
    record = tmp_path / "received.jsonl"
    run2 = run_lmms_eval("medhorizon_needle", ["medhorizon_synthetic"], tmp_path / "lmms2", num_processes=2,
                         model_args=f"record_path={record}")
    ranks = [json.loads(x)["rank"] for x in record.read_text().splitlines()]
    assert sorted(set(ranks)) == [0, 1], "two ranks really shared the work"
    assert len(ranks) == len(items)
    one = _records(run1, "medhorizon_synthetic", items)
    two = _records(run2, "medhorizon_synthetic", items)
    assert len(two) == len(items)
    assert {u: (r["raw_output"], r["correct"]) for u, r in one.items()} == \
           {u: (r["raw_output"], r["correct"]) for u, r in two.items()}
    assert run2.accuracy("medhorizon_synthetic") == pytest.approx(run1.accuracy("medhorizon_synthetic"))
    lines = run2.samples["medhorizon_synthetic"].read_text().splitlines()
    assert len(lines) == len(items), "no item lost or duplicated across ranks"
    log = run2.log.read_text(encoding="utf-8", errors="replace")
    for rank in (0, 1):  # each rank took half of the node's cores and decode memory, and said so once
        assert log.count(f"medhorizon: rank {rank} of 2 on this node: ") == 1, log[-3000:]


def test_a_broken_video_is_reported_and_the_rest_still_scored(synthetic, tmp_path, monkeypatch):
    """The `medhorizon` (release) task over a copy of three videos: one missing, one truncated."""
    recs = [json.loads(x) for x in synthetic.data_path.read_text().splitlines()]
    short = [r for r in recs if r["duration_seconds"] < 600][:3]
    root = tmp_path / "videos"
    for r in short:
        dst = root / r["video_path"]
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(synthetic.video_root / r["video_path"], dst)
    missing, truncated, good = short
    (root / missing["video_path"]).unlink()
    t = root / truncated["video_path"]
    t.write_bytes(t.read_bytes()[: t.stat().st_size // 3])
    data = tmp_path / "release.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in short))
    run = run_lmms_eval("medhorizon_needle", ["medhorizon_oracle"], tmp_path / "lmms",
                        env={"MEDHORIZON_DATA": str(data), "MEDHORIZON_VIDEO_ROOT": str(root),
                             "MEDHORIZON_ALLOW_VIDEO_ERRORS": "1"})  # past the pre-flight, which would stop it
    items = load_release(data)
    recs_by_uid = _records(run, "medhorizon_oracle", items)
    bad = {str(q["uid"]) for q in missing["qa"] + truncated["qa"]}
    for uid, r in recs_by_uid.items():
        if uid in bad:
            assert r["status"] == "error" and not r["correct"], uid
            assert f"item {uid}" in r["error"] and ("not found" in r["error"] or "truncated" in r["error"]
                                                    or "corrupt" in r["error"] or "cannot" in r["error"])
        else:
            assert r["correct"], uid
    assert any("not found" in recs_by_uid[str(q["uid"])]["error"] for q in missing["qa"])
    n_good = len(good["qa"])
    assert run.accuracy("medhorizon_oracle") == pytest.approx(n_good / len(items))


def test_missing_data_env_fails_loudly_in_the_files(tmp_path, monkeypatch):
    monkeypatch.delenv("MEDHORIZON_DATA", raising=False)
    from medhorizon_tasks.core.errors import MedHorizonError

    with pytest.raises(MedHorizonError) as e:
        run_lmms_eval("medhorizon_random", ["medhorizon_text"], tmp_path / "lmms")
    assert "no results" in str(e.value)
    assert "MEDHORIZON_DATA" in Path(str(e.value).split("log: ")[1].split("\n")[0]).read_text()
