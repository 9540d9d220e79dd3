"""Video errors and resumption through the real lmms-eval CLI (issue: nothing silently wrong).

A small release made of synthetic videos: one good, one missing, and one whose
keyframe packet in the middle is zeroed (its packet index is fine; decoding
fails only for frames of that GOP). The tasks `medhorizon` (cap 64),
`medhorizon_frames4` and `medhorizon_oracle` run over it:

* an item's video error belongs to the frame plans that failed, not to every
  task of that item (4 frames and the oracle's evidence frames decode fine);
* a run killed in the middle and resumed from its journal scores every item
  exactly as an uninterrupted run does, video errors included;
* a journal written with other model_args is never reused.

Every assertion is on the files lmms-eval writes (it exits 0 when a run fails).
"""

import json
import os
import shutil
import signal
import subprocess
import time

import numpy as np
import pytest

from medhorizon_tasks.adapters.lmms_eval.runner import OFFLINE_ENV, lmms_eval_command, run_lmms_eval
from medhorizon_tasks.benchmarks.medhorizon import scoring
from medhorizon_tasks.benchmarks.medhorizon.protocol import FrameSetting, plan_for
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.core.video.decode import index_video

pytestmark = pytest.mark.e2e

TASKS = ["medhorizon", "medhorizon_frames4", "medhorizon_oracle"]


def _env(data, root):
    return {"MEDHORIZON_DATA": str(data), "MEDHORIZON_VIDEO_ROOT": str(root), "MEDHORIZON_ALLOW_VIDEO_ERRORS": "1"}


def _records(samples: dict, data) -> dict:
    items = load_release(data)
    out = {}
    for task, path in samples.items():
        preds = scoring.read_predictions(path, [it.uid for it in items])
        for r in scoring.score_predictions(items, preds):
            out[(task, r["uid"])] = (r["status"], r["error"], r["extracted"], r["correct"])
    return out


@pytest.fixture(scope="module")
def reference_run(broken_release, tmp_path_factory):
    data, root, _ = broken_release
    out = tmp_path_factory.mktemp("reference")
    run = run_lmms_eval("medhorizon_needle", TASKS, out, env=_env(data, root))
    return _records(run.samples, data)


def test_a_video_error_belongs_to_the_plans_that_failed(reference_run, broken_release):
    _, _, uids = broken_release
    recs = reference_run
    for uid in uids["missing"]:
        for task in TASKS:
            status, error, _, correct = recs[(task, uid)]
            assert status == "error" and not correct and "not found" in error, (task, uid)
    for uid in uids["corrupt"]:
        status, error, _, _ = recs[("medhorizon", uid)]
        assert status == "error" and "corrupt" in error, uid
        for task in ("medhorizon_frames4", "medhorizon_oracle"):
            assert recs[(task, uid)][0] != "error", f"{task} item {uid} decoded fine but was marked an error"
        assert recs[("medhorizon_oracle", uid)][3], f"oracle frames of item {uid} show the evidence"
    for uid in uids["good"]:
        assert all(recs[(task, uid)][0] != "error" for task in TASKS)
        assert recs[("medhorizon_oracle", uid)][3]


def _journal_lines(journal):
    return sum(len(p.read_text().splitlines()) for p in journal.parent.glob(journal.name + ".rank*"))


def test_killed_and_resumed_run_scores_exactly_as_an_uninterrupted_one(reference_run, broken_release, tmp_path):
    data, root, uids = broken_release
    journal = tmp_path / "journal" / "needle.jsonl"
    args = f"inner=medhorizon_needle,journal={journal},delay_s=0.15"
    out = tmp_path / "resumed"
    env = {**os.environ, **OFFLINE_ENV, **_env(data, root)}
    cmd = lmms_eval_command("medhorizon_resume", TASKS, out, model_args=args)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    n_requests = 3 * sum(len(v) for v in uids.values())
    deadline = time.time() + 300
    while _journal_lines(journal) < n_requests // 2 and proc.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert 0 < _journal_lines(journal) < n_requests

    run = run_lmms_eval("medhorizon_resume", TASKS, out, model_args=args, env=_env(data, root))
    assert _records(run.samples, data) == reference_run
    assert _journal_lines(journal) == n_requests, "each request answered once: none redone, none lost"
    journaled = [json.loads(x) for p in journal.parent.glob("needle.jsonl.rank*") for x in p.read_text().splitlines()]
    assert any(e["error"] for rec in journaled for e in rec["video"]), "video errors are journaled with responses"


def test_a_journal_written_with_other_model_args_is_not_reused(broken_release, tmp_path):
    data, root, _ = broken_release
    journal = tmp_path / "random.jsonl"
    task = ["medhorizon_text"]
    env = _env(data, root)
    seed1 = run_lmms_eval("medhorizon_resume", task, tmp_path / "s1", env=env,
                          model_args=f"inner=medhorizon_random,journal={journal},seed=1")
    seed2 = run_lmms_eval("medhorizon_resume", task, tmp_path / "s2", env=env,
                          model_args=f"inner=medhorizon_random,journal={journal},seed=2")
    fresh2 = run_lmms_eval("medhorizon_random", task, tmp_path / "f2", env=env, model_args="seed=2")

    def raw(run):
        items = load_release(data)
        preds = scoring.read_predictions(run.samples["medhorizon_text"], [it.uid for it in items])
        return {uid: p["raw"] for uid, p in preds.items()}

    assert raw(seed2) == raw(fresh2), "seed=2 answered by the seed=2 model, not replayed from seed=1's journal"
    assert raw(seed1) != raw(seed2)
    lines = [json.loads(x) for p in tmp_path.glob("random.jsonl.rank*") for x in p.read_text().splitlines()]
    assert len({rec["identity"] for rec in lines}) == 2
    assert len(lines) == 2 * len(raw(seed1))
    assert "written by another model identity" in (tmp_path / "s2" / "lmms_eval_medhorizon_resume.log").read_text()


def test_a_journaled_response_is_asked_again_once_its_video_is_repaired(broken_release, synthetic, tmp_path):
    """The user fixes the video root (puts the missing video in place, replaces the corrupt one with a good
    download) and reruns into the same journal: exactly the items of those two videos are asked again, and
    the run scores as a fresh one. The repaired video's prompt is unchanged (same duration), so only the
    video state journaled with each response tells its answers are stale."""
    data, root, uids = broken_release
    videos = tmp_path / "videos"
    shutil.copytree(root, videos)
    journal = tmp_path / "needle.jsonl"
    task, args = ["medhorizon"], f"inner=medhorizon_needle,journal={journal}"
    first = _records(run_lmms_eval("medhorizon_resume", task, tmp_path / "first", env=_env(data, videos),
                                   model_args=args).samples, data)
    assert {first[("medhorizon", u)][0] for u in uids["missing"] | uids["corrupt"]} == {"error"}
    n_first = _journal_lines(journal)
    assert n_first == sum(len(v) for v in uids.values())

    paths = {name: next(json.loads(x)["video_path"] for x in data.read_text().splitlines()
                        if {str(q["uid"]) for q in json.loads(x)["qa"]} == uids[name])
             for name in ("missing", "corrupt")}
    for rel in paths.values():
        shutil.copy(synthetic.video_root / rel, videos / rel)
    second = run_lmms_eval("medhorizon_resume", task, tmp_path / "second", env=_env(data, videos), model_args=args)
    again = _records(second.samples, data)
    fresh = _records(run_lmms_eval("medhorizon_needle", task, tmp_path / "fresh", env=_env(data, videos)).samples,
                     data)
    assert again == fresh, "the resumed run scores as a fresh run on the repaired video root"
    assert "error" not in {again[("medhorizon", u)][0] for u in uids["missing"] | uids["corrupt"]}
    assert _journal_lines(journal) == n_first + len(uids["missing"]) + len(uids["corrupt"]), \
        "the items of the two repaired videos are asked again, and only they"
    log = (tmp_path / "second" / "lmms_eval_medhorizon_resume.log").read_text()
    assert f"{len(uids['corrupt'])} journaled response(s) are asked again: a video they were given has changed" \
        in log


def test_frames_reach_the_model_with_their_timestamps(broken_release):
    from medhorizon_tasks.adapters.lmms_eval import medhorizon as adapter

    data, root, uids = broken_release
    item = next(it for it in load_release(data) if it.uid in uids["good"])
    doc = {**item.to_record(), "video_root": str(root)}
    kwargs = {"mode": "visual", "fps": 1, "cap": 64, "max_side": 448}
    frames = adapter.doc_to_visual(doc, kwargs)
    plan = plan_for(item, FrameSetting(), index_video(root / item.video_path))
    assert isinstance(frames, list) and len(frames) == len(plan)
    assert frames.timestamps == plan.timestamps
    assert [f.info["timestamp_s"] for f in frames] == list(plan.timestamps)
    assert frames.chronological and frames.error is None
    assert np.asarray(frames[0]).shape[2] == 3


def test_a_sureon_rerun_from_its_journal_keeps_its_video_errors(tmp_path):
    """Sureon (the issue's case: mu rose from 8.3% to 16.7% on a second run, clips whose file does not exist
    counted as answered): the second run of the same journal replays every answer and scores exactly as the
    first, the items of the missing clip still video errors."""
    from medhorizon_tasks.benchmarks.sureon import scoring as sureon_scoring
    from medhorizon_tasks.benchmarks.sureon.items import load_items
    from medhorizon_tasks.data.synthetic.sureon import build_sureon_sample

    sample = build_sureon_sample()
    videos = tmp_path / "videos"
    shutil.copytree(sample.video_root, videos)
    items = load_items(sample.data_path)
    gone = items[0].video_path
    (videos / gone).unlink()
    lost = {it.uid for it in items if it.video_path == gone}
    env = {"SUREON_DATA": str(sample.data_path), "SUREON_VIDEO_ROOT": str(videos),
           "MEDHORIZON_ALLOW_VIDEO_ERRORS": "1"}
    journal = tmp_path / "needle.jsonl"
    args = f"inner=medhorizon_needle,journal={journal}"

    def records(run):
        preds = sureon_scoring.read_predictions(run.samples["sureon_visual"], [it.uid for it in items])
        return sureon_scoring.score_predictions(items, preds, mode="visual")

    first = records(run_lmms_eval("medhorizon_resume", ["sureon_visual"], tmp_path / "a", env=env, model_args=args))
    n = _journal_lines(journal)
    second = records(run_lmms_eval("medhorizon_resume", ["sureon_visual"], tmp_path / "b", env=env, model_args=args))
    assert second == first
    assert _journal_lines(journal) == n == len(items), "the second run asked the model nothing"
    assert {r["uid"] for r in second if r["status"] == "error"} == lost
    report = sureon_scoring.report(second)
    assert {e["uid"] for e in report["video_errors"]} == lost
    assert report["mu"]["accuracy"] < 1.0, "the lost clip's items count wrong (the needle is exact elsewhere)"
