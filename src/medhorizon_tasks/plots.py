"""The paper's diagnostic figures as PNG files (matplotlib, Agg).

Every function takes accuracies as fractions 0..1 (shown as percent), skips
``None`` (and NaN) values, creates the output's parent folders, writes one PNG
and returns its :class:`~pathlib.Path`. Figures are built with
``matplotlib.figure.Figure`` and rendered by the Agg canvas, never through
``pyplot``: no global backend is switched, no figure is left registered, and
the figure is released when the function returns.

Accuracy dicts use one vocabulary, the one :func:`load_accuracy_file` returns
for a score report: ``"overall"``, the family names ``"fine_grained"`` and
``"semantic_reasoning"`` (also accepted: "Fine-grained", "Semantic reasoning",
"Overall"), and the task codes ("PR", "SD", ... in taxonomy order).

- :func:`plot_frame_scaling`: accuracy vs frames (RQ1, Figure 6).
- :func:`plot_evidence_settings`: Random / Text / Uniform / GT-images (RQ2, Figure 7).
- :func:`plot_per_task`: one bar per run for each task code.
- :func:`plot_order`: original / reverse / block shuffle / local shuffle (RQ3, Figure 8).
- :func:`plot_sampling`: uniform / frame-change / hybrid at 32 and 64 frames (RQ4, Figure 10).
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

from .benchmarks.medhorizon.taxonomy import FAMILIES, TASK_CODES
from .errors import DataError

__all__ = ["plot_frame_scaling", "plot_evidence_settings", "plot_per_task", "plot_order", "plot_sampling",
           "load_accuracy_file", "budget_curve", "CHANCE"]

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


# ------------------------------------------------------------------ helpers

def _norm(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", str(name).strip().lower())


def _canon_key(key: str) -> str:
    """``overall`` / family name / task code for any accepted spelling; other keys unchanged."""
    n = _norm(key)
    if n in _KEY_ALIASES:
        return _KEY_ALIASES[n]
    return _TASK_BY_LOWER.get(n, str(key))


def _value(x, where: str) -> float | None:
    """An accuracy as a fraction, None when missing; a percent value (> 1) is an error, not guessed."""
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"{where}: accuracy must be a number 0..1 or None, got {x!r}")
    x = float(x)
    if math.isnan(x):
        return None
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"{where}: accuracy must be a fraction 0..1 (plots show it as percent), got {x!r}")
    return x


def _accuracies(acc: dict, where: str) -> dict[str, float | None]:
    return {_canon_key(k): _value(v, f"{where} {k!r}") for k, v in (acc or {}).items()}


def _ordered_runs(runs: dict, canon: dict, order: tuple[str, ...]) -> list[tuple[str, str]]:
    """(original key, canonical name) pairs: the known names in ``order``, then the others as given."""
    named = [(k, canon.get(_norm(k), None)) for k in runs]
    known = sorted([(k, c) for k, c in named if c], key=lambda kc: order.index(kc[1]))
    return known + [(k, str(k)) for k, c in named if not c]


def _new_figure(width: float, height: float, nrows: int = 1):
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=120, layout="constrained")
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


def _chance_line(ax) -> None:
    ax.axhline(100 * CHANCE, color="0.45", linestyle=":", linewidth=1, label="chance (25%)", zorder=0)


def _grouped_bars(ax, groups: list[str], series: list[tuple[str, list[float | None]]], *,
                  value_labels: bool = True, colors=None) -> None:
    """Bars for each group (x positions) and series (one colour each); None values are left out."""
    import matplotlib

    cmap = matplotlib.colormaps["tab10"]
    k = max(1, len(series))
    width = 0.8 / k
    for j, (label, values) in enumerate(series):
        xs = [i + (j - (k - 1) / 2) * width for i, v in enumerate(values) if v is not None]
        ys = [100 * v for v in values if v is not None]
        color = (colors or {}).get(label, cmap(j % 10))
        bars = ax.bar(xs, ys, width=width * 0.95, label=label, color=color)
        if value_labels and ys:
            ax.bar_label(bars, fmt="%.1f", fontsize=7 if k * len(groups) <= 24 else 5, padding=1)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.set_xlim(-0.6, len(groups) - 0.4)
    ax.set_ylabel("Accuracy (%)")
    top = max([100 * v for _, vals in series for v in vals if v is not None] + [100 * CHANCE])
    ax.set_ylim(0, min(100, top * 1.18 + 2))
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)


def _summary_and_task_keys(runs: list[dict], keys) -> list[str]:
    if keys is not None:
        return [_canon_key(k) for k in keys]
    present = {k for acc in runs for k, v in acc.items() if v is not None}
    out = [k for k in ("overall", *FAMILIES) if k in present]
    return out + [c for c in TASK_CODES if c in present]


def _label(key: str, wrap: bool = False) -> str:
    label = _SUMMARY_LABELS.get(key, key)
    return label.replace(" ", "\n") if wrap else label


def _separate_summary(ax, groups: list[str]) -> None:
    """A faint vertical line between the summary groups (overall, families) and the task codes."""
    n_summary = sum(1 for g in groups if g in SUMMARY_KEYS)
    if 0 < n_summary < len(groups):
        ax.axvline(n_summary - 0.5, color="0.6", linewidth=0.8, linestyle="--")


# ------------------------------------------------------------------ figures

def plot_frame_scaling(curves: dict[str, dict[int, float]], out_path, *, title: str | None = None) -> Path:
    """Accuracy (%) vs number of frames, one line with markers per run (RQ1, Figure 6).

    ``curves``: ``{run label: {frames: accuracy}}``. The x axis is log2 with
    ticks at 4, 8, ..., 512 (widened to any other power of two in the data);
    a budget given as ``None`` (or NaN) leaves a gap in its line; a budget not
    given at all is simply not a point (the line joins its neighbours).
    """
    fig, (ax,) = _new_figure(7.0, 4.2)
    all_x: set[int] = set()
    for label, curve in curves.items():
        pts = sorted((int(n), _value(v, f"{label} {n} frames")) for n, v in (curve or {}).items())
        if any(n <= 0 for n, _ in pts):
            raise ValueError(f"{label}: frame counts must be positive")
        if any(v is not None for _, v in pts):
            all_x.update(n for n, v in pts if v is not None)
            # NaN breaks the line: an explicit None is a gap, not interpolated
            ax.plot([n for n, _ in pts], [math.nan if v is None else 100 * v for _, v in pts], marker="o",
                    label=str(label))
    ax.set_xscale("log", base=2)
    lo = min([4, *all_x]) if all_x else 4
    hi = max([512, *all_x]) if all_x else 512
    ticks = [2 ** e for e in range(int(math.floor(math.log2(lo))), int(math.ceil(math.log2(hi))) + 1)]
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(t) for t in ticks])
    ax.minorticks_off()
    ax.set_xlim(ticks[0] / 1.25, ticks[-1] * 1.25)
    _chance_line(ax)
    ax.set_xlabel("Number of frames")
    ax.set_ylabel("Accuracy (%)")
    ax.set_title(title or "Frame scaling")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return _save(fig, out_path)


def plot_evidence_settings(settings: dict[str, dict[str, float]], out_path, *, title: str | None = None) -> Path:
    """Grouped bars as the paper's Figure 7 (RQ2): groups Fine-grained, Semantic reasoning, Overall;
    bars Random, Text, Uniform, GT-images (oracle), in that order.

    ``settings``: ``{setting: accuracies}``; setting names are matched loosely
    ("random", "text"/"text-only", "uniform", "gt-images"/"oracle"), unknown
    names are drawn after the four, as given.
    """
    runs = _ordered_runs(settings, _EVIDENCE_ALIASES, EVIDENCE_SETTINGS)
    accs = {k: _accuracies(settings[k], f"setting {k!r}") for k, _ in runs}
    series = [(_EVIDENCE_LABELS.get(c, c), [accs[k].get(g) for g in SUMMARY_KEYS]) for k, c in runs]
    fig, (ax,) = _new_figure(7.0, 4.2)
    _grouped_bars(ax, [_label(g) for g in SUMMARY_KEYS], series)
    _chance_line(ax)
    ax.set_title(title or "Evidence settings")
    ax.legend(fontsize=8, ncols=min(5, len(series) + 1), loc="upper left")
    return _save(fig, out_path)


def plot_per_task(runs: dict[str, dict[str, float]], out_path, *, title: str | None = None,
                  value_labels: bool = False) -> Path:
    """Grouped bars per task code (taxonomy order), one colour per run; tasks no run has are left out."""
    accs = {r: _accuracies(a, f"run {r!r}") for r, a in runs.items()}
    tasks = [c for c in TASK_CODES if any(a.get(c) is not None for a in accs.values())]
    series = [(str(r), [a.get(c) for c in tasks]) for r, a in accs.items()]
    fig, (ax,) = _new_figure(max(7.0, 0.75 * len(tasks) + 2), 4.2)
    _grouped_bars(ax, tasks, series, value_labels=value_labels)
    _chance_line(ax)
    ax.set_title(title or "Accuracy per task")
    ax.legend(fontsize=8, ncols=min(4, len(series) + 1), loc="upper left")
    return _save(fig, out_path)


def plot_order(runs: dict[str, dict[str, float]], out_path, *, keys=None, title: str | None = None) -> Path:
    """Order perturbations (RQ3, Figure 8): bars original, reverse, block shuffle, local shuffle.

    ``runs``: ``{order kind: accuracies}`` (kinds as in
    :data:`~medhorizon_tasks.sampling.PERTURBATION_KINDS`, spaces allowed).
    Groups: ``keys``, default Overall, the two families, then every task
    code present.
    """
    order = _ordered_runs(runs, {k: k for k in ORDER_KINDS}, ORDER_KINDS)
    accs = {k: _accuracies(runs[k], f"order {k!r}") for k, _ in order}
    groups = _summary_and_task_keys(list(accs.values()), keys)
    series = [(_ORDER_LABELS.get(c, c), [accs[k].get(g) for g in groups]) for k, c in order]
    fig, (ax,) = _new_figure(max(7.0, 0.9 * len(groups) + 2), 4.2)
    _grouped_bars(ax, [_label(g, wrap=len(groups) > 3) for g in groups], series)
    _separate_summary(ax, groups)
    _chance_line(ax)
    ax.set_title(title or "Frame order")
    ax.legend(fontsize=8, ncols=min(5, len(series) + 1), loc="upper left")
    return _save(fig, out_path)


def plot_sampling(runs: dict[str, dict[int, dict[str, float]]], out_path, *, keys=None,
                  title: str | None = None) -> Path:
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
    fig, axes = _new_figure(max(7.0, 0.9 * len(groups) + 2), 3.4 * len(budgets), nrows=len(budgets))
    for ax, n in zip(axes, budgets):
        series = [(_STRATEGY_LABELS.get(c, c), [accs[k].get(n, {}).get(g) for g in groups]) for k, c in order]
        _grouped_bars(ax, [_label(g, wrap=len(groups) > 3) for g in groups], series)
        _separate_summary(ax, groups)
        _chance_line(ax)
        ax.set_title(f"{n} frames")
        ax.legend(fontsize=8, ncols=min(5, len(series) + 1), loc="upper left")
    if title:
        fig.suptitle(title)
    return _save(fig, out_path)


# ------------------------------------------------------------------ inputs

def load_accuracy_file(path: str | os.PathLike) -> dict[str, float | None]:
    """Accuracies (0..1) from a results file, flat ``{key: accuracy}``. Shapes read:

    (a) ``medhorizon-tasks score --json`` output::

            {"overall": {"accuracy": 0.262, ...},
             "by_task": {"PR": {"accuracy": 0.236, ...}, ...},
             "by_family": {"fine_grained": {"accuracy": ...}, "semantic_reasoning": {...}}, ...}

        -> ``{"overall": 0.262, "fine_grained": ..., "semantic_reasoning": ..., "PR": 0.236, ...}``
        (the keys every plot function reads).

    (b) an lmms-eval results JSON (``results_*.json``)::

            {"results": {"medhorizon_frames64": {"alias": ..., "accuracy,none": 0.27, ...}, ...}, ...}

        -> ``{task name: accuracy}`` (metric ``accuracy,none``, else the first
        ``accuracy,<filter>``; a task without one, or with "N/A", maps to None).
        :func:`budget_curve` turns ``medhorizon_frames<N>`` names into a frame-scaling curve.

    (c) an already flat ``{key: accuracy or null}`` object, returned as is.
    """
    from .safeio import read_json

    path = Path(path)
    data = read_json(path)
    if not isinstance(data, dict):
        raise DataError(f"expected a JSON object, got {type(data).__name__}", source=str(path))
    if isinstance(data.get("results"), dict):
        out: dict[str, float | None] = {}
        for task, metrics in data["results"].items():
            value = None
            if isinstance(metrics, dict):
                keys = ["accuracy,none"] + sorted(k for k in metrics if k.startswith("accuracy,") and k != "accuracy,none")
                for k in keys:
                    if k in metrics:
                        value = metrics[k]
                        break
            out[str(task)] = _file_value(value, path, f"results.{task}")
        return out
    if isinstance(data.get("overall"), dict) or isinstance(data.get("by_task"), dict):
        out = {}
        if isinstance(data.get("overall"), dict):
            out["overall"] = _file_value(data["overall"].get("accuracy"), path, "overall.accuracy")
        for section in ("by_family", "by_task"):
            summaries = data.get(section) or {}
            if not isinstance(summaries, dict):
                raise DataError(f"field '{section}': expected an object {{name: {{\"accuracy\": ...}}}}, got "
                                f"{type(summaries).__name__}", source=str(path))
            for key, summary in summaries.items():
                acc = summary.get("accuracy") if isinstance(summary, dict) else None
                out[str(key)] = _file_value(acc, path, f"{section}.{key}.accuracy")
        return out
    if all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in data.values()):
        return {str(k): _file_value(v, path, str(k)) for k, v in data.items()}
    raise DataError("unknown results shape: expected a `medhorizon-tasks score --json` report (keys overall, "
                    "by_task, by_family), an lmms-eval results JSON (key results) or a flat {key: accuracy} object",
                    source=str(path))


def _file_value(x, path: Path, where: str) -> float | None:
    if x is None or (isinstance(x, str) and x.strip().upper() in ("N/A", "NA", "")):
        return None
    try:
        return _value(x, where)
    except ValueError as exc:
        raise DataError(str(exc), source=str(path)) from None


def budget_curve(accuracies: dict[str, float | None], pattern: str = r"frames(\d+)$") -> dict[int, float | None]:
    """``{frames: accuracy}`` from task names such as ``medhorizon_frames64`` (for :func:`plot_frame_scaling`)."""
    rx = re.compile(pattern)
    out = {}
    for name, acc in accuracies.items():
        m = rx.search(str(name))
        if m:
            out[int(m.group(1))] = acc
    return dict(sorted(out.items()))
