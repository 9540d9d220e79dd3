"""``medhorizon-tasks compare`` and ``blind-audit``: several runs scored on the same items, compared pairwise
(McNemar tests, Holm-corrected) or, for blind runs, checked item by item for answers recovered without video."""

from __future__ import annotations

import json
from pathlib import Path

from ..core.errors import MedHorizonError
from ..core.text import report_json
from .common import add_extraction_argument, load_items, medhorizon_only
from .data_args import add_benchmark_argument, add_synthetic_argument

__all__ = ["add_parser"]


def add_parser(sub) -> None:
    """Add ``compare`` and ``blind-audit`` to the main parser's sub-parsers."""
    c = sub.add_parser("compare", help="paired McNemar tests, Holm-corrected, between every pair of runs")
    c.add_argument("runs", nargs="+", help="predictions files (authors' format or lmms-eval samples), 2 or more")
    add_benchmark_argument(c, ["medhorizon", "sureon"], "medhorizon")
    c.add_argument("--data", help="release JSONL, local dataset folder or Hub dataset id (default: "
                   "$MEDHORIZON_DATA); sureon: the items JSONL")
    add_synthetic_argument(c)
    c.add_argument("--labels", help="comma-separated run names (default: file names); Sureon runs named as the "
                   "paper's models (e.g. 'Gemini 3.1 Pro,GPT-5.1 (high)') are set beside Table 18's pairs")
    c.add_argument("--alpha", type=float, default=0.05)
    add_extraction_argument(c, "decides each item")
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=_cmd_compare)

    ba = sub.add_parser("blind-audit", help="per-item consistency S of a blind guesser over several runs")
    ba.add_argument("runs", nargs="+", help="predictions files of R blind runs (non-zero temperature)")
    add_benchmark_argument(ba, ["sureon", "medhorizon"], "sureon")
    ba.add_argument("--data", help="items JSONL (sureon) or release (medhorizon; default $MEDHORIZON_DATA)")
    add_synthetic_argument(ba)
    ba.add_argument("--tau", type=float, default=0.6, help="flag items recovered in at least this share of runs "
                    "(default 3/5, as the paper)")
    ba.add_argument("--json", action="store_true")
    ba.set_defaults(func=_cmd_blind_audit)


def _items_and_scorer(benchmark: str, data: str | None, extraction: str = "default"):
    """``(items, score_predictions)``: Sureon's items JSONL and scorer, else the MedHorizon release and its
    scorer with the named ``extraction``."""
    if benchmark == "sureon":
        from ..benchmarks.sureon import items as sureon_items
        from ..benchmarks.sureon import scoring as sureon

        medhorizon_only(benchmark, extraction)
        return sureon_items.load_items(data), sureon.score_predictions
    from ..benchmarks.medhorizon import scoring

    def score(items, predictions):
        return scoring.score_predictions(items, predictions, extraction=extraction)

    return load_items(benchmark, data), score


def _cmd_compare(args) -> int:
    from ..benchmarks.medhorizon import scoring
    from ..core.stats import format_pairwise, pairwise_mcnemar

    items, score = _items_and_scorer(args.benchmark, args.data, args.extraction)
    uids = [it.uid for it in items]
    labels = args.labels.split(",") if args.labels else [Path(r).stem for r in args.runs]
    if len(labels) != len(args.runs) or len(set(labels)) != len(labels):
        raise MedHorizonError("--labels must give one distinct name per run")
    runs, modes = {}, {}
    for label, path in zip(labels, args.runs):
        records = score(items, scoring.read_predictions(path, uids))
        # Sureon's SM items are judged separately and stay out of the paired tests, as out of mu.
        runs[label] = {r["uid"]: bool(r["correct"]) for r in records if r.get("kind") != "sm"}
        found = {r.get("mode") for r in records if r.get("status") != "missing"}
        mode = found.pop() if len(found) == 1 else None
        # a Sureon run that records no mode is a visual one, as `leaderboard make` reads it
        modes[label] = "visual" if args.benchmark == "sureon" and mode in (None, "unknown") else mode
    result = pairwise_mcnemar(runs, alpha=args.alpha)
    _add_differences(result, runs, modes, args.benchmark)
    paper = []
    if args.benchmark == "sureon":  # Table 18: the paper's McNemar pairs, for the runs named as its models
        from ..benchmarks.published import format_pairs

        paper = format_pairs(result["pairs"])
    if args.json:
        print(report_json({**result, "extraction": args.extraction, **({"paper": paper} if paper else {})}))
        return 0
    print(format_pairwise(result))
    print()
    print("\n".join(_difference_lines(result)))
    if paper:
        print()
        print("\n".join(paper))
    if args.extraction != "default":
        print(f"(answers read with the {scoring.RULE_NAMES[args.extraction]}: the first standalone A-D, else the "
              "first character)")
    return 0


def _add_differences(result: dict, runs: dict, modes: dict, benchmark: str) -> None:
    """Each pair's accuracy difference with its paired bootstrap 95% interval; a Sureon pair of one visual
    and one blind run is its multimodal gain MG = S_v - S_wv (visual first). Every report shows every
    pair's interval, so all are computed, in one ``stats.paired_differences`` (one resample draw for all)."""
    from ..core.stats import paired_differences

    wanted = [(pair["a"], pair["b"]) for pair in result["pairs"]]
    gains = {}  # pair index -> (visual, blind)
    for k, pair in enumerate(result["pairs"]):
        a, b = pair["a"], pair["b"]
        if benchmark == "sureon" and {modes.get(a), modes.get(b)} == {"visual", "blind"}:
            gains[k] = (a, b) if modes[a] == "visual" else (b, a)
    mg_pairs = sorted(set(gains.values()) - set(wanted))  # a blind-first pair: its MG is the other way round
    diffs = dict(zip(wanted + mg_pairs, paired_differences(runs, wanted + mg_pairs)))
    for k, pair in enumerate(result["pairs"]):
        if k in gains:
            visual, blind = gains[k]
            pair["mg"] = {"visual": visual, "blind": blind, **diffs[(visual, blind)]}
        diff = diffs[(pair["a"], pair["b"])]
        pair["delta_ci95_bootstrap"] = diff["ci95_bootstrap"]
        pair["delta_ci_method"] = diff["ci_method"]


def _difference_lines(result: dict) -> list[str]:
    from ..core.stats import format_difference

    lines = ["accuracy differences in points [paired bootstrap 95% CI over the shared items], McNemar p (raw, "
             "before Holm):"]
    for pair in result["pairs"]:
        diff = {"difference": pair["delta"], "ci95_bootstrap": pair["delta_ci95_bootstrap"], "pvalue": pair["pvalue"]}
        lines.append(f"  {pair['a']} - {pair['b']}: {format_difference(diff)}")
        if "mg" in pair:
            mg = pair["mg"]
            lines.append(f"    MG = S_v - S_wv (visual run {mg['visual']}, blind run {mg['blind']}, same items): "
                         f"{format_difference(mg)}")
    return lines


def _cmd_blind_audit(args) -> int:
    from ..benchmarks.medhorizon import scoring as mh
    from ..core.stats import blind_consistency

    items, score = _items_and_scorer(args.benchmark, args.data)
    group = {it.uid: it.category if args.benchmark == "sureon" else it.task for it in items}
    uids = [it.uid for it in items]
    answers = {it.uid: "ok" for it in items}
    runs = [{r["uid"]: ("ok" if r["correct"] else None) for r in score(items, mh.read_predictions(p, uids))}
            for p in args.runs]
    res = blind_consistency(runs, answers, tau=args.tau)
    by_group: dict[str, list[int]] = {}
    for uid, v in res["items"].items():
        by_group.setdefault(group[uid], [0, 0])
        by_group[group[uid]][0] += 1
        by_group[group[uid]][1] += int(v["flagged"])
    if args.json:
        print(json.dumps({**res, "tau": float(res["tau"]), "by_group": by_group}, indent=2, default=str))
        return 0
    print(f"blind audit over {res['n_runs']} runs, tau = {res['tau']}: {res['n_flagged']} of {res['n_items']} "
          f"items recovered without video in at least tau of the runs")
    print(f"{'group':<10} {'items':>6} {'flagged':>8}")
    for g, (n, f) in by_group.items():
        print(f"{g:<10} {n:>6} {f:>8}")
    flagged = [u for u, v in res["items"].items() if v["flagged"]]
    if flagged:
        print("flagged: " + ", ".join(flagged))
    return 0
