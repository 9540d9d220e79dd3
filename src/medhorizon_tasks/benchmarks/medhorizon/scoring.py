"""MedHorizon scoring: per-item records, pooled accuracy tables, prediction files.

Accuracy is pooled at item level (correct / total), as in the paper's Table 2
("item-level correct/total ratios ... rounded to one decimal place"). Items
without a prediction (missing), with an unextractable answer (invalid), whose
video could not be read (error), or whose response was a failure (a request
that failed, ``request_error``; an empty or cut-off reply, ``truncated``:
:mod:`medhorizon_tasks.core.responses`, never extracted) count as wrong and
are counted separately.

Two answer rules, always both: a record is scored with one named extraction
(``extraction``: ``default``, the package's rule, or ``authors``, the
MedHorizon authors' scorer's; :data:`~medhorizon_tasks.core.extract.EXTRACTIONS`)
into ``extracted`` / ``status`` / ``valid`` / ``correct``, and carries the other
rule's reading as ``extracted_<other>`` / ``correct_<other>``. Every summary of
:func:`report` gives ``accuracy_<other>`` beside ``accuracy`` and
``rules_disagree``: the items whose model output the two rules read as
different answers. Records without a model output (missing, video error, a
failed response) carry no second reading and count wrong under both rules.
"""

from __future__ import annotations

from collections import defaultdict

from ...core.extract import BESIDE, extract_many, extraction_rule
from ...core.predictions import (
    PREDICTION_KEYS,
    STATUS_COUNT_KEYS,
    failed_responses,
    read_predictions,
    records_for,
    status_counts,
)
from ...core.responses import response_failure
from ...core.stats import wilson_ci
from ...core.text import pct
from .oracle_report import oracle_source_lines, oracle_sources
from .release import Item
from .release_check import FALLBACK_REASONS, oracle_fallback, oracle_frame_count, oracle_source
from .taxonomy import FAMILIES, TASK_CODES, TASK_TYPES

__all__ = ["score_item", "record_for", "missing_record", "error_record", "read_predictions", "score_predictions",
           "report", "format_table", "PREDICTION_KEYS", "beside_flags", "rule_of", "RULE_NAMES", "rules_line",
           "fallback_lines", "oracle_frame_distribution", "oracle_frames_line"]

BENCHMARK = "medhorizon"
#: How the reports name each extraction rule.
RULE_NAMES = {"default": "default rule", "authors": "authors' rule"}


def _base(item: Item, mode: str, frames_shown: int | None = None) -> dict:
    rec = {"benchmark": BENCHMARK, "uid": item.uid, "task": item.task, "source": item.source,
           "family": item.family, "hop": item.hop, "mode": mode, "answer": item.answer}
    if mode == "oracle":  # shown the 1 FPS + cap frames instead of its evidence: why (None: its evidence)
        rec["oracle_fallback"] = oracle_fallback(item)
        rec["oracle_source"] = oracle_source(item)  # the release's evidence images, or which fallback
        # how many frames it was shown: the run's own plan, else planned on the data at the oracle row's cap
        rec["oracle_frames"] = int(frames_shown) if frames_shown is not None else oracle_frame_count(item)
    return rec


def score_item(item: Item, raw_output: str | None, mode: str, extraction: str = "default",
               frames_shown: int | None = None, readings: dict | None = None) -> dict:
    """The per-item record for one model output (the one record format every report reads), scored with the
    named ``extraction`` and carrying the other rule's reading beside it (module doc); a failed response is its
    status (``request_error``, ``truncated``), wrong under both rules, never extracted. ``frames_shown``: the
    number of frames of the item's plan (oracle mode records it; default: planned on the data). ``readings``:
    ``{rule: {(output, options): Extraction}}`` read ahead for a whole file (:func:`score_predictions`)."""
    rec = _base(item, mode, frames_shown)
    failure = response_failure(raw_output)
    if failure is not None:
        rec.update(raw_output=raw_output, extracted=None, status=failure.status, valid=False, correct=False,
                   error=None)
        return rec
    ex = _reading(extraction, raw_output, item.options, readings)
    other = BESIDE[extraction]
    alt = _reading(other, raw_output, item.options, readings)
    rec.update(raw_output=raw_output, extracted=ex.letter, status=ex.status, valid=ex.valid,
               correct=bool(ex.valid and ex.letter == item.answer), error=None, extraction=extraction)
    rec[f"extracted_{other}"] = alt.letter
    rec[f"correct_{other}"] = bool(alt.valid and alt.letter == item.answer)
    return rec


def _reading(rule: str, text: str, options, readings: dict | None):
    known = readings[rule].get((text, tuple(options))) if readings else None
    return known if known is not None else extraction_rule(rule)(text, options)


def _read_ahead(items: list[Item], predictions: dict[str, dict], extraction: str) -> dict:
    """Every model output of a predictions file read under both rules at once, so that a file read before
    (``score`` then ``compare``) is read from the extraction cache (:mod:`medhorizon_tasks.core.extract.stored`)."""
    pairs = list(dict.fromkeys((p["raw"], tuple(it.options)) for it in items
                               if (p := predictions.get(it.uid)) and isinstance(p.get("raw"), str)
                               and not p.get("error")))
    rules = {rule: extraction_rule(rule) for rule in (extraction, BESIDE[extraction])}
    return {rule: dict(zip(pairs, readings)) for rule, readings in extract_many(rules, pairs).items()}


def rule_of(record: dict) -> str:
    """The extraction a record was scored with (records of earlier versions: the default rule)."""
    rule = record.get("extraction")
    return rule if rule in BESIDE else "default"


def beside_flags(record: dict) -> tuple[bool, bool]:
    """``(correct under the other rule, the two rules read different answers)`` of one record; a record
    without a second reading (no model output) is wrong under both and no disagreement."""
    other = BESIDE[rule_of(record)]
    if f"extracted_{other}" not in record:
        return False, False
    return bool(record.get(f"correct_{other}")), record.get("extracted") != record[f"extracted_{other}"]


def record_for(item: Item, raw_output: str | None, mode: str, error: str | None,
               frames_shown: int | None = None, departures: list[str] = ()) -> dict:
    """The record of one model output in either framework: scored, or -- when the item's video failed
    (``error``; the model got no frames) -- a video error whatever the model said, its text kept beside it;
    with the run's ``departures`` from the standard protocol (``benchmarks.standard.setting_departures``) when
    it has any, so that a samples file says them itself."""
    if not error:
        if frames_shown is None:
            record = score_item(item, raw_output, mode)
        else:
            record = score_item(item, raw_output, mode, "default", frames_shown)
    else:
        record = error_record(item, mode, error)
        record["raw_output"] = raw_output
    if departures:
        record["departures"] = list(departures)
    return record


def missing_record(item: Item, mode: str) -> dict:
    rec = _base(item, mode)
    rec.update(raw_output=None, extracted=None, status="missing", valid=False, correct=False, error=None)
    return rec


def error_record(item: Item, mode: str, error: str) -> dict:
    rec = _base(item, mode, 0)  # the model got no frames
    rec.update(raw_output=None, extracted=None, status="error", valid=False, correct=False, error=error)
    return rec


def score_predictions(items: list[Item], predictions: dict[str, dict], mode: str | None = None,
                      extraction: str = "default") -> list[dict]:
    """One record per benchmark item: scored (with the named ``extraction``), missing, or video error."""
    extraction_rule(extraction)  # an unknown name fails before any item is scored
    readings = _read_ahead(items, predictions, extraction)

    def score(item: Item, raw: str | None, m: str) -> dict:
        return score_item(item, raw, m, extraction, readings=readings)

    return records_for(items, predictions, mode, score=score, missing=missing_record, error=error_record)


# ------------------------------------------------------------------ reports

def _summary(recs: list[dict], other: str, with_ci: bool = False) -> dict:
    n = len(recs)
    correct = sum(1 for r in recs if r["correct"])
    flags = [beside_flags(r) for r in recs]
    correct_other = sum(1 for c, _ in flags if c)
    out = {"accuracy": correct / n if n else None, "correct": correct, "n": n, **status_counts(recs),
           f"accuracy_{other}": correct_other / n if n else None, f"correct_{other}": correct_other,
           "rules_disagree": sum(1 for _, d in flags if d)}
    if with_ci:
        ci = wilson_ci(correct, n)
        out["ci95"] = list(ci) if ci else None
        out["ci_method"] = "wilson"
    return out


def _extraction_of(records: list[dict]) -> str:
    rules = {r["extraction"] for r in records if r.get("extraction") in BESIDE}  # records with a model output
    if len(rules) > 1:
        raise ValueError(f"records scored with different extractions ({', '.join(sorted(rules))}) cannot be pooled")
    return rules.pop() if rules else "default"


def report(records: list[dict]) -> dict:
    """Pooled accuracy overall and by task, family, hop depth and source (accuracies as 0..1), under the
    records' extraction (``extraction``) with the other rule's accuracy and the disagreements beside it;
    overall, each task and each family with its Wilson 95% interval (``ci95``, ``ci_method``)."""
    rule = _extraction_of(records)
    other = BESIDE[rule]
    groups: dict[str, dict[str, list]] = {k: defaultdict(list) for k in ("task", "family", "hop", "source")}
    for r in records:
        groups["task"][r["task"]].append(r)
        groups["family"][r["family"]].append(r)
        if r["hop"]:
            groups["hop"][str(r["hop"])].append(r)
        groups["source"][r["source"]].append(r)
    task_order = [c for c in TASK_CODES if c in groups["task"]]
    return {
        "benchmark": BENCHMARK,
        "extraction": rule,
        "overall": _summary(records, other, with_ci=True),
        "by_task": {c: _summary(groups["task"][c], other, with_ci=True) for c in task_order},
        "by_family": {f: _summary(groups["family"][f], other, with_ci=True) for f in FAMILIES if f in groups["family"]},
        "by_hop": {h: _summary(groups["hop"][h], other) for h in sorted(groups["hop"])},
        "by_source": {s: _summary(groups["source"][s], other) for s in sorted(groups["source"])},
        "video_errors": [{"uid": r["uid"], "error": r["error"]} for r in records if r.get("error")],
        "failed_responses": failed_responses(records),
        **_fallbacks(records),
    }


def _fallbacks(records: list[dict]) -> dict:
    """Oracle mode: the items shown the 1 FPS + cap frames instead of their evidence, by reason, and the
    distribution of the number of frames each item was shown."""
    if not any("oracle_fallback" in r for r in records):
        return {}
    by_reason = {k: [r["uid"] for r in records if r.get("oracle_fallback") == k] for k in FALLBACK_REASONS}
    out = {"oracle_fallback": {"n": sum(len(v) for v in by_reason.values()), **by_reason}}
    counts = [int(r["oracle_frames"]) for r in records if r.get("oracle_frames") is not None]
    if counts:
        out["oracle_frames"] = oracle_frame_distribution(counts)
    return {**out, **oracle_sources(records)}


def oracle_frame_distribution(counts: list[int]) -> dict:
    """``n, min, p25, median, p75, max, mean`` of the oracle's frames per item, and ``counts`` (frames ->
    items): the paper's oracle shows "the variable number of available evidence images for each item"."""
    import numpy as np

    a = np.asarray(counts, dtype=np.float64)
    q = np.percentile(a, [25, 50, 75])
    return {"n": len(counts), "min": int(a.min()), "p25": float(q[0]), "median": float(q[1]),
            "p75": float(q[2]), "max": int(a.max()), "mean": round(float(a.mean()), 3),
            "counts": {str(k): counts.count(k) for k in sorted(set(counts))}}


def oracle_frames_line(rep: dict) -> str | None:
    """``oracle frames per item (n 88): min 1, quartiles 3 / 9 / 31, max 64, mean 17.2``."""
    d = rep.get("oracle_frames")
    if not d:
        return None
    return (f"oracle frames per item (n {d['n']}): min {d['min']}, quartiles {d['p25']:g} / {d['median']:g} / "
            f"{d['p75']:g}, max {d['max']}, mean {d['mean']:g}")


def fallback_lines(rep: dict) -> list[str]:
    """The oracle report's fall-back items as text: a count per reason, and the items whose windows could not
    be read listed (global support falls back by design, as in the paper)."""
    fb = rep.get("oracle_fallback")
    frames = [*([line] if (line := oracle_frames_line(rep)) else []), *oracle_source_lines(rep)]
    if not fb or not fb["n"]:
        return frames
    lines = [*frames,
             f"oracle mode: {fb['n']} of {rep['overall']['n']} items were shown the 1 FPS + cap frames "
             f"instead of evidence frames:"]
    for reason, text in FALLBACK_REASONS.items():
        if fb.get(reason):
            uids = fb[reason]
            shown = ", ".join(uids[:20]) + (f", ... {len(uids)} in all" if len(uids) > 20 else "")
            lines.append(f"  {len(uids)}: {text}" + ("" if reason == "global" else f": items {shown}"))
    return lines


def interval_lines(rep: dict) -> list[str]:
    """Each family's and task's accuracy with its Wilson 95% interval, in the report's order:
    ``fine-grained 77.3 [67.5, 84.8] (n 44)`` ... then ``OR  Object Recognition 83.3 [43.6, 97.0] (n 6)``."""
    names = {t.code: t.name for t in TASK_TYPES}

    def cell(s: dict) -> str:
        ci = s.get("ci95")
        return f"{pct(s['accuracy'])} [{pct(ci[0])}, {pct(ci[1])}] (n {s['n']})" if ci else f"— (n {s['n']})"

    labels = [(f.replace("_", "-"), s) for f, s in rep.get("by_family", {}).items()]
    labels += [(f"{c:<4} {names.get(c, c)}", s) for c, s in rep.get("by_task", {}).items()]
    width = max([len(label) for label, _ in labels] + [1])
    return ["accuracy % [Wilson 95% CI] by family and task:",
            *[f"  {label:<{width}}  {cell(s)}" for label, s in labels]]


def format_table(rows: list[tuple[str, str, dict]], *, intervals: bool = False) -> str:
    """Rows ``(model, input, report)`` in the layout of the paper's Table 2 (percent, one decimal); with
    ``intervals``, each row's families and tasks with their 95% intervals below it."""
    fine = [t.code for t in TASK_TYPES if t.family == "fine_grained"]
    sem = [t.code for t in TASK_TYPES if t.family == "semantic_reasoning"]
    head = ["Model", "Input", "Ov.", *fine, *sem]
    body = []
    for model, inp, rep in rows:
        body.append([model, inp, pct(rep["overall"]["accuracy"]),
                     *[pct(rep["by_task"].get(c, {}).get("accuracy")) for c in fine + sem]])
    widths = [max(len(str(r[i])) for r in [head, *body]) for i in range(len(head))]
    span_fine = sum(widths[3:3 + len(fine)]) + 3 * (len(fine) - 1)
    span_sem = sum(widths[3 + len(fine):]) + 3 * (len(sem) - 1)
    lead = sum(widths[:3]) + 6
    title = " " * lead + " | " + "Fine-grained Understanding".center(span_fine) + " | " + "Semantic Reasoning".center(span_sem)

    def fmt(r):
        cells = [str(c).ljust(widths[i]) if i < 2 else str(c).rjust(widths[i]) for i, c in enumerate(r)]
        return " | ".join(cells)

    sep = "-+-".join("-" * w for w in widths)
    lines = [title, fmt(head), sep, *[fmt(r) for r in body]]
    notes = []
    for model, inp, rep in rows:
        o = rep["overall"]
        extra = [f"n={o['n']}"]
        if o.get("ci95"):
            extra.append(f"95% CI {pct(o['ci95'][0])}–{pct(o['ci95'][1])}")
        for k in STATUS_COUNT_KEYS:
            if o.get(k):
                extra.append(f"{k}={o[k]}")
        notes.append(f"  {model} [{inp}]: " + ", ".join(extra))
        beside = rules_line(rep)
        if beside:
            notes.append(f"    {beside}")
        notes += [f"    {line}" for line in fallback_lines(rep)]
        if intervals:
            notes += [f"    {line}" for line in interval_lines(rep)]
    return "\n".join(lines + ["", *notes])


def rules_line(rep: dict) -> str | None:
    """``"Ov. under the default rule 77.3%, under the authors' rule 70.5%; the rules disagree on 9 of 88
    items"``: both accuracies of a report, for every text report that shows a MedHorizon accuracy."""
    o = rep.get("overall") or {}
    rule = rep.get("extraction", "default")
    other = BESIDE.get(rule)
    if other is None or f"accuracy_{other}" not in o:
        return None
    return (f"Ov. under the {RULE_NAMES[rule]} {pct(o['accuracy'], unit='%')}, under the {RULE_NAMES[other]} "
            f"{pct(o[f'accuracy_{other}'], unit='%')}; the rules disagree on {o['rules_disagree']} of {o['n']} items")
