"""``select --recall``'s figure: evidence recall against the frame budget, one curve per selector.

Selectors often coincide (every query-aware selector at 100% from 16 frames on the synthetic data), and a
curve drawn over another hides it. Here each curve keeps its own marker (hollow, the first drawn the
largest, so nested markers all show) and line style, curves are set a little apart along the budget axis
(a few percent of a doubling; the ticks stay on the budgets), the axis leaves room above 100%, and the
legend says which curves coincide with an earlier one, and where.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from .canvas import _LINESTYLES, _MARKERS, _figure_legend, _new_figure, _styles

__all__ = ["build_recall", "plot_recall", "coinciding"]

_SPREAD = 0.05  # the horizontal offset between neighbouring curves, in doublings of the budget


def coinciding(curves: Mapping[str, Sequence[tuple[int, float]]]) -> dict[str, dict[str, list[int]]]:
    """``{name: {earlier name: [budgets]}}``: for each curve, the earlier curves (in ``curves``' order) it
    has the same value as, and at which budgets."""
    out: dict[str, dict[str, list[int]]] = {}
    names = list(curves)
    for k, name in enumerate(names):
        mine = dict(curves[name])
        for other in names[:k]:
            theirs = dict(curves[other])
            same = sorted(b for b, r in mine.items() if b in theirs and abs(theirs[b] - r) < 1e-9)
            if same:
                out.setdefault(name, {})[other] = same
    return out


def build_recall(curves: Mapping[str, Sequence[tuple[int, float]]], *, title: str | None = None):
    """The figure of ``{selector: [(budget, recall %)]}`` (drawn in the given order; uniform first reads best)."""
    names = [n for n in curves if curves[n]]
    if not names:
        raise ValueError("nothing to plot: no selector has a recall")
    fig, (ax,) = _new_figure(6.0, 4.6)
    styles = _styles(len(names))
    same = coinciding({n: curves[n] for n in names})
    for k, name in enumerate(names):
        pts = sorted(curves[name])
        shift = 2 ** ((k - (len(names) - 1) / 2) * _SPREAD)
        label = name
        if same.get(name):
            label += " (= " + "; ".join(f"{o} at {', '.join(map(str, b))}" for o, b in same[name].items()) + ")"
        ax.plot([b * shift for b, _ in pts], [r for _, r in pts], label=label, color=styles[k][0],
                marker=_MARKERS[k % len(_MARKERS)], markersize=max(4.0, 10.0 - 1.5 * k), markerfacecolor="none",
                markeredgewidth=1.4, linestyle="--" if name == "uniform" else _LINESTYLES[k % len(_LINESTYLES)],
                linewidth=1.3, zorder=3 + k)
    budgets = sorted({b for n in names for b, _ in curves[n]})
    ax.set_xscale("log", base=2)
    ax.set_xticks(budgets, [str(b) for b in budgets])
    ax.minorticks_off()
    ax.set_xlim(budgets[0] / 2 ** 0.4, budgets[-1] * 2 ** 0.4)
    ax.set_xlabel("frames shown (budget)")
    ax.set_ylabel("evidence recall, items (%)")
    ax.set_ylim(-3, 108)  # room above 100% and below 0%: a curve along either edge is not hidden by the frame
    ax.set_yticks(range(0, 101, 20))
    ax.grid(alpha=0.3)
    notes = ["Curves are set slightly apart along the budget axis; hollow markers, the first drawn the "
             "largest, so coinciding curves stay visible."] if same else []
    handles, labels = ax.get_legend_handles_labels()
    _figure_legend(fig, handles, labels, notes)
    if title:
        ax.set_title(title, fontsize=10)
    return fig


def plot_recall(curves: Mapping[str, Sequence[tuple[int, float]]], out_path, *, title: str | None = None) -> Path:
    """:func:`build_recall`, written as a PNG (without the "Software" chunk: the same curves give the same bytes
    whatever matplotlib wrote them, as ``select`` compares its outputs with what it wrote)."""
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig = build_recall(curves, title=title)
    try:
        fig.savefig(out, format="png", metadata={"Software": None})
    finally:
        fig.clear()
    return out
