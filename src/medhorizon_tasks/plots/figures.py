"""The figures: ``build_*`` returns a laid-out Figure, ``plot_*`` writes it as a PNG. Frame scaling (RQ1),
evidence settings (RQ2), per task, frame order (RQ3), sampling strategies (RQ4), bars for any keys,
SurgHiBench metrics, and the figure of each ``diagnose`` / ``sweep`` result."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path

from ..benchmarks.medhorizon.taxonomy import FAMILIES, TASK_CODES, TASK_TYPES
from .accuracies import (
    _NO_CI,
    _SUMMARY_LABELS,
    CHANCE,
    DIAGNOSTIC_KINDS,
    SUMMARY_KEYS,
    SURGHI_METRICS,
    _acc,
    _accuracies,
    _canon_key,
    _frame_count,
    _is_count,
    _ordered_runs,
    _summary_acc,
    _value,
)
from .bars import _bars_figure, _Panel
from .canvas import (
    _LINESTYLES,
    _MARKERS,
    _chance_line,
    _ci_label,
    _figure_legend,
    _new_figure,
    _percent_ticks,
    _save,
    _styles,
)

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
            n = _frame_count(n, f"{label}: frame count")
            pts.append((n, _acc(v, f"{label} {n} frames")))
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
    return _bars_figure([panel], title=title or "Accuracy per task", xlabel="Overall, task family and task",
                        notes=tuple(task_names_note(groups)))


def task_names_note(groups: list[str]) -> list[str]:
    """``["Tasks: PR Phase Recognition, SD Step Discrimination, ..."]`` for the task codes among ``groups``
    (the x axis shows the codes; the legend spells them out), or nothing."""
    names = {t.code: t.name for t in TASK_TYPES}
    codes = [g for g in groups if g in names]
    return [f"Tasks: {', '.join(f'{c} {names[c]}' for c in codes)}."] if codes else []


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
            x = _frame_count(x, f"{at}: field 'x'")
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
