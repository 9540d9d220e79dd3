"""The main job: the MedHorizon protocol end to end on the embedded synthetic benchmark.

Builds the synthetic benchmark, runs the real lmms-eval CLI with the probe
models (needle: visual cap 64, text, oracle; random: text), scores the
samples files with the same scorer as ``medhorizon-tasks score``, checks that
it agrees with lmms-eval's own numbers, and prints a Table 2-style report and
the random / text / uniform / oracle comparison. The same runs label the
SurgHiBench synthetic sample (tree and DAG hierarchies), scored the same way,
and every run becomes a leaderboard submission: the demo builds the
leaderboard (Markdown, CSV, HTML; the terminal gets it as plain text) and
ends by drawing its figures from its own reports, as ``medhorizon-tasks plot
report.json report_surghi.json`` does (:func:`draw_figures`).
"""

from __future__ import annotations

import time
from pathlib import Path

from ...adapters.lmms_eval.runner import run_lmms_eval
from ...benchmarks.medhorizon import scoring
from ...benchmarks.medhorizon.release import load_release
from ...benchmarks.medhorizon.taxonomy import FAMILIES
from ...core.errors import MedHorizonError
from ...core.jsonl import write_jsonl
from ...core.text import pct, report_json
from ...data.synthetic.medhorizon import build_synthetic
from ...leaderboard.build import DEFAULT_N_RESAMPLES

LONG_VIDEO_S = 3600.0

# (row label, model, task, mode, Input column)
ROWS = (
    ("Random (seeded guess)", "medhorizon_random", "medhorizon_synthetic_text", "random", "–"),
    ("Needle probe, text only", "medhorizon_needle", "medhorizon_synthetic_text", "text", "–"),
    ("Needle probe, uniform", "medhorizon_needle", "medhorizon_synthetic", "visual", "1 FPS, cap 64"),
    ("Needle probe, oracle", "medhorizon_needle", "medhorizon_synthetic_oracle", "oracle", "GT evidence"),
)


SURGHI_TASK = "surghi_synthetic"
SURGHI_ROWS = (("Needle probe", "medhorizon_needle"), ("Random (seeded guess)", "medhorizon_random"))


def require_lmms_eval() -> None:
    """The demo runs the real lmms-eval CLI: say which extra brings it before doing any work."""
    import importlib.util

    if importlib.util.find_spec("lmms_eval") is None:
        raise MedHorizonError("the demo runs the real lmms-eval CLI, which is not installed here: install the "
                              "package with its lmms extra, pip install 'medhorizon-tasks[lmms]' (from a checkout: "
                              "pip install -e '.[lmms]')")


def run_demo(out_dir: str | Path = "medhorizon_demo", limit: int | None = None) -> int:
    require_lmms_eval()
    t0 = time.time()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    print("[1/5] synthetic benchmark", flush=True)
    bench = build_synthetic(progress=True)
    items = load_release(bench.data_path)
    by_uid = {it.uid: it for it in items}
    print(f"      {len(items)} questions over {len({it.video_key for it in items})} videos in {bench.root}")

    print("[2/5] lmms-eval (real CLI) with the probe models", flush=True)
    runs = {}
    for model in dict.fromkeys(r[1] for r in ROWS):
        tasks = list(dict.fromkeys(r[2] for r in ROWS if r[1] == model)) + [SURGHI_TASK]
        t = time.time()
        runs[model] = run_lmms_eval(model, tasks, out / "lmms_eval", limit=limit)
        print(f"      {model}: {', '.join(tasks)} ({time.time() - t:.0f} s; log {runs[model].log})", flush=True)

    print("[3/5] scoring the samples files", flush=True)
    reports = {}
    table_rows = []
    for label, model, task, mode, inp in ROWS:
        run = runs[model]
        preds = scoring.read_predictions(run.samples[task], by_uid)
        scored_items = items if limit is None else [it for it in items if it.uid in preds]
        records = scoring.score_predictions(scored_items, preds, mode=mode)
        rep = scoring.report(records)
        ours, theirs = rep["overall"]["accuracy"], run.accuracy(task)
        if abs(ours - theirs) > 1e-9:
            raise MedHorizonError(f"scorer disagreement on {task}: score says {ours}, lmms-eval says {theirs}")
        reports[label] = {"model": model, "task": task, "mode": mode, "report": rep,
                          "long_videos": scoring.report([r for r in records
                                                         if by_uid[r["uid"]].duration_s >= LONG_VIDEO_S])["overall"]}
        write_jsonl(out / f"records_{model}_{task}.jsonl", records)
        table_rows.append((label, inp, rep))
    write_report(out / "report.json", reports)

    print()
    print("MedHorizon protocol on the synthetic benchmark (accuracy %, Table 2 layout)")
    print(scoring.format_table(table_rows))
    print()
    print("\n".join(legend_lines(reports)))
    print()
    print("Evidence settings (accuracy %): random / text / uniform / oracle")
    head = f"{'setting':<26} {'overall':>8} " + " ".join(f"{f.replace('_', '-'):>19}" for f in FAMILIES) \
        + f" {'videos >= 1 h':>14}"
    print(head)
    print("-" * len(head))
    for label, info in reports.items():
        rep = info["report"]
        fam = " ".join(f"{pct(rep['by_family'].get(f, {}).get('accuracy'), width=5):>19}" for f in FAMILIES)
        print(f"{label:<26} {pct(rep['overall']['accuracy'], width=5):>8} {fam} {pct(info['long_videos']['accuracy'], width=5):>14}")
    print()
    print("The probes test the pipeline, not medicine: the needle probe reads a code drawn into each")
    print("question's evidence frames, so 'uniform' measures how often 64 frames over the whole video")
    print("hit the evidence, and 'oracle' must be ~100%.")
    surghi_reports = _surghi_section(runs, limit)
    write_report(out / "report_surghi.json", surghi_reports)
    print()
    print("[4/5] leaderboard from the runs' submissions", flush=True)
    board = _leaderboard_section(runs, bench.data_path, out, limit)
    print()
    print("[5/5] figures from the reports (`medhorizon-tasks plot report.json report_surghi.json`)", flush=True)
    for path in draw_figures(out):
        print(f"      {path}")
    print(f"Outputs: {out.resolve()} (report.json, report_surghi.json, per-item records, lmms-eval results and "
          f"samples, submissions/, leaderboard/, plots/)")
    print(f"Leaderboard page: {board}")
    print(f"Done in {time.time() - t0:.0f} s.")
    return 0


#: What the demo's leaderboard shows, printed under it.
LEADERBOARD_LEGEND = (
    "What the leaderboard's numbers are:",
    f"  [95% CI]: a percentile bootstrap over the items ({DEFAULT_N_RESAMPLES:,} resamples, as `leaderboard build` "
    "and `leaderboard serve` make it), not the Wilson interval of the report "
    "above; at 0% or 100% it is one point, and the Wilson interval is set beside it.",
    "  Sig. vs leader: McNemar's test of each entry against the leader on the same items, Holm-corrected; "
    "Invalid/missing: the report's invalid answers and items without one, all scored wrong.",
    "  SurgHiBench: multi-level = sqrt(phase acc x step acc) per dataset, Overall their mean; interval and test "
    "over videos. Its invalid labels are frames the needle probe declined (no code on the frames it was shown).",
)


def legend_lines(reports: dict) -> list[str]:
    """What each number of the MedHorizon report above is, in a short line each (with this run's values)."""
    def overall(label: str) -> dict:
        return next((info["report"]["overall"] for lab, info in reports.items() if lab == label), {})

    uniform, text, oracle = (overall(label) for label in (ROWS[2][0], ROWS[1][0], ROWS[3][0]))
    ci = uniform.get("ci95") or [0.0, 0.0]
    other = uniform.get("accuracy_authors")
    return [
        "What these numbers are:",
        "  Ov. and the task columns: accuracy %, every question counted; no usable answer counts as wrong.",
        f"  95% CI: the Wilson score interval of Ov. (a formula over the n items: {pct(ci[0])}-{pct(ci[1])} at cap "
        "64); the leaderboard below gives a percentile bootstrap interval (items resampled), a little different.",
        f"  invalid: answers from which no option could be read, counted wrong. The needle probe declines when "
        f"none of its frames shows the question's evidence (64 frames over an hour-long video often miss a 3-8 s "
        f"window): {uniform.get('invalid', 0)} at cap 64, {text.get('invalid', 0)} text-only (no frames), "
        f"{oracle.get('invalid', 0)} on the evidence frames.",
        "  default rule: the answer reading that scores here (Ov. and every column above, `score`, the "
        "leaderboard): the last explicit answer, also as option text, JSON or \\boxed{}.",
        "  authors' rule: shown beside it, the MedHorizon authors' public scorer (the first standalone A-D, else the "
        "first character), which the paper's Table 2 was scored with (`score --extraction authors` scores with "
        "it); it misreads free-form replies" + (f" ({pct(other)}% at cap 64)." if other is not None else "."),
    ]


def write_report(path: Path, reports: dict) -> Path:
    """One of the demo's reports: ``{row label: ...}``, a file ``medhorizon-tasks plot`` reads."""
    from ...core.safeio import atomic_write_text

    atomic_write_text(path, report_json(reports))
    return path


def draw_figures(out: Path) -> list[Path]:
    """The demo's figures from its own reports (evidence settings random / text / uniform / oracle with their
    intervals, the per-task bars, the SurgHiBench metrics) into ``out/plots``: what ``plot`` draws."""
    from ...plots import plot_files

    return plot_files([out / "report.json", out / "report_surghi.json"], out / "plots")


def _surghi_section(runs: dict, limit: int | None) -> dict:
    """Score the SurgHiBench runs like `score --benchmark surghi`; check lmms-eval agrees."""
    from ...benchmarks.surghi import frames as sg_frames
    from ...benchmarks.surghi import scoring as sg
    from ...data.synthetic.surghi import build_surghi_sample

    sample = build_surghi_sample()
    annotations = sg_frames.read_frame_rows(sample.annotations_path, role="annotations")
    hierarchies = sg_frames.resolve_hierarchies(annotations, sg_frames.load_hierarchy_file(sample.hierarchy_path))
    reports = {}
    for label, model in SURGHI_ROWS:
        run = runs[model]
        preds = sg.read_predictions(run.samples[SURGHI_TASK], hierarchies)
        scored = annotations if limit is None else [r for r in annotations if r.key in preds]
        rep = sg.evaluate(scored, preds, hierarchies).report()
        for key in ("multi_level", "phase_acc", "step_acc", "sibling"):
            ours, theirs = rep["overall"][key], run.metric(SURGHI_TASK, key)
            if abs(ours - theirs) > 1e-9:
                raise MedHorizonError(f"scorer disagreement on {SURGHI_TASK} {key}: score says {ours}, "
                                      f"lmms-eval says {theirs}")
        reports[label] = rep
        print()
        print(f"SurgHiBench synthetic sample, {label} (%, per video then averaged; Overall = mean of datasets)")
        print(sg.format_report(rep))
    return reports


def _leaderboard_section(runs: dict, medhorizon_data: Path, out: Path, limit: int | None) -> Path:
    from ...data.synthetic.surghi import build_surghi_sample
    from ...leaderboard import build_leaderboard, load_benchmark_data, make_submission, write_leaderboard
    from ...leaderboard.submission import write_submission
    from ...leaderboard.tables import format_text

    sample = build_surghi_sample()
    data = {"medhorizon": load_benchmark_data("medhorizon", medhorizon_data),
            "surghi": load_benchmark_data("surghi", sample.annotations_path, hierarchy=sample.hierarchy_path)}
    entries = [("medhorizon", "medhorizon_needle", "medhorizon_synthetic", "Needle probe (cap 64)",
                {"fps": 1, "cap": 64}),
               ("medhorizon", "medhorizon_needle", "medhorizon_synthetic_oracle", "Needle probe (oracle frames)", {}),
               ("medhorizon", "medhorizon_needle", "medhorizon_synthetic_text", "Needle probe (text only)",
                {"frames": 0}),
               ("medhorizon", "medhorizon_random", "medhorizon_synthetic_text", "Random guess", {"frames": 0}),
               ("surghi", "medhorizon_needle", SURGHI_TASK, "Needle probe", {"fps": 1}),
               ("surghi", "medhorizon_random", SURGHI_TASK, "Random guess", {"frames": 0})]
    paths = []
    for bench, model, task, name, protocol in entries:
        sub = make_submission(data[bench], runs[model].samples[task], model=name, size="n/a (probe)",
                              date=time.strftime("%Y-%m-%d"), notes="pipeline probe on the synthetic benchmark",
                              missing_as_wrong=limit is not None,
                              **protocol)
        slug = f"{bench}_{model}_{task}".replace("medhorizon_", "")
        paths.append(write_submission(sub, out / "submissions" / f"{slug}.json"))
    boards = build_leaderboard(paths, data, n_resamples=DEFAULT_N_RESAMPLES)
    files = write_leaderboard(boards, out / "leaderboard", title="medhorizon-tasks demo (pipeline probes)")
    print(format_text(boards, title="medhorizon-tasks demo (pipeline probes)"))
    print("\n".join(LEADERBOARD_LEGEND))
    return Path(files["html"]).resolve()
