"""How ``medhorizon-tasks run`` judges what a finished lmms-eval run wrote, on files made here (the real CLI
runs are in ``test_truthful_run.py``): each reason the run does not count, and the samples that say so."""

import json

from medhorizon_tasks.adapters.lmms_eval.runner import LmmsRun, _collect, judge_run, video_errors_in


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
    import time

    started = time.time()
    for text in ("[1, 2]", "{\"results\": [1]}", "nul\x00", "{" * 100_000):
        (tmp_path / "20260101_000000_results.json").write_text(text)
        run = _run(tmp_path, {})
        _collect(run, started)
        v = judge_run(run, 0)
        assert v.exit_code == 1 and v.reasons, text[:20]


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
