"""The figures: what is drawn (bars, heights, whiskers, legend, colours), from every results file the package
writes, read back from the matplotlib Figure before it is saved; valid PNGs; the results readers."""

import json
import random

import matplotlib.image as mpimg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from matplotlib.colors import to_hex
from matplotlib.container import BarContainer, ErrorbarContainer
from matplotlib.lines import Line2D

from medhorizon_tasks import plots
from medhorizon_tasks.benchmarks.medhorizon import scoring
from medhorizon_tasks.benchmarks.medhorizon.diagnostics import DIAGNOSTICS
from medhorizon_tasks.benchmarks.medhorizon.scoring import report
from medhorizon_tasks.benchmarks.medhorizon.taxonomy import TASK_CODES, task_type
from medhorizon_tasks.benchmarks.sureon import scoring as sureon_scoring
from medhorizon_tasks.benchmarks.surghi import frames as surghi_frames
from medhorizon_tasks.benchmarks.surghi import scoring as surghi_scoring
from medhorizon_tasks.commands.jobs import diagnose
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.core.errors import DataError
from medhorizon_tasks.core.stats import wilson_ci
from medhorizon_tasks.plots import (
    budget_curve,
    build_files,
    build_frame_scaling,
    build_per_task,
    load_accuracy_file,
    load_results,
    plot_evidence_settings,
    plot_frame_scaling,
    plot_order,
    plot_per_task,
    plot_sampling,
)
from test_leaderboard import HIERARCHY, surghi_rows, wrong_labels

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def acc(base: float, missing=()) -> dict:
    d = {c: min(1.0, base + 0.01 * k) for k, c in enumerate(TASK_CODES)}
    d.update(overall=base, fine_grained=base - 0.01, semantic_reasoning=base + 0.02)
    for m in missing:
        d[m] = None
    return d


def check_png(path):
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE and len(data) > 2000
    img = mpimg.imread(str(path))
    assert img.ndim == 3 and img.shape[2] in (3, 4)
    return img


# ------------------------------------------------------------------ reading a Figure back

def bars(ax) -> dict[str, list[tuple[float, float]]]:
    """{series: [(bar centre x, height %)]}."""
    return {c.get_label(): [(p.get_x() + p.get_width() / 2, p.get_height()) for p in c.patches]
            for c in ax.containers if isinstance(c, BarContainer)}


def whiskers(ax) -> dict[str, list[tuple[float, float, float]]]:
    """{series: [(x, lower end %, upper end %)]} of the 95% interval error bars."""
    out = {}
    for c in ax.containers:
        if isinstance(c, ErrorbarContainer) and c.get_label().startswith("_ci:"):
            (lines,) = c.lines[2]
            out[c.get_label()[4:]] = [(s[0][0], min(s[0][1], s[1][1]), max(s[0][1], s[1][1]))
                                      for s in lines.get_segments()]
    return out


def value_labels(ax):
    return [t for t in ax.texts if t.get_gid() == "value"]


def legend_texts(fig) -> list[str]:
    (legend,) = fig.legends
    title = legend.get_title().get_text()
    return [t.get_text() for t in legend.get_texts()] + ([title] if title else [])


def series_colours(ax) -> list[str]:
    return [to_hex(c.patches[0].get_facecolor()) for c in ax.containers if isinstance(c, BarContainer) and c.patches]


def assert_readable(fig):
    """The figure-level checks every chart passes: legend outside every axes' area, axis labels, one
    value label per bar at or above its whisker, distinct series colours."""
    renderer = fig.canvas.get_renderer()
    (legend,) = fig.legends
    box = legend.get_window_extent(renderer)
    for ax in fig.axes:
        assert box.intersection(box, ax.get_window_extent(renderer)) is None, "legend over the data area"
        assert ax.get_ylabel()
    assert fig.axes[-1].get_xlabel()
    for ax in fig.axes:
        b = bars(ax)
        if not b:
            continue
        colours = series_colours(ax)
        assert len(set(colours)) == len(colours), "two series share a colour"
        labels = value_labels(ax)
        assert len(labels) == sum(len(v) for v in b.values())
        tops = {round(x, 6): h for pts in b.values() for x, h in pts}
        for pts in whiskers(ax).values():
            tops.update({round(x, 6): hi for x, _, hi in pts})
        for t in labels:
            x, y = t.xy
            assert y == pytest.approx(tops[round(x, 6)]), "a value label is not at its bar's (whisker) top"
            assert t.get_window_extent(renderer).y1 <= ax.get_window_extent(renderer).y1 + 0.5, "label cut off"
            assert t.get_fontsize() >= 7


def at(points, x):
    (hit,) = [p for p in points if p[0] == pytest.approx(x)]
    return hit


# ------------------------------------------------------------------ input files, as the package writes them

def mh_records(p: float, n: int, seed: int, codes=TASK_CODES) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for k in range(n):
        code = codes[k % len(codes)]
        t = task_type(code)
        out.append({"uid": str(k), "task": code, "family": t.family, "hop": t.hop or 0, "source": "GraSP",
                    "correct": rng.random() < p, "status": "ok", "error": None})
    return out


def lmms_results(model: str, accs: dict[str, float], n: int = 88) -> dict:
    """A results file of lmms-eval 0.7.3 (`<output_path>/<model>/<stamp>_results.json`), key for key as it
    writes them; the SurgHiBench task of the demo's runs has its own metrics and no accuracy."""
    results = {t: {"alias": t, "accuracy,none": a, "accuracy_stderr,none": "N/A", "accuracy_stderr_clt,none": "N/A",
                   "accuracy_stderr_clustered,none": "N/A"} for t, a in accs.items()}
    results["surghi_synthetic"] = {"alias": "surghi_synthetic", "phase_acc,none": 0.5, "phase_acc_stderr,none": "N/A",
                                   "multi_level,none": 0.41, "multi_level_stderr,none": "N/A"}
    tasks = list(results)
    return {"results": results, "group_subtasks": {t: [] for t in tasks},
            "configs": {t: {"task": t, "metric_list": [{"metric": "accuracy"}]} for t in tasks},
            "versions": {t: 0.1 for t in tasks}, "n-shot": {t: 0 for t in tasks},
            "higher_is_better": {t: {"accuracy": True} for t in tasks},
            "n-samples": {**{t: {"original": n, "effective": n} for t in accs},
                          "surghi_synthetic": {"original": 16, "effective": 16}},
            "config": {"model": model, "model_args": "", "batch_size": "1", "limit": None, "bootstrap_iters": 100000},
            "git_hash": None, "lmms_eval_version": "0.7.3", "date": "20261201_131226", "model_source": model,
            "model_name": model, "model_name_sanitized": model, "total_evaluation_time_seconds": "12.5"}


def write(path, obj):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2), encoding="utf-8")
    return path


def sureon_report(p: float, seed: int) -> dict:
    rng = random.Random(seed)
    cats = ["AD", "EE", "EA", "PAD", "IAI", "LAR", "SPI", "F", "TO"]
    recs = [{"uid": f"q{k}", "category": cats[k % len(cats)], "correct": rng.random() < p, "status": "ok"}
            for k in range(54)]
    recs.append({"uid": "m0", "category": "SM", "correct": True, "status": "ok"})
    return sureon_scoring.report(recs, n_resamples=300)


def surghi_report(tmp_path, wrong_every: int) -> dict:
    (tmp_path / "hierarchy.json").write_text(json.dumps(HIERARCHY))
    rows_path = tmp_path / "annotations.jsonl"
    rows_path.write_text("".join(json.dumps(r) + "\n" for r in surghi_rows()))
    rows = surghi_frames.read_frame_rows(rows_path, role="annotations")
    hier = surghi_frames.resolve_hierarchies(rows, surghi_frames.load_hierarchy_file(tmp_path / "hierarchy.json"))
    preds = {r.key: surghi_scoring.Prediction(*(wrong_labels(r) if i % wrong_every == 0 else (r.phase, r.step)))
             for i, r in enumerate(rows)}
    return json.loads(surghi_scoring.dumps_report(surghi_scoring.evaluate(rows, preds, hier).report()))


def diagnostic_rows(kind: str, model: str = "qwen2_5_vl", n: int = 9) -> list[dict]:
    """Rows as `run_diagnostic` makes them (same fields, same scorer), n = 9 items per setting."""
    rows = []
    for j, v in enumerate(DIAGNOSTICS[kind]):
        rep = scoring.report(mh_records(0.3 + 0.06 * j, n=n, seed=j, codes=("PR", "SD", "IR", "WR", "CPR")))
        o, fam = rep["overall"], rep["by_family"]
        rows.append({
            "diagnostic": kind, "label": v.label, "group": v.group, "x": v.x, "task": v.task(True),
            "model": v.model or model, "accuracy": o["accuracy"], "correct": o["correct"], "n": o["n"],
            "invalid": o["invalid"], "missing": o["missing"], "errors": o["errors"], "ci95_lo": o["ci95"][0],
            "ci95_hi": o["ci95"][1], "fine_grained": fam.get("fine_grained", {}).get("accuracy"),
            "semantic_reasoning": fam.get("semantic_reasoning", {}).get("accuracy"),
            "order_seed": v.kwargs.get("order_seed", ""), "frames": v.kwargs.get("frames", ""),
            "strategy": v.kwargs.get("strategy", ""), "report": rep})
    return rows


def pct_ci(lo_hi):
    return pytest.approx(100 * lo_hi[0]), pytest.approx(100 * lo_hi[1])


# ------------------------------------------------------------------ lmms-eval results JSON

def test_lmms_eval_results_draw_a_bar_per_task_with_wilson_whiskers(tmp_path):
    needle = write(tmp_path / "demo" / "medhorizon_needle" / "20261201_131226_results.json",
                   lmms_results("medhorizon_needle", {"medhorizon_synthetic": 67 / 88,
                                                       "medhorizon_synthetic_text": 30 / 88,
                                                       "medhorizon_synthetic_oracle": 80 / 88}))
    rand = write(tmp_path / "demo" / "medhorizon_random" / "20261201_131300_results.json",
                 lmms_results("medhorizon_random", {"medhorizon_synthetic_text": 22 / 88}))
    res = load_results(needle)
    assert res.kind == "lmms_eval" and res.label == "medhorizon_needle" and res.skipped == ["surghi_synthetic"]

    figs = build_files([needle, rand])
    assert list(figs) == ["per_task_lmms_eval"]  # no frames<N> task: no frame-scaling curve
    fig = figs["per_task_lmms_eval"]
    (ax,) = fig.axes
    b = bars(ax)
    assert {k: len(v) for k, v in b.items()} == {"medhorizon_needle": 3, "medhorizon_random": 1}
    assert [t.get_text() for t in ax.get_xticklabels()] == ["medhorizon_synthetic", "medhorizon_synthetic_text",
                                                             "medhorizon_synthetic_oracle"]
    assert [h for _, h in b["medhorizon_needle"]] == pytest.approx([100 * 67 / 88, 100 * 30 / 88, 100 * 80 / 88])
    assert [h for _, h in b["medhorizon_random"]] == pytest.approx([25.0])
    w = whiskers(ax)
    for series, correct in (("medhorizon_needle", (67, 30, 80)), ("medhorizon_random", (22,))):
        assert len(w[series]) == len(correct)
        for (x, _), (wx, lo, hi), k in zip(b[series], w[series], correct):
            assert wx == pytest.approx(x) and (lo, hi) == pct_ci(wilson_ci(k, 88))
    legend = legend_texts(fig)
    assert "95% CI (Wilson score, n = lmms-eval's effective samples)" in legend
    assert any("chance (25%" in t for t in legend)
    assert any("Not drawn: surghi_synthetic" in t for t in legend)
    assert [t.get_text() for t in ax.texts if t.get_gid() == "chance"] == ["chance 25%"]
    assert sorted(t.get_text() for t in value_labels(ax)) == sorted(["76.1", "34.1", "90.9", "25.0"])
    assert_readable(fig)


def test_lmms_eval_sweep_draws_the_frame_scaling_curve_with_error_bars(tmp_path):
    accs = {f"medhorizon_synthetic_frames{n}": (20 + 7 * i) / 88 for i, n in enumerate((4, 8, 16, 32, 64, 128, 256, 512))}
    sweep = write(tmp_path / "sweep" / "qwen" / "20261201_140000_results.json", lmms_results("Qwen/Qwen2.5-VL-7B", accs))
    figs = build_files([sweep])
    assert list(figs) == ["per_task_lmms_eval", "frame_scaling"]
    fig = figs["frame_scaling"]
    (ax,) = fig.axes
    (line,) = [ln for ln in ax.get_lines() if ln.get_label() == "Qwen/Qwen2.5-VL-7B"]
    assert list(line.get_xdata()) == [4, 8, 16, 32, 64, 128, 256, 512]
    assert list(line.get_ydata()) == pytest.approx([100 * (20 + 7 * i) / 88 for i in range(8)])
    w = whiskers(ax)["Qwen/Qwen2.5-VL-7B"]
    assert [x for x, _, _ in w] == [4, 8, 16, 32, 64, 128, 256, 512]
    for i, (_, lo, hi) in enumerate(w):
        assert (lo, hi) == pct_ci(wilson_ci(20 + 7 * i, 88))
    assert "95% CI (Wilson score, n = lmms-eval's effective samples)" in legend_texts(fig)
    assert ax.get_xlabel().startswith("Frames per video") and ax.get_ylabel() == "Accuracy (%)"
    assert_readable(fig)
    bars_fig = figs["per_task_lmms_eval"]
    assert sum(len(v) for v in bars(bars_fig.axes[0]).values()) == 8
    assert_readable(bars_fig)


def test_lmms_eval_accuracy_that_is_not_k_of_n_gets_no_interval(tmp_path):
    """Sureon's mu leaves the SM items out, so it is not correct / effective samples: no Wilson on that n."""
    data = lmms_results("m", {"sureon_synthetic_visual": 0.4, "medhorizon_synthetic": 0.5}, n=89)
    data["n-samples"]["medhorizon_synthetic"] = {"original": 88, "effective": 88}
    res = load_results(write(tmp_path / "r.json", data))
    assert not res.values["sureon_synthetic_visual"].has_ci
    assert (res.values["medhorizon_synthetic"].lo, res.values["medhorizon_synthetic"].hi) == wilson_ci(44, 88)
    fig = build_files([tmp_path / "r.json"])["per_task_lmms_eval"]
    assert list(whiskers(fig.axes[0])["m"]) == [at(whiskers(fig.axes[0])["m"], 1.0)]
    assert not [c for c in fig.axes[0].get_lines() if c.get_label() == "_chance"], "Sureon: no 4-way chance"


# ------------------------------------------------------------------ score --json of the three benchmarks

def test_medhorizon_score_reports_draw_every_group_with_wilson_whiskers(tmp_path):
    reports = {"model_a": report(mh_records(0.45, 120, 1)), "model_b": report(mh_records(0.3, 120, 2))}
    paths = [write(tmp_path / f"{k}.json", r) for k, r in reports.items()]
    fig = build_files(paths)["per_task"]
    (ax,) = fig.axes
    groups = ["overall", "fine_grained", "semantic_reasoning", *TASK_CODES]
    assert [t.get_text().replace("\n", " ") for t in ax.get_xticklabels()] == [
        "Overall", "Fine-grained", "Semantic reasoning", *TASK_CODES]
    b, w = bars(ax), whiskers(ax)
    assert list(b) == ["model_a", "model_b"] and all(len(v) == len(groups) for v in b.values())
    for name, rep in reports.items():
        summaries = [rep["overall"], rep["by_family"]["fine_grained"], rep["by_family"]["semantic_reasoning"],
                     *[rep["by_task"][c] for c in TASK_CODES]]
        assert [h for _, h in b[name]] == pytest.approx([100 * s["accuracy"] for s in summaries])
        assert (w[name][0][1], w[name][0][2]) == pct_ci(rep["overall"]["ci95"])
        for (x, _), (wx, lo, hi), s in zip(b[name], w[name], summaries):
            assert wx == pytest.approx(x) and (lo, hi) == pct_ci(wilson_ci(s["correct"], s["n"]))
    assert "95% CI (Wilson score)" in legend_texts(fig)
    assert_readable(fig)


def test_sureon_score_reports_use_their_bootstrap_intervals(tmp_path):
    reports = {"sureon_a": sureon_report(0.55, 1), "sureon_b": sureon_report(0.3, 2)}
    paths = [write(tmp_path / f"{k}.json", r) for k, r in reports.items()]
    assert load_results(paths[0]).kind == "sureon"
    fig = build_files(paths)["per_category_sureon"]
    (ax,) = fig.axes
    cats = list(reports["sureon_a"]["by_category"])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["μ (MCQ + TO)", "Perception", "Reasoning (no SM)",
                                                            *cats, "SM"]
    b, w = bars(ax), whiskers(ax)
    for name, rep in reports.items():
        summaries = [rep["mu"], rep["perception"], rep["reasoning"], *[rep["by_category"][c] for c in cats]]
        assert len(b[name]) == len(summaries) + 1
        assert [h for _, h in b[name]] == pytest.approx([100 * s["accuracy"] for s in summaries] + [100.0])
        for (_, lo, hi), s in zip(w[name], summaries):
            assert (lo, hi) == pct_ci(s["ci95_bootstrap"])
        assert (w[name][-1][1], w[name][-1][2]) == pct_ci(wilson_ci(1, 1))  # SM: judged, correct / n only
    assert "95% CI (percentile bootstrap over items; Wilson score for SM)" in legend_texts(fig)
    assert not [ln for ln in ax.get_lines() if ln.get_label() == "_chance"]
    assert_readable(fig)


def test_surghi_score_reports_draw_a_panel_per_dataset_and_say_why_no_interval(tmp_path):
    reports = {"clip_a": surghi_report(tmp_path, 3), "clip_b": surghi_report(tmp_path, 2)}
    paths = [write(tmp_path / f"{k}.json", r) for k, r in reports.items()]
    fig = build_files(paths)["metrics_surghi"]
    assert [ax.get_title() for ax in fig.axes] == ["Overall (8 videos)", "toyA (4 videos)", "toyB (4 videos)"]
    for ax, row in zip(fig.axes, ("overall", "toyA", "toyB")):
        b = bars(ax)
        assert list(b) == ["clip_a", "clip_b"] and whiskers(ax) == {}
        for name, rep in reports.items():
            metrics = rep["overall"] if row == "overall" else rep["datasets"][row]
            expected = [100 * metrics[k] for k, _ in plots.SURGHI_METRICS if metrics.get(k) is not None]
            assert [h for _, h in b[name]] == pytest.approx(expected)
    assert any("No interval: SurgHiBench metrics are means over videos" in t for t in legend_texts(fig))
    assert_readable(fig)


# ------------------------------------------------------------------ diagnostics JSON

@pytest.mark.parametrize("kind", ["budgets", "evidence", "order", "sampling"])
def test_diagnostics_json_redraws_the_diagnose_figure_with_intervals(tmp_path, kind):
    rows = diagnostic_rows(kind)
    diagnose.write_outputs(kind, rows, tmp_path / "diag", model="qwen2_5_vl")  # what `diagnose` writes
    saved = tmp_path / "diag" / f"{kind}.json"
    res = load_results(saved)
    assert (res.kind, res.diagnostic, res.label) == ("diagnostic", kind, "qwen2_5_vl")
    fig = build_files([saved])[kind]
    assert_readable(fig)
    if kind == "budgets":
        (ax,) = fig.axes
        (line,) = [ln for ln in ax.get_lines() if ln.get_label() == "qwen2_5_vl"]
        assert list(line.get_xdata()) == [r["x"] for r in rows]
        assert list(line.get_ydata()) == pytest.approx([100 * r["accuracy"] for r in rows])
        w = whiskers(ax)["qwen2_5_vl"]
        assert [(lo, hi) for _, lo, hi in w] == [pct_ci((r["ci95_lo"], r["ci95_hi"])) for r in rows]
    else:
        groups = {"evidence": ["fine_grained", "semantic_reasoning", "overall"]}.get(
            kind, ["overall", "fine_grained", "semantic_reasoning"])
        panels = [rows] if kind != "sampling" else [[r for r in rows if r["x"] == n] for n in (32, 64)]
        assert len(fig.axes) == len(panels)
        for ax, panel in zip(fig.axes, panels):
            b, w = bars(ax), whiskers(ax)
            assert sum(len(v) for v in b.values()) == len(panel) * len(groups)
            assert len(set(series_colours(ax))) == len(panel)
            for series, r in zip(b, panel):
                fam = r["report"]["by_family"]
                expected = {"overall": (r["accuracy"], (r["ci95_lo"], r["ci95_hi"])),
                            **{f: (fam[f]["accuracy"], wilson_ci(fam[f]["correct"], fam[f]["n"])) for f in fam}}
                assert [h for _, h in b[series]] == pytest.approx([100 * expected[g][0] for g in groups])
                assert [(lo, hi) for _, lo, hi in w[series]] == [pct_ci(expected[g][1]) for g in groups]
    assert "95% CI (Wilson score)" in legend_texts(fig)
    # `plot` draws the very figure `diagnose` saved
    (png,) = plots.plot_files([saved], tmp_path / "plots")
    assert png.name == f"{kind}.png" and png.read_bytes() == (tmp_path / "diag" / f"{kind}.png").read_bytes()


def test_diagnose_rows_without_counts_still_draw(tmp_path):
    rows = [{"diagnostic": "budgets", "label": "4 frames", "group": "uniform", "x": 4, "task": "t", "model": "m",
             "accuracy": 0.5, "fine_grained": 0.5, "semantic_reasoning": 0.5}]
    fig = plots.build_diagnostic("budgets", rows, model="m")
    assert whiskers(fig.axes[0]) == {} and any("No interval" in t for t in legend_texts(fig))


# ------------------------------------------------------------------ bars: colours, labels, legend

def test_many_series_stay_distinct_and_the_legend_stays_outside():
    runs = {f"model-{i:02d}" + ("-with-a-long-name" if i % 4 == 0 else ""): report(mh_records(0.2 + 0.03 * i, 60, i))
            for i in range(13)}
    fig = build_per_task({k: {"overall": r["overall"], **r["by_family"]} for k, r in runs.items()})
    (ax,) = fig.axes
    assert len(bars(ax)) == 13 and sum(len(v) for v in bars(ax).values()) == 13 * 3
    styles = [(to_hex(c.patches[0].get_facecolor()), c.patches[0].get_hatch())
              for c in ax.containers if isinstance(c, BarContainer)]
    assert len({colour for colour, _ in styles}) == 13
    assert_readable(fig)
    many = build_per_task({f"s{i}": {"overall": 0.2 + 0.02 * i} for i in range(30)})
    assert len(set(series_colours(many.axes[0]))) == 30
    assert_readable(many)


def test_value_labels_turn_upright_when_bars_are_narrow():
    wide = build_per_task({"a": acc(0.3), "b": acc(0.4)})
    narrow = build_per_task({f"r{i}": acc(0.2 + 0.02 * i) for i in range(6)})
    assert {t.get_rotation() for t in value_labels(wide.axes[0])} == {0.0}
    assert {t.get_rotation() for t in value_labels(narrow.axes[0])} == {90.0}
    for fig in (wide, narrow):
        assert_readable(fig)


def test_frame_scaling_marks_runs_without_intervals():
    fig = build_frame_scaling({"with": {4: {"accuracy": 0.5, "correct": 5, "n": 10}, 8: 0.6}, "without": {4: 0.3}})
    ax = fig.axes[0]
    assert list(whiskers(ax)) == ["with"] and len(whiskers(ax)["with"]) == 1
    assert any("No interval for without" in t for t in legend_texts(fig))
    assert [ln.get_label() for ln in ax.get_lines() if isinstance(ln, Line2D) and not ln.get_label().startswith("_")] \
        == ["with", "without"]


# ------------------------------------------------------------------ the command

def test_plot_command_accepts_every_results_file_the_package_writes(tmp_path, capsys):
    files = [write(tmp_path / "lmms" / "medhorizon_needle" / "20261201_131226_results.json",
                   lmms_results("medhorizon_needle", {"medhorizon_synthetic_frames4": 0.25,
                                                       "medhorizon_synthetic_frames64": 0.5})),
             write(tmp_path / "score_mh.json", report(mh_records(0.4, 40, 0))),
             write(tmp_path / "score_sureon.json", sureon_report(0.5, 0)),
             write(tmp_path / "score_surghi.json", surghi_report(tmp_path, 3))]
    for kind in ("budgets", "evidence"):
        diagnose.write_outputs(kind, diagnostic_rows(kind), tmp_path / "diag", model="qwen2_5_vl")
        files.append(tmp_path / "diag" / f"{kind}.json")
    assert main(["plot", *map(str, files), "--out", str(tmp_path / "plots")]) == 0
    written = capsys.readouterr().out.split()
    assert sorted(p.rsplit("/", 1)[1] for p in written) == sorted(
        ["per_task.png", "per_task_lmms_eval.png", "frame_scaling.png", "per_category_sureon.png",
         "metrics_surghi.png", "budgets.png", "evidence.png"])
    for p in written:
        check_png(tmp_path / "plots" / p.rsplit("/", 1)[1])
    assert main(["plot", str(files[1]), str(files[1]), "--labels", "a,b", "--out", str(tmp_path / "p2")]) == 0
    assert main(["plot", str(files[1]), "--labels", "a,b", "--out", str(tmp_path / "p3")]) == 2
    assert "--labels" in capsys.readouterr().err


@pytest.mark.parametrize("text, why", [
    ("[1, 2, 3]", "a JSON list"),
    ('{"model": "x", "scores": {"a": 1}}', "keys 'model', 'scores'"),
    ("{}", "an empty object"),
    ('[{"diagnostic": "speed", "label": "a"}]', "'speed' is not a diagnostic"),
    ('[{"diagnostic": "budgets", "label": "4 frames", "group": "uniform", "x": 0, "accuracy": 0.5}]', "field 'x'"),
    ('{"results": {"surghi_synthetic": {"phase_acc,none": 0.5}}}', "no accuracy metric"),
    ('{"overall": {"accuracy": 0.5, "ci95": [0.6, 0.7]}}', "ci95"),
    ('{"overall": {"accuracy": 0.5, "correct": 3, "n": 4}}', "correct / n"),
])
def test_other_files_are_one_data_error_naming_the_file_and_the_shapes(tmp_path, capsys, text, why):
    bad = tmp_path / "x.json"
    bad.write_text(text)
    with pytest.raises(DataError, match="x.json") as ei:
        build_files([bad])
    assert why in str(ei.value)
    if "accepted" not in str(ei.value):  # a known shape with a broken field names the field instead
        assert "field" in str(ei.value) or "ci95" in str(ei.value) or "correct" in str(ei.value)
    assert main(["plot", str(bad), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "x.json" in err and "Traceback" not in err and not (tmp_path / "out").exists()


@pytest.mark.parametrize("which, frames", [("lmms", "9" * 40), ("lmms", "9" * 5000), ("lmms", str(2 ** 24 + 1)),
                                           ("budgets", 10 ** 300), ("budgets", 2 ** 53 + 1), ("budgets", 2 ** 24 + 1)],
                         ids=["lmms-40-digits", "lmms-5000-digits", "lmms-2**24+1", "budgets-10**300", "budgets-2**53+1",
                              "budgets-2**24+1"])
def test_an_absurd_frame_count_is_one_clear_message(tmp_path, capsys, which, frames):
    """`plot` on a results file with a frame count no video has: exit 2 naming the file and the field, nothing
    drawn (a log2 axis of 10**40 frames ended in a traceback)."""
    if which == "lmms":
        doc = lmms_results("m", {"medhorizon_frames64": 0.3, f"medhorizon_frames{frames}": 0.4})
    else:
        doc = diagnostic_rows("budgets")
        doc[-1]["x"] = frames
    f = write(tmp_path / "absurd.json", doc)
    assert main(["plot", str(f), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "absurd.json" in err and "expected a number of frames 1..16,777,216" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_the_largest_frame_count_still_draws(tmp_path):
    f = write(tmp_path / "big.json", lmms_results("m", {"medhorizon_frames64": 0.3, f"medhorizon_frames{2 ** 24}": .4}))
    assert main(["plot", str(f), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "frame_scaling.png").is_file()


def test_unknown_shape_lists_the_accepted_ones(tmp_path):
    bad = write(tmp_path / "other.json", {"model": "x", "scores": {"a": 1}})
    with pytest.raises(DataError) as ei:
        load_results(bad)
    for shape in ("lmms-eval results JSON", "score --json", "Sureon", "SurgHiBench", "budgets.json"):
        assert shape in str(ei.value)


def _mutations(doc):
    """(path, replacement) pairs that replace one value of ``doc``."""
    paths = []

    def walk(x, path):
        paths.append(path)
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, path + (k,))
        elif isinstance(x, list):
            for i, v in enumerate(x):
                walk(v, path + (i,))
    walk(doc, ())
    return paths


_ODD = st.one_of(st.none(), st.booleans(), st.integers(-3, 10 ** 6), st.floats(allow_nan=False, allow_infinity=False),
                 st.text(max_size=5), st.lists(st.integers(-1, 2), max_size=3), st.just({}), st.just("N/A"),
                 st.just([0.1, 0.9]), st.just({"accuracy": 0.5}))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_mutated_results_file_reads_or_is_one_data_error(tmp_path, data):
    docs = [lmms_results("m", {"medhorizon_synthetic": 0.5}), report(mh_records(0.5, 12, 0)),
            diagnostic_rows("evidence", n=4)]
    doc = json.loads(json.dumps(data.draw(st.sampled_from(docs))))
    path = data.draw(st.sampled_from(_mutations(doc)))
    new = data.draw(_ODD)
    if path:
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        parent[path[-1]] = new
    else:
        doc = new
    f = write(tmp_path / "m.json", doc)
    try:
        build_files([f])
    except DataError as exc:
        assert str(f) in str(exc)


# ------------------------------------------------------------------ the paper's figures as PNGs

def test_frame_scaling_png(tmp_path):
    curves = {"Qwen3-VL-8B": {4: .25, 8: .255, 16: .26, 32: .258, 64: .262, 128: .27, 256: .268, 512: .255},
              "Lingshu-7B": {4: .24, 16: .26, 32: .27, 64: None, 128: float("nan"), 256: .24, 512: .23},
              "empty": {}}
    out = plot_frame_scaling(curves, tmp_path / "a" / "b" / "scaling.png", title="RQ1")
    assert out == tmp_path / "a" / "b" / "scaling.png"
    check_png(out)
    fig = build_frame_scaling(curves)
    lines = {ln.get_label(): ln for ln in fig.axes[0].get_lines()}
    assert "empty" not in lines
    assert [y != y for y in lines["Lingshu-7B"].get_ydata()] == [False, False, False, True, True, False, False]


def test_evidence_settings_png_with_missing_values(tmp_path):
    settings_ = {
        "GT-images": {"Overall": .36, "Fine-grained": .35, "Semantic reasoning": .38},
        "random": {"overall": .25, "fine_grained": .25, "semantic_reasoning": .25},
        "Text": {"overall": .24, "fine_grained": None},
        "Uniform": acc(.26),
    }
    check_png(plot_evidence_settings(settings_, tmp_path / "evidence.png"))
    fig = plots.build_evidence_settings(settings_)
    assert [len(v) for v in bars(fig.axes[0]).values()] == [3, 1, 3, 3]
    assert list(bars(fig.axes[0])) == ["Random", "Text", "Uniform", "GT-images"]


def test_per_task_png(tmp_path):
    runs = {"a": acc(.26, missing=("LA", "PR")), "b": acc(.24), "c": {"PR": .3}}
    check_png(plot_per_task(runs, tmp_path / "tasks.png"))
    b = bars(build_per_task(runs).axes[0])
    assert {k: len(v) for k, v in b.items()} == {"a": 3 + len(TASK_CODES) - 2, "b": 3 + len(TASK_CODES), "c": 1}


def test_order_png(tmp_path):
    runs = {"original": acc(.265), "reverse": acc(.242), "block shuffle": acc(.245, missing=("CPR",)),
            "local_shuffle": acc(.244)}
    check_png(plot_order(runs, tmp_path / "order.png"))
    check_png(plot_order(runs, tmp_path / "order_summary.png", keys=("overall", "fine_grained", "semantic_reasoning")))


def test_sampling_png_one_panel_per_budget(tmp_path):
    runs = {s: {32: acc(.25), 64: acc(.26)} for s in ("uniform", "frame-change", "hybrid")}
    runs["hybrid"][64] = {"overall": None}
    img = check_png(plot_sampling(runs, tmp_path / "sampling.png", title="RQ4"))
    single = check_png(plot_sampling({"uniform": {32: acc(.25)}}, tmp_path / "one.png"))
    assert img.shape[0] > 1.6 * single.shape[0], "two stacked panels"


def test_percent_values_are_rejected_not_guessed(tmp_path):
    with pytest.raises(ValueError, match="fraction"):
        plot_per_task({"a": {"PR": 26.2}}, tmp_path / "x.png")
    assert not (tmp_path / "x.png").exists()


def test_no_pyplot_figures_are_left_open(tmp_path):
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    plot_order({"original": acc(.2)}, tmp_path / "o.png")
    plot_frame_scaling({"a": {4: .3}}, tmp_path / "f.png")
    build_files([write(tmp_path / "s.json", report(mh_records(0.5, 12, 0)))])
    assert plt.get_fignums() == before


# ------------------------------------------------------------------ results readers

def _records():
    out = []
    for k, code in enumerate(("PR", "PR", "SD", "IR", "IR", "CPR")):
        t = task_type(code)
        out.append({"uid": str(k), "task": code, "family": t.family, "hop": t.hop or 0, "source": "GraSP",
                    "correct": k % 2 == 0, "status": "ok", "error": None})
    return out


def test_load_score_report(tmp_path):
    path = tmp_path / "score.json"
    path.write_text(json.dumps(report(_records())), encoding="utf-8")  # exactly what `score --json` prints
    got = load_accuracy_file(path)
    assert got["overall"] == pytest.approx(0.5)
    assert got["PR"] == 0.5 and got["SD"] == 1.0 and got["IR"] == 0.5 and got["CPR"] == 0.0
    assert got["fine_grained"] == pytest.approx(2 / 3) and got["semantic_reasoning"] == pytest.approx(1 / 3)
    check_png(plot_per_task({"run": got}, tmp_path / "t.png"))


def test_load_lmms_eval_results(tmp_path):
    path = tmp_path / "results_2026.json"
    path.write_text(json.dumps({
        "results": {
            "medhorizon_frames4": {"alias": "medhorizon_frames4", "accuracy,none": 0.25, "accuracy_stderr,none": "N/A"},
            "medhorizon_frames64": {"alias": "medhorizon_frames64", "accuracy,none": 0.27},
            "medhorizon_frames8": {"alias": "x", "accuracy,strict": 0.3},
            "medhorizon_text": {"alias": "medhorizon_text", "accuracy,none": "N/A"},
        },
        "configs": {}, "versions": {},
    }), encoding="utf-8")
    got = load_accuracy_file(path)
    assert got == {"medhorizon_frames4": 0.25, "medhorizon_frames64": 0.27, "medhorizon_frames8": 0.3,
                   "medhorizon_text": None}
    assert budget_curve(got) == {4: 0.25, 8: 0.3, 64: 0.27}
    check_png(plot_frame_scaling({"run": budget_curve(got)}, tmp_path / "s.png"))


def test_load_flat_and_bad_files(tmp_path):
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps({"overall": 0.3, "PR": None}), encoding="utf-8")
    assert load_accuracy_file(flat) == {"overall": 0.3, "PR": None}
    for name, text in (("list.json", "[1, 2]"), ("bad.json", "{nope"), ("shape.json", '{"a": {"b": 1}}'),
                       ("pct.json", '{"overall": {"accuracy": 26.2}}')):
        p = tmp_path / name
        p.write_text(text, encoding="utf-8")
        with pytest.raises(DataError):
            load_accuracy_file(p)
    with pytest.raises(DataError, match="not found"):
        load_accuracy_file(tmp_path / "missing.json")
