"""Sureon scoring: per-item records, the report.

Paper (section 4, appendix D.1): "The eight multiple-choice types are scored
by exact-match accuracy against the correct option. For TO, we extract the
predicted sequence of event labels from the free-form output and require
exact, order-sensitive equality with the reference sequence. SM is scored by
the LLM judge ... Reported mu is the pooled accuracy over the ... accuracy-
scored items; SM is reported separately and excluded from mu."

* MCQ: :func:`medhorizon_tasks.core.extract.extract_choice` over the 7 options.
* TO:  :func:`medhorizon_tasks.core.extract.extract_order`, then exact tuple equality.
* SM:  a judge callable (``Judge.judge``-compatible) or None (not judged).

Items without a prediction (``missing``), with an unextractable answer, whose
video could not be read (``error``), or whose response was a failure
(``request_error``, ``truncated``: :mod:`medhorizon_tasks.core.responses`; never
extracted, never judged) count as wrong, as in MedHorizon.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from ...core.errors import DataError
from ...core.extract import clean_answer, extract_choice, extract_order
from ...core.predictions import (
    PREDICTION_KEYS,
    STATUS_COUNT_KEYS,
    failed_responses,
    failure_listing,
    read_predictions,
    records_for,
    status_counts,
)
from ...core.responses import response_failure
from ...core.stats import accuracy_summary, format_difference, multimodal_gain, paired_difference
from ...core.text import listing, pct, with_item
from .items import CATEGORIES, CATEGORY_CODES, SureonItem

__all__ = ["extract_order", "score_item", "record_for", "missing_record", "error_record", "read_predictions",
           "score_predictions", "report", "format_report", "BENCHMARK", "PREDICTION_KEYS", "RECORD_KEYS",
           "judge_description", "judge_lines"]

BENCHMARK = "sureon"
RECORD_KEYS = ("benchmark", "uid", "category", "group", "kind", "mode", "answer", "raw_output", "extracted",
               "status", "valid", "correct", "error", "judge_reason")

JudgeFn = Callable[..., object]  # judge(*, uid, reference, answer) -> Verdict


# ------------------------------------------------------------------ temporal ordering

def to_status(text: str | None, order) -> str:
    if order is not None:
        return "ok"
    if text is None or not clean_answer(text).strip():
        return "empty"
    return "unparsed"


# ------------------------------------------------------------------ records

def _answer_value(item: SureonItem):
    return list(item.answer) if isinstance(item.answer, tuple) else item.answer


def _base(item: SureonItem, mode: str) -> dict:
    return {"benchmark": BENCHMARK, "uid": item.uid, "category": item.category, "group": item.group,
            "kind": item.kind, "mode": mode, "answer": _answer_value(item)}


def judge_description(judge) -> dict | None:
    """What a judge says of itself (``Judge.describe()``: model, endpoint, temperature, prompt version), for the
    records and the report; a plain callable without ``describe``: its name only."""
    if judge is None:
        return None
    owner = getattr(judge, "__self__", judge)  # Judge.judge bound to its Judge
    describe = getattr(owner, "describe", None)
    if callable(describe):
        return dict(describe())
    return {"model": getattr(judge, "__name__", type(judge).__name__)}


def _judge_fn(judge) -> JudgeFn | None:
    if judge is None:
        return None
    if not callable(judge) and callable(getattr(judge, "judge", None)):
        return judge.judge  # a Judge instance
    if not callable(judge):
        raise TypeError(f"judge must be a callable (Judge.judge-compatible) or None, got {type(judge).__name__}")
    return judge


def score_item(item: SureonItem, raw_output: str | None, mode: str, *, judge=None) -> dict:
    """The per-item record for one model output.

    A failed response (``request_error``, ``truncated``) is its status, wrong,
    never extracted nor judged. MCQ and TO: ``correct`` is a bool. SM: without a judge, status
    ``not_judged`` and ``correct`` None (counted, not scored); with one,
    ``correct`` is the verdict (a None verdict: status ``invalid``, wrong).
    """
    rec = _base(item, mode)
    reason = None
    failure = response_failure(raw_output)
    if failure is not None:
        rec.update(raw_output=raw_output, extracted=None, status=failure.status, valid=False, correct=False,
                   error=None, judge_reason=None)
        return rec
    if item.kind == "mcq":
        ex = extract_choice(raw_output, item.options)
        extracted, status, valid = ex.letter, ex.status, ex.valid
        correct = bool(valid and ex.letter == item.answer)
    elif item.kind == "to":
        order = extract_order(raw_output, item.events)
        status = to_status(raw_output, order)
        valid = order is not None
        extracted = list(order) if order is not None else None
        correct = bool(valid and tuple(order) == tuple(item.answer))
    else:  # sm
        fn = _judge_fn(judge)
        answer = clean_answer(raw_output).strip() if isinstance(raw_output, str) else ""
        extracted = answer
        if fn is None:
            status, valid, correct = "not_judged", False, None
        else:
            # the paper's judge sees "only the two texts" (appendix D.1): never the question
            verdict = fn(uid=item.uid, reference=item.reference, answer=answer)
            rec["judge"] = judge_description(judge)
            value = getattr(verdict, "correct", "?")
            if value is not None and not isinstance(value, bool):
                raise TypeError(f"item {item.uid}: the judge must return a Verdict with correct True/False/None, "
                                f"got {verdict!r}")
            reason = getattr(verdict, "reason", None)
            if value is None:
                status, valid, correct = "invalid", False, False
            else:
                status, valid, correct = "ok", True, value
    rec.update(raw_output=raw_output, extracted=extracted, status=status, valid=valid, correct=correct,
               error=None, judge_reason=reason)
    return rec


def record_for(item: SureonItem, raw_output: str | None, mode: str, error: str | None, *, judge=None,
               departures: list[str] = ()) -> dict:
    """The record of one model output in either framework: scored, or a video error (``error``: the model
    got no frames) whatever the model said; the raw text is kept in both, and the run's ``departures`` from
    the paper's protocol (:func:`.protocol.departures`: ``"no blur"``) when it has any, so that every report
    of the records says so."""
    if error:
        record = error_record(item, mode, error)
    else:
        record = score_item(item, raw_output, mode, judge=judge)
    record["raw_output"] = raw_output
    if departures:
        record["departures"] = list(departures)
    return record


def missing_record(item: SureonItem, mode: str) -> dict:
    rec = _base(item, mode)
    rec.update(raw_output=None, extracted=None, status="missing", valid=False, correct=False, error=None,
               judge_reason=None)
    return rec


def error_record(item: SureonItem, mode: str, error: str) -> dict:
    rec = _base(item, mode)
    rec.update(raw_output=None, extracted=None, status="error", valid=False, correct=False, error=error,
               judge_reason=None)
    return rec


def score_predictions(items: list[SureonItem], predictions: dict[str, dict], mode: str | None = None, *,
                      judge=None) -> list[dict]:
    """One record per item: scored, missing, or video error. ``predictions`` as from :func:`read_predictions`."""
    return records_for(items, predictions, mode, score=lambda it, raw, m: score_item(it, raw, m, judge=judge),
                       missing=missing_record, error=error_record)


# ------------------------------------------------------------------ report

_GROUP_OF = {c.code: c.group for c in CATEGORIES}


def _accuracy_records(records: list[dict], name: str) -> dict[str, dict]:
    """uid -> record for the accuracy-scored (MCQ, TO) records; problems name the uid and field."""
    problems: list[str] = []
    out: dict[str, dict] = {}
    for n, r in enumerate(records):
        if not isinstance(r, dict) or "uid" not in r:
            problems.append(f"{name} record #{n}: field 'uid': missing")
            continue
        uid = str(r["uid"])
        if r.get("category") not in _GROUP_OF:
            problems.append(f"{name} item {uid}: field 'category': unknown category {r.get('category')!r}")
            continue
        if r["category"] == "SM":
            continue
        if not isinstance(r.get("correct"), bool):
            problems.append(f"{name} item {uid}: field 'correct': must be true/false, got {r.get('correct')!r}")
            continue
        if uid in out:
            problems.append(f"{name} item {uid}: field 'uid': more than one record")
            continue
        out[uid] = r
    if problems:
        raise DataError(problems, source=f"sureon report ({name} records)")
    return out


def _sm_summary(records: list[dict]) -> dict:
    sm = [r for r in records if isinstance(r, dict) and r.get("category") == "SM"]
    n = len(sm)
    not_judged = sum(1 for r in sm if r.get("status") == "not_judged")
    correct = sum(1 for r in sm if r.get("correct") is True)
    judges = []
    for r in sm:
        if r.get("judge") and r["judge"] not in judges:
            judges.append(r["judge"])
    return {"accuracy": correct / n if n and not not_judged else None, "judge": judges,
            "correct": correct, "n": n,
            "judged": sum(1 for r in sm if r.get("status") == "ok"),
            "not_judged": not_judged,
            "invalid": sum(1 for r in sm if r.get("status") == "invalid"),
            "request_errors": sum(1 for r in sm if r.get("status") == "request_error"),
            "refused": sum(1 for r in sm if r.get("status") == "refused"),
            "truncated": sum(1 for r in sm if r.get("status") == "truncated"),
            "oom": sum(1 for r in sm if r.get("status") == "oom")}


def report(records: list[dict], *, blind_records: list[dict] | None = None, n_resamples: int = 10_000,
           seed: int = 0) -> dict:
    """The Sureon report (accuracies 0..1).

    ``mu``: pooled accuracy over every accuracy-scored item (MCQ + TO; SM
    never enters it); ``perception`` / ``reasoning`` (reasoning without SM)
    and ``by_category`` (SM excluded, categories present, in Table 3 order),
    each ``stats.accuracy_summary`` (bootstrap and Wilson 95% CIs). ``sm``:
    the judged summaries, {"accuracy", "correct", "n", "judged",
    "not_judged", "invalid"}; ``accuracy`` is correct / n, None when any SM
    item was not judged (missing and error records count as wrong, as
    everywhere). ``mg`` (only with ``blind_records``): MG = S_v - S_wv over
    the accuracy-scored items, which both runs must share, {"overall",
    "by_category"}; ``by_category`` also has ``SM`` (the judge's accuracy,
    visual minus blind; never part of ``overall``) when both runs' SM items
    were judged.

    What did not count as an answer is never silent: every summary also has
    ``invalid`` (no extractable answer), ``missing`` (no prediction),
    ``errors`` (the video could not be read), ``request_errors`` and
    ``truncated`` (the response was a failure); ``video_errors`` lists each
    video error ``{"uid", "error"}``, ``failed_responses`` each failed
    response ``{"uid", "status", "reason"}`` and ``missing`` each uid without a
    prediction (SM items included), ``blind_missing`` likewise for the blind run
    (and ``blind_failed_responses``).
    """
    acc = _accuracy_records(records, "visual")
    correct = {uid: r["correct"] for uid, r in acc.items()}

    def summary(uids) -> dict:
        out = accuracy_summary({u: correct[u] for u in uids}, n_resamples=n_resamples, seed=seed)
        out.update(status_counts(acc[u] for u in uids))
        return out

    by_cat: dict[str, list[str]] = defaultdict(list)
    for uid, r in acc.items():
        by_cat[r["category"]].append(uid)
    out = {
        "benchmark": BENCHMARK,
        "mu": summary(list(acc)),
        "perception": summary([u for u, r in acc.items() if _GROUP_OF[r["category"]] == "perception"]),
        "reasoning": summary([u for u, r in acc.items() if _GROUP_OF[r["category"]] == "reasoning"]),
        "by_category": {c: summary(by_cat[c]) for c in CATEGORY_CODES if c in by_cat},
        "sm": _sm_summary(records),
        "video_errors": [{"uid": str(r["uid"]), "error": r.get("error")} for r in records
                         if isinstance(r, dict) and r.get("status") == "error"],
        "failed_responses": failed_responses(records),
        "missing": [str(r["uid"]) for r in records if isinstance(r, dict) and r.get("status") == "missing"],
    }
    departures = list(dict.fromkeys(d for r in records if isinstance(r, dict) for d in r.get("departures") or ()))
    if departures:  # a label the run carries everywhere: no blur is not the paper's protocol
        out["departures"] = departures
    if blind_records is not None:
        out["blind_missing"] = [str(r["uid"]) for r in blind_records
                                if isinstance(r, dict) and r.get("status") == "missing"]
        out["blind_failed_responses"] = failed_responses(blind_records)
        blind = _accuracy_records(blind_records, "blind")
        mg = multimodal_gain(correct, {uid: r["correct"] for uid, r in blind.items()},
                             groups={uid: r["category"] for uid, r in acc.items()})
        order = [c for c in CATEGORY_CODES if c in mg["by_group"]]
        blind_correct = {uid: r["correct"] for uid, r in blind.items()}

        def paired(uids) -> dict:  # MG's paired bootstrap interval and McNemar's p on these items
            return paired_difference({u: correct[u] for u in uids}, {u: blind_correct[u] for u in uids},
                                     n_resamples=n_resamples, seed=seed, names=("visual", "blind"))

        whole = paired(list(acc))
        per_cat = {c: paired(by_cat[c]) for c in order}
        out["mg"] = {"overall": mg["overall"], "by_category": {c: mg["by_group"][c] for c in order},
                     "ci95_bootstrap": whole["ci95_bootstrap"], "pvalue": whole["pvalue"], "n": whole["n"],
                     "ci_method": whole["ci_method"] + "; p: McNemar's test, visual vs blind on the same items",
                     "by_category_ci95": {c: per_cat[c]["ci95_bootstrap"] for c in order},
                     "by_category_pvalue": {c: per_cat[c]["pvalue"] for c in order}}
        sm_gain = _sm_gain(records, blind_records)
        if sm_gain is not None:
            out["mg"]["by_category"]["SM"] = sm_gain
    return out


def _sm_gain(visual: list[dict], blind: list[dict]) -> float | None:
    """MG on the judged SM items (Table 3 reports it beside the others): S_v - S_wv of the judge's accuracy,
    when both runs were judged (no SM record ``not_judged``) on the same SM items; None otherwise."""
    def sm(records):
        return {str(r["uid"]): r for r in records if isinstance(r, dict) and r.get("category") == "SM"}

    v, b = sm(visual), sm(blind)
    if not v or set(v) != set(b) or any(r.get("status") == "not_judged" for r in [*v.values(), *b.values()]):
        return None
    return _sm_summary(list(v.values()))["accuracy"] - _sm_summary(list(b.values()))["accuracy"]


def _ci(ci) -> str:
    return "—" if not ci else f"[{pct(ci[0])}, {pct(ci[1])}]"


def _p(p) -> str:
    return "" if p is None else ("<0.001" if p < 0.001 else f"{p:.3f}")


def _signed(x) -> str:
    return "—" if x is None else f"{100 * x:+.1f}"


def format_report(rep: dict) -> str:
    """The report as a readable table: accuracy in percent (one decimal) with both 95% CIs."""
    names = {c.code: c.name for c in CATEGORIES}
    mg = rep.get("mg")
    head = ["", "n", "correct", "acc %", "bootstrap 95% CI", "Wilson 95% CI"] + \
        (["MG [paired 95% CI]", "McNemar p"] if mg else [])
    rows = []

    def row(label, s, gain=None):
        cells = [label, str(s["n"]), str(s["correct"]), pct(s["accuracy"]), _ci(s["ci95_bootstrap"]),
                 _ci(s["ci95_wilson"])]
        if mg:
            gain = gain or {}
            cells += [format_difference(gain, p=False) if gain.get("difference") is not None else "",
                      _p(gain.get("pvalue"))]
        rows.append(cells)

    def gain_of(code=None) -> dict:
        if not mg:
            return {}
        if code is None:
            return {"difference": mg["overall"], "ci95_bootstrap": mg.get("ci95_bootstrap"), "pvalue": mg.get("pvalue")}
        if code not in mg["by_category"]:
            return {}
        return {"difference": mg["by_category"][code], "ci95_bootstrap": mg.get("by_category_ci95", {}).get(code),
                "pvalue": mg.get("by_category_pvalue", {}).get(code)}

    row("mu (MCQ + TO)", rep["mu"], gain_of())
    for group in ("perception", "reasoning"):
        row(group + (" (without SM)" if group == "reasoning" else ""), rep[group])
        for code, s in rep["by_category"].items():
            if _GROUP_OF.get(code) == group:
                row(f"  {code}  {names[code]}", s, gain_of(code))
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

    def fmt(r):
        return " | ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(r))

    title = "Sureon (accuracy in %; SM is judged and not part of mu)"
    if rep.get("departures"):
        title = f"Sureon [{', '.join(rep['departures'])}: not the paper's protocol] (accuracy in %; SM is judged " \
                "and not part of mu)"
    lines = [title, fmt(head),
             "-+-".join("-" * w for w in widths), *[fmt(r) for r in rows], ""]
    sm = rep["sm"]
    if sm["n"]:
        text = f"SM  Sequence Summarization (LLM judge): n={sm['n']}, judged={sm['judged']}"
        if sm["accuracy"] is not None:
            text += f", correct={sm['correct']}, accuracy {pct(sm['accuracy'])}%"
        else:
            text += f", correct={sm['correct']}, accuracy — (not judged: {sm['not_judged']})"
        if sm["invalid"]:
            text += f", invalid verdicts={sm['invalid']}"
        if mg and "SM" in mg["by_category"]:
            text += f", MG {_signed(mg['by_category']['SM'])}"
        lines.append(text)
        lines.extend(judge_lines(sm))
    else:
        lines.append("SM  Sequence Summarization: no items")
    if mg:
        lines.append("MG = S_v - S_wv in points (visual minus blind accuracy on the same items); its 95% CI is a "
                     "paired bootstrap over those items, p is McNemar's test of visual vs blind on them")
        cis = [mg.get("ci95_bootstrap"), *mg.get("by_category_ci95", {}).values()]
        if any(ci and ci[0] == ci[1] for ci in cis):
            lines.append("  an MG interval of one point: every item of that row differs the same way (e.g. right "
                         "with frames, wrong blind), so every resample gives the same MG; McNemar's p still "
                         "says how many items that is")
    mu = rep["mu"]
    counted = [f"{mu[k]} {k}" for k in STATUS_COUNT_KEYS if mu.get(k)]
    if counted:
        lines.append("counted wrong in mu: " + ", ".join(counted))
    lines.extend(listing("video errors", [with_item(e["uid"], e["error"]) for e in rep.get("video_errors", [])]))
    lines.extend(failure_listing(rep.get("failed_responses", [])))
    lines.extend(failure_listing(rep.get("blind_failed_responses", []), "blind run: "))
    lines.extend(listing("no prediction (scored wrong)", [f"item {u}" for u in rep.get("missing", [])]))
    lines.extend(listing("no blind prediction (scored wrong)", [f"item {u}" for u in rep.get("blind_missing", [])]))
    return "\n".join(lines)


def judge_lines(sm: dict) -> list[str]:
    """The judge of an SM summary, named: ``judged by judge-7b at http://... (temperature 0, prompt
    sureon-sm-strict-v2; sees the reference and the answer only)``, or that nothing was judged."""
    judges = sm.get("judge") or []
    if not judges:
        return ["    judge: none (SM not judged; `score --judge` names one)"] if sm.get("not_judged") else []
    out = []
    for j in judges:
        where = f" at {j['base_url']}" if j.get("base_url") else ""
        settings = [f"temperature {j['temperature']}" if "temperature" in j else None,
                    f"prompt {j['prompt_version']}" if j.get("prompt_version") else None]
        text = ", ".join(x for x in settings if x)
        out.append(f"    judged by {j.get('model')}{where}" + (f" ({text}; sees {j['sees']})" if text else "")
                   + (f"; rubric: {j['rubric']}" if j.get("rubric") else ""))
    return out


def dumps_report(rep: dict) -> str:
    """The report as JSON text (NaN as null, floating-point dust rounded away)."""
    from ...core.text import report_json

    return report_json(rep)