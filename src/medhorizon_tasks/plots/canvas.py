"""Canvas helpers every figure shares: a pyplot-free Agg figure, saving it as PNG, colours and markers per
series, the legend below the axes (and its 95% CI entry), the chance line and percent ticks."""

from __future__ import annotations

import textwrap
from pathlib import Path

from .accuracies import CHANCE, CI_METHODS

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
