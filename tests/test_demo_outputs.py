"""What the demo shows and writes, without running lmms-eval: the leaderboard as terminal text (``p<0.001``,
not Markdown's ``p&lt;0.001``), and its reports read back by ``plot`` (the figures the demo ends with)."""

import json

import pytest

from medhorizon_tasks.benchmarks.data import load_benchmark_data
from medhorizon_tasks.commands.jobs.demo import ROWS, SURGHI_ROWS, draw_figures, write_report
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.core.stats import wilson_ci
from medhorizon_tasks.leaderboard import build_leaderboard, make_submission
from medhorizon_tasks.leaderboard.tables import format_markdown, format_text
from published_release import published_items, write_release
from test_plots import bars, build_files, check_png, mh_records, pct_ci, report, surghi_report, whiskers

# ------------------------------------------------------------------ the leaderboard in a terminal


@pytest.fixture(scope="module")
def boards(tmp_path_factory):
    """A MedHorizon board whose runner-up differs from the leader at p < 0.001."""
    tmp = tmp_path_factory.mktemp("board")
    items = published_items()
    data = load_benchmark_data("medhorizon", write_release(tmp / "release.jsonl", items))
    subs = []
    for name, right in (("All right", lambda k: True), ("Every other \x1b[31m<b>", lambda k: k % 2 == 0)):
        p = tmp / f"{len(subs)}.jsonl"
        p.write_text("".join(json.dumps({"uid": it["uid"], "prediction": it["answer"] if right(k) else "Z"}) + "\n"
                             for k, it in enumerate(items)))
        subs.append(make_submission(data, p, model=name, size="8B", fps=1, cap=64, date="2026-01-01"))
    return build_leaderboard(subs, {"medhorizon": data}, n_resamples=50)


def test_the_terminal_gets_plain_text_and_the_markdown_file_keeps_its_escaping(boards):
    text = format_text(boards, title="demo")
    md = format_markdown(boards, title="demo")
    assert "yes (p<0.001)" in text and "&lt;" not in text and "&amp;" not in text
    assert "yes (p&lt;0.001)" in md
    assert "\x1b" not in text, "a submitted name cannot send escape sequences to the terminal"
    assert "Every other  [31m<b>" in text, "submitted text is shown as text, control characters as spaces"
    lines = text.splitlines()
    head = next(i for i, x in enumerate(lines) if x.strip().startswith("Rank"))
    assert lines[head].split()[:3] == ["Rank", "Model", "Size"]
    assert lines[head + 1].split()[:3] == ["1", "All", "right"]
    assert lines[head + 1].index("] ") == lines[head + 2].index("] "), "the headline column is right-aligned"
    assert lines[head + 1].index("1253 items") == lines[head + 2].index("1253 items")


# ------------------------------------------------------------------ the demo's reports, drawn


@pytest.fixture()
def demo_reports(tmp_path):
    """report.json and report_surghi.json written by the demo's own writer, in the demo's shape."""
    p = {"random": 0.25, "text": 0.3, "visual": 0.6, "oracle": 0.95}
    rows = {}
    for k, (label, model, task, mode, _) in enumerate(ROWS):
        recs = mh_records(p[mode], 88, k)
        rows[label] = {"model": model, "task": task, "mode": mode, "report": report(recs),
                       "long_videos": report(recs[:20])["overall"]}
    write_report(tmp_path / "report.json", rows)
    write_report(tmp_path / "report_surghi.json",
                 {label: surghi_report(tmp_path, k + 2) for k, (label, _) in enumerate(SURGHI_ROWS)})
    return tmp_path, rows


def test_plot_reads_the_demo_reports(demo_reports, capsys):
    out, _ = demo_reports
    assert main(["plot", str(out / "report.json"), str(out / "report_surghi.json"), "--out",
                 str(out / "cli")]) == 0
    written = sorted(x.rsplit("/", 1)[1] for x in capsys.readouterr().out.split())
    assert written == ["evidence_settings.png", "metrics_surghi.png", "per_task.png"]
    for name in written:
        check_png(out / "cli" / name)
    assert sorted(p.name for p in draw_figures(out)) == written, "the demo draws what `plot` draws"


def test_the_evidence_settings_figure_has_the_four_settings_with_their_intervals(demo_reports):
    out, rows = demo_reports
    figs = build_files([out / "report.json", out / "report_surghi.json"])
    (ax,) = figs["evidence_settings"].axes
    b, w = bars(ax), whiskers(ax)
    assert list(b) == ["Random", "Text", "Uniform", "GT-images"]
    by_setting = dict(zip(["Random", "Text", "Uniform", "GT-images"], rows.values()))
    for name, row in by_setting.items():
        rep = row["report"]
        summaries = [rep["by_family"]["fine_grained"], rep["by_family"]["semantic_reasoning"], rep["overall"]]
        assert [h for _, h in b[name]] == pytest.approx([100 * s["accuracy"] for s in summaries])
        for (_, lo, hi), s in zip(w[name], summaries):
            assert (lo, hi) == pct_ci(wilson_ci(s["correct"], s["n"]))
    (per_task,) = figs["per_task"].axes
    assert list(bars(per_task)) == list(rows)
    assert [a.get_title().split(" (")[0] for a in figs["metrics_surghi"].axes][0] == "Overall"
    assert list(bars(figs["metrics_surghi"].axes[0])) == [label for label, _ in SURGHI_ROWS]


def test_labels_prefix_a_bundles_series(demo_reports):
    out, rows = demo_reports
    figs = build_files([out / "report.json"], labels=["run 1"])
    assert list(bars(figs["per_task"].axes[0])) == [f"run 1: {label}" for label in rows]


def test_the_demo_says_what_each_number_it_prints_is(demo_reports):
    """Issue 39 item 5: invalid, the two answer rules and the two kinds of interval, each in a short line,
    with this run's values; docs/getting-started.md says the same."""
    from pathlib import Path

    from medhorizon_tasks.commands.jobs.demo import LEADERBOARD_LEGEND, legend_lines

    _, rows = demo_reports
    lines = legend_lines(rows)
    uniform, text, oracle = (rows[label]["report"]["overall"] for label in (ROWS[2][0], ROWS[1][0], ROWS[3][0]))
    lo, hi = uniform["ci95"]
    said = "\n".join(lines)
    assert f"Wilson score interval of Ov. (a formula over the n items: {100 * lo:.1f}-{100 * hi:.1f} at cap 64)" in said
    assert f"{uniform['invalid']} at cap 64, {text['invalid']} text-only (no frames), {oracle['invalid']} on the " \
           "evidence frames" in said and "declines when none of its frames shows the question's evidence" in said
    assert "default rule: the answer reading that scores here" in said
    assert "authors' rule: shown beside it" in said and f"({100 * uniform['accuracy_authors']:.1f}% at cap 64)" in said
    assert "percentile bootstrap over the items" in LEADERBOARD_LEGEND[1] and "not the Wilson" in LEADERBOARD_LEGEND[1]
    page = " ".join((Path(__file__).parents[1] / "docs" / "getting-started.md").read_text().split())
    for phrase in ("`invalid=20`", "declines", "default rule", "authors' rule", "Wilson", "percentile bootstrap"):
        assert phrase in page, phrase
