"""Issue 21 through the real commands: a repaired video is never taken for the old one, and a run owns its outputs.

The repaired video (tests/replaced_video.py) has the old file's size, its first and last MiB and, put in
place as ``cp -p`` does, its mtime; only its middle differs, where four of its five questions lose their
evidence. The needle probe reads the evidence from the frames it is given: 5 of 5 on the old file, 1 of 5 on
the repaired one -- unless some cache, journal or store hands it the old file's frames or answers.

Every assertion is on the files the frameworks wrote and the launchers' messages (both frameworks exit 0
when an evaluation fails).
"""

import json
import os
import subprocess
import sys
import time

import pytest

from medhorizon_tasks.adapters.lmms_eval.runner import OFFLINE_ENV
from medhorizon_tasks.benchmarks.medhorizon import scoring
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.core.video.frame_cache import FrameCache
from medhorizon_tasks.runs.launch import RUN_HOLDER

pytestmark = pytest.mark.e2e


def _env(tmp, **extra):
    env = {**os.environ, **OFFLINE_ENV, "XDG_CACHE_HOME": str(tmp / "xdg"), "LMUData": str(tmp / "lmu")}
    for k in ("MEDHORIZON_DATA", "MEDHORIZON_VIDEO_ROOT", "MEDHORIZON_ALLOW_VIDEO_ERRORS", "MEDHORIZON_FRAME_CACHE",
              "MEDHORIZON_VLMEVAL_FRAMES", "MMEVAL_ROOT"):
        env.pop(k, None)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def _command(args):
    return [sys.executable, "-m", "medhorizon_tasks.commands.main", *args]


def _cli(args, env, timeout=900):
    return subprocess.run(_command(args), env=env, capture_output=True, text=True, timeout=timeout)


def _while_held(first_args, second_args, folder, env):
    """Start the first command, and once it holds ``folder`` run the second; both results."""
    first = subprocess.Popen(_command(first_args), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while not (folder / RUN_HOLDER).exists() and first.poll() is None and time.time() < deadline:
        time.sleep(0.05)
    assert first.poll() is None, "the first run ended before the second started"
    second = _cli(second_args, env)
    out, err = first.communicate(timeout=900)
    return subprocess.CompletedProcess(first.args, first.returncode, out, err), second


def _correct(samples, data) -> dict[str, bool]:
    items = load_release(data)
    preds = scoring.read_predictions(samples, [it.uid for it in items])
    return {r["uid"]: bool(r["correct"]) for r in scoring.score_predictions(items, preds)}


def _expect_repaired(correct: dict[str, bool], twins) -> None:
    """The needle on the repaired video: only the question whose evidence it still shows is right."""
    assert {u: correct[u] for u in (twins.kept_uid, *twins.changed_uids)} == {
        twins.kept_uid: True, **{u: False for u in twins.changed_uids}}, "1 of 5 on the repaired video"
    assert all(correct[u] for u in twins.other_uids), "the other video is unchanged"


# ------------------------------------------------------------------ lmms-eval: frame cache, output ownership

@pytest.fixture(scope="module")
def lmms_runs(twins, synthetic, tmp_path_factory):
    """The frame cache filled from the old video; the video repaired; then `run` of the needle with the cache,
    and while it runs a second `run` (the random probe) into the same --output_path."""
    tmp = tmp_path_factory.mktemp("lmms_identity")
    root = twins.root(tmp / "videos", synthetic)
    cache = tmp / "frames"
    env = _env(tmp, MEDHORIZON_DATA=twins.data, MEDHORIZON_VIDEO_ROOT=root, MEDHORIZON_FRAME_CACHE=cache)
    filled = _cli(["prepare-frames", "--data", str(twins.data), "--video-root", str(root), "--plans", "oracle",
                   "--cache", str(cache), "--quiet"], env)
    assert filled.returncode == 0, filled.stderr[-2000:]
    entries_before = FrameCache(cache).info()["entries"]
    twins.repair(root)
    out = tmp / "out"
    args = ["run", "--tasks", "medhorizon_oracle", "--output_path", str(out)]
    needle, rand = _while_held([*args, "--model", "medhorizon_needle", "--model_args", "delay_s=0.3"],
                               [*args, "--model", "medhorizon_random"], out, env)
    return needle, rand, out, entries_before, FrameCache(cache).info()["entries"]


def test_the_frame_cache_does_not_serve_a_repaired_videos_old_frames(lmms_runs, twins):
    """Issue 21: the cache key hashed the size and both ends, so the needle read the old frames (5/5)."""
    needle, _, out, entries_before, entries_after = lmms_runs
    assert needle.returncode == 0, needle.stderr[-3000:]
    assert entries_before == 1 + len(twins.changed_uids) + len(twins.other_uids), "one oracle plan per question"
    assert entries_after == entries_before + 1 + len(twins.changed_uids), \
        "the repaired video's plans are new entries; the other video's are hits"
    (samples,) = out.rglob("*_samples_medhorizon_oracle.jsonl")
    _expect_repaired(_correct(samples, twins.data), twins)
    (results,) = out.rglob("*_results.json")
    assert json.loads(results.read_text())["results"]["medhorizon_oracle"]["accuracy,none"] == pytest.approx(6 / 10)


def test_two_runs_into_one_output_path_do_not_both_say_ok(lmms_runs):
    """Issue 21: both runs wrote <stamp>_results.json into one folder and both printed "run OK"."""
    needle, rand, out, _, _ = lmms_runs
    assert needle.returncode == 0 and "lmms-eval run OK" in needle.stderr, needle.stderr[-3000:]
    assert rand.returncode == 2, rand.stderr[-3000:]
    first_line = rand.stderr.strip().splitlines()[-1]
    assert first_line.startswith(f"medhorizon-tasks run: error: {out} is in use by another run (pid ")
    assert "--model medhorizon_needle" in first_line and first_line.endswith("choose another --output_path.")
    (results,) = out.rglob("*_results.json")  # nothing of the refused run, nothing lost of the first
    assert json.loads(results.read_text())["config"]["model"] == "medhorizon_needle"
    (samples,) = out.rglob("*_samples_*.jsonl")
    assert len(samples.read_text().splitlines()) == 10
    assert not (out / RUN_HOLDER).exists(), "the folder is free again"


# ------------------------------------------------------------------ a resumed diagnose

def _journal(out):
    return [json.loads(x) for p in sorted((out / "journal").glob("*.rank*")) for x in p.read_text().splitlines()]


def test_a_resumed_diagnose_asks_again_exactly_the_repaired_videos_items(twins, synthetic, tmp_path):
    """Issue 21: the journal kept the identity of size and ends, so a resumed diagnose reused every answer."""
    root = twins.root(tmp_path / "videos", synthetic)
    env = _env(tmp_path, MEDHORIZON_VIDEO_ROOT=root)
    out = tmp_path / "diag"
    args = ["diagnose", "order", "--model", "medhorizon_needle", "--data", str(twins.data), "--out", str(out)]
    first = _cli(args, env)
    assert first.returncode == 0, first.stderr[-3000:]
    before = _journal(out)
    tasks = {r["task"] for r in before}
    assert len(tasks) == 4 and len(before) == 4 * 10
    assert all(_correct(_newest_samples(out), twins.data).values()), "the old video: every item right"

    twins.repair(root)
    again = _cli(args, env)
    assert again.returncode == 0, again.stderr[-3000:]
    asked = _journal(out)[len(before):]
    uid_of = {i: it.uid for i, it in enumerate(load_release(twins.data))}
    assert sorted((r["task"], uid_of[r["doc_id"]]) for r in asked) == sorted(
        (t, u) for t in tasks for u in (twins.kept_uid, *twins.changed_uids)), "exactly the repaired video's items"
    _expect_repaired(_correct(_newest_samples(out), twins.data), twins)


def _newest_samples(out):
    return max((out / "lmms_eval").rglob("*_samples_medhorizon_order_original.jsonl"), key=os.path.getmtime)


# ------------------------------------------------------------------ VLMEvalKit: frame store, stamp, launchers

@pytest.fixture(scope="module")
def vlmeval_runs(twins, synthetic, tmp_path_factory):
    """The needle on MedHorizon_oracle: in work dir A with the old videos (and, while it runs, a second launcher
    on A); then with MEDHORIZON_VIDEO_ROOT pointed at a root holding the repaired video, in a new work dir B;
    then in B again with the root pointed back at the old videos. One frame store for all of them."""
    tmp = tmp_path_factory.mktemp("vlmeval_identity")
    old_root = twins.root(tmp / "old_videos", synthetic)
    new_root = twins.root(tmp / "new_videos", synthetic, version="new")
    common = dict(MEDHORIZON_DATA=twins.data, MEDHORIZON_VLMEVAL_FRAMES=tmp / "frames")
    args = ["vlmeval", "--model", "medhorizon_needle", "--data", "MedHorizon_oracle", "--work-dir"]
    work_a, work_b = tmp / "A", tmp / "B"
    first, second = _while_held([*args, str(work_a), "--limit", "10"], [*args, str(work_a)],
                                work_a / "medhorizon_needle", _env(tmp, **common, MEDHORIZON_VIDEO_ROOT=old_root))
    fresh = _cli([*args, str(work_b), "--limit", "10"], _env(tmp, **common, MEDHORIZON_VIDEO_ROOT=new_root))
    rerun = _cli([*args, str(work_b), "--limit", "10"], _env(tmp, **common, MEDHORIZON_VIDEO_ROOT=old_root))
    return first, second, rerun, fresh, work_a, work_b


def _records(work, twins):
    path = work / "medhorizon_needle" / "medhorizon_needle_MedHorizon_oracle_records.jsonl"
    return {r["uid"]: bool(r["correct"]) for r in (json.loads(x) for x in path.read_text().splitlines())}


def test_vlmevalkit_frame_store_does_not_serve_a_repaired_videos_old_frames(vlmeval_runs, twins):
    """Issue 21: the store's folders were keyed by size and ends, so a new work dir got the old PNGs (5/5)."""
    first, _, _, fresh, work_a, work_b = vlmeval_runs
    assert first.returncode == 0, first.stderr[-3000:]
    assert all(_records(work_a, twins).values()), "the old video: every oracle question right"
    assert fresh.returncode == 0, fresh.stderr[-3000:]
    _expect_repaired(_records(work_b, twins), twins)


def test_a_rerun_after_the_video_root_changed_does_not_reuse_old_predictions(vlmeval_runs, twins):
    """Issue 21: the stamp did not cover the videos; a rerun with another MEDHORIZON_VIDEO_ROOT reused them."""
    _, _, rerun, fresh, _, work_b = vlmeval_runs
    assert fresh.returncode == 0, fresh.stderr[-3000:]
    assert rerun.returncode == 2, rerun.stderr[-3000:]
    assert "refusing to run" in rerun.stderr and "medhorizon_needle_MedHorizon_oracle.tsv" in rerun.stderr
    assert rerun.stderr.count("their stamp differs in videos (made from other video files: "
                              f"{twins.video_path} (other bytes then))") == 1
    _expect_repaired(_records(work_b, twins), twins)  # the files of the run in B are untouched


def test_two_vlmeval_launchers_on_one_work_dir_do_not_mix_their_files(vlmeval_runs, twins):
    """Issue 21: the TSV came from one launcher, the stamp and the report from the other."""
    first, second, _, _, work_a, _ = vlmeval_runs
    assert first.returncode == 0 and "VLMEvalKit run OK" in first.stderr, first.stderr[-3000:]
    assert second.returncode == 2, second.stderr[-3000:]
    folder = work_a / "medhorizon_needle"
    assert f"medhorizon-tasks vlmeval: error: {folder} is in use by another run (pid " in second.stderr
    assert "choose another --work-dir." in second.stderr
    stamp = json.loads((folder / "medhorizon_needle_MedHorizon_oracle_medhorizon_stamp.json").read_text())
    assert stamp["limit"] == 10, "the stamp is the first launcher's (the second had no --limit)"
    report = json.loads((folder / "medhorizon_needle_MedHorizon_oracle_report.json").read_text())
    assert report["overall"]["n"] == 10 and report["overall"]["accuracy"] == 1.0
