"""``medhorizon-tasks diagnose attention``: MedHorizon Fig. 9 (attention drift) for a native-video model.

Runs the ``medhorizon[_synthetic]_frames<N>`` task (N = 128, the paper's
setting) through the real lmms-eval CLI with the model wrapped by
``medhorizon_attention`` (:mod:`~medhorizon_tasks.adapters.lmms_eval.attention_probe`):
each item is answered by the model's own path (scored as usual) and measured
in a separate prefill pass. Then it writes ``attention.json`` (per item, the
summary per model / family / task with 95% intervals, the run's accuracy, and
the paper's quoted Fig. 9 values), ``attention.csv`` (the summary) and the
figure ``attention.png``, all or nothing.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from ...adapters.lmms_eval.runner import run_lmms_eval
from ...benchmarks.medhorizon import scoring
from ...benchmarks.medhorizon.attention import FRAMES, METRICS, published_fig9, summarise
from ...core.errors import DataError, MedHorizonError
from ...core.safeio import ByPath, atomic_write_files, iter_jsonl
from ...core.text import pct
from .diagnose import _items, _safe, refuse_before_start

__all__ = ["run_attention", "write_attention", "format_attention"]

ITEMS_FILE = "attention_items.jsonl"


def run_attention(model: str, *, model_args: str = "", synthetic: bool = False, data: str | None = None,
                  out: str | Path = "medhorizon_attention", frames: int = FRAMES, layers: str = "all",
                  limit: int | None = None, num_processes: int = 1, echo: bool = False) -> dict:
    """Run the diagnostic for ``model`` (a ``medhorizon_qwen*`` bridge); return what ``attention.json`` holds."""
    if layers not in ("all", "last") and not all(x.strip().lstrip("-").isdigit() for x in layers.split(",")):
        raise DataError(f"--layers {layers!r}: expected all, last, or layer indices such as 0,12,-1")
    refuse_before_start(model, model_args, limit, wrapper="medhorizon_attention")
    out = Path(out)
    items = _items(synthetic, data)
    by_uid = {it.uid: it for it in items}
    task = f"medhorizon_synthetic_frames{frames}" if synthetic else f"medhorizon_frames{frames}"
    jsonl = (out / ITEMS_FILE).resolve()
    for old in [jsonl, *jsonl.parent.glob(f"{jsonl.name}.rank*")]:
        old.unlink(missing_ok=True)  # this run's measurements only
    # lmms-eval splits model_args at commas: layer lists travel with semicolons
    args = f"inner={model},out={jsonl},layers={layers.replace(',', ';')}"
    env = {"MEDHORIZON_DATA": str(Path(data).resolve())} if data else None
    run = run_lmms_eval("medhorizon_attention", [task], out / "lmms_eval" / _safe(model),
                        model_args=f"{args},{model_args}" if model_args else args, limit=limit,
                        num_processes=num_processes, env=env, echo=echo)
    records = [rec for path in sorted(jsonl.parent.glob(f"{jsonl.name}*")) for _, rec in iter_jsonl(path)]
    if not records:
        raise MedHorizonError(f"{model} measured no item (no planned frames reached it); log: {run.log}")
    preds = scoring.read_predictions(run.samples[task], by_uid)
    scored = [it for it in items if it.uid in preds]
    result = {"diagnostic": "attention", "model": model, "task": task, "frames": frames, "layers": layers,
              "summary": summarise(records), "accuracy": scoring.report(scoring.score_predictions(scored, preds)),
              "published": published_fig9(), "items": records}
    write_attention(result, out)
    return result


def write_attention(result: dict, out: str | Path) -> list[Path]:
    """``attention.json``, ``attention.csv`` and ``attention.png`` under ``out``, all or nothing."""
    from ...plots.attention import plot_attention

    out = Path(out)
    fields = ["model", "level", "group", "n"] + [f"{m}{s}" for m in METRICS for s in ("", "_ci95_lo", "_ci95_hi")]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, extrasaction="ignore")
    w.writeheader()
    for row in result["summary"]:
        flat = dict(row)
        for m in METRICS:
            ci = row.get(f"{m}_ci95") or (None, None)
            flat[f"{m}_ci95_lo"], flat[f"{m}_ci95_hi"] = ci
        w.writerow(flat)
    return atomic_write_files({
        out / "attention.csv": buf.getvalue(),
        out / "attention.json": json.dumps(result, indent=1, ensure_ascii=False, default=str),
        out / "attention.png": ByPath(lambda tmp: plot_attention(result, tmp)),
    })


def format_attention(result: dict) -> str:
    """The summary as a table: one line per model, family and task."""
    head = f"{'group':<30} {'n':>4} {'50%':>6} {'80%':>6} {'90%':>6} {'first':>6} {'last':>6} {'evid.':>6} " \
           f"{'frame':>6} {'patch':>6}"
    lines = [head, "-" * len(head)]
    for r in result["summary"]:
        cells = [pct(r.get(m), width=5) for m in ("units_for_50", "units_for_80", "units_for_90", "first_tenth",
                                                   "last_tenth", "evidence_mass")]
        sims = [f"{r[m]:.3f}" if r.get(m) is not None else "—" for m in ("frame_similarity", "patch_similarity")]
        name = r["group"] if r["level"] != "overall" else f"{r['model']} (all)"
        lines.append(f"{name:<30} {r['n']:>4} " + " ".join(f"{c:>6}" for c in cells + sims))
    acc = result["accuracy"]["overall"]
    lines.append(f"\naccuracy of the scored answers: {pct(acc['accuracy'])} ({acc['correct']}/{acc['n']})")
    return "\n".join(lines)

