"""The ``medhorizon-tasks`` command.

Sub-commands: ``score``, ``compare``, ``blind-audit``, ``demo``, ``diagnose``, ``sweep``, ``stats``, ``plot``,
``prepare-frames``, ``cache``, ``synthetic``, ``check``, ``run``, ``vlmeval``, ``task-path``, ``leaderboard``, ``build-dataset``,
``videos``, ``surghi``, ``protocol``. Errors in the
user's input are printed as one clear message (exit status 2), never as a
traceback.
"""


from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from ..core.errors import MedHorizonError
from ..core.text import listing, plural, report_json, with_item

EXIT_USAGE = 2
DESCRIPTION = ("Evaluate multimodal models on long medical and surgical video with the published protocols of "
               "MedHorizon, Sureon and SurgHiBench: pre-flight your data and videos (check), run lmms-eval or "
               "VLMEvalKit with an honest exit status (run, vlmeval), score predictions with confidence intervals (score, compare), run the "
               "papers' diagnostics (diagnose, sweep, stats, plot) and build leaderboards (leaderboard).")



def _cmd_task_path(args) -> int:
    from ..adapters.lmms_eval.runner import task_path

    print(task_path())
    return 0


def _cmd_synthetic(args) -> int:
    if args.benchmark == "sureon":
        from ..data.synthetic.sureon import build_sureon_sample

        sample = build_sureon_sample(args.out, seed=args.seed)
        print(f"data:   {sample.data_path}\nvideos: {sample.video_root}")
        return 0
    if args.benchmark == "surghi":
        from ..data.synthetic.surghi import build_surghi_sample

        sg = build_surghi_sample(args.out, seed=args.seed)
        print(f"annotations: {sg.annotations_path}\nhierarchy:   {sg.hierarchy_path}\nvideos:      {sg.video_root}")
        return 0
    from ..data.synthetic.medhorizon import build_synthetic

    bench = build_synthetic(args.out, seed=args.seed, force=args.force, progress=not args.quiet)
    print(f"data:   {bench.data_path}")
    print(f"videos: {bench.video_root}")
    return 0


def _load_items(benchmark: str, data: str | None):
    if benchmark != "medhorizon":
        raise MedHorizonError(f"unknown benchmark {benchmark!r} (available: medhorizon)")
    from ..benchmarks.medhorizon.release import load_release

    return load_release(data)


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
        raise MedHorizonError("--data is required for --benchmark sureon (the items JSONL)")
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
    if args.records:
        write_jsonl(args.records, records)
    print(report_json(rep) if args.json else sureon.format_report(rep))
    return 0


def _cmd_blind_audit(args) -> int:
    from ..benchmarks.medhorizon import scoring as mh
    from ..core.stats import blind_consistency

    if args.benchmark == "sureon":
        from ..benchmarks.sureon import items as sureon_items
        from ..benchmarks.sureon import scoring as sureon

        items = sureon_items.load_items(args.data)
        score = sureon.score_predictions
        group = {it.uid: it.category for it in items}
    else:
        items = _load_items("medhorizon", args.data)
        score = mh.score_predictions
        group = {it.uid: it.task for it in items}
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


def _cmd_score_surghi(args) -> int:
    from ..benchmarks.surghi import frames, scoring

    source = args.annotations or args.data  # --data, as in `leaderboard`, names the same file
    if not source:
        raise MedHorizonError("score --benchmark surghi needs --annotations (rows dataset, video, frame, phase, "
                              "step; the synthetic sample's: `medhorizon-tasks synthetic --benchmark surghi`)")
    annotations = frames.read_frame_rows(source, role="annotations")
    given = frames.load_hierarchy_file(args.hierarchy) if args.hierarchy else None
    hierarchies = frames.resolve_hierarchies(annotations, given)
    predictions = scoring.read_predictions(args.predictions, hierarchies)
    rep = scoring.evaluate(annotations, predictions, hierarchies).report()
    print(report_json(rep) if args.json else scoring.format_report(rep))
    for ds, r in rep["datasets"].items():
        if r.get("n_missing") or r.get("n_extra") or r.get("n_errors"):
            print(f"warning: {ds}: {r['n_missing']} annotated frame(s) without a prediction (scored wrong), "
                  f"{r.get('n_errors', 0)} frame(s) whose video could not be read (scored wrong), "
                  f"{r['n_extra']} prediction(s) for frames not in the annotations (ignored)", file=sys.stderr)
    for name, u in rep.get("unknown_datasets", {}).items():
        hint = f" (did you mean {u['did_you_mean']!r}?)" if u["did_you_mean"] else ""
        print(f"warning: {u['n_extra']} prediction(s) for dataset {name!r}, which is not in the annotations: "
              f"ignored{hint}", file=sys.stderr)
    return 0


def _cmd_score(args) -> int:
    from ..benchmarks.medhorizon import scoring
    from ..core.jsonl import write_jsonl

    if args.benchmark == "sureon":
        return _cmd_score_sureon(args)
    if args.benchmark == "surghi":
        return _cmd_score_surghi(args)
    items = _load_items(args.benchmark, args.data)
    predictions = scoring.read_predictions(args.predictions, [it.uid for it in items])
    records = scoring.score_predictions(items, predictions, mode=args.mode)
    rep = scoring.report(records)
    if args.records:
        write_jsonl(args.records, records)
    if args.json:
        print(report_json(rep))
        return 0
    label, inp = _run_label(args.predictions, records)
    print(scoring.format_table([(args.label or label, args.input or inp, rep)]))
    for line in listing("video errors (scored wrong)", [with_item(e["uid"], e["error"]) for e in rep["video_errors"]]):
        print(line)
    missing = [r["uid"] for r in records if r["status"] == "missing"]
    for line in listing("no prediction (scored wrong)", [f"item {u}" for u in missing]):
        print(line)
    return 0


def _run_label(predictions: str, records: list[dict]) -> tuple[str, str]:
    """(model, input) of a MedHorizon predictions file: from lmms-eval's results file beside a samples
    file, else the file name and the records' mode."""
    from ..benchmarks.medhorizon.protocol import FrameSetting
    from ..core.log_samples import model_label, run_description

    run = run_description(predictions)
    if run is not None:
        try:
            return model_label(run), FrameSetting.from_kwargs(run["kwargs"]).describe()
        except (TypeError, ValueError):
            return model_label(run), "?"
    modes = {r["mode"] for r in records if r["status"] != "missing"}
    mode = modes.pop() if len(modes) == 1 else None
    return Path(predictions).stem, {"text": "text only", "oracle": "GT evidence"}.get(mode, mode or "?")


def _cmd_diagnose(args) -> int:
    from .diagnose import format_rows, run_diagnostic

    rows = run_diagnostic(args.kind, args.model, model_args=args.model_args or "", synthetic=args.synthetic,
                          data=args.data, out=args.out, limit=args.limit, num_processes=args.num_processes,
                          echo=args.verbose)
    print(format_rows(rows))
    print(f"\nwrote {Path(args.out) / (args.kind + '.csv')}, .json and .png")
    return 0


def _cmd_stats(args) -> int:
    from ..benchmarks.medhorizon.sparsity import format_sparsity, sparsity_report

    rep = sparsity_report(_load_items("medhorizon", args.data))
    print(report_json(rep) if args.json else format_sparsity(rep))
    return 0


def _cmd_plot(args) -> int:
    from .. import plots

    labels = None
    if args.labels:
        labels = [x.strip() for x in args.labels.split(",")]
        if len(labels) != len(args.results) or len(set(labels)) != len(labels) or not all(labels):
            raise MedHorizonError(f"--labels must give one distinct, non-empty name per results file "
                                  f"({len(args.results)} file(s), {len(labels)} label(s))")
    for p in plots.plot_files(args.results, args.out, labels=labels):
        print(p)
    return 0


def _cmd_prepare(args) -> int:
    from ..benchmarks.medhorizon.release import DATA_ENV, load_release
    from ..core.video.frame_cache import FrameCache
    from ..core.paths import default_video_root
    from .prepare_frames import parse_plans, parse_shard, prepare_frames

    settings = parse_plans(args.plans)
    shard = parse_shard(args.shard)
    if args.synthetic:
        from ..data.synthetic.medhorizon import build_synthetic

        bench = build_synthetic(progress=True)
        items, root = load_release(bench.data_path), bench.video_root
    else:
        data = args.data or os.environ.get(DATA_ENV)
        items = load_release(data)
        root = Path(args.video_root) if args.video_root else default_video_root(data)
    summary = prepare_frames(items, settings, root, cache=FrameCache(args.cache), workers=args.workers,
                             shard=shard, progress=not args.quiet)
    for uid, err in sorted(summary["errors"].items()):
        print(f"error: {with_item(uid, err)}", file=sys.stderr)
    c = summary["cache"]
    print(f"shard {summary['shard']}: {plural(summary['videos'], 'video')}, {plural(summary['plans'], 'plan')}, "
          f"{plural(len(summary['errors']), 'item')} with errors (video, or the cache could not be written); "
          f"cache {c['root']}: {plural(c['entries'], 'entry')}, {c['bytes'] / 1e9:.2f} GB")
    return 1 if summary["errors"] else 0


def _cmd_cache(args) -> int:
    from ..core.video.frame_cache import FrameCache

    cache = FrameCache(args.cache)
    if args.action == "clear":
        print(f"removed {plural(cache.clear(), 'entry')} from {cache.root}")
    else:
        info = cache.info()
        print(json.dumps(info, default=str) if args.json else
              f"{info['root']}: {plural(info['entries'], 'entry')}, {info['bytes'] / 1e9:.3f} GB")
    return 0


def _cmd_compare(args) -> int:
    from ..benchmarks.medhorizon import scoring
    from ..core.stats import format_pairwise, pairwise_mcnemar

    if args.benchmark == "sureon":
        from ..benchmarks.sureon import items as sureon_items
        from ..benchmarks.sureon import scoring as sureon

        items = sureon_items.load_items(args.data)
        score = sureon.score_predictions
    else:
        items = _load_items(args.benchmark, args.data)
        score = scoring.score_predictions
    uids = [it.uid for it in items]
    labels = args.labels.split(",") if args.labels else [Path(r).stem for r in args.runs]
    if len(labels) != len(args.runs) or len(set(labels)) != len(labels):
        raise MedHorizonError("--labels must give one distinct name per run")
    runs = {}
    for label, path in zip(labels, args.runs):
        records = score(items, scoring.read_predictions(path, uids))
        # Sureon's SM items are judged separately and stay out of the paired tests, as out of mu.
        runs[label] = {r["uid"]: bool(r["correct"]) for r in records if r.get("kind") != "sm"}
    result = pairwise_mcnemar(runs, alpha=args.alpha)
    print(report_json(result) if args.json else format_pairwise(result))
    return 0


def _cmd_check(args) -> int:
    from ..runs.preflight import preflight

    report = preflight(args.benchmark, args.data, args.video_root, videos=not args.no_videos,
                       progress=not args.quiet and not args.json, workers=args.workers)
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        print(report.message())
    if report.fatal:
        return EXIT_USAGE
    return 0 if report.ok else 1


def _cmd_run(args) -> int:
    from ..adapters.lmms_eval.runner import run_cli

    return run_cli(args.lmms_eval_args)


def _cmd_vlmeval(args) -> int:
    from ..adapters.vlmeval.launch import run_cli

    return run_cli(args.vlmeval_args)


def _cmd_demo(args) -> int:
    from .demo import run_demo

    return run_demo(out_dir=args.out, limit=args.limit)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="medhorizon-tasks", description=DESCRIPTION)
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("score", help="score a predictions file against a benchmark")
    s.add_argument("--benchmark", required=True, choices=["medhorizon", "sureon", "surghi"])
    s.add_argument("--data", help="medhorizon: release JSONL or local dataset folder (default: $MEDHORIZON_DATA); "
                   "sureon: the items JSONL")
    s.add_argument("--annotations", help="surghi: per-frame ground truth, JSONL or CSV rows dataset, video, frame, "
                   "phase, step (--data is accepted too)")
    s.add_argument("--hierarchy", help='surghi: hierarchy JSON {"phases": {phase: [steps]}, "semantic_groups": '
                   '{group: [steps]}} for datasets the package does not know, or {dataset: {...}} '
                   "(default: shipped MultiBypass140/GraSP/MIPO, else derived from the annotations)")
    s.add_argument("--blind", help="sureon: predictions of the same model without video, for the multimodal gain")
    s.add_argument("--judge", action="store_true", help="sureon: judge SM summaries with the LLM judge "
                   "($MEDHORIZON_JUDGE_BASE_URL, $MEDHORIZON_JUDGE_MODEL, $MEDHORIZON_JUDGE_API_KEY)")
    s.add_argument("--judge-model", help="judge model (default: $MEDHORIZON_JUDGE_MODEL)")
    s.add_argument("--judge-cache", help="JSONL file caching the judge's verdicts")
    s.add_argument("--predictions", required=True,
                   help='JSONL of {"uid", "prediction"|"pred"|"answer"} or an lmms-eval --log_samples file; '
                   "surghi: JSONL/CSV rows dataset, video, frame, phase, step, or lmms-eval samples")
    s.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    s.add_argument("--records", help="also write the per-item records (JSONL) here")
    s.add_argument("--mode", help="mode recorded in the per-item records (default: from the file)")
    s.add_argument("--label", help="row label in the table (default: the file name)")
    s.add_argument("--input", help='"Input" column of the table, e.g. "1 FPS" or "64"')
    s.set_defaults(func=_cmd_score)

    c = sub.add_parser("compare", help="paired McNemar tests, Holm-corrected, between every pair of runs")
    c.add_argument("runs", nargs="+", help="predictions files (authors' format or lmms-eval samples), 2 or more")
    c.add_argument("--benchmark", default="medhorizon", choices=["medhorizon", "sureon"])
    c.add_argument("--data", help="release JSONL or local dataset folder (default: $MEDHORIZON_DATA)")
    c.add_argument("--labels", help="comma-separated run names (default: file names)")
    c.add_argument("--alpha", type=float, default=0.05)
    c.add_argument("--json", action="store_true")
    c.set_defaults(func=_cmd_compare)

    ba = sub.add_parser("blind-audit", help="per-item consistency S of a blind guesser over several runs")
    ba.add_argument("runs", nargs="+", help="predictions files of R blind runs (non-zero temperature)")
    ba.add_argument("--benchmark", default="sureon", choices=["sureon", "medhorizon"])
    ba.add_argument("--data", help="items JSONL (sureon) or release (medhorizon; default $MEDHORIZON_DATA)")
    ba.add_argument("--tau", type=float, default=0.6, help="flag items recovered in at least this share of runs "
                    "(default 3/5, as the paper)")
    ba.add_argument("--json", action="store_true")
    ba.set_defaults(func=_cmd_blind_audit)

    d = sub.add_parser("demo", help="build the synthetic benchmark and run lmms-eval with the probe models")
    d.add_argument("--out", default="medhorizon_demo", help="output folder (default: ./medhorizon_demo)")
    d.add_argument("--limit", type=int, default=None, help="lmms-eval --limit (items per task), for a quick look")
    d.set_defaults(func=_cmd_demo)

    def add_run_args(x):
        x.add_argument("--model", required=True, help="lmms-eval model name (e.g. qwen2_5_vl, medhorizon_needle)")
        x.add_argument("--model_args", default="", help="lmms-eval --model_args for that model")
        where = x.add_mutually_exclusive_group()
        where.add_argument("--synthetic", action="store_true", help="run on the embedded synthetic benchmark")
        where.add_argument("--data", help="release JSONL or dataset folder (default: $MEDHORIZON_DATA)")
        x.add_argument("--out", default="medhorizon_diagnostics", help="output folder; rerun with the same one to resume")
        x.add_argument("--limit", type=int, default=None, help="lmms-eval --limit (items per task)")
        x.add_argument("--num_processes", type=int, default=1, help="processes (accelerate launch)")
        x.add_argument("--verbose", action="store_true", help="echo lmms-eval's output")

    g = sub.add_parser("diagnose", help="run one of the paper's diagnostics for a model (resumable)")
    g.add_argument("kind", choices=["budgets", "evidence", "order", "sampling"],
                   help="budgets: 4..512 uniform frames (RQ1); evidence: random/text/uniform/oracle (RQ2); "
                        "order: original/reverse/block/local shuffle at 256 frames (RQ3); sampling: uniform/"
                        "frame-change/hybrid at 32 and 64 frames (RQ4)")
    add_run_args(g)
    g.set_defaults(func=_cmd_diagnose)

    w = sub.add_parser("sweep", help="frame-budget sweep 4..512 (= diagnose budgets); resumes where it stopped")
    add_run_args(w)
    w.set_defaults(func=_cmd_diagnose, kind="budgets")

    st = sub.add_parser("stats", help="evidence-sparsity statistics of a release (paper appendix 6.4)")
    st.add_argument("--data", help="release JSONL or dataset folder (default: $MEDHORIZON_DATA)")
    st.add_argument("--json", action="store_true")
    st.set_defaults(func=_cmd_stats)

    pl = sub.add_parser("plot", help="plots (PNG, with 95%% CIs) from any results file the package writes",
                        description="Draw every figure the files allow: per-task bars of MedHorizon score reports "
                        "(per_task.png), of lmms-eval results JSON (per_task_lmms_eval.png, and frame_scaling.png "
                        "from medhorizon[_synthetic]_frames<N> tasks), Sureon and SurgHiBench score reports "
                        "(per_category_sureon.png, metrics_surghi.png), and the figure of each diagnostics JSON "
                        "(budgets.json, evidence.json, order.json, sampling.json -> <name>.png).")
    pl.add_argument("results", nargs="+", help="results files: lmms-eval <stamp>_results.json, `score --json` "
                    "output (MedHorizon, Sureon, SurgHiBench), diagnostics <kind>.json; one series each")
    pl.add_argument("--out", default="medhorizon_plots", help="output folder")
    pl.add_argument("--labels", help="comma-separated series names, one per file (default: the model named in "
                    "the file, else the file name)")
    pl.set_defaults(func=_cmd_plot)

    pf = sub.add_parser("prepare-frames", help="decode frame plans into the frame cache ahead of a run")
    src = pf.add_mutually_exclusive_group()
    src.add_argument("--synthetic", action="store_true", help="the embedded synthetic benchmark")
    src.add_argument("--data", help="release JSONL or dataset folder (default: $MEDHORIZON_DATA)")
    pf.add_argument("--video-root", help="default: $MEDHORIZON_VIDEO_ROOT, else the data's folder")
    pf.add_argument("--plans", default="cap64", help="comma list of capN, framesN, frame_changeN, hybridN, oracle "
                    "(default cap64)")
    pf.add_argument("--workers", type=int, default=1, help="videos decoded at once")
    pf.add_argument("--shard", help="i/n: this machine's share of the videos (default: accelerate's process "
                    "index, else 0/1)")
    pf.add_argument("--cache", help="cache folder (default: $MEDHORIZON_FRAME_CACHE or ~/.cache/medhorizon_tasks/frames)")
    pf.add_argument("--quiet", action="store_true")
    pf.set_defaults(func=_cmd_prepare)

    ca = sub.add_parser("cache", help="frame cache size report, or clear it")
    ca.add_argument("action", choices=["info", "clear"])
    ca.add_argument("--cache", help="cache folder (default: $MEDHORIZON_FRAME_CACHE or ~/.cache/medhorizon_tasks/frames)")
    ca.add_argument("--json", action="store_true")
    ca.set_defaults(func=_cmd_cache)

    y = sub.add_parser("synthetic", help="(re)generate the embedded synthetic benchmark")
    y.add_argument("--out", default=None, help="folder (default: $MEDHORIZON_SYNTHETIC_DIR or the user cache)")
    y.add_argument("--benchmark", default="medhorizon", choices=["medhorizon", "sureon", "surghi"],
                   help="which synthetic sample (default: the MedHorizon benchmark)")
    y.add_argument("--seed", type=int, default=0)
    y.add_argument("--force", action="store_true", help="regenerate even if cached")
    y.add_argument("--quiet", action="store_true")
    y.set_defaults(func=_cmd_synthetic)

    ck = sub.add_parser("check", help="pre-flight a benchmark's data and videos (what every run checks before "
                        "loading a model)", description="Check that a benchmark's data load and validate, that the "
                        "video root exists and that every referenced video is present, readable and matches the "
                        "data (duration, times). Exit 0 when everything is usable, 1 when some videos are not, 2 "
                        "when the data or the video root are unusable.")
    ck.add_argument("--benchmark", default="medhorizon", choices=["medhorizon", "sureon", "surghi"])
    ck.add_argument("--data", help="the data file or folder (default: $MEDHORIZON_DATA, $SUREON_DATA or $SURGHI_DATA)")
    ck.add_argument("--video-root", help="folder the data's video_path values are relative to (default: "
                    "$MEDHORIZON_VIDEO_ROOT / $SUREON_VIDEO_ROOT / $SURGHI_VIDEO_ROOT, else the data's folder)")
    ck.add_argument("--no-videos", action="store_true", help="check the data only")
    ck.add_argument("--workers", type=int, default=4, help="videos indexed at once (default 4)")
    ck.add_argument("--json", action="store_true")
    ck.add_argument("--quiet", action="store_true", help="no progress bar")
    ck.set_defaults(func=_cmd_check)

    rn = sub.add_parser("run", add_help=False, help="run the real lmms-eval CLI with your arguments, then exit "
                        "non-zero with the reason when the evaluation failed (see `medhorizon-tasks run --help`)")
    rn.add_argument("lmms_eval_args", nargs=argparse.REMAINDER)
    rn.set_defaults(func=_cmd_run)

    vl = sub.add_parser("vlmeval", add_help=False, help="run VLMEvalKit's own run.py with this package's datasets "
                        "and probe models, then exit non-zero with the reason when the evaluation failed (see "
                        "`medhorizon-tasks vlmeval --help`)")
    vl.add_argument("vlmeval_args", nargs=argparse.REMAINDER)
    vl.set_defaults(func=_cmd_vlmeval)

    t = sub.add_parser("task-path", help="print the folder to pass to lmms-eval as --include_path")
    t.set_defaults(func=_cmd_task_path)

    from .leaderboard import add_parser as add_leaderboard_parser

    add_leaderboard_parser(sub)

    from .data import add_parsers as add_data_parsers

    add_data_parsers(sub)

    from .protocol import add_parser as add_protocol_parser

    add_protocol_parser(sub)
    return p


EXIT_SIGPIPE = 128 + 13  # what a shell reports for a process ended by SIGPIPE


def _stdout_gone() -> int:
    """The reader of stdout went away (``| head``): stop quietly, as a process killed by SIGPIPE would."""
    # Point stdout at /dev/null: the interpreter flushes it once more at exit and would fail again, loudly.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real stdout (e.g. captured by a test): nothing left to flush
        pass
    return EXIT_SIGPIPE


def _fail(command: str, message: str, status: int) -> int:
    try:
        print(f"medhorizon-tasks {command}: error: {message}", file=sys.stderr)
    except BrokenPipeError:  # stderr is a closed pipe too: the status is all that is left to say it
        pass
    return status


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["run"]:  # everything after `run` belongs to lmms-eval, options included
        args = argparse.Namespace(command="run", func=_cmd_run, lmms_eval_args=argv[1:])
    elif argv[:1] == ["vlmeval"]:  # everything after `vlmeval` belongs to VLMEvalKit, options included
        args = argparse.Namespace(command="vlmeval", func=_cmd_vlmeval, vlmeval_args=argv[1:])
    else:
        args = build_parser().parse_args(argv)
    try:
        status = args.func(args)
        sys.stdout.flush()  # a closed pipe must show up here, not in the interpreter's final flush
        return status
    except BrokenPipeError:
        return _stdout_gone()
    except MedHorizonError as exc:
        return _fail(args.command, str(exc), EXIT_USAGE)
    except OSError as exc:  # the environment (disk full, permissions) in code that does not use safeio
        where = f": {exc.filename}" if getattr(exc, "filename", None) else ""
        return _fail(args.command, f"{exc.strerror or exc}{where}", EXIT_USAGE)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
