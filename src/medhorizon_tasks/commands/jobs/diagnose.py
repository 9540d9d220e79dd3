"""``medhorizon-tasks diagnose`` / ``sweep``: a paper diagnostic for your model, in one command.

Runs the diagnostic's task variants (``benchmarks/medhorizon/diagnostics.py``)
through the real lmms-eval CLI, with the model wrapped by
``medhorizon_resume`` so every finished response is journaled: a run killed at
any point and started again with the same ``--out`` redoes nothing that had
finished, loses nothing and duplicates nothing. Then it scores every samples
file with the shared scorer and writes ``<kind>.csv``, ``<kind>.json`` and the
figure ``<kind>.png``.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

from ...adapters.lmms_eval.request_check import request_problem
from ...adapters.lmms_eval.runner import run_lmms_eval
from ...benchmarks.medhorizon import scoring
from ...benchmarks.medhorizon.diagnostics import DIAGNOSTICS
from ...benchmarks.medhorizon.release import load_release
from ...core.errors import MedHorizonError
from ...core.safeio import ByPath, atomic_write_files
from ...core.text import pct
from ...runs.launch import limit_problem

CSV_FIELDS = ("diagnostic", "label", "group", "x", "task", "model", "accuracy", "correct", "n", "invalid",
              "missing", "errors", "ci95_lo", "ci95_hi", "fine_grained", "semantic_reasoning", "order_seed",
              "frames", "strategy", "paper")

#: The figure each diagnostic reproduces, and the setting of its rows (published.json: the values the paper's
#: text quotes, Figs. 7 and 8; Fig. 6 and Fig. 10's variants have none).
_FIGURES = {"evidence": ("Fig. 7", "input"), "order": ("Fig. 8", "order")}


def paper_value(kind: str, variant, model: str) -> str:
    """The paper's value for one row of a diagnostic, as ``Fig. 8 Ov. 26.5`` (empty when the text quotes none
    for that model and setting): MedHorizon's figures are drawn, and only the values its text quotes ship."""
    from ...benchmarks.published import find_row

    if kind not in _FIGURES:
        return ""
    table, key = _FIGURES[kind]
    setting = variant.label if kind == "evidence" else variant.group
    name = "Random" if variant.group == "random" else model  # the paper's random baseline is a row of its own
    row = find_row("medhorizon", name, table=table, **{key: setting})
    if row is None or row.setting.get(key) is None:
        return ""
    return f"{table} " + ", ".join(f"{c.label} {row.printed[c.key]}" for c in row.columns if c.key in row.printed)


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name)


def _items(synthetic: bool, data: str | None):
    if synthetic:
        from ...data.synthetic.medhorizon import build_synthetic

        return load_release(build_synthetic(progress=True).data_path)
    return load_release(data)


#: the models whose visual tokens the attention diagnostic locates (bridges/qwen.py: ``video_inputs``)
MEASURABLE = ("medhorizon_qwen2_5_vl", "medhorizon_qwen3_vl")


def refuse_before_start(model: str, model_args: str, limit: int | None, *,
                        wrapper: str = "medhorizon_resume") -> None:
    """MedHorizonError, one line, before any data are loaded or lmms-eval is started: ``--limit`` 0 or negative
    (lmms-eval would run every item), a model lmms-eval would not find, a model arg this package's ``model``
    does not take or a value it cannot be; for the attention diagnostic (``wrapper`` medhorizon_attention), a
    model whose attention it cannot measure."""
    problem = limit_problem(limit)
    if problem is None and wrapper == "medhorizon_attention" and model not in MEASURABLE:
        problem = (f"--model {model}: the attention diagnostic locates the visual tokens of "
                   f"{' and '.join(MEASURABLE)} only (a probe or an API model has no attention to measure)")
    problem = problem or request_problem(model, model_args, None)
    if problem:
        raise MedHorizonError(problem)


def run_diagnostic(kind: str, model: str, *, model_args: str = "", synthetic: bool = False,
                   data: str | None = None, out: str | Path = "medhorizon_diagnostics", limit: int | None = None,
                   num_processes: int = 1, echo: bool = False) -> list[dict]:
    """Run one diagnostic for ``model``; return the CSV rows (also written under ``out``)."""
    refuse_before_start(model, model_args, limit)
    variants = DIAGNOSTICS[kind]
    out = Path(out)
    items = _items(synthetic, data)
    by_uid = {it.uid: it for it in items}
    env = {"MEDHORIZON_DATA": str(Path(data).resolve())} if data else None

    runs = {}
    for row_model in dict.fromkeys(v.model or model for v in variants):
        tasks = list(dict.fromkeys(v.task(synthetic) for v in variants if (v.model or model) == row_model))
        args = f"inner={row_model},journal={(out / 'journal' / _safe(row_model)).resolve()}.jsonl"
        extra = model_args if row_model == model else ""
        runs[row_model] = run_lmms_eval("medhorizon_resume", tasks, out / "lmms_eval" / _safe(row_model),
                                        model_args=f"{args},{extra}" if extra else args, limit=limit,
                                        num_processes=num_processes, env=env, echo=echo)

    rows = []
    for v in variants:
        row_model = v.model or model
        task = v.task(synthetic)
        preds = scoring.read_predictions(runs[row_model].samples[task], by_uid)
        scored = items if limit is None else [it for it in items if it.uid in preds]
        rep = scoring.report(scoring.score_predictions(scored, preds))
        o = rep["overall"]
        fam = rep["by_family"]
        rows.append({
            "diagnostic": kind, "label": v.label, "group": v.group, "x": v.x, "task": task, "model": row_model,
            "accuracy": o["accuracy"], "correct": o["correct"], "n": o["n"], "invalid": o["invalid"],
            "missing": o["missing"], "errors": o["errors"], "ci95_lo": o["ci95"][0], "ci95_hi": o["ci95"][1],
            "fine_grained": fam.get("fine_grained", {}).get("accuracy"),
            "semantic_reasoning": fam.get("semantic_reasoning", {}).get("accuracy"),
            "order_seed": v.kwargs.get("order_seed", ""), "frames": v.kwargs.get("frames", ""),
            "strategy": v.kwargs.get("strategy", ""), "paper": paper_value(kind, v, row_model), "report": rep,
        })

    write_outputs(kind, rows, out, model=model)
    return rows


def write_outputs(kind: str, rows: list[dict], out: str | Path, *, model: str) -> list[Path]:
    """``<kind>.csv``, ``<kind>.json`` and the figure ``<kind>.png`` under ``out``, all or nothing
    (:func:`~.safeio.atomic_write_files`): a full disk leaves the previous files as they were and is
    one WriteError naming the file."""
    out = Path(out)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_FIELDS, extrasaction="ignore")
    w.writeheader()
    w.writerows(rows)
    return atomic_write_files({
        out / f"{kind}.csv": buf.getvalue(),
        out / f"{kind}.json": json.dumps(rows, indent=2, ensure_ascii=False, default=str),
        out / f"{kind}.png": ByPath(lambda tmp: plot_diagnostic(kind, rows, tmp, model=model)),
    })


def plot_diagnostic(kind: str, rows: list[dict], path: Path, *, model: str) -> Path:
    from ... import plots

    # plots owns the row -> figure mapping, so `medhorizon-tasks plot <kind>.json` redraws this very figure
    return plots.plot_diagnostic(kind, rows, path, model=model)


def format_rows(rows: list[dict]) -> str:
    """The diagnostic's table; a last column ``paper`` holds the value the paper's text quotes for that row and
    model (Fig. 7: MedGRPO, Lingshu-7B, Random; Fig. 8: Qwen3-VL-8B), when there is one."""
    head = f"{'setting':<24} {'task':<44} {'acc %':>6} {'95% CI':>13} {'fine':>6} {'sem.':>6} {'n':>5} {'inv':>4}  paper"
    lines = [head, "-" * len(head)]
    for r in rows:
        ci = f"{pct(r['ci95_lo'])}–{pct(r['ci95_hi'])}"
        lines.append(f"{r['label']:<24} {r['task']:<44} {pct(r['accuracy'], width=5):>6} {ci:>13} "
                     f"{pct(r['fine_grained'], width=5):>6} {pct(r['semantic_reasoning'], width=5):>6} {r['n']:>5} {r['invalid']:>4}"
                     f"  {r.get('paper') or ''}".rstrip())
    return "\n".join(lines)
