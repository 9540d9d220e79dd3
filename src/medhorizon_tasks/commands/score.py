"""``medhorizon-tasks score``: score a predictions file against MedHorizon, Sureon or SurgHiBench."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..benchmarks.paper_match import departure_flags
from ..core.errors import MedHorizonError
from ..core.predictions import failure_listing
from ..core.text import listing, report_json, with_item
from .common import add_extraction_argument, load_items, medhorizon_only
from .data_args import RELEASE_ID, add_benchmark_argument, add_synthetic_argument
from .help import old_spellings
from .paper import (
    add_paper_row_argument,
    medhorizon_departures,
    paper_comparisons,
    paper_json,
    print_comparisons,
    protocol_note,
    run_model_names,
)

__all__ = ["add_parser"]


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``score`` to the main parser's sub-parsers."""
    s = sub.add_parser("score", help="score a predictions file against a benchmark")
    add_benchmark_argument(s, ["medhorizon", "sureon", "surghi"], None)
    s.add_argument("--data", help="medhorizon: release JSONL, local dataset folder or Hub dataset id such as "
                   f"{RELEASE_ID} (default: $MEDHORIZON_DATA); sureon: the items JSONL; surghi: per-frame ground "
                   "truth, JSONL or CSV rows dataset, video, frame, phase, step")
    old_spellings(s, "--data", "--annotations")
    add_synthetic_argument(s)
    s.add_argument("--hierarchy", help='surghi: hierarchy JSON {"phases": {phase: [steps]}, "semantic_groups": '
                   '{group: [steps]}} for datasets the package does not know, or {dataset: {...}} '
                   "(default: hierarchies.json beside the annotations, else shipped MultiBypass140/GraSP/MIPO, else "
                   "derived from the annotations)")
    s.add_argument("--blind", help="sureon: predictions of the same model without video, for the multimodal gain")
    s.add_argument("--judge", action="store_true", help="sureon: judge SM summaries with the LLM judge "
                   "($MEDHORIZON_JUDGE_BASE_URL, $MEDHORIZON_JUDGE_MODEL, $MEDHORIZON_JUDGE_API_KEY)")
    s.add_argument("--judge-model", help="judge model (default: $MEDHORIZON_JUDGE_MODEL)")
    s.add_argument("--judge-cache", help="JSONL file caching the judge's verdicts")
    s.add_argument("--predictions", required=True,
                   help='JSONL of {"uid", "prediction"|"pred"|"answer"} or an lmms-eval --log_samples file; '
                   "surghi: JSONL/CSV rows dataset, video, frame, phase, step, or lmms-eval samples")
    add_extraction_argument(s, "scores; the other rule's accuracy is reported beside it")
    add_paper_row_argument(s)
    s.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    s.add_argument("--out", metavar="RECORDS", help="also write the per-item records (JSONL) to this file")
    old_spellings(s, "--out", "--records")
    s.add_argument("--mode", help="mode recorded in the per-item records (default: from the file)")
    s.add_argument("--label", help="row label in the table (default: the file name)")
    s.add_argument("--input", help='"Input" column of the table, e.g. "1 FPS" or "64"')
    s.set_defaults(func=_cmd_score)
    return s


def _judge_from_args(args):
    if not args.judge:
        return None
    from ..core.judge import Judge, JudgeConfig

    cache = Path(args.judge_cache) if args.judge_cache else None
    return Judge(JudgeConfig.from_env(**({"model": args.judge_model} if args.judge_model else {})), cache_path=cache)


def _cmd_score_sureon(args) -> int:
    from ..benchmarks.sureon import items as sureon_items
    from ..benchmarks.sureon import scoring as sureon
    from ..core.jsonl import write_jsonl

    if not args.data:
        raise MedHorizonError("--data is required for --benchmark sureon (the items JSONL), or --synthetic")
    items = sureon_items.load_items(args.data)
    uids = [it.uid for it in items]
    judge = _judge_from_args(args)
    records = sureon.score_predictions(items, sureon.read_predictions(args.predictions, uids), mode=args.mode,
                                       judge=judge)
    blind = None
    if args.blind:
        blind = sureon.score_predictions(items, sureon.read_predictions(args.blind, uids), mode="blind",
                                         judge=judge)
    rep = sureon.report(records, blind_records=blind)
    if args.out:
        write_jsonl(args.out, records)
    modes = {r["mode"] for r in records if r.get("status") != "missing"}
    paper = paper_comparisons("sureon", rep, paper_row=args.paper_row, predictions=args.predictions,
                              mode=modes.pop() if len(modes) == 1 else None, items=items,
                              departures=rep.get("departures", []))
    if args.json:
        print(report_json({**rep, **paper_json(paper)}))
        return 0
    print(sureon.format_report(rep))
    print_comparisons(paper)
    return 0


def _cmd_score_surghi(args) -> int:
    from ..benchmarks.surghi import frames, scoring

    source = args.data
    if not source:
        raise MedHorizonError("score --benchmark surghi needs --data (rows dataset, video, frame, phase, step), "
                              "or --synthetic for the synthetic sample's")
    annotations = frames.read_frame_rows(source, role="annotations")
    hierarchy = args.hierarchy or frames.hierarchy_beside(source)
    given = frames.load_hierarchy_file(hierarchy) if hierarchy else None
    hierarchies = frames.resolve_hierarchies(annotations, given)
    predictions = scoring.read_predictions(args.predictions, hierarchies)
    rep = scoring.evaluate(annotations, predictions, hierarchies).report()
    paper = paper_comparisons("surghi", rep, paper_row=args.paper_row, predictions=args.predictions)
    if args.json:
        print(report_json({**rep, **paper_json(paper)}))
    else:
        print(scoring.format_report(rep))
        print_comparisons(paper)
    for ds, r in rep["datasets"].items():
        if any(r.get(k) for k in scoring.COUNT_KEYS):
            print(f"warning: {ds}: {r['n_missing']} annotated frame(s) without a prediction (scored wrong), "
                  f"{r.get('n_errors', 0)} frame(s) whose video could not be read (scored wrong), "
                  f"{r['n_request_errors'] + r['n_refused'] + r['n_truncated'] + r.get('n_oom', 0)} frame(s) the model gave no answer to (scored wrong), "
                  f"{r['n_extra']} prediction(s) for frames not in the annotations (ignored)", file=sys.stderr)
    for name, u in rep.get("unknown_datasets", {}).items():
        hint = f" (did you mean {u['did_you_mean']!r}?)" if u["did_you_mean"] else ""
        print(f"warning: {u['n_extra']} prediction(s) for dataset {name!r}, which is not in the annotations: "
              f"ignored{hint}", file=sys.stderr)
    return 0


def _cmd_score(args) -> int:
    from ..benchmarks.medhorizon import scoring
    from ..core.jsonl import write_jsonl

    medhorizon_only(args.benchmark, args.extraction)
    if args.benchmark == "sureon":
        return _cmd_score_sureon(args)
    if args.benchmark == "surghi":
        return _cmd_score_surghi(args)
    items = load_items(args.benchmark, args.data)
    predictions = scoring.read_predictions(args.predictions, [it.uid for it in items])
    records = scoring.score_predictions(items, predictions, mode=args.mode, extraction=args.extraction)
    rep = scoring.report(records)
    if args.out:
        write_jsonl(args.out, records)
    label, inp = _run_label(args.predictions, records)
    paper = paper_comparisons("medhorizon", rep, paper_row=args.paper_row, predictions=args.predictions,
                              items=items)
    known = args.input or (inp if run_model_names(args.predictions) else None)  # frames of a plain file: unknown
    notes = [n for n in (protocol_note(c.row, known) for c in paper) if n]
    for c in paper:
        c.check.flags.extend(departure_flags(medhorizon_departures(c.row, known, rep)))
    if args.json:
        extra = {**paper_json(paper), "paper_notes": notes} if paper else {}
        print(report_json({**rep, **extra}))
        return 0
    print(scoring.format_table([(args.label or label, args.input or inp, rep)], intervals=True))
    print_comparisons(paper, notes)
    for line in scoring.fallback_lines(rep):  # oracle mode: what each item was shown, and the fallbacks
        print(line)
    for line in listing("video errors (scored wrong)", [with_item(e["uid"], e["error"]) for e in rep["video_errors"]]):
        print(line)
    missing = [r["uid"] for r in records if r["status"] == "missing"]
    for line in listing("no prediction (scored wrong)", [f"item {u}" for u in missing]):
        print(line)
    for line in failure_listing(rep["failed_responses"]):
        print(line)
    return 0


def _run_label(predictions: str, records: list[dict]) -> tuple[str, str]:
    """(model, input) of a MedHorizon predictions file: from lmms-eval's results file beside a samples
    file, else the file name and the records' mode."""
    from ..core.log_samples import model_label, run_description

    run = run_description(predictions)
    if run is not None:
        # here only: the frame protocol brings numpy and the video readers, which a plain file does not need
        from ..benchmarks.medhorizon.protocol import FrameSetting

        try:
            return model_label(run), FrameSetting.from_kwargs(run["kwargs"]).describe()
        except (TypeError, ValueError):
            return model_label(run), "?"
    modes = {r["mode"] for r in records if r["status"] != "missing"}
    mode = modes.pop() if len(modes) == 1 else None
    return Path(predictions).stem, {"text": "text only", "oracle": "GT evidence"}.get(mode, mode or "?")
