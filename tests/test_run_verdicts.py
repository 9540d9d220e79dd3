"""How ``medhorizon-tasks run`` judges what a finished lmms-eval run wrote, on files made here (the real CLI
runs are in ``test_truthful_run.py``): each reason the run does not count, and the samples that say so."""

import json
import os
import time

import pytest

from medhorizon_tasks.adapters.lmms_eval.runner import LmmsRun, _collect, judge_run, video_errors_in
from medhorizon_tasks.runs.launch import OutputsInUse, RunStart, own_outputs


def _run(tmp_path, results, samples=None) -> LmmsRun:
    run = LmmsRun("m", ["medhorizon", "medhorizon_text"], tmp_path, results=results, log=tmp_path / "run.log")
    (tmp_path / "run.log").write_text("lmms-eval log\n")
    run.samples = samples or {}
    return run


def _results(**tasks):
    return {"results": {t: {"alias": t, "accuracy,none": v} for t, v in tasks.items()}}


def _sample(uid, error=None, text="A"):
    return {"doc_id": int(uid), "filtered_resps": [text],
            "accuracy": {"uid": uid, "raw_output": text, "status": "error" if error else "ok", "error": error}}


def test_a_task_without_samples_or_metric_is_a_reason(tmp_path):
    samples = tmp_path / "s_medhorizon.jsonl"
    samples.write_text(json.dumps(_sample("0")) + "\n")
    v = judge_run(_run(tmp_path, _results(medhorizon=0.5, medhorizon_text=None), {"medhorizon": samples}), 0)
    assert v.exit_code == 1
    assert v.reasons == ["task medhorizon_text produced no metric", "task medhorizon_text produced no samples file"]
    ok = judge_run(_run(tmp_path, _results(medhorizon=0.5, medhorizon_text=0.25),
                        {"medhorizon": samples, "medhorizon_text": samples}), 0)
    assert ok.ok and ok.exit_code == 0


def test_video_errors_are_read_from_every_sample_line(tmp_path, monkeypatch):
    """A model's text with U+2028 or U+0085 (which ``str.splitlines`` splits) or a line ending in CR does
    not hide the video errors of the samples around it."""
    lines = [_sample("0", text="one\u2028two\x85three"),
             _sample("1", error="item 1: video file not found", text="I see no frames\u2028so: A"),
             _sample("2", text="\r"), _sample("3", error="item 3: corrupt near frame 85", text="B\x85")]
    monkeypatch.delenv("MEDHORIZON_ALLOW_VIDEO_ERRORS", raising=False)
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    assert video_errors_in(path) == [("1", "item 1: video file not found"), ("3", "item 3: corrupt near frame 85")]
    v = judge_run(_run(tmp_path, _results(medhorizon=0.5), {"medhorizon": path}), 0)
    assert v.reasons == ["task medhorizon: 2 item(s) had video errors and were counted wrong (first: item 1: "
                         "video file not found); set MEDHORIZON_ALLOW_VIDEO_ERRORS=1 to accept such a run"]


def test_a_damaged_results_file_is_no_results(tmp_path):
    started = RunStart(tmp_path)
    for text in ("[1, 2]", "{\"results\": [1]}", "nul\x00", "{" * 100_000):
        (tmp_path / "20260101_000000_results.json").write_text(text)
        run = _run(tmp_path, {})
        _collect(run, started, {})
        v = judge_run(run, 0)
        assert v.exit_code == 1 and v.reasons, text[:20]


# ------------------------------------------------------------------ a run owns its outputs

THIS_RUN = {"model": "medhorizon_needle", "model_args": "seed=1,api_key=sk-123", "tasks": "medhorizon",
            "output_path": "out"}


def _written(folder, stamp, cli, *, n_items=2, samples=None, age=0.0):
    """A results file and its samples file as lmms-eval writes them, ``age`` seconds old."""
    folder.mkdir(parents=True, exist_ok=True)
    results = {**_results(medhorizon=0.5), "n-samples": {"medhorizon": {"original": 9, "effective": n_items}},
               "config": {"model": cli["model"], "resolved_cli_args": cli}}
    paths = [folder / f"{stamp}_results.json", folder / f"{stamp}_samples_medhorizon.jsonl"]
    paths[0].write_text(json.dumps(results))
    rows = samples if samples is not None else [_sample(str(i)) for i in range(n_items)]
    paths[1].write_text("".join(json.dumps(r) + "\n" for r in rows))
    for path in paths:
        os.utime(path, (time.time() - age, time.time() - age))
    return paths


def _judged(tmp_path, started):
    run = LmmsRun("medhorizon_needle", ["medhorizon"], tmp_path, log=tmp_path / "run.log")
    (tmp_path / "run.log").write_text("lmms-eval log\n")
    _collect(run, started, THIS_RUN)
    return run, judge_run(run, 0)


def test_the_verdict_reads_only_this_runs_results(tmp_path):
    """Issue 21: the verdict took the newest results file of the folder, another run's included."""
    _written(tmp_path, "20260101_000000", THIS_RUN, age=3600)  # an earlier run of the same command: not this run's
    started = RunStart(tmp_path)
    _written(tmp_path, "20260101_120000", {**THIS_RUN, "model": "medhorizon_random"})  # another run, meanwhile
    run, v = _judged(tmp_path, started)
    assert not v.ok and not run.results
    assert v.reasons[0].startswith("lmms-eval wrote no results")
    assert v.reasons[1] == ("the results written into " f"{tmp_path} since this run started are another run's "
                            "(20260101_120000_results.json: model 'medhorizon_random', this run's "
                            "'medhorizon_needle')")

    # this run's own file beside it (lmms-eval recorded the model args with the key redacted) is the one judged
    mine = _written(tmp_path / "sub", "20260101_120001", {**THIS_RUN, "model_args": "seed=1,api_key=[REDACTED]"})
    run, v = _judged(tmp_path, started)
    assert v.ok, v.reasons
    assert run.samples == {"medhorizon": mine[1]} and run.results["config"]["model"] == "medhorizon_needle"


def test_two_results_files_naming_this_run_or_a_shared_samples_file_do_not_count(tmp_path):
    started = RunStart(tmp_path)
    _written(tmp_path, "20260101_120000", THIS_RUN, samples=[_sample("0"), _sample("1"), _sample("0", text="B")])
    run, v = _judged(tmp_path, started)
    assert v.reasons == ["20260101_120000_samples_medhorizon.jsonl holds 3 samples for 2 items, some twice: another "
                         "lmms-eval run wrote into it at the same second"]
    _written(tmp_path / "again", "20260101_120009", THIS_RUN)
    run, v = _judged(tmp_path, started)
    assert not v.ok and "2 results files written since this run started name this very run" in v.reasons[-1]


def test_files_dated_in_the_future_are_not_this_runs(tmp_path):
    """Issue 32: an earlier run's files dated a day ahead (clock skew, a copied folder, NFS) were judged as the
    rerun's own by their modification time; what the run wrote is what changed since it started."""
    earlier = _written(tmp_path, "20260101_000000", THIS_RUN, age=-86400)
    started = RunStart(tmp_path)
    run, v = _judged(tmp_path, started)
    assert not run.results and v.reasons[0].startswith("lmms-eval wrote no results"), v.reasons
    assert not started.wrote(earlier[0]) and not started.wrote(tmp_path / "absent.json")
    earlier[0].write_text(earlier[0].read_text())  # the same bytes written again by this run: its own
    assert started.wrote(earlier[0])
    assert _judged(tmp_path, started)[1].ok


def test_a_held_output_folder_refuses_a_second_run_naming_the_first(tmp_path):
    with own_outputs(tmp_path / "out", "medhorizon-tasks run --model a", option="--output_path"):
        with pytest.raises(OutputsInUse) as ei:
            with own_outputs(tmp_path / "out", "medhorizon-tasks run --model b", option="--output_path"):
                raise AssertionError("held twice")
        message = str(ei.value)
        assert f"pid {os.getpid()} on " in message and "medhorizon-tasks run --model a" in message
        assert message.endswith("Wait for it to end, or choose another --output_path.")
    with own_outputs(tmp_path / "out", "medhorizon-tasks run --model b", option="--output_path"):
        pass  # released when the first run ended
    assert not (tmp_path / "out" / ".medhorizon_run.json").exists()


def test_items_without_an_answer_from_the_model_fail_the_run_listed_by_uid(synthetic, tmp_path, monkeypatch):
    """The samples' records, made by the task hook's scorer: a failed request or an empty / cut-off reply is a
    reason the run does not count, whatever MEDHORIZON_ALLOW_VIDEO_ERRORS says, each item named."""
    from medhorizon_tasks.benchmarks.medhorizon.release import load_release
    from medhorizon_tasks.benchmarks.medhorizon.scoring import record_for

    monkeypatch.setenv("MEDHORIZON_ALLOW_VIDEO_ERRORS", "1")
    items = load_release(synthetic.data_path)[:4]
    raws = ["[LMMS_EVAL_REQUEST_FAILED after 1 retries] Error code: 400 - Unsupported parameter: 'max_tokens'",
            "", "[MEDHORIZON_TRUNCATED: finish_reason=length] The answer is", items[3].answer]
    path = tmp_path / "s_medhorizon.jsonl"
    path.write_text("".join(json.dumps({"doc_id": i, "filtered_resps": [raw],
                                        "accuracy": record_for(it, raw, "visual", None)}) + "\n"
                            for i, (it, raw) in enumerate(zip(items, raws))))
    v = judge_run(_run(tmp_path, _results(medhorizon=0.25), {"medhorizon": path}), 0)
    assert v.exit_code == 1 and len(v.reasons) == 1
    reason = v.reasons[0]
    assert reason.startswith("task medhorizon: 3 item(s) got no answer from the model (1 request_error, 2 truncated)")
    assert f"item {items[0].uid}: request_error (after 1 retries: Error code: 400 - Unsupported parameter" in reason
    assert f"item {items[1].uid}: truncated (empty reply)" in reason
    assert f"item {items[2].uid}: truncated (finish_reason=length)" in reason and f"item {items[3].uid}" not in reason


def test_a_run_refused_the_instant_the_other_took_the_folder_names_it(tmp_path):
    """Two runs started at the same instant: the second found the lock held and no note yet (the holder writes
    it just after taking the lock) and said the holder "left no note"; it waits for the note."""
    import threading

    from filelock import FileLock

    from medhorizon_tasks.core.safeio import atomic_write_json
    from medhorizon_tasks.runs.launch import RUN_HOLDER, RUN_LOCK

    out = tmp_path / "out"
    out.mkdir()
    with FileLock(str(out / RUN_LOCK)):
        note = {"pid": 4242, "host": "h", "command": "medhorizon-tasks run --model a", "started": "now"}
        timer = threading.Timer(0.5, atomic_write_json, (out / RUN_HOLDER, note))
        timer.start()
        with pytest.raises(OutputsInUse) as ei:
            with own_outputs(out, "medhorizon-tasks run --model b", option="--output_path"):
                raise AssertionError("held twice")
        timer.join()
    assert "pid 4242 on h since now: medhorizon-tasks run --model a" in str(ei.value)
