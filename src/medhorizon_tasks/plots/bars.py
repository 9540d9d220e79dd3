"""The grouped-bar figure behind every bar chart: panels of groups with one bar per series, whiskers where an
interval is known, value labels fitted inside the axes, one legend for the figure."""

from __future__ import annotations

from dataclasses import dataclass

from .accuracies import _NO_CI, CHANCE, Acc
from .canvas import _chance_line, _ci_label, _figure_legend, _new_figure, _percent_ticks, _styles


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
    for ax, _w in axes_widths:
        _clear_of_whiskers(ax, renderer)
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


def whisker_boxes(ax, renderer) -> list:
    """The display boxes of every whisker line and cap drawn on ``ax`` (error bars)."""
    from matplotlib.container import ErrorbarContainer
    from matplotlib.transforms import Bbox

    boxes = []
    for c in ax.containers:
        if not isinstance(c, ErrorbarContainer):
            continue
        _, caps, barcols = c.lines
        for cap in caps or ():  # one Line2D per series holds every cap as a marker: a box per point
            half = cap.get_markersize() * renderer.points_to_pixels(1.0) / 2 + cap.get_markeredgewidth()
            for x, y in ax.transData.transform(cap.get_xydata()):
                boxes.append(Bbox.from_extents(x - half, y - 1, x + half, y + 1))
        for col in barcols or ():
            for seg in col.get_segments():
                (x0, y0), (x1, y1) = ax.transData.transform(seg[0]), ax.transData.transform(seg[-1])
                boxes.append(Bbox.from_extents(min(x0, x1) - 0.5, min(y0, y1), max(x0, x1) + 0.5, max(y0, y1)))
    return boxes


def _clear_of_whiskers(ax, renderer, pad_px: float = 2.0) -> None:
    """Move each value label up until it overprints no whisker or cap (its own bar's or a neighbour's): above
    the highest one under it, by the label's usual offset."""
    boxes = whisker_boxes(ax, renderer)
    if not boxes:
        return
    for t in (t for t in ax.texts if t.get_gid() == "value"):
        for _ in range(4):
            bb = t.get_window_extent(renderer)
            hit = [b for b in boxes if b.x1 > bb.x0 - pad_px and b.x0 < bb.x1 + pad_px
                   and b.y1 > bb.y0 - pad_px and b.y0 < bb.y1]
            if not hit:
                break
            top_px = max(b.y1 for b in hit)
            x_px = ax.transData.transform(t.xy)[0]
            t.xy = (t.xy[0], ax.transData.inverted().transform((x_px, top_px + pad_px))[1])


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
