"""Out of accelerator memory is an item's status, ``oom``, as a request error is: counted in every report, never
text for the extractor, the accelerator's cache emptied, the run goes on and exits non-zero, and
``medhorizon_resume`` asks the item again on a rerun and says how many. The real exception class throughout:
``torch.cuda.OutOfMemoryError``, which CPU torch raises as well."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
from PIL import Image

from medhorizon_tasks.adapters.lmms_eval.runner import OFFLINE_ENV
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.benchmarks.sureon import scoring as sureon
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.core.responses import OOM, is_out_of_memory, oom_text, response_failure
from medhorizon_tasks.core.video.planned_frames import PlannedFrames, describe_visuals

OOM_ERROR = "OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has 1.06 GiB free."
TASK = "medhorizon_synthetic"


def _frames(n, w=448, h=252):
    return PlannedFrames([Image.new("RGB", (w, h)) for _ in range(n)], timestamps=[float(i) for i in range(n)])


def test_the_oom_marker_is_a_failure_naming_frames_and_size_and_the_error_class_is_recognised():
    text = oom_text(describe_visuals(_frames(64)), OOM_ERROR) + " Answer: B"
    failure = response_failure(text)
    assert failure.status == OOM and failure.reason.startswith("64 frames of 448x252: OutOfMemoryError")
    assert describe_visuals([]) == "no frames" and describe_visuals([Image.new("RGB", (8, 6)),
                                                                     Image.new("RGB", (4, 2))]) == \
        "2 frames of 4x2 to 8x6"
    assert is_out_of_memory(torch.cuda.OutOfMemoryError("CUDA out of memory"))
    assert is_out_of_memory(RuntimeError("CUDA out of memory. Tried to allocate 2 GiB"))  # older torch
    assert not is_out_of_memory(RuntimeError("shape mismatch")) and not is_out_of_memory(MemoryError())


def test_every_report_counts_oom_apart_and_names_the_frames(synthetic, tmp_path, capsys):
    items = load_release(synthetic.data_path)
    marker = oom_text("1248 frames of 504x280", OOM_ERROR)
    rows = [{"uid": it.uid, "prediction": f"{marker} {it.answer}" if i == 0 else it.answer}
            for i, it in enumerate(items)]
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["score", "--benchmark", "medhorizon", "--data", str(synthetic.data_path), "--predictions", str(preds)]
    assert main([*args, "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    o = rep["overall"]
    assert (o["oom"], o["invalid"], o["request_errors"], o["correct"]) == (1, 0, 0, len(items) - 1)
    assert rep["failed_responses"] == [{"uid": items[0].uid, "status": "oom",
                                        "reason": "1248 frames of 504x280: " + OOM_ERROR}]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "oom=1" in out and f"item {items[0].uid}: oom (1248 frames of 504x280" in out

    from medhorizon_tasks.adapters.vlmeval.presets import PRESETS
    from medhorizon_tasks.adapters.vlmeval.protocols import protocol_for

    unit = next(u for u in protocol_for(PRESETS["Sureon_Synthetic_visual"]).units if u.kind == "mcq")
    rec = sureon.score_item(unit, f"{marker} {unit.answer}", "visual")
    assert (rec["status"], rec["extracted"], rec["correct"]) == (OOM, None, False)
    assert sureon.report([rec], n_resamples=200)["mu"]["oom"] == 1


def test_a_bridge_scores_the_item_that_ran_out_of_memory_as_oom_empties_the_cache_and_goes_on(monkeypatch):
    from medhorizon_tasks.adapters.lmms_eval.bridges.base import PlannedFramesBridge

    emptied = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: emptied.append(1))
    frames = {0: _frames(4), 1: _frames(8, 64, 48), 2: _frames(4)}

    class Bridge(PlannedFramesBridge):
        rank, task_dict = 0, {"t": {"test": {i: {"id": i} for i in frames}}}
        cache_hook = SimpleNamespace(add_partial=lambda *a: cached.append(a[1][0]))

        def generate_from_frames(self, context, shown, gen_kwargs):
            if len(shown) == 8:
                raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 9.00 GiB")
            return f"answer to {context}"

    cached: list = []
    requests = [SimpleNamespace(args=(f"q{i}", {}, lambda doc: frames[doc["id"]], i, "t", "test")) for i in frames]
    got = Bridge().generate_until(requests)
    assert got[0] == "answer to q0" and got[2] == "answer to q2"
    failure = response_failure(got[1])
    assert failure.status == OOM and failure.reason.startswith("8 frames of 64x48: OutOfMemoryError: CUDA out")
    assert emptied == [1] and cached == ["q0", "q2"], "the cache emptied once; an oom is no answer to cache"


class _Inner:
    """An lmms-eval model without the bridges' guard: its whole call runs out of memory on the prompts given."""

    def __init__(self, oom_on=()):
        self.oom_on, self.asked = set(oom_on), []

    def generate_until(self, requests):
        self.asked.extend(r.args[0] for r in requests)
        if any(r.args[0] in self.oom_on for r in requests):
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 9.00 GiB")
        return [f"answer to {r.args[0]}" for r in requests]


def _resumable(tmp_path, inner):
    from medhorizon_tasks.adapters.lmms_eval.resumable import ResumableModel

    model = object.__new__(ResumableModel)
    model.inner, model.inner_name, model.journal_path, model.chunk = inner, "fake", tmp_path / "run.journal", 1
    model.identity, model._journal, model.task_dict, model._rank, model._world_size = "id", None, {}, 0, 1
    model.retry_refused = False
    return model


def test_medhorizon_resume_turns_an_inner_models_oom_into_the_items_status_and_asks_it_again(tmp_path):
    from loguru import logger

    from medhorizon_tasks.adapters.lmms_eval import resumable  # noqa: F401 (lmms-eval sets its log sinks on import)

    said: list[str] = []
    sink = logger.add(lambda m: said.append(str(m)), level="WARNING")
    try:
        requests = [SimpleNamespace(task_name="medhorizon", doc_id=i, idx=0, args=(f"prompt {i}", {})) for i in range(3)]
        first = _Inner(oom_on={"prompt 1"})
        got = _resumable(tmp_path, first).generate_until(requests)
        assert got[0] == "answer to prompt 0" and got[2] == "answer to prompt 2"
        assert response_failure(got[1]).status == OOM
        assert any("1 item(s) ran out of accelerator memory (oom)" in s for s in said)
        said.clear()
        again = _Inner()
        assert _resumable(tmp_path, again).generate_until(requests) == [f"answer to prompt {i}" for i in range(3)]
        assert again.asked == ["prompt 1"], "only the oom item is asked again"
        assert any("1 item(s) on which the accelerator ran out of memory (oom) in an earlier run are asked again" in s
                   for s in said)
        third = _Inner()
        assert _resumable(tmp_path, third).generate_until(requests)[1] == "answer to prompt 1" and third.asked == []
    finally:
        logger.remove(sink)


def _run(out: Path, journal: Path, mark: Path, record: Path):
    env = {**os.environ, **OFFLINE_ENV, "OMP_NUM_THREADS": "1", "MEDHORIZON_TEST_OOM_ONCE": str(mark),
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent / "oom_model"), os.environ.get("PYTHONPATH", "")])}
    for k in ("MEDHORIZON_DATA", "MEDHORIZON_VIDEO_ROOT", "MEDHORIZON_ALLOW_VIDEO_ERRORS"):
        env.pop(k, None)
    args = f"inner=medhorizon_needle,journal={journal},record_path={record}"
    cmd = [sys.executable, "-m", "medhorizon_tasks.commands.main", "run", "--model", "medhorizon_resume",
           "--model_args", args, "--tasks", TASK, "--limit", "4", "--output_path", str(out)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    samples = sorted(out.rglob(f"*_samples_{TASK}.jsonl"))
    records = [json.loads(x)["accuracy"] for x in samples[-1].read_text().splitlines()] if samples else []
    asked = [json.loads(x)["doc_id"] for x in record.read_text().splitlines()] if record.exists() else []
    return proc, records, asked


@pytest.mark.e2e
def test_a_real_run_whose_model_runs_out_of_memory_on_one_item_goes_on_and_its_rerun_asks_only_that_item(tmp_path):
    journal, mark = tmp_path / "needle.journal", tmp_path / "oom-once"
    record = tmp_path / "asked.jsonl"  # one path: it is a model arg, and so part of the run's identity
    proc, records, asked = _run(tmp_path / "first", journal, mark, record)
    assert mark.exists() and len(asked) == 4, proc.stderr[-3000:]
    assert sorted(r["status"] for r in records) == ["ok", "ok", "ok", "oom"], proc.stderr[-3000:]
    [oom] = [r for r in records if r["status"] == "oom"]
    assert oom["extracted"] is None and oom["correct"] is False
    assert all(r["correct"] for r in records if r["status"] == "ok"), "the needle reads every other item right"
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "1 item(s) got no answer from the model (1 oom)" in proc.stderr
    assert f"item {oom['uid']}: oom (" in proc.stderr and " frames of " in proc.stderr

    proc, records, asked_again = _run(tmp_path / "resumed", journal, mark, record)
    assert asked_again[4:] == [asked[1]], "the resumed run asks the oom item only (the model's second item)"
    assert sorted(r["status"] for r in records) == ["ok"] * 4 and all(r["correct"] for r in records)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "1 item(s) on which the accelerator ran out of memory (oom) in an earlier run are asked again" in \
        proc.stderr
