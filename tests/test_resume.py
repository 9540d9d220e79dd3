"""Nothing lost on interruption: the response journal, and a sweep killed with SIGKILL and resumed."""

import csv
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from medhorizon_tasks.benchmarks.medhorizon import scoring
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.core.journal import Journal, request_key


def test_journal_round_trip_and_torn_last_line(tmp_path):
    j = Journal(tmp_path / "j.jsonl")
    j.add("k1", "A")
    j.add("k2", "The answer is B")
    j.add("k1", "changed")  # a finished request is never redone or overwritten
    with open(tmp_path / "j.jsonl", "a") as fh:
        fh.write('{"key": "k3", "respo')  # killed in the middle of a write
    again = Journal(tmp_path / "j.jsonl")
    assert len(again) == 2 and again.get("k1") == "A" and "k3" not in again
    again.add("k3", "C")
    lines = (tmp_path / "j.jsonl").read_text().splitlines()
    assert [json.loads(x)["key"] for x in lines] == ["k1", "k2", "k3"]


def test_journal_reads_other_ranks(tmp_path):
    Journal(tmp_path / "j.rank1").add("a", "x")
    j = Journal(tmp_path / "j.rank0", read_also=[tmp_path / "j.rank1"])
    assert j.get("a") == "x"
    assert request_key("t", 1, "prompt") == request_key("t", 1, "prompt") != request_key("t", 2, "prompt")


def test_a_replaced_response_is_the_one_read_back(tmp_path):
    j = Journal(tmp_path / "j.jsonl", identity="run1")
    j.add("k", "old")
    j.add("k", "new", replace=True)  # asked again (its video changed): the new answer is the journal's
    assert j.get("k") == "new"
    again = Journal(tmp_path / "j.jsonl", identity="run1")
    assert again.get("k") == "new" and len(again) == 1 and again.identities == {"run1": 1}


def test_a_video_outcome_knows_when_its_file_changed(tmp_path):
    from medhorizon_tasks.core.video.status import VideoOutcomes

    video, absent = tmp_path / "a.mp4", tmp_path / "b.mp4"
    video.write_bytes(b"first video" * 100)
    outcomes = VideoOutcomes()
    mark = outcomes.mark()
    outcomes.record("item-a", None, video)
    outcomes.record("item-b", "video file not found", absent)
    outcomes.record("item-c", None)  # no file given: nothing to compare
    journaled = json.loads(json.dumps(outcomes.since(mark)))  # as the journal stores them
    assert [e.get("file", {}).get("path") for e in journaled] == [str(video), str(absent), None]
    assert journaled[1]["file"]["identity"] is None
    assert VideoOutcomes.unchanged(journaled)

    os.utime(video, ns=(1, 1))  # touched (copied, re-linked): same content, still the same video
    assert VideoOutcomes.unchanged(journaled)
    video.write_bytes(b"other video" * 100)  # replaced
    assert not VideoOutcomes.unchanged(journaled[:1])
    assert VideoOutcomes.unchanged(journaled[1:])
    absent.write_bytes(b"put in place")  # the missing video appeared
    assert not VideoOutcomes.unchanged(journaled[1:2])

    # a video rewritten with the same size, the same first and last MiB and its mtime kept (a re-download that
    # repairs only its middle, copied with cp -p) is another video, whether its frames decoded or failed
    for error in (None, "corrupt near frame 85"):
        changed = tmp_path / f"c-{error is None}.mp4"
        changed.write_bytes(b"head" + bytes(3 << 20) + b"tail")
        mark = outcomes.mark()
        outcomes.record("item-d", error, changed)
        kept = json.loads(json.dumps(outcomes.since(mark)))
        assert set(kept[0]["file"]) == {"path", "identity"} and VideoOutcomes.unchanged(kept)
        st = changed.stat()
        data = bytearray(changed.read_bytes())
        data[2 << 20] = 1
        changed.write_bytes(bytes(data))
        os.utime(changed, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert changed.stat().st_size == st.st_size and changed.stat().st_mtime_ns == st.st_mtime_ns
        assert not VideoOutcomes.unchanged(kept), error
    # an entry journaled by an older version (size-and-ends identity, "stat") is asked again
    old = [{"key": "item-a", "error": None, "file": {"path": str(video), "identity": "ab" * 32, "stat": [1, 2]}}]
    assert not VideoOutcomes.unchanged(old)

    fresh = VideoOutcomes()
    fresh.restore(journaled)
    assert fresh.get("item-b") == "video file not found" and fresh.since(0)[1]["file"] == journaled[1]["file"]


class _Inner:
    """A model whose answers are given per call: it records the prompts it was asked."""

    def __init__(self, *answers):
        self.answers, self.asked = list(answers), []

    def generate_until(self, requests):
        self.asked.extend(r.args[0] for r in requests)
        return [self.answers.pop(0) for _ in requests]


def _resumable(tmp_path, inner, retry_refused=False):
    from medhorizon_tasks.adapters.lmms_eval.resumable import ResumableModel

    model = object.__new__(ResumableModel)  # its inner model is given here, not loaded by name
    model.inner, model.inner_name, model.journal_path, model.chunk = inner, "fake", tmp_path / "run.journal", 1
    model.identity, model._journal, model.task_dict, model._rank, model._world_size = "id", None, {}, 0, 1
    model.retry_refused = retry_refused
    return model


def test_a_failed_response_is_returned_but_never_journaled_for_reuse(tmp_path):
    from types import SimpleNamespace

    from lmms_eval.api.instance import GenerationResult

    requests = [SimpleNamespace(task_name="medhorizon", doc_id=i, idx=0, args=(f"prompt {i}", {})) for i in range(4)]
    failures = ["[LMMS_EVAL_REQUEST_FAILED after 5 retries] Error code: 500", "",
                GenerationResult(text="[MEDHORIZON_TRUNCATED: finish_reason=length] The answer is")]
    first = _Inner(GenerationResult(text="A"), *failures)
    got = _resumable(tmp_path, first).generate_until(requests)
    assert got == ["A", failures[0], "", failures[2].text]
    again = _Inner("B", "C", "D")
    assert _resumable(tmp_path, again).generate_until(requests) == ["A", "B", "C", "D"]
    assert again.asked == ["prompt 1", "prompt 2", "prompt 3"], "only the failed requests are asked again"
    third = _Inner()
    assert _resumable(tmp_path, third).generate_until(requests) == ["A", "B", "C", "D"] and third.asked == []
    # a journal written before failures were recognised asks its failed response again
    Journal(tmp_path / "old.journal.rank0", identity="id").add("k", "Failed to obtain answer via API.")
    old = _resumable(tmp_path, _Inner("E"))
    old.journal_path = tmp_path / "old.journal"
    old._key = lambda method, r: "k"
    assert old.generate_until(requests[:1]) == ["E"] and old.inner.asked == ["prompt 0"]


def test_a_refused_item_is_journaled_and_asked_again_only_when_asked(tmp_path):
    from types import SimpleNamespace

    requests = [SimpleNamespace(task_name="medhorizon", doc_id=i, idx=0, args=(f"prompt {i}", {})) for i in range(3)]
    refusal = "[MEDHORIZON_REFUSED: HTTP 400: flagged by usage policy]"
    assert _resumable(tmp_path, _Inner("A", refusal, "C")).generate_until(requests) == ["A", refusal, "C"]
    again = _Inner()
    assert _resumable(tmp_path, again).generate_until(requests) == ["A", refusal, "C"]
    assert again.asked == [], "the provider would refuse it again: not asked (nor paid for) on every rerun"
    retry = _Inner("B")
    assert _resumable(tmp_path, retry, retry_refused=True).generate_until(requests) == ["A", "B", "C"]
    assert retry.asked == ["prompt 1"]
    assert _resumable(tmp_path, _Inner()).generate_until(requests) == ["A", "B", "C"], "the new answer journaled"


def test_transport_settings_are_not_part_of_a_runs_identity():
    from medhorizon_tasks.core.journal import TRANSPORT_ARGS, run_identity

    base = {"model": "gpt-5.4", "base_url": "http://x/v1", "reasoning_effort": "high"}
    transport = {"max_retries": "9", "timeout": "30", "num_concurrent": "8", "retry_backoff_s": "3", "api_key": "k"}
    ident, description = run_identity("medhorizon_openai", {**base, **transport}, transport=TRANSPORT_ARGS)
    assert ident == run_identity("medhorizon_openai", base, transport=TRANSPORT_ARGS)[0]
    assert "k" not in str(description["model_args"].values()), "the API key is never in the description"
    for key, value in (("model", "gpt-5.1"), ("reasoning_effort", "low"), ("base_url", "http://y/v1")):
        assert run_identity("medhorizon_openai", {**base, key: value}, transport=TRANSPORT_ARGS)[0] != ident


SWEEP = ["sweep", "--model", "medhorizon_needle", "--model_args", "delay_s=0.08", "--synthetic", "--limit", "10"]


def _sweep(out, **kw):
    return subprocess.Popen([sys.executable, "-m", "medhorizon_tasks.commands.main", *SWEEP, "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, **kw)


def _journal_lines(out):
    return sum(len(p.read_text().splitlines()) for p in (out / "journal").glob("*.rank*")) if (out / "journal").exists() else 0


def _kill_after(out, n_lines, timeout=240):
    proc = _sweep(out)
    deadline = time.time() + timeout
    while _journal_lines(out) < n_lines and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert proc.poll() is None, "the run finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _per_item(out, synthetic):
    items = load_release(synthetic.data_path)
    result = {}
    for path in sorted((out / "lmms_eval").rglob("*_samples_*.jsonl")):
        task = path.stem.split("_samples_")[1]
        preds = scoring.read_predictions(path, [it.uid for it in items])
        for uid, p in preds.items():
            result[(task, uid)] = p["raw"]
    return result


@pytest.mark.e2e
def test_sweep_killed_twice_resumes_to_identical_results(synthetic, tmp_path):
    ref = tmp_path / "reference"
    assert _sweep(ref).wait(timeout=600) == 0
    total = _journal_lines(ref)
    assert total == 8 * 10  # 8 budgets x 10 items, each answered once

    out = tmp_path / "interrupted"
    _kill_after(out, 1)            # killed while the first responses come in
    first = _journal_lines(out)
    _kill_after(out, first + 25)   # killed again, in the middle
    assert 0 < _journal_lines(out) < total
    assert _sweep(out).wait(timeout=600) == 0

    keys = [json.loads(x)["key"] for p in (out / "journal").glob("*.rank*") for x in p.read_text().splitlines()]
    assert len(keys) == len(set(keys)) == total, "no request answered twice, none lost"
    assert _per_item(out, synthetic) == _per_item(ref, synthetic)
    with open(ref / "budgets.csv") as a, open(out / "budgets.csv") as b:
        assert list(csv.DictReader(a)) == list(csv.DictReader(b))
    rows = list(csv.DictReader(open(out / "budgets.csv")))
    assert [int(r["x"]) for r in rows] == [4, 8, 16, 32, 64, 128, 256, 512]
    assert (out / "budgets.png").stat().st_size > 1000
