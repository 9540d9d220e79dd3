"""Results files: recognising which kind of file the package (or lmms-eval) wrote and reading it
(:func:`load_results`, :func:`load_accuracy_file`, frame curves out of task names), and ``medhorizon-tasks
plot``: every figure the files allow (:func:`build_files`, :func:`plot_files`)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import DataError
from .accuracies import (
    DIAGNOSTIC_KINDS,
    SURGHI_METRICS,
    Acc,
    _frame_digits,
    _is_count,
    _is_number,
    _summary_acc,
    _value,
)
from .canvas import _save
from .figures import (
    _diagnostic_model,
    _diagnostic_rows,
    build_bars,
    build_diagnostic,
    build_evidence_settings,
    build_frame_scaling,
    build_per_task,
    build_surghi,
)

SUREON_SUMMARY = (("mu", "μ (MCQ + TO)"), ("perception", "Perception"), ("reasoning", "Reasoning (no SM)"))
_LMMS_FRAMES = re.compile(r"^(medhorizon(?:_synthetic)?)_frames(\d+)$")

ACCEPTED_SHAPES = (
    "an lmms-eval results JSON (<output_path>/<model>/<stamp>_results.json: key \"results\" with "
    "\"accuracy,none\" per task); `medhorizon-tasks score --json` output of MedHorizon (overall, by_task, "
    "by_family), Sureon (mu, perception, reasoning, by_category) or SurgHiBench (datasets, overall); an object "
    "of named score reports, {name: report} or {name: {\"report\": report, \"mode\": ...}} (the demo's "
    "report.json and report_surghi.json); a "
    "diagnostics JSON of `medhorizon-tasks diagnose` / `sweep` (budgets.json, evidence.json, order.json, "
    "sampling.json: a list of rows with diagnostic, label, group, x, accuracy, ...); the attention.json of "
    "`diagnose attention` (diagnostic \"attention\", summary, items); or a flat "
    "{key: accuracy} object")


# ------------------------------------------------------------------ inputs

@dataclass
class ResultsFile:
    """One results file as :func:`load_results` read it.

    ``kind``: ``"lmms_eval"``, ``"medhorizon"`` (score report), ``"sureon"``, ``"surghi"``,
    ``"diagnostic"``, ``"attention"`` (``report``: the whole attention.json), ``"flat"`` or ``"bundle"``
    (named score reports: ``series``, one ResultsFile each,
    labelled by its name, with the run's ``mode`` when the file gives it). ``values``: ``{key: Acc or
    None}`` (all but surghi, diagnostics and bundles); ``report``: the SurgHiBench report; ``rows`` /
    ``diagnostic``: a diagnostics file's rows and kind; ``label``: the series name (the model of an
    lmms-eval or diagnostics file, else the file name); ``skipped``: lmms-eval tasks without an
    accuracy metric.
    """

    path: Path
    kind: str
    label: str
    values: dict[str, Acc | None] = field(default_factory=dict)
    report: dict | None = None
    rows: list | None = None
    diagnostic: str | None = None
    skipped: list[str] = field(default_factory=list)
    series: list["ResultsFile"] = field(default_factory=list)
    mode: str | None = None
    departures: list[str] = field(default_factory=list)  # the run's departures from the paper's protocol


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


_REPORT_LOADERS = {"medhorizon": _load_score_medhorizon, "sureon": _load_score_sureon, "surghi": _load_score_surghi}


def _named_report(entry) -> tuple[dict, str | None] | None:
    """``(score report, mode)`` of one value of a bundle, or None when it is not one."""
    if not isinstance(entry, dict):
        return None
    if isinstance(entry.get("report"), dict) and entry["report"].get("benchmark") in _REPORT_LOADERS:
        return entry["report"], entry.get("mode") if isinstance(entry.get("mode"), str) else None
    return (entry, None) if entry.get("benchmark") in _REPORT_LOADERS else None


def _loaded_report(data: dict, path: Path, loader=None) -> ResultsFile:
    """A score report read by its benchmark's loader, with the departures from the paper's protocol it names
    (Sureon's ``no blur``): every figure labels the series with them."""
    out = (loader or _REPORT_LOADERS[data["benchmark"]])(data, path)
    deps = data.get("departures")
    if isinstance(deps, list):
        out.departures = [str(d) for d in deps]
    return out


def _load_bundle(data: dict, path: Path) -> ResultsFile:
    series = []
    for name, entry in data.items():
        report, mode = _named_report(entry)
        sub = _loaded_report(report, path)
        sub.label, sub.mode = str(name), mode
        series.append(sub)
    return ResultsFile(path, "bundle", path.stem, series=series)


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
    - an object of named score reports (``{name: report}``, or ``{name: {"report": report, "mode": ...}}``
      as the demo writes) -> a ``bundle`` whose ``series`` are those reports, read as above;
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
            if data.get("diagnostic") == "attention" and isinstance(data.get("summary"), list):
                return ResultsFile(path, "attention", str(data.get("model") or path.stem), report=data,
                                   diagnostic="attention")
            if isinstance(data.get("results"), dict):
                return _load_lmms(data, path)
            if data and all(_named_report(v) is not None for v in data.values()):
                return _load_bundle(data, path)
            if data.get("benchmark") == "sureon" or isinstance(data.get("mu"), dict):
                return _loaded_report(data, path, _load_score_sureon)
            if isinstance(data.get("datasets"), dict) and isinstance(data.get("overall"), dict) and (
                    data.get("benchmark") == "surghi" or "multi_level" in data["overall"]):
                return _loaded_report(data, path, _load_score_surghi)
            if isinstance(data.get("overall"), dict) or isinstance(data.get("by_task"), dict):
                return _loaded_report(data, path, _load_score_medhorizon)
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
    if res.kind in ("surghi", "diagnostic", "attention", "bundle"):
        what = {"surghi": "a SurgHiBench score report", "bundle": "a file of several named score reports"}.get(
            res.kind, f"a {res.diagnostic} diagnostics file")
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
            out[_frame_digits(m.group(1), f"{str(name)[:60]!r}")] = acc
    return dict(sorted(out.items()))


def frame_curves(values: Mapping[str, object]) -> dict[str, dict[int, object]]:
    """``{task prefix: {frames: accuracy}}`` from the ``medhorizon_frames<N>`` and
    ``medhorizon_synthetic_frames<N>`` tasks of an lmms-eval results file (one curve per prefix)."""
    out: dict[str, dict[int, object]] = {}
    for name, acc in values.items():
        m = _LMMS_FRAMES.match(str(name))
        if m and acc is not None:
            out.setdefault(m.group(1), {})[_frame_digits(m.group(2), f"task {str(name)[:60]!r}")] = acc
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
    - a diagnostics JSON -> its file name (``budgets`` ...), the figure ``diagnose`` draws;
    - a file of named score reports (the demo's ``report.json``, ``report_surghi.json``) -> each report
      a series of the figures above (``--labels`` prefixes their names), and, when its MedHorizon runs
      have the modes random / text / visual / oracle, ``evidence_settings`` (the paper's Figure 7).
    """
    loaded = [load_results(p) for p in paths]
    if labels is not None:
        if len(labels) != len(loaded):
            raise DataError(f"{len(labels)} label(s) for {len(loaded)} file(s)")
        for f, lab in zip(loaded, labels):
            f.label = lab
            for sub in f.series:  # a bundle's series keep their names, after the file's label
                sub.label = f"{lab}: {sub.label}"
    files = [s for f in loaded for s in (f.series if f.kind == "bundle" else [f])]
    if labels is None:  # series of one chart must differ; a diagnostics figure has a chart of its own
        for kinds in (("medhorizon", "flat"), ("lmms_eval",), ("sureon",), ("surghi",)):
            _unique_labels([f for f in files if f.kind in kinds])
    for f in files:  # a departure from the paper's protocol is part of the series' name, in every figure
        if f.departures:
            f.label = f"{f.label} [{', '.join(f.departures)}]"
    for f in files:
        if f.kind not in ("surghi", "diagnostic", "attention") and not any(v is not None for v in f.values.values()):
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
    for f in loaded:
        settings = _evidence_settings(f)
        if settings:
            add("evidence_settings", _build(lambda: build_evidence_settings(settings), [f]))
    lm = [f for f in files if f.kind == "lmms_eval"]
    curves = {}
    for f in lm:  # before anything is drawn: a bad frame count is reported, not half a set of figures
        by_prefix = _build(lambda f=f: frame_curves(f.values), [f])
        for prefix, curve in by_prefix.items():
            curves[f.label if len(by_prefix) == 1 else f"{f.label} ({prefix})"] = curve
    if lm:
        skipped = list(dict.fromkeys(t for f in lm for t in f.skipped))
        notes = (f"Not drawn: {', '.join(skipped)} (no accuracy metric).",) if skipped else ()
        values = {f.label: {k: v for k, v in f.values.items() if k not in f.skipped} for f in lm}
        tasks = list(dict.fromkeys(k for v in values.values() for k, a in v.items() if a is not None))
        add("per_task_lmms_eval", _build(lambda: build_bars(
            values, tasks, title="Accuracy per lmms-eval task", xlabel="lmms-eval task",
            chance=all(t.startswith("medhorizon") for t in tasks), notes=notes,
            no_ci_reason="lmms-eval gives no sample count for it"), lm))
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
        if f.kind == "attention":
            from .attention import build_attention

            add(f.path.stem, _build(lambda: build_attention(f.report), [f]))
    return figures


# A run's mode -> the evidence setting of the paper's Figure 7 (the demo's rows: random, text, visual, oracle).
_MODE_SETTING = {"random": "random", "text": "text", "visual": "uniform", "oracle": "oracle"}


def _evidence_settings(f: ResultsFile) -> dict[str, dict] | None:
    """A bundle's MedHorizon runs as ``{setting: accuracies}`` when they cover two or more evidence settings
    (each setting once), for :func:`build_evidence_settings`; else None."""
    runs = [s for s in f.series if s.kind == "medhorizon" and s.mode in _MODE_SETTING]
    settings = {_MODE_SETTING[s.mode]: s.values for s in runs}
    return settings if len(settings) >= 2 and len(settings) == len(runs) else None


def plot_files(paths, out_dir, *, labels: list[str] | None = None) -> list[Path]:
    """:func:`build_files`, each figure written as ``<out_dir>/<name>.png``; returns the paths."""
    out = Path(out_dir)
    return [_save(fig, out / f"{name}.png") for name, fig in build_files(paths, labels=labels).items()]
