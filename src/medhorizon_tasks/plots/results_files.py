"""The paper's diagnostic figures, and a chart for every results file the package writes (matplotlib, Agg).

Accuracies are fractions 0..1 (shown as percent); ``None`` (and NaN) values
are left out. An accuracy may carry its 95% confidence interval: give an
:class:`Acc`, or a summary mapping such as the score reports hold
(``{"accuracy", "ci95"}``, ``{"accuracy", "ci95_bootstrap"}``, or
``{"accuracy", "correct", "n"}``, from which a Wilson interval is computed).
Every proportion that has an interval is drawn with it: whiskers on bars,
error bars on lines, and the legend says which interval it is.

Each figure has a ``build_*`` function returning the
:class:`matplotlib.figure.Figure` (laid out, ready to inspect) and a
``plot_*`` function that builds it, writes one PNG (parent folders created)
and returns its :class:`~pathlib.Path`. Figures are built with
``matplotlib.figure.Figure`` and rendered by the Agg canvas, never through
``pyplot``: no global backend is switched and no figure is left registered.

Accuracy dicts of MedHorizon use one vocabulary: ``"overall"``, the family
names ``"fine_grained"`` and ``"semantic_reasoning"`` (also accepted:
"Fine-grained", "Semantic reasoning", "Overall"), and the task codes ("PR",
"SD", ... in taxonomy order).

- :func:`plot_frame_scaling`: accuracy vs frames (RQ1, Figure 6).
- :func:`plot_evidence_settings`: Random / Text / Uniform / GT-images (RQ2, Figure 7).
- :func:`plot_per_task`: one bar per run for Overall, the two families and each task code.
- :func:`plot_order`: original / reverse / block shuffle / local shuffle (RQ3, Figure 8).
- :func:`plot_sampling`: uniform / frame-change / hybrid at 32 and 64 frames (RQ4, Figure 10).
- :func:`plot_bars`: grouped bars for any keys (lmms-eval task names, Sureon categories).
- :func:`plot_surghi`: SurgHiBench metrics, one panel per dataset and Overall.
- :func:`plot_diagnostic`: the figure of a ``diagnose`` / ``sweep`` result (its rows, or its JSON).
- :func:`plot_files`: what ``medhorizon-tasks plot`` draws from results files (:func:`load_results`;
  :func:`build_files` returns those figures unsaved).
"""

from __future__ import annotations

import math
import os
import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..benchmarks.medhorizon.taxonomy import FAMILIES, TASK_CODES
from ..core.errors import DataError

__all__ = ["Acc", "CHANCE", "CI_METHODS", "ResultsFile",
           "build_frame_scaling", "build_evidence_settings", "build_per_task", "build_order", "build_sampling",
           "build_bars", "build_surghi", "build_diagnostic",
           "plot_frame_scaling", "plot_evidence_settings", "plot_per_task", "plot_order", "plot_sampling",
           "plot_bars", "plot_surghi", "plot_diagnostic", "plot_files", "build_files",
           "load_results", "load_accuracy_file", "budget_curve", "frame_curves", "ACCEPTED_SHAPES"]

CHANCE = 0.25  # four-way multiple choice
SUMMARY_KEYS = ("fine_grained", "semantic_reasoning", "overall")
_SUMMARY_LABELS = {"fine_grained": "Fine-grained", "semantic_reasoning": "Semantic reasoning", "overall": "Overall"}
_KEY_ALIASES = {"fine_grained": "fine_grained", "finegrained": "fine_grained", "fine_grained_understanding":
                "fine_grained", "semantic_reasoning": "semantic_reasoning", "semantic": "semantic_reasoning",
                "overall": "overall", "ov": "overall", "ov.": "overall", "all": "overall"}
_TASK_BY_LOWER = {c.lower(): c for c in TASK_CODES}

EVIDENCE_SETTINGS = ("random", "text", "uniform", "oracle")
_EVIDENCE_LABELS = {"random": "Random", "text": "Text", "uniform": "Uniform", "oracle": "GT-images"}
_EVIDENCE_ALIASES = {"random": "random", "chance": "random", "text": "text", "text_only": "text", "textonly": "text",
                     "uniform": "uniform", "video": "uniform", "oracle": "oracle", "gt_images": "oracle",
                     "gt": "oracle", "gt_image": "oracle", "gtimages": "oracle"}
ORDER_KINDS = ("original", "reverse", "block_shuffle", "local_shuffle")
_ORDER_LABELS = {"original": "Original", "reverse": "Reverse", "block_shuffle": "Block shuffle",
                 "local_shuffle": "Local shuffle"}
STRATEGIES = ("uniform", "frame_change", "hybrid")
_STRATEGY_LABELS = {"uniform": "Uniform", "frame_change": "Frame-change", "hybrid": "Hybrid"}
_STRATEGY_ALIASES = {"uniform": "uniform", "frame_change": "frame_change", "framechange": "frame_change",
                     "differential": "frame_change", "hybrid": "hybrid"}
DIAGNOSTIC_KINDS = ("budgets", "evidence", "order", "sampling")

#: How an interval was made -> the words the legend uses for it.
CI_METHODS = {
    "wilson": "Wilson score",
    "bootstrap": "percentile bootstrap over items",
    "wilson_lmms": "Wilson score, n = lmms-eval's effective samples",
    "given": "as given in the input",
}
_NO_CI = "the input gives no interval and no item counts"

SUREON_SUMMARY = (("mu", "μ (MCQ + TO)"), ("perception", "Perception"), ("reasoning", "Reasoning (no SM)"))
SURGHI_METRICS = (("phase_acc", "Phase acc"), ("phase_f1", "Phase F1"), ("step_acc", "Step acc"),
                  ("step_f1", "Step F1"), ("multi_level", "Multi-level"), ("both_wrong", "Both-wrong ↓"),
                  ("both_right", "Both-right"), ("step_given_phase", "Step|Phase"), ("sibling", "Sibling"),
                  ("cousin", "Cousin ↓"), ("semantic_step", "Semantic step"))
_LMMS_FRAMES = re.compile(r"^(medhorizon(?:_synthetic)?)_frames(\d+)$")

ACCEPTED_SHAPES = (
    "an lmms-eval results JSON (<output_path>/<model>/<stamp>_results.json: key \"results\" with "
    "\"accuracy,none\" per task); `medhorizon-tasks score --json` output of MedHorizon (overall, by_task, "
    "by_family), Sureon (mu, perception, reasoning, by_category) or SurgHiBench (datasets, overall); a "
    "diagnostics JSON of `medhorizon-tasks diagnose` / `sweep` (budgets.json, evidence.json, order.json, "
    "sampling.json: a list of rows with diagnostic, label, group, x, accuracy, ...); or a flat "
    "{key: accuracy} object")


@dataclass(frozen=True)
class Acc:
    """An accuracy (0..1) and, when known, its 95% interval ``[lo, hi]``; ``method`` is a key of
    :data:`CI_METHODS`, said in the legend."""

    value: float
    lo: float | None = None
    hi: float | None = None
    method: str | None = None

    @property
    def has_ci(self) -> bool:
        return self.lo is not None and self.hi is not None


# ------------------------------------------------------------------ values

def _norm(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", str(name).strip().lower())


def _canon_key(key: str) -> str:
    """``overall`` / family name / task code for any accepted spelling; other keys unchanged."""
    n = _norm(key)
    if n in _KEY_ALIASES:
        return _KEY_ALIASES[n]
    return _TASK_BY_LOWER.get(n, str(key))


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _is_count(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and x >= 0


def _value(x, where: str) -> float | None:
    """An accuracy as a fraction, None when missing; a percent value (> 1) is an error, not guessed."""
    if x is None:
        return None
    if not _is_number(x):
        raise ValueError(f"{where}: accuracy must be a number 0..1 or None, got {x!r}")
    x = float(x)
    if math.isnan(x):
        return None
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"{where}: accuracy must be a fraction 0..1 (plots show it as percent), got {x!r}")
    return x


def _interval(ci, value: float, where: str) -> tuple[float, float]:
    if not isinstance(ci, (list, tuple)) or len(ci) != 2 or not all(_is_number(c) for c in ci):
        raise ValueError(f"{where}: expected a 95% interval [lo, hi] of fractions, got {ci!r}")
    lo, hi = float(ci[0]), float(ci[1])
    # Rounding in a writer may put an end a hair past the value; anything more is a broken file.
    if not (0.0 <= lo <= hi <= 1.0) or not lo - 1e-9 <= value <= hi + 1e-9:
        raise ValueError(f"{where}: interval {ci!r} is not [lo, hi] within 0..1 around the accuracy {value!r}")
    return min(lo, value), max(hi, value)


def _wilson(correct, n, value: float, where: str) -> Acc:
    from ..core.stats import wilson_ci

    if not (_is_count(correct) and _is_count(n) and n > 0 and correct <= n):
        return Acc(value)
    if abs(correct / n - value) > 1e-6:
        raise ValueError(f"{where}: accuracy {value!r} is not correct / n = {correct}/{n}")
    lo, hi = wilson_ci(correct, n)
    return Acc(value, min(lo, value), max(hi, value), "wilson")


def _summary_acc(d: Mapping, where: str, *, lo_hi_method: str = "given") -> Acc | None:
    """The accuracy of a summary mapping and its interval: ``ci95`` (named by ``ci_method``), else
    ``ci95_bootstrap``, ``ci95_wilson``, ``ci95_lo`` / ``ci95_hi``, else Wilson from ``correct`` / ``n``."""
    value = _value(d.get("accuracy"), f"{where}.accuracy")
    if value is None:
        return None
    method_of_ci95 = {"wilson": "wilson", "bootstrap": "bootstrap"}.get(str(d.get("ci_method", "")).lower(), "given")
    for key, method in (("ci95", method_of_ci95), ("ci95_bootstrap", "bootstrap"), ("ci95_wilson", "wilson")):
        if d.get(key) is not None:
            lo, hi = _interval(d[key], value, f"{where}.{key}")
            return Acc(value, lo, hi, method)
    if d.get("ci95_lo") is not None or d.get("ci95_hi") is not None:
        lo, hi = _interval([d.get("ci95_lo"), d.get("ci95_hi")], value, f"{where}.ci95_lo/ci95_hi")
        return Acc(value, lo, hi, lo_hi_method)
    return _wilson(d.get("correct"), d.get("n"), value, where)


def _acc(x, where: str) -> Acc | None:
    """An :class:`Acc` from a number, an Acc or a summary mapping; None when there is no accuracy."""
    if isinstance(x, Acc):
        value = _value(x.value, where)
        if value is None:
            return None
        if x.lo is None and x.hi is None:
            return Acc(value)
        lo, hi = _interval([x.lo, x.hi], value, f"{where} interval")
        return Acc(value, lo, hi, x.method if x.method in CI_METHODS else "given")
    if isinstance(x, Mapping):
        return _summary_acc(x, where)
    value = _value(x, where)
    return None if value is None else Acc(value)


def _accuracies(acc: Mapping, where: str, canon=_canon_key) -> dict[str, Acc | None]:
    if acc is None:
        return {}
    if not isinstance(acc, Mapping):
        raise ValueError(f"{where}: expected {{key: accuracy}}, got {type(acc).__name__}")
    return {canon(k): _acc(v, f"{where} {k!r}") for k, v in acc.items()}


def _ordered_runs(runs: Mapping, canon: dict, order: tuple[str, ...]) -> list[tuple[str, str]]:
    """(original key, canonical name) pairs: the known names in ``order``, then the others as given."""
    named = [(k, canon.get(_norm(k), None)) for k in runs]
    known = sorted([(k, c) for k, c in named if c], key=lambda kc: order.index(kc[1]))
    return known + [(k, str(k)) for k, c in named if not c]


# ------------------------------------------------------------------ drawing helpers

def _new_figure(width: float, height: float, nrows: int = 1):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=120, layout="constrained")
    FigureCanvasAgg(fig)  # text is measured to place labels: that needs a renderer before saving
    axes = fig.subplots(nrows, 1, squeeze=False)[:, 0]
    return fig, axes


def _save(fig, out_path) -> Path:
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        fig.savefig(out, format="png")
    finally:
        fig.clear()  # a pyplot-free Figure is freed once unreferenced; clearing drops its artists now
    return out


def _styles(n: int) -> list[tuple[tuple, str]]:
    """(colour, hatch) for ``n`` series, every colour different: tab10 up to 10; tab20 up to 20, with the
    light half hatched so light/dark pairs of one hue stay apart; beyond, evenly spaced hues with hatches."""
    import matplotlib

    if n <= 10:
        cmap = matplotlib.colormaps["tab10"]
        return [(cmap(i), "") for i in range(n)]
    if n <= 20:
        cmap = matplotlib.colormaps["tab20"]
        order = [2 * i for i in range(10)] + [2 * i + 1 for i in range(10)]
        return [(cmap(order[i]), "" if i < 10 else "///") for i in range(n)]
    cmap = matplotlib.colormaps["turbo"]
    hatches = ("", "///", "...", "xxx", "\\\\\\")
    return [(cmap(0.04 + 0.92 * i / (n - 1)), hatches[i % len(hatches)]) for i in range(n)]


_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
_LINESTYLES = ("-", "--", "-.", ":")


def _ci_label(cells: list[tuple[str, str, str]]) -> str:
    """The legend entry of the whiskers from (method, series, group) of every interval drawn: one method,
    or the most used one and, for each other, the groups (or series, if fewer) it applies to."""
    count: dict[str, int] = {}
    for m, _, _ in cells:
        count[m] = count.get(m, 0) + 1
    used = sorted(count, key=lambda m: (-count[m], m))
    parts = [CI_METHODS[used[0]]]
    for m in used[1:]:
        series = list(dict.fromkeys(s for mm, s, _ in cells if mm == m))
        groups = list(dict.fromkeys(g for mm, _, g in cells if mm == m))
        names = groups if len(groups) <= len(series) else series
        parts.append(f"{CI_METHODS[m]} for {', '.join(n.replace(chr(10), ' ') for n in names)}")
    return "95% CI (" + "; ".join(parts) + ")"


def _figure_legend(fig, handles: list, labels: list[str], notes: list[str]) -> None:
    """One legend for the whole figure, below the axes (never over the data), notes as its title."""
    width_in = fig.get_figwidth()
    labels = [textwrap.fill(lab, 80) for lab in labels]
    title = "\n".join(textwrap.fill(n, max(40, int(width_in * 13))) for n in notes) or None
    renderer = fig.canvas.get_renderer()
    for ncols in range(len(labels), 0, -1):  # as many columns as fit the figure's width
        legend = fig.legend(handles, labels, loc="outside lower center", ncols=ncols, fontsize=8, frameon=False,
                            title=title, title_fontsize=8, handlelength=1.6, columnspacing=1.2)
        if ncols == 1 or legend.get_window_extent(renderer).width <= 0.97 * width_in * fig.dpi:
            return
        legend.remove()


def _chance_line(ax):
    line = ax.axhline(100 * CHANCE, color="0.4", linestyle=":", linewidth=1.1, zorder=1, label="_chance")
    ax.annotate(f"chance {100 * CHANCE:.0f}%", xy=(1, 100 * CHANCE), xycoords=("axes fraction", "data"),
                xytext=(3, 0), textcoords="offset points", va="center", ha="left", fontsize=7, color="0.35",
                gid="chance")
    return line


def _percent_ticks(ax, top: float) -> None:
    step = 5 if top <= 30 else 10 if top <= 70 else 20
    ax.set_yticks([t for t in range(0, 101, step) if t <= top])


@dataclass
class _Panel:
    title: str | None
    groups: list[str]                                   # x tick labels
    series: list[tuple[str, list[Acc | None]]]          # (label, value per group)
    n_summary: int = 0                                  # leading summary groups, set off by a dashed line


def _draw_bars(ax, panel: _Panel, styles: dict[str, tuple], *, chance: bool) -> tuple[float, list]:
    """Bars, whiskers and value labels of one panel; returns (bar width in data units, bar containers)."""
    k = max(1, len(panel.series))
    width = 0.8 / k
    # Within a group only the series that have a value take a slot, centred: files with disjoint tasks
    # (an lmms-eval run of 3 tasks beside a sweep of 8) leave no empty gaps.
    present = [[j for j, (_, vals) in enumerate(panel.series) if vals[i] is not None] for i in range(len(panel.groups))]
    containers = []
    for j, (label, values) in enumerate(panel.series):
        color, hatch = styles[label]
        pts = [(i + (present[i].index(j) - (len(present[i]) - 1) / 2) * width, v)
               for i, v in enumerate(values) if v is not None]
        xs = [x for x, _ in pts]
        ys = [100 * v.value for _, v in pts]
        bars = ax.bar(xs, ys, width=width * 0.92, label=label, color=color, hatch=hatch or None,
                      edgecolor="0.25" if hatch else "white", linewidth=0.4 if hatch else 0.6, zorder=2)
        containers.append(bars)
        with_ci = [(x, v) for x, v in pts if v.has_ci]
        if with_ci:
            ax.errorbar([x for x, _ in with_ci], [100 * v.value for _, v in with_ci],
                        yerr=[[100 * (v.value - v.lo) for _, v in with_ci], [100 * (v.hi - v.value) for _, v in with_ci]],
                        fmt="none", ecolor="0.15", elinewidth=0.9, capsize=2.5, capthick=0.9, zorder=3,
                        label=f"_ci:{label}")
        for x, v in pts:
            top = 100 * (v.hi if v.has_ci else v.value)
            ax.annotate(f"{100 * v.value:.1f}", xy=(x, top), xytext=(0, 3), textcoords="offset points",
                        ha="center", va="bottom", fontsize=7.5, color="0.1", gid="value", zorder=4,
                        in_layout=False)  # kept inside the axes by _fit_text; measuring them is slow
    ax.set_xticks(range(len(panel.groups)))
    ax.set_xticklabels(panel.groups, fontsize=8.5)
    ax.set_xlim(-0.6, len(panel.groups) - 0.4)
    tops = [100 * (v.hi if v.has_ci else v.value) for _, vals in panel.series for v in vals if v is not None]
    top = max(tops + ([100 * CHANCE] if chance else []) + [1.0])
    ax.set_ylim(0, top * 1.08 + 1)
    ax.grid(axis="y", alpha=0.3, zorder=0)
    ax.set_axisbelow(True)
    if 0 < panel.n_summary < len(panel.groups):
        ax.axvline(panel.n_summary - 0.5, color="0.6", linewidth=0.8, linestyle="--", zorder=1)
    if panel.title:
        ax.set_title(panel.title, fontsize=10)
    return width, containers


def _fit_text(fig, axes_widths: list[tuple]) -> None:
    """Turn value labels upright where they are wider than their bar, tilt x tick labels that would
    overlap, then raise each axes' top until every value label sits inside it."""
    fig.draw_without_rendering()
    renderer = fig.canvas.get_renderer()
    changed = False
    for ax, bar_width in axes_widths:
        labels = [t for t in ax.texts if t.get_gid() == "value"]
        slot_px = abs(ax.transData.transform((bar_width, 0))[0] - ax.transData.transform((0, 0))[0])
        if any(t.get_window_extent(renderer).width > slot_px * 1.02 for t in labels):
            changed = True
            for t in labels:
                t.set_rotation(90)
                t.set_fontsize(7)
        ticks = sorted((t for t in ax.get_xticklabels() if t.get_text()),
                       key=lambda t: t.get_window_extent(renderer).x0)
        boxes = [t.get_window_extent(renderer) for t in ticks]
        if any(a.x1 + 3 > b.x0 for a, b in zip(boxes, boxes[1:])):
            changed = True
            for t in ticks:
                t.set_rotation(30)
                t.set_horizontalalignment("right")
                t.set_rotation_mode("anchor")
    if changed:
        fig.draw_without_rendering()
    # A label's height is fixed in pixels, so the top it needs follows from the axes' height; the layout
    # may then shift a little (tick labels change), hence a check after each adjustment.
    for _ in range(3):
        raised = False
        for ax, _w in axes_widths:
            lo, hi = ax.get_ylim()
            height_px = ax.get_window_extent(renderer).height
            need = hi
            for t in (t for t in ax.texts if t.get_gid() == "value"):
                anchor_px = ax.transData.transform(t.xy)[1]
                frac = (t.get_window_extent(renderer).y1 - anchor_px) / height_px
                need = max(need, t.xy[1] / max(0.2, 1.0 - frac - 0.015))
            if need > hi + 1e-6:
                ax.set_ylim(lo, need * 1.005)
                raised = True
        if not raised:
            break
        fig.draw_without_rendering()
    for ax, _w in axes_widths:
        _percent_ticks(ax, ax.get_ylim()[1])


def _bars_figure(panels: list[_Panel], *, title: str | None, xlabel: str, ylabel: str = "Accuracy (%)",
                 chance: bool = True, no_ci_reason: str = _NO_CI, notes: tuple[str, ...] = ()):
    labels = list(dict.fromkeys(lab for p in panels for lab, _ in p.series))
    if not any(v is not None for p in panels for _, vals in p.series for v in vals):
        raise ValueError("nothing to plot: no series has an accuracy for any group")
    styles = dict(zip(labels, _styles(len(labels))))
    n_groups = max(len(p.groups) for p in panels)
    k = max(1, len(labels))
    width = 1.9 + n_groups * (0.36 * k + 0.3)
    if width > 18:  # then value labels stand upright, and a bar needs only their height
        width = 1.9 + n_groups * (0.2 * k + 0.25)
    width = min(max(width, 7.0), 40.0)
    legend_rows = 1 + len(notes) + (len(labels) + 2) // 6
    fig, axes = _new_figure(width, 3.5 * len(panels) + 0.9 + 0.2 * legend_rows, nrows=len(panels))
    fitted, handles = [], {}
    for ax, panel in zip(axes, panels):
        bar_width, containers = _draw_bars(ax, panel, styles, chance=chance)
        fitted.append((ax, bar_width))
        for bars in containers:
            handles.setdefault(bars.get_label(), bars)
        ax.set_ylabel(ylabel)
        if chance:
            handles.setdefault("_chance", _chance_line(ax))
    axes[-1].set_xlabel(xlabel)
    if title:
        fig.suptitle(title, fontsize=11)
    entries = [(handles[lab], lab) for lab in labels if lab in handles]
    if chance:
        entries.append((handles["_chance"], f"chance ({100 * CHANCE:.0f}%, 4 options)"))
    cells = [(v.method, lab, g) for p in panels for lab, vals in p.series for g, v in zip(p.groups, vals)
             if v is not None and v.has_ci]
    with_ci = {lab for _, lab, _ in cells}
    err = next((c for ax in axes for c in ax.containers if c.get_label().startswith("_ci:")), None)
    if err is not None:
        entries.append((err, _ci_label(cells)))
    drawn = {lab for p in panels for lab, vals in p.series if any(v is not None for v in vals)}
    missing_ci = [lab for lab in labels if lab in drawn and lab not in with_ci]
    all_notes = list(notes)
    if missing_ci:
        who = f" for {', '.join(missing_ci)}" if with_ci else ""
        all_notes.insert(0, f"No interval{who}: {no_ci_reason}.")
    _figure_legend(fig, [h for h, _ in entries], [lab for _, lab in entries], all_notes)
    _fit_text(fig, fitted)
    return fig


def _summary_and_task_keys(runs: list[dict], keys) -> list[str]:
    if keys is not None:
        return [_canon_key(k) for k in keys]
    present = list(dict.fromkeys(k for acc in runs for k, v in acc.items() if v is not None))
    out = [k for k in ("overall", *FAMILIES) if k in present]
    out += [c for c in TASK_CODES if c in present]
    return out + [k for k in present if k not in out]


def _label(key: str, wrap: bool = False) -> str:
    label = _SUMMARY_LABELS.get(key, key)
    return label.replace(" ", "\n") if wrap else label


def _n_summary(groups: list[str]) -> int:
    return sum(1 for g in groups if g in SUMMARY_KEYS)


# ------------------------------------------------------------------ figures

def build_frame_scaling(curves: Mapping[str, Mapping[int, object]], *, title: str | None = None,
                        chance: bool = True):
    """Accuracy (%) vs number of frames, one line with markers per run (RQ1, Figure 6), with a 95% error
    bar at every point that has an interval.

    ``curves``: ``{run label: {frames: accuracy}}`` (an accuracy: number, :class:`Acc` or summary
    mapping). The x axis is log2 with ticks at 4, 8, ..., 512 (widened to any other power of two in the
    data); a budget given as ``None`` (or NaN) leaves a gap in its line; a budget not given at all is
    simply not a point (the line joins its neighbours). With several runs, each run's points are shifted
    by a few percent along x so that error bars at one budget do not hide each other.
    """
    fig, (ax,) = _new_figure(7.5, 4.8)
    styles = _styles(len(curves))
    all_x: set[int] = set()
    entries, cells, no_ci = [], [], []
    k = len(curves)
    for j, (label, curve) in enumerate(curves.items()):
        pts = []
        for n, v in (curve or {}).items():
            if isinstance(n, bool) or int(n) <= 0:
                raise ValueError(f"{label}: frame counts must be positive, got {n!r}")
            pts.append((int(n), _acc(v, f"{label} {n} frames")))
        pts.sort(key=lambda p: p[0])
        if not any(v is not None for _, v in pts):
            continue
        all_x.update(n for n, v in pts if v is not None)
        color = styles[j][0]
        shift = 2 ** (0.04 * (j - (k - 1) / 2)) if k > 1 else 1.0
        xs = [n * shift for n, _ in pts]
        # NaN breaks the line: an explicit None is a gap, not interpolated
        (line,) = ax.plot(xs, [math.nan if v is None else 100 * v.value for _, v in pts], color=color,
                          marker=_MARKERS[j % len(_MARKERS)], linestyle=_LINESTYLES[(j // 10) % len(_LINESTYLES)],
                          markersize=5, linewidth=1.6, label=str(label), zorder=3)
        entries.append((line, str(label)))
        with_ci = [(x, v) for x, (_, v) in zip(xs, pts) if v is not None and v.has_ci]
        if with_ci:
            ax.errorbar([x for x, _ in with_ci], [100 * v.value for _, v in with_ci],
                        yerr=[[100 * (v.value - v.lo) for _, v in with_ci], [100 * (v.hi - v.value) for _, v in with_ci]],
                        fmt="none", ecolor=color, elinewidth=1.0, capsize=3, capthick=1.0, alpha=0.85, zorder=2,
                        label=f"_ci:{label}")
            cells += [(v.method, str(label), str(n)) for n, v in pts if v is not None and v.has_ci]
        else:
            no_ci.append(str(label))
    if not entries:
        raise ValueError("nothing to plot: no run has an accuracy at any frame budget")
    ax.set_xscale("log", base=2)
    lo = min([4, *all_x])
    hi = max([512, *all_x])
    ticks = [2 ** e for e in range(int(math.floor(math.log2(lo))), int(math.ceil(math.log2(hi))) + 1)]
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(t) for t in ticks])
    ax.minorticks_off()
    ax.set_xlim(ticks[0] / 1.3, ticks[-1] * 1.3)
    if chance:
        entries.append((_chance_line(ax), f"chance ({100 * CHANCE:.0f}%, 4 options)"))
    err = next((c for c in ax.containers if c.get_label().startswith("_ci:")), None)
    if err is not None:
        entries.append((err, _ci_label(cells)))
    ax.set_xlabel("Frames per video (uniform over the whole video, log scale)")
    ax.set_ylabel("Accuracy (%)")
    ax.set_title(title or "Frame scaling")
    ax.grid(alpha=0.3)
    tops = [100 * (v.hi if v.has_ci else v.value) for c in curves.values() for v in
            (_acc(x, "") for x in (c or {}).values()) if v is not None]
    top = max(tops + [100 * CHANCE if chance else 0, 1])
    ax.set_ylim(0, top * 1.1 + 1)
    _percent_ticks(ax, ax.get_ylim()[1])
    notes = [f"No interval for {', '.join(no_ci)}: {_NO_CI}."] if no_ci and cells else (
        [f"No interval: {_NO_CI}."] if no_ci else [])
    _figure_legend(fig, [h for h, _ in entries], [lab for _, lab in entries], notes)
    fig.draw_without_rendering()
    return fig


def plot_frame_scaling(curves: Mapping[str, Mapping[int, object]], out_path, *, title: str | None = None) -> Path:
    """:func:`build_frame_scaling`, written as a PNG."""
    return _save(build_frame_scaling(curves, title=title), out_path)


def build_evidence_settings(settings: Mapping[str, Mapping], *, title: str | None = None):
    """Grouped bars as the paper's Figure 7 (RQ2): groups Fine-grained, Semantic reasoning, Overall;
    bars Random, Text, Uniform, GT-images (oracle), in that order.

    ``settings``: ``{setting: accuracies}``; setting names are matched loosely
    ("random", "text"/"text-only", "uniform", "gt-images"/"oracle"), unknown
    names are drawn after the four, as given.
    """
    runs = _ordered_runs(settings, _EVIDENCE_ALIASES, EVIDENCE_SETTINGS)
    accs = {k: _accuracies(settings[k], f"setting {k!r}") for k, _ in runs}
    series = [(_EVIDENCE_LABELS.get(c, c), [accs[k].get(g) for g in SUMMARY_KEYS]) for k, c in runs]
    panel = _Panel(None, [_label(g) for g in SUMMARY_KEYS], series)
    return _bars_figure([panel], title=title or "Evidence settings", xlabel="Question group")


def plot_evidence_settings(settings: Mapping[str, Mapping], out_path, *, title: str | None = None) -> Path:
    """:func:`build_evidence_settings`, written as a PNG."""
    return _save(build_evidence_settings(settings, title=title), out_path)


def build_per_task(runs: Mapping[str, Mapping], *, keys=None, title: str | None = None):
    """Grouped bars, one colour per run: Overall, the two families, then each task code (taxonomy
    order), then any other key; groups no run has are left out."""
    accs = {r: _accuracies(a, f"run {r!r}") for r, a in runs.items()}
    groups = _summary_and_task_keys(list(accs.values()), keys)
    series = [(str(r), [a.get(g) for g in groups]) for r, a in accs.items()]
    panel = _Panel(None, [_label(g, wrap=True) for g in groups], series, _n_summary(groups))
    return _bars_figure([panel], title=title or "Accuracy per task", xlabel="Overall, task family and task")


def plot_per_task(runs: Mapping[str, Mapping], out_path, *, keys=None, title: str | None = None,
                  value_labels: bool = True) -> Path:
    """:func:`build_per_task`, written as a PNG (``value_labels`` is kept for old callers: labels are
    always drawn)."""
    return _save(build_per_task(runs, keys=keys, title=title), out_path)


def build_order(runs: Mapping[str, Mapping], *, keys=None, title: str | None = None):
    """Order perturbations (RQ3, Figure 8): bars original, reverse, block shuffle, local shuffle.

    ``runs``: ``{order kind: accuracies}`` (kinds as in
    :data:`~medhorizon_tasks.core.sampling.PERTURBATION_KINDS`, spaces allowed).
    Groups: ``keys``, default Overall, the two families, then every task
    code present.
    """
    order = _ordered_runs(runs, {k: k for k in ORDER_KINDS}, ORDER_KINDS)
    accs = {k: _accuracies(runs[k], f"order {k!r}") for k, _ in order}
    groups = _summary_and_task_keys(list(accs.values()), keys)
    series = [(_ORDER_LABELS.get(c, c), [accs[k].get(g) for g in groups]) for k, c in order]
    panel = _Panel(None, [_label(g, wrap=len(groups) > 3) for g in groups], series, _n_summary(groups))
    return _bars_figure([panel], title=title or "Frame order", xlabel="Question group")


def plot_order(runs: Mapping[str, Mapping], out_path, *, keys=None, title: str | None = None) -> Path:
    """:func:`build_order`, written as a PNG."""
    return _save(build_order(runs, keys=keys, title=title), out_path)


def build_sampling(runs: Mapping[str, Mapping[int, Mapping]], *, keys=None, title: str | None = None):
    """Sampling strategies (RQ4, Figure 10): one panel per frame budget (e.g. 32, 64), bars uniform,
    frame-change, hybrid.

    ``runs``: ``{strategy: {frames: accuracies}}`` (strategy names "uniform",
    "frame_change"/"frame-change", "hybrid"; others drawn after them). Groups:
    ``keys``, default Overall, the two families, then every task code present.
    """
    order = _ordered_runs(runs, _STRATEGY_ALIASES, STRATEGIES)
    accs = {k: {int(n): _accuracies(a, f"strategy {k!r} at {n} frames") for n, a in (runs[k] or {}).items()}
            for k, _ in order}
    budgets = sorted({n for by_n in accs.values() for n in by_n})
    if not budgets:
        raise ValueError("plot_sampling: no frame budget in any run")
    groups = _summary_and_task_keys([a for by_n in accs.values() for a in by_n.values()], keys)
    panels = [_Panel(f"{n} frames", [_label(g, wrap=len(groups) > 3) for g in groups],
                     [(_STRATEGY_LABELS.get(c, c), [accs[k].get(n, {}).get(g) for g in groups]) for k, c in order],
                     _n_summary(groups)) for n in budgets]
    return _bars_figure(panels, title=title or "Frame sampling strategies", xlabel="Question group")


def plot_sampling(runs: Mapping[str, Mapping[int, Mapping]], out_path, *, keys=None,
                  title: str | None = None) -> Path:
    """:func:`build_sampling`, written as a PNG."""
    return _save(build_sampling(runs, keys=keys, title=title), out_path)


def build_bars(runs: Mapping[str, Mapping], groups=None, *, group_labels: Mapping[str, str] | None = None,
               n_summary: int = 0, title: str | None = None, xlabel: str = "Task", ylabel: str = "Accuracy (%)",
               chance: bool = False, notes: tuple[str, ...] = (), no_ci_reason: str = _NO_CI):
    """Grouped bars for any keys, taken as given: ``runs`` = ``{series: {key: accuracy}}``; ``groups``
    (default: every key with a value, in first-seen order) in the order drawn."""
    accs = {r: _accuracies(a, f"run {r!r}", canon=str) for r, a in runs.items()}
    if groups is None:
        groups = list(dict.fromkeys(k for a in accs.values() for k, v in a.items() if v is not None))
    names = [(group_labels or {}).get(g, g) for g in groups]
    panel = _Panel(None, names, [(str(r), [a.get(g) for g in groups]) for r, a in accs.items()], n_summary)
    return _bars_figure([panel], title=title, xlabel=xlabel, ylabel=ylabel, chance=chance, notes=notes,
                        no_ci_reason=no_ci_reason)


def plot_bars(runs: Mapping[str, Mapping], out_path, groups=None, **kwargs) -> Path:
    """:func:`build_bars`, written as a PNG."""
    return _save(build_bars(runs, groups, **kwargs), out_path)


_SURGHI_NO_CI = ("SurgHiBench metrics are means over videos and a score report holds no per-video values "
                 "(`leaderboard build` bootstraps over videos)")


def build_surghi(reports: Mapping[str, Mapping], *, title: str | None = None):
    """SurgHiBench: one panel for Overall and one per dataset, a group per metric (Tasks 1-3), one colour
    per run. ``reports``: ``{run: score report}`` (``score --benchmark surghi --json``)."""
    rows: dict[str, dict[str, dict]] = {}
    videos: dict[str, set] = {}
    for run, rep in reports.items():
        named = {"Overall": rep.get("overall") or {}, **(rep.get("datasets") or {})}
        for name, metrics in named.items():
            rows.setdefault(name, {})[run] = metrics
            videos.setdefault(name, set()).add(metrics.get("n_videos"))
    keys = [k for k, _ in SURGHI_METRICS if any(_value(m.get(k), f"{r} {name}.{k}") is not None
                                                 for name, by_run in rows.items() for r, m in by_run.items())]
    labels = dict(SURGHI_METRICS)
    panels = []
    for name, by_run in rows.items():
        counts = videos[name]
        n_videos = next(iter(counts)) if len(counts) == 1 else None
        sub = f"{name} ({n_videos} videos)" if _is_count(n_videos) else name
        series = [(str(run), [_acc(by_run.get(run, {}).get(k), f"{run} {name}.{k}") for k in keys])
                  for run in reports]
        panels.append(_Panel(sub, [labels[k] for k in keys], series))
    return _bars_figure(panels, title=title or "SurgHiBench", xlabel="Metric (↓: lower is better)",
                        ylabel="Metric (%)", chance=False, no_ci_reason=_SURGHI_NO_CI)


def plot_surghi(reports: Mapping[str, Mapping], out_path, *, title: str | None = None) -> Path:
    """:func:`build_surghi`, written as a PNG."""
    return _save(build_surghi(reports, title=title), out_path)


# ------------------------------------------------------------------ diagnostics

def _diagnostic_rows(kind: str, rows, where: str = "diagnostic") -> list[dict]:
    """The rows of ``diagnose`` (in memory, or read back from ``<kind>.json``) as
    {label, group, x, model, overall, fine_grained, semantic_reasoning}, accuracies as :class:`Acc`.

    Overall's interval is the row's ``ci95_lo`` / ``ci95_hi`` (the scorer's, Wilson), else Wilson from
    ``correct`` / ``n``; the families' come from the row's ``report`` (correct / n per family) when the
    row has one.
    """
    if kind not in DIAGNOSTIC_KINDS:
        raise ValueError(f"{where}: unknown diagnostic {kind!r} (known: {', '.join(DIAGNOSTIC_KINDS)})")
    if not isinstance(rows, (list, tuple)) or not rows:
        raise ValueError(f"{where}: expected a non-empty list of rows")
    out = []
    for i, r in enumerate(rows):
        at = f"{where} row {i}"
        if not isinstance(r, Mapping):
            raise ValueError(f"{at}: expected an object, got {type(r).__name__}")
        if r.get("diagnostic", kind) != kind:
            raise ValueError(f"{at}: field 'diagnostic': {r.get('diagnostic')!r}, but the rows are {kind!r}")
        for name in ("label", "group"):
            if not isinstance(r.get(name), str):
                raise ValueError(f"{at}: field {name!r}: expected text, got {r.get(name)!r}")
        x = r.get("x")
        if kind in ("budgets", "sampling"):
            if isinstance(x, str) and re.fullmatch(r"[0-9]{1,9}", x):  # a CSV-typed row
                x = int(x)
            if not _is_count(x) or x <= 0:
                raise ValueError(f"{at}: field 'x': expected a number of frames, got {x!r}")
        rep = r.get("report") if isinstance(r.get("report"), Mapping) else {}
        overall = rep.get("overall") if isinstance(rep.get("overall"), Mapping) else {}
        method = "wilson" if str(overall.get("ci_method", "wilson")).lower() == "wilson" else "given"
        row = {"label": r["label"], "group": r["group"], "x": x, "model": str(r.get("model") or ""),
               "overall": _summary_acc(r, f"{at}", lo_hi_method=method)}
        families = rep.get("by_family") if isinstance(rep.get("by_family"), Mapping) else {}
        for fam in FAMILIES:
            s = families.get(fam)
            row[fam] = _summary_acc(s, f"{at}.report.by_family.{fam}") if isinstance(s, Mapping) else \
                _acc(r.get(fam), f"{at}: field {fam!r}")
        out.append(row)
    return out


def _diagnostic_model(rows: list[dict]) -> str:
    models = list(dict.fromkeys(r["model"] for r in rows if r["model"]))
    own = [m for m in models if m != "medhorizon_random"] or models  # the Random row runs a fixed model
    return ", ".join(own)


def build_diagnostic(kind: str, rows, *, model: str | None = None, title: str | None = None):
    """The figure of one diagnostic (``budgets``, ``evidence``, ``order``, ``sampling``) from its rows,
    as ``medhorizon-tasks diagnose`` draws it (and ``plot`` redraws it from ``<kind>.json``)."""
    norm = _diagnostic_rows(kind, rows)
    model = model or _diagnostic_model(norm) or "model"

    def summary(r):
        return {"overall": r["overall"], "fine_grained": r["fine_grained"],
                "semantic_reasoning": r["semantic_reasoning"]}

    if kind == "budgets":
        return build_frame_scaling({model: {r["x"]: r["overall"] for r in norm}},
                                   title=title or f"Frame scaling: {model}")
    if kind == "evidence":
        return build_evidence_settings({r["label"]: summary(r) for r in norm},
                                       title=title or f"Evidence settings: {model}")
    if kind == "order":
        return build_order({r["group"]: summary(r) for r in norm}, title=title or f"Frame order: {model}")
    runs: dict[str, dict[int, dict]] = {}
    for r in norm:
        runs.setdefault(r["group"], {})[r["x"]] = summary(r)
    return build_sampling(runs, title=title or f"Frame sampling strategies: {model}")


def plot_diagnostic(kind: str, rows, out_path, *, model: str | None = None, title: str | None = None) -> Path:
    """:func:`build_diagnostic`, written as a PNG."""
    return _save(build_diagnostic(kind, rows, model=model, title=title), out_path)


# ------------------------------------------------------------------ inputs

@dataclass
class ResultsFile:
    """One results file as :func:`load_results` read it.

    ``kind``: ``"lmms_eval"``, ``"medhorizon"`` (score report), ``"sureon"``, ``"surghi"``,
    ``"diagnostic"`` or ``"flat"``. ``values``: ``{key: Acc or None}`` (all but surghi and
    diagnostics); ``report``: the SurgHiBench report; ``rows`` / ``diagnostic``: a diagnostics file's
    rows and kind; ``label``: the series name (the model of an lmms-eval or diagnostics file, else the
    file name); ``skipped``: lmms-eval tasks without an accuracy metric.
    """

    path: Path
    kind: str
    label: str
    values: dict[str, Acc | None] = field(default_factory=dict)
    report: dict | None = None
    rows: list | None = None
    diagnostic: str | None = None
    skipped: list[str] = field(default_factory=list)


def _lmms_label(data: dict, path: Path) -> str:
    name = data.get("model_name")
    if isinstance(name, str) and name.strip():
        name = name.strip()
        # a local checkpoint path says less than its last folder; a hub id (org/name) stays whole
        return Path(name).name or name if name.startswith(("/", ".", "~")) else name
    config = data.get("config")
    if isinstance(config, Mapping) and isinstance(config.get("model"), str) and config["model"].strip():
        return config["model"].strip()
    return path.parent.name or path.stem


def _lmms_counts(data: dict) -> dict[str, int]:
    """Items behind each task's accuracy: lmms-eval's ``n-samples`` ``effective``; a group's is the sum of
    its subtasks' (its accuracy is their size-weighted mean)."""
    counts = {}
    ns = data.get("n-samples")
    for task, c in (ns.items() if isinstance(ns, Mapping) else ()):
        if isinstance(c, Mapping) and _is_count(c.get("effective")) and c["effective"] > 0:
            counts[str(task)] = c["effective"]
    subtasks = data.get("group_subtasks")
    for group, subs in (subtasks.items() if isinstance(subtasks, Mapping) else ()):
        if str(group) not in counts and isinstance(subs, list) and subs and all(str(s) in counts for s in subs):
            counts[str(group)] = sum(counts[str(s)] for s in subs)
    return counts


def _load_lmms(data: dict, path: Path) -> ResultsFile:
    counts = _lmms_counts(data)
    out = ResultsFile(path, "lmms_eval", _lmms_label(data, path))
    for task, metrics in data["results"].items():
        task = str(task)
        key = None
        if isinstance(metrics, Mapping):
            keys = ["accuracy,none"] + sorted(str(k) for k in metrics if str(k).startswith("accuracy,")
                                              and k != "accuracy,none")
            key = next((k for k in keys if k in metrics), None)
        if key is None:
            out.skipped.append(task)
            out.values[task] = None
            continue
        value = _file_value(metrics[key], path, f"results.{task}.{key}")
        acc = None if value is None else Acc(value)
        n = counts.get(task)
        if acc is not None and n:
            correct = round(value * n)
            # An accuracy that is not k/n (Sureon's mu leaves its SM items out of n) gets no interval on n.
            if abs(correct / n - value) <= 1e-9 + 1e-12 * n:
                from ..core.stats import wilson_ci

                lo, hi = wilson_ci(correct, n)
                acc = Acc(value, min(lo, value), max(hi, value), "wilson_lmms")
        out.values[task] = acc
    return out


def _section(data: dict, name: str, path: Path) -> dict:
    section = data.get(name) or {}
    if not isinstance(section, dict):
        raise DataError(f"field '{name}': expected an object {{name: {{\"accuracy\": ...}}}}, got "
                        f"{type(section).__name__}", source=str(path))
    return section


def _summary_from_file(summary, path: Path, where: str) -> Acc | None:
    if not isinstance(summary, Mapping):
        return None
    value = summary.get("accuracy")
    if value is None or (isinstance(value, str) and value.strip().upper() in ("N/A", "NA", "")):
        return None
    return _summary_acc(summary, where)


def _load_score_medhorizon(data: dict, path: Path) -> ResultsFile:
    out = ResultsFile(path, "medhorizon", path.stem)
    if isinstance(data.get("overall"), dict):
        out.values["overall"] = _summary_from_file(data["overall"], path, "overall")
    for name in ("by_family", "by_task"):
        for key, summary in _section(data, name, path).items():
            out.values[str(key)] = _summary_from_file(summary, path, f"{name}.{key}")
    return out


def _load_score_sureon(data: dict, path: Path) -> ResultsFile:
    out = ResultsFile(path, "sureon", path.stem)
    for key, _ in SUREON_SUMMARY:
        out.values[key] = _summary_from_file(data.get(key), path, key)
    for key, summary in _section(data, "by_category", path).items():
        out.values[str(key)] = _summary_from_file(summary, path, f"by_category.{key}")
    sm = data.get("sm")
    if isinstance(sm, Mapping) and sm.get("accuracy") is not None:
        out.values["SM"] = _summary_from_file(sm, path, "sm")
    return out


def _load_score_surghi(data: dict, path: Path) -> ResultsFile:
    rows = {"overall": data["overall"], **{f"datasets.{k}": v for k, v in _section(data, "datasets", path).items()}}
    for name, metrics in rows.items():
        if not isinstance(metrics, dict):
            raise DataError(f"field '{name}': expected an object of metrics, got {type(metrics).__name__}",
                            source=str(path))
        for k, _ in SURGHI_METRICS:
            _value(metrics.get(k), f"{name}.{k}")
    return ResultsFile(path, "surghi", path.stem, report=data)


def _load_diagnostic(data: list, path: Path) -> ResultsFile:
    kind = data[0].get("diagnostic")
    if kind not in DIAGNOSTIC_KINDS:
        raise DataError(f"row 0: field 'diagnostic': {kind!r} is not a diagnostic (known: "
                        f"{', '.join(DIAGNOSTIC_KINDS)})", source=str(path))
    norm = _diagnostic_rows(kind, data, where="diagnostics")
    return ResultsFile(path, "diagnostic", _diagnostic_model(norm) or path.stem, rows=data, diagnostic=kind)


def load_results(path: str | os.PathLike) -> ResultsFile:
    """Read any results file the package (or lmms-eval) writes, see :data:`ACCEPTED_SHAPES`:

    - an lmms-eval results JSON: ``{"results": {task: {"accuracy,none": ...}}, "n-samples": {task:
      {"effective": n}}, ...}`` -> ``values`` ``{task name: Acc}``, with a Wilson interval on the
      effective sample count when the accuracy is a proportion of it; tasks with no ``accuracy``
      metric (SurgHiBench's) are ``skipped``;
    - ``score --json`` of MedHorizon -> ``{"overall", "fine_grained", "semantic_reasoning", task code}``
      (Wilson intervals: ``ci95``, and correct / n of each task and family); of Sureon -> ``{"mu",
      "perception", "reasoning", category code, "SM"}`` (bootstrap intervals); of SurgHiBench ->
      ``report`` (no intervals);
    - a diagnostics JSON (``budgets.json`` ...) -> ``rows``, drawn by :func:`plot_diagnostic`;
    - a flat ``{key: accuracy or null}`` object.

    Anything else is one :class:`DataError` naming the file and the accepted shapes.
    """
    from ..core.safeio import read_json

    path = Path(path)
    data = read_json(path)
    try:
        if isinstance(data, list) and data and all(isinstance(r, dict) and "diagnostic" in r for r in data):
            return _load_diagnostic(data, path)
        if isinstance(data, dict):
            if isinstance(data.get("results"), dict):
                return _load_lmms(data, path)
            if data.get("benchmark") == "sureon" or isinstance(data.get("mu"), dict):
                return _load_score_sureon(data, path)
            if isinstance(data.get("datasets"), dict) and isinstance(data.get("overall"), dict) and (
                    data.get("benchmark") == "surghi" or "multi_level" in data["overall"]):
                return _load_score_surghi(data, path)
            if isinstance(data.get("overall"), dict) or isinstance(data.get("by_task"), dict):
                return _load_score_medhorizon(data, path)
            if data and all(v is None or _is_number(v) or isinstance(v, str) and v.strip().upper() in ("N/A", "NA")
                            for v in data.values()):
                values = {str(k): _file_value(v, path, str(k)) for k, v in data.items()}
                return ResultsFile(path, "flat", path.stem, values={k: None if v is None else Acc(v)
                                                                    for k, v in values.items()})
    except ValueError as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(str(exc), source=str(path)) from None
    if not isinstance(data, dict):
        what = f"a JSON {type(data).__name__}"
    elif not data:
        what = "an empty object"
    else:
        what = "an object with keys " + ", ".join(repr(str(k)) for k in list(data)[:6]) + (" ..." if len(data) > 6 else "")
    raise DataError(f"not a results file this package reads (got {what}); accepted: {ACCEPTED_SHAPES}",
                    source=str(path))


def load_accuracy_file(path: str | os.PathLike) -> dict[str, float | None]:
    """Accuracies (0..1) of a results file as a flat ``{key: accuracy}`` (intervals dropped):

    (a) ``medhorizon-tasks score --json`` output -> ``{"overall": 0.262, "fine_grained": ...,
        "semantic_reasoning": ..., "PR": 0.236, ...}`` (the keys every plot function reads); Sureon's ->
        ``{"mu", "perception", "reasoning", category codes}``;
    (b) an lmms-eval results JSON -> ``{task name: accuracy}`` (metric ``accuracy,none``, else the first
        ``accuracy,<filter>``; a task without one, or with "N/A", maps to None).
        :func:`budget_curve` turns ``medhorizon_frames<N>`` names into a frame-scaling curve;
    (c) an already flat ``{key: accuracy or null}`` object, returned as is.

    A SurgHiBench report or a diagnostics file has no such flat form (a DataError says so): read it with
    :func:`load_results`.
    """
    res = load_results(path)
    if res.kind in ("surghi", "diagnostic"):
        what = "a SurgHiBench score report" if res.kind == "surghi" else f"a {res.diagnostic} diagnostics file"
        raise DataError(f"{what} has no flat {{key: accuracy}} form; read it with plots.load_results or draw "
                        f"it with `medhorizon-tasks plot`", source=str(res.path))
    return {k: None if v is None else v.value for k, v in res.values.items()}


def _file_value(x, path: Path, where: str) -> float | None:
    if x is None or (isinstance(x, str) and x.strip().upper() in ("N/A", "NA", "")):
        return None
    try:
        return _value(x, where)
    except ValueError as exc:
        raise DataError(str(exc), source=str(path)) from None


def budget_curve(accuracies: Mapping[str, object], pattern: str = r"frames(\d+)$") -> dict[int, object]:
    """``{frames: accuracy}`` from task names such as ``medhorizon_frames64`` (for :func:`plot_frame_scaling`)."""
    rx = re.compile(pattern)
    out = {}
    for name, acc in accuracies.items():
        m = rx.search(str(name))
        if m:
            out[int(m.group(1))] = acc
    return dict(sorted(out.items()))


def frame_curves(values: Mapping[str, object]) -> dict[str, dict[int, object]]:
    """``{task prefix: {frames: accuracy}}`` from the ``medhorizon_frames<N>`` and
    ``medhorizon_synthetic_frames<N>`` tasks of an lmms-eval results file (one curve per prefix)."""
    out: dict[str, dict[int, object]] = {}
    for name, acc in values.items():
        m = _LMMS_FRAMES.match(str(name))
        if m and acc is not None:
            out.setdefault(m.group(1), {})[int(m.group(2))] = acc
    return {p: dict(sorted(c.items())) for p, c in out.items()}


# ------------------------------------------------------------------ `medhorizon-tasks plot`

def _unique_labels(files: list[ResultsFile]) -> None:
    seen: dict[str, int] = {}
    for f in files:
        seen[f.label] = seen.get(f.label, 0) + 1
    for f in files:
        if seen[f.label] > 1:
            f.label = f"{f.label} ({f.path.parent.name}/{f.path.name})"
    for i, f in enumerate(files):
        if sum(1 for g in files if g.label == f.label) > 1:
            f.label = f"{f.label} #{i + 1}"


def _build(fig_of, files: list[ResultsFile]):
    try:
        return fig_of()
    except DataError:
        raise
    except ValueError as exc:  # e.g. a report whose every metric is null: nothing to draw
        raise DataError(str(exc), source=", ".join(str(f.path) for f in files)) from None


def build_files(paths, *, labels: list[str] | None = None) -> dict[str, object]:
    """Every figure the files allow, ``{name: Figure}``; each file is one series (its ``label``: the given
    one, else the model, else the file name). All files are read before anything is drawn.

    - MedHorizon score reports and flat files -> ``per_task`` (Overall, families, tasks);
    - lmms-eval results -> ``per_task_lmms_eval`` (one group per task name) and, when they hold
      ``medhorizon[_synthetic]_frames<N>`` tasks, ``frame_scaling``;
    - Sureon score reports -> ``per_category_sureon``; SurgHiBench -> ``metrics_surghi``;
    - a diagnostics JSON -> its file name (``budgets`` ...), the figure ``diagnose`` draws.
    """
    files = [load_results(p) for p in paths]
    if labels is not None:
        if len(labels) != len(files):
            raise DataError(f"{len(labels)} label(s) for {len(files)} file(s)")
        for f, lab in zip(files, labels):
            f.label = lab
    else:  # series of one chart must differ; a diagnostics figure has a chart of its own
        for kinds in (("medhorizon", "flat"), ("lmms_eval",), ("sureon",), ("surghi",)):
            _unique_labels([f for f in files if f.kind in kinds])
    for f in files:
        if f.kind not in ("surghi", "diagnostic") and not any(v is not None for v in f.values.values()):
            why = (f"its tasks ({', '.join(f.skipped)}) have no accuracy metric" if f.skipped
                   else "it holds no accuracy")
            raise DataError(f"nothing to plot: {why}; accepted: {ACCEPTED_SHAPES}", source=str(f.path))
    figures: dict[str, object] = {}

    def add(name: str, fig) -> None:
        k, unique = 2, name
        while unique in figures:
            unique, k = f"{name}_{k}", k + 1
        figures[unique] = fig

    mh = [f for f in files if f.kind in ("medhorizon", "flat")]
    if mh:
        add("per_task", _build(lambda: build_per_task({f.label: f.values for f in mh}), mh))
    lm = [f for f in files if f.kind == "lmms_eval"]
    if lm:
        skipped = list(dict.fromkeys(t for f in lm for t in f.skipped))
        notes = (f"Not drawn: {', '.join(skipped)} (no accuracy metric).",) if skipped else ()
        values = {f.label: {k: v for k, v in f.values.items() if k not in f.skipped} for f in lm}
        tasks = list(dict.fromkeys(k for v in values.values() for k, a in v.items() if a is not None))
        add("per_task_lmms_eval", _build(lambda: build_bars(
            values, tasks, title="Accuracy per lmms-eval task", xlabel="lmms-eval task",
            chance=all(t.startswith("medhorizon") for t in tasks), notes=notes,
            no_ci_reason="lmms-eval gives no sample count for it"), lm))
        curves = {}
        for f in lm:
            by_prefix = frame_curves(f.values)
            for prefix, curve in by_prefix.items():
                curves[f.label if len(by_prefix) == 1 else f"{f.label} ({prefix})"] = curve
        if curves:
            add("frame_scaling", _build(lambda: build_frame_scaling(curves), lm))
    so = [f for f in files if f.kind == "sureon"]
    if so:
        cats = [k for f in so for k in f.values if k not in dict(SUREON_SUMMARY)]
        groups = [k for k, _ in SUREON_SUMMARY] + list(dict.fromkeys(cats))
        add("per_category_sureon", _build(lambda: build_bars(
            {f.label: f.values for f in so}, groups, group_labels=dict(SUREON_SUMMARY),
            n_summary=len(SUREON_SUMMARY), title="Sureon accuracy", xlabel="μ, group and category"), so))
    sg = [f for f in files if f.kind == "surghi"]
    if sg:
        add("metrics_surghi", _build(lambda: build_surghi({f.label: f.report for f in sg}), sg))
    for f in files:
        if f.kind == "diagnostic":
            add(f.path.stem, _build(lambda: build_diagnostic(f.diagnostic, f.rows, model=f.label), [f]))
    return figures


def plot_files(paths, out_dir, *, labels: list[str] | None = None) -> list[Path]:
    """:func:`build_files`, each figure written as ``<out_dir>/<name>.png``; returns the paths."""
    out = Path(out_dir)
    return [_save(fig, out / f"{name}.png") for name, fig in build_files(paths, labels=labels).items()]
