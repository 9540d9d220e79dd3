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
