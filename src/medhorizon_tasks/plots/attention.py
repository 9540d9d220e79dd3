"""MedHorizon Fig. 9 from ``attention.json`` (``medhorizon-tasks diagnose attention``): attention drift.

Four panels, one series per model (the file's ``summary`` rows of level
``overall``), every mean with its 95% bootstrap interval over items:

* frame level: the cumulative attention after ranking temporal units by
  attention (the mean curve), with the 90% line and each model's
  units-for-90% point; the paper's quoted points (76.7%, 85.6%) drawn as
  hollow markers, labelled as the paper's;
* frame similarity: the mean pairwise cosine of units' visual features, with
  the paper's "around 0.90";
* patch level: each patch of a non-keyframe unit against the nearest preceding
  keyframe's, all patches and the top tenth by attention;
* where the attention goes: units for 50 / 80 / 90%, first and last tenth,
  evidence mass.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from .canvas import _save, _styles

__all__ = ["build_attention", "plot_attention"]

_SHARES = (("units_for_50", "units\nfor 50%"), ("units_for_80", "units\nfor 80%"), ("units_for_90", "units\nfor 90%"),
           ("first_tenth", "first\ntenth"), ("last_tenth", "last\ntenth"), ("evidence_mass", "evidence\nmass"))
_PATCH = (("patch_similarity", "all compared\npatches"), ("patch_similarity_top_attention", "top 10%\nby attention"))


def _err(row: Mapping, key: str) -> tuple[float, float] | None:
    ci, v = row.get(f"{key}_ci95"), row.get(key)
    if v is None or not ci:
        return None
    return max(0.0, v - ci[0]), max(0.0, ci[1] - v)


def _bars(ax, rows: list[dict], keys, colours) -> None:
    width = 0.8 / max(1, len(rows))
    for j, (row, (colour, hatch)) in enumerate(zip(rows, colours)):
        label = row["model"]
        for i, (key, _) in enumerate(keys):
            if row.get(key) is None:
                continue
            err = _err(row, key)
            ax.bar(i - 0.4 + width * (j + 0.5), row[key], width, color=colour, hatch=hatch, capsize=3,
                   yerr=None if err is None else [[err[0]], [err[1]]], label=label)
            label = None
    ax.set_xticks(range(len(keys)), [label for _, label in keys], fontsize=8)


def build_attention(data: Mapping, *, title: str | None = None):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = [r for r in data.get("summary", []) if r.get("level") == "overall"]
    if not rows:
        raise ValueError("attention.json has no overall summary row: nothing to draw")
    fig = Figure(figsize=(11, 8), dpi=120, layout="constrained")
    FigureCanvasAgg(fig)
    (curve_ax, sim_ax), (patch_ax, share_ax) = fig.subplots(2, 2, squeeze=False)
    colours = _styles(len(rows))

    for row, (colour, _) in zip(rows, colours):
        curve = row.get("curve")
        if curve:
            xs = [i / (len(curve) - 1) for i in range(len(curve))]
            curve_ax.plot(xs, curve, color=colour, label=f"{row['model']} (n = {row['n']})")
        if row.get("units_for_90") is not None:
            err = _err(row, "units_for_90")
            curve_ax.errorbar([row["units_for_90"]], [0.9], xerr=None if err is None else [[err[0]], [err[1]]],
                              fmt="o", color=colour, capsize=3)
    published = data.get("published", {}).get("rows", [])
    for p in (p for p in published if p.get("metric") == "units_for_90"):
        curve_ax.plot([p["value"]], [0.9], marker="D", mfc="none", color="black", linestyle="none")
        curve_ax.annotate(f"paper: {p['model']} {p['printed']}", (p["value"], 0.9), fontsize=7,
                          xytext=(-4, -14 if "Lingshu" in p["model"] else 8), textcoords="offset points", ha="right")
    curve_ax.plot([0, 1], [0, 1], color="grey", linestyle=":", linewidth=0.8, label="uniform attention")
    curve_ax.axhline(0.9, color="grey", linestyle="--", linewidth=0.8)
    curve_ax.set(xlim=(0, 1), ylim=(0, 1.02), xlabel="share of temporal units, ranked by attention",
                 ylabel="cumulative share of visual attention", title="Frame level: cumulative attention")
    curve_ax.legend(fontsize=7, loc="lower right")

    _bars(sim_ax, rows, (("frame_similarity", "mean pairwise cosine\nof temporal units"),), colours)
    for p in (p for p in published if p.get("metric") == "frame_similarity"):
        sim_ax.axhline(p["value"], color="black", linestyle="--", linewidth=0.8)
    if any(p.get("metric") == "frame_similarity" for p in published):
        sim_ax.annotate("paper: Qwen3-VL-8B, Lingshu-7B around 0.90", (0.02, 0.9), xycoords=("axes fraction", "data"),
                        fontsize=7, xytext=(0, 3), textcoords="offset points")
    sim_ax.set(ylim=(min(0.0, *(r.get("frame_similarity") or 0 for r in rows)), 1.05),
               title="Frame similarity", ylabel="cosine")
    _bars(patch_ax, rows, _PATCH, colours)
    if all(r.get(k) is None for r in rows for k, _ in _PATCH):
        patch_ax.text(0.5, 0.5, "no unit compared: every non-keyframe unit\ncomes before the first keyframe",
                      transform=patch_ax.transAxes, ha="center", va="center", fontsize=8)
    patch_ax.set(ylim=(min(0.0, *(r.get(k) or 0 for r in rows for k, _ in _PATCH)), 1.05),
                 title="Patch level: vs nearest preceding keyframe", ylabel="cosine")
    _bars(share_ax, rows, _SHARES, colours)
    share_ax.set(ylim=(0, 1.05), title="Where the visual attention goes", ylabel="share")
    share_ax.legend(fontsize=7)
    frames = data.get("frames")
    fig.suptitle(title or f"Attention drift (MedHorizon Fig. 9): {frames} frames, layers {data.get('layers')}; "
                 "whiskers: 95% percentile bootstrap over items", fontsize=10)
    return fig


def plot_attention(data: Mapping, out_path, *, title: str | None = None) -> Path:
    return _save(build_attention(data, title=title), out_path)
