"""Figures a reader can read (issue 39 item 8): coinciding recall curves stay visible, value labels stay clear
of the error bars, task codes are spelled out."""


import matplotlib.image as mpimg

from medhorizon_tasks.benchmarks.medhorizon.scoring import report
from medhorizon_tasks.benchmarks.medhorizon.taxonomy import TASK_TYPES
from medhorizon_tasks.plots.bars import whisker_boxes
from medhorizon_tasks.plots.figures import build_per_task
from medhorizon_tasks.plots.recall import build_recall, coinciding
from test_plots import mh_records

CURVES = {"uniform": [(4, 7.0), (8, 14.0), (16, 30.0)], "aks": [(4, 60.0), (8, 100.0), (16, 100.0)],
          "wfs_sb": [(4, 70.0), (8, 100.0), (16, 100.0)], "vilamp": [(4, 60.0), (8, 100.0), (16, 100.0)]}


def test_coinciding_recall_curves_stay_visible_and_the_legend_says_where():
    fig = build_recall(CURVES)
    (ax,) = fig.axes
    lines = ax.get_lines()
    assert [ln.get_label().split(" (")[0] for ln in lines] == list(CURVES)
    assert len({ln.get_marker() for ln in lines}) == len(lines), "a marker of its own for each selector"
    assert all(ln.get_markerfacecolor() == "none" for ln in lines), "hollow: nested markers all show"
    sizes = [ln.get_markersize() for ln in lines]
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) == len(sizes)
    # at 100% the three query-aware curves are drawn at different x, and not on the axes' top edge
    at_16 = [ln.get_xdata()[list(ln.get_ydata()).index(100.0)] for ln in lines[1:] if 100.0 in ln.get_ydata()]
    assert len(set(at_16)) == 3 and ax.get_ylim()[1] > 100
    assert [t.get_text() for t in ax.get_xticklabels()] == ["4", "8", "16"], "the ticks stay on the budgets"
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert "wfs_sb (= aks at 8, 16)" in labels and "vilamp (= aks at 4, 8, 16; wfs_sb at 8, 16)" in labels
    assert coinciding({"a": [(1, 5.0)], "b": [(1, 6.0)]}) == {}


def test_select_writes_the_recall_figure_through_this_plot(tmp_path):
    from medhorizon_tasks.runs.select_outputs import _plot

    summary = {"selections": {f"{s}-{b}": {"selector": s, "budget": b, "recall": {"item_recall": r / 100}}
                              for s, pts in CURVES.items() for b, r in pts}}
    _plot(summary, tmp_path / "recall.png")
    img = mpimg.imread(str(tmp_path / "recall.png"))
    assert img.shape[0] > 400 and img.shape[1] > 600


def _per_task_runs():
    return {"random": report(mh_records(0.25, 88, 1))["by_task"] | {"overall": report(mh_records(0.25, 88, 1))["overall"]},
            "text": report(mh_records(0.0, 88, 2))["by_task"],
            "uniform": report(mh_records(0.77, 88, 3))["by_task"],
            "oracle": report(mh_records(1.0, 88, 4))["by_task"]}


def test_per_task_value_labels_are_clear_of_every_whisker_and_the_codes_are_spelled_out():
    fig = build_per_task(_per_task_runs())
    (ax,) = fig.axes
    renderer = fig.canvas.get_renderer()
    boxes = whisker_boxes(ax, renderer)
    labels = [t for t in ax.texts if t.get_gid() == "value"]
    assert boxes and labels
    for t in labels:
        bb = t.get_window_extent(renderer)
        assert not any(b.overlaps(bb) for b in boxes), f"label {t.get_text()} at {t.xy} overprints a whisker"
    legend = fig.legends[0].get_title().get_text().replace("\n", " ")
    for task in TASK_TYPES:
        assert f"{task.code} {task.name}" in legend
