"""A failure is never an answer: lmms-eval's placeholder, VLMEvalKit's failure strings, the bridge's markers and
an empty reply are statuses of their own (``request_error``, ``truncated``) in every scorer and report, never
text for the extractor, even when the failure text holds the right answer."""

import json

from medhorizon_tasks.adapters.vlmeval.presets import PRESETS
from medhorizon_tasks.adapters.vlmeval.protocols import protocol_for
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.benchmarks.sureon import scoring as sureon
from medhorizon_tasks.benchmarks.surghi.scoring import format_report, frame_record, records_report
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.core.responses import (
    REQUEST_ERROR,
    TRUNCATED,
    request_error_text,
    response_failure,
    truncated_text,
)

LMMS_400 = ("[LMMS_EVAL_REQUEST_FAILED after 1 retries] Error code: 400 - {'error': {'message': \"Unsupported "
            "parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.\", "
            "'type': 'invalid_request_error', 'param': 'max_tokens', 'code': 'unsupported_parameter'}}")


def _failures(answer: str) -> list[tuple[str, str]]:
    """(response, status) pairs; every failure text carries ``answer`` where an extractor would find it."""
    return [(f"{LMMS_400} Answer: {answer}", REQUEST_ERROR),
            (f"Failed to obtain answer via API. Answer: {answer}", REQUEST_ERROR),  # VLMEvalKit's FAIL_MSG
            (f"Failed to obtain answer: <class 'RuntimeError'> {answer}", REQUEST_ERROR),  # its local-model path
            (f"Fail to obtain answer via API. {answer}", REQUEST_ERROR),  # stepai's fail_msg
            (request_error_text(5, f"HTTP 503: overloaded ({answer})"), REQUEST_ERROR),
            (truncated_text("finish_reason=length", f"The answer is {answer}"), TRUNCATED),
            ("", TRUNCATED), (" \n\t", TRUNCATED)]


def test_the_recogniser_reads_every_failure_and_no_answer():
    for text, status in _failures("B"):
        failure = response_failure(text)
        assert failure is not None and failure.status == status, text
        assert failure.reason and "\n" not in failure.reason
    assert response_failure(truncated_text("finish_reason=length", "x")).reason == "finish_reason=length"
    assert "Unsupported parameter" in response_failure(LMMS_400).reason
    for answer in ("B", "The answer is B.", "<think>Failed to obtain answer</think> B", "I failed to see it: B",
                   "[B]", None, 3):
        assert response_failure(answer) is None, answer


def test_medhorizon_score_counts_failures_and_lists_them(synthetic, tmp_path, capsys):
    items = load_release(synthetic.data_path)
    cases = _failures("{answer}")
    rows, expected = [], {}
    for i, it in enumerate(items):
        if i < len(cases):
            text, status = cases[i]
            rows.append({"uid": it.uid, "prediction": text.replace("{answer}", it.answer)})
            expected[it.uid] = status
        else:
            rows.append({"uid": it.uid, "prediction": it.answer})
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["score", "--benchmark", "medhorizon", "--data", str(synthetic.data_path), "--predictions", str(preds)]
    assert main([*args, "--json", "--out", str(tmp_path / "records.jsonl")]) == 0
    rep = json.loads(capsys.readouterr().out)
    o = rep["overall"]
    assert (o["correct"], o["n"]) == (len(items) - len(cases), len(items))
    assert (o["request_errors"], o["truncated"], o["invalid"], o["missing"], o["errors"]) == (5, 3, 0, 0, 0)
    assert {f["uid"]: f["status"] for f in rep["failed_responses"]} == expected
    assert sum(t.get("request_errors", 0) + t.get("truncated", 0) for t in rep["by_task"].values()) == len(cases)
    records = [json.loads(x) for x in (tmp_path / "records.jsonl").read_text().splitlines()]
    for r in records:
        if r["uid"] in expected:
            assert (r["status"], r["extracted"], r["valid"], r["correct"]) == (expected[r["uid"]], None, False, False)
    assert main(args) == 0
    out = capsys.readouterr().out
    assert f"no answer from the model (scored wrong) ({len(cases)}):" in out
    assert "request_errors=5" in out and "truncated=3" in out


def test_sureon_never_extracts_nor_judges_a_failure(synthetic):
    proto = protocol_for(PRESETS["Sureon_Synthetic_visual"])
    by_kind = {}
    for it in proto.units:
        by_kind.setdefault(it.kind, it)

    def judge(**kw):
        raise AssertionError("a failed response was sent to the judge")

    answer = {"mcq": by_kind["mcq"].answer, "to": " > ".join(by_kind["to"].answer), "sm": by_kind["sm"].reference}
    for kind, item in by_kind.items():
        for text, status in _failures(answer[kind]):
            rec = sureon.score_item(item, text, "visual", judge=judge)
            assert (rec["status"], rec["extracted"], rec["correct"]) == (status, None, False), (kind, text)
    records = [sureon.score_item(by_kind["mcq"], LMMS_400, "visual"),
               sureon.score_item(by_kind["to"], "", "visual"),
               sureon.score_item(by_kind["sm"], "Failed to obtain answer via API.", "visual")]
    rep = sureon.report(records, n_resamples=200)
    assert (rep["mu"]["request_errors"], rep["mu"]["truncated"], rep["mu"]["invalid"]) == (1, 1, 0)
    assert rep["sm"]["request_errors"] == 1 and rep["sm"]["invalid"] == 0
    assert [f["status"] for f in rep["failed_responses"]] == [REQUEST_ERROR, TRUNCATED, REQUEST_ERROR]
    text = sureon.format_report(rep)
    assert "1 request_errors, 1 truncated" in text and f"item {by_kind['to'].uid}: truncated (empty reply)" in text


def test_surghi_never_parses_labels_out_of_a_failure(synthetic):
    proto = protocol_for(PRESETS["SurgHiBench_Synthetic"])
    rows = proto.units[:4]
    hierarchy = proto.hierarchies[rows[0].dataset][0]
    right = [json.dumps({"phase": r.phase, "step": r.step}) for r in rows]
    raws = [f"{LMMS_400} {right[0]}", truncated_text("finish_reason=length", right[1]),
            f"Failed to obtain answer via API. {right[2]}", right[3]]
    records = [frame_record(r, raw, hierarchy, None) for r, raw in zip(rows, raws)]
    assert [r["status"] for r in records] == [REQUEST_ERROR, TRUNCATED, REQUEST_ERROR, None]
    assert [r["pred_phase"] for r in records[:3]] == [None] * 3 and records[3]["pred_phase"] == rows[3].phase
    rep = records_report(rows, records, proto.hierarchies)
    o = rep["overall"]
    assert (o["n_request_errors"], o["n_truncated"], o["n_errors"], o["n_missing"]) == (2, 1, 0, 0)
    assert [f["uid"] for f in rep["failed_responses"]] == [r.uid for r in rows[:3]]
    assert "no answer from the model (scored wrong) (3):" in format_report(rep)
