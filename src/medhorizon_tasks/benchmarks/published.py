"""The papers' published numbers, as data, and a run set beside them.

Each benchmark ships its paper's result tables as package data,
``benchmarks/<benchmark>/published.json``: MedHorizon Table 2 and the values
its text quotes from Figs. 7-10; Sureon Tables 3, 4, 5 (part a), 14, 15-17 (each
value with its bootstrap interval) and 18 (the 66 McNemar pairs); SurgHiBench
Tables 2-4 and supplement Tables 8-10. Values are the printed text (``"26.2"``,
``"+21.1"``, ``"—"`` where the paper prints none), each table with its id, the
seed section it comes from and its caption; one row per model (and per
setting the table splits by: Sureon's ``eval`` visual / blind / MG,
SurgHiBench's ``dataset``).

Reading them::

    published_rows("surghi", table="Table 2")        # every row of a table (or of all tables)
    find_row("surghi", "HyperSurg", table="Table 2", dataset="MIPO")
    find_row("medhorizon", "Qwen/Qwen3-VL-8B-Instruct")  # through the protocol registry
    find_row("sureon", "Qwen3-VL-8B-Instruct", eval="blind")

A model is found by its name as printed, its aliases, or -- MedHorizon -- the
protocol registry (:mod:`.medhorizon.model_settings`: the row key such as
``qwen3_vl_8b`` and the checkpoint its model args load); names are compared
case-insensitively on letters and digits only, and a ``org/name`` hub id also
by its last part.

Beside a run (:func:`compare`): per column, the published value, the run's
value and its 95% interval, the difference and whether the published value
lies inside the interval. The run's value is rounded as the paper rounds
(half up, to the printed decimals: "rounded to one decimal place", MedHorizon
appendix 6.3) before the difference is taken, so a run that reproduces the
printed number shows a difference of 0.0.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from ..core.errors import DataError
from ..core.text import aligned, clean_number

__all__ = ["Column", "PublishedRow", "Cell", "published_rows", "published_tables", "find_row", "row_names",
           "compare", "comparison_json", "format_comparison", "run_values", "BENCHMARKS_WITH_TABLES", "find_pair",
           "format_pairs"]

BENCHMARKS_WITH_TABLES = ("medhorizon", "sureon", "surghi")


@dataclass(frozen=True)
class Column:
    key: str      # the report's key: "overall", "PR", "mu", "multi_level", ...
    label: str    # as the paper heads it: "Ov.", "μ", "Multi-level", ...
    kind: str = "pct"  # "pct" (percent) or "count"


@dataclass(frozen=True)
class PublishedRow:
    """One printed row: ``printed`` values by column key, as text; :meth:`value` as a number."""

    benchmark: str
    table: str
    section: str
    model: str
    columns: tuple[Column, ...]
    printed: Mapping[str, str]
    setting: Mapping[str, str] = field(default_factory=dict)
    group: str | None = None
    aliases: tuple[str, ...] = ()
    ci95: Mapping[str, tuple[str, str]] = field(default_factory=dict)          # Table 14: "[41.1, 52.5]"
    ci95_halfwidth: Mapping[str, str] = field(default_factory=dict)            # Table 3: "46.8 ±5.7"

    def value(self, key: str) -> float | None:
        """The printed value of ``key`` as a number (None: not printed, "—")."""
        text = self.printed.get(key)
        try:
            return float(text) if text is not None else None
        except ValueError:
            return None

    def describe(self) -> str:
        """``MedHorizon Table 2 (4.1 Overall Performance), row "Qwen3-VL-8B" (size 8B, input 1 FPS)``."""
        setting = ", ".join(f"{k} {v}" for k, v in self.setting.items())
        name = {"medhorizon": "MedHorizon", "sureon": "Sureon", "surghi": "SurgHiBench"}[self.benchmark]
        return f'{name} {self.table} ({self.section}), row "{self.model}"' + (f" ({setting})" if setting else "")


@dataclass(frozen=True)
class Cell:
    """One column of a row beside a run (percent; the run's interval as published values are: 0..100)."""

    key: str
    label: str
    printed: str | None
    published: float | None
    run: float | None
    ci: tuple[float, float] | None
    difference: float | None
    inside: bool | None


# ------------------------------------------------------------------ loading

def _text(value, where: str) -> str:
    if not isinstance(value, str):
        raise DataError(f"{where}: expected the printed text, got {type(value).__name__}")
    return value


@functools.cache
def published_tables(benchmark: str) -> tuple[tuple[str, tuple[PublishedRow, ...]], ...]:
    """``((table id, rows), ...)`` of a benchmark's paper, in the paper's order."""
    if benchmark not in BENCHMARKS_WITH_TABLES:
        raise ValueError(f"no published tables for {benchmark!r} (known: {', '.join(BENCHMARKS_WITH_TABLES)})")
    from importlib.resources import files  # here: importlib.resources costs every command start-up time

    source = files(f"medhorizon_tasks.benchmarks.{benchmark}") / "published.json"
    doc = json.loads(source.read_text(encoding="utf-8"))
    aliases = _registry_aliases() if benchmark == "medhorizon" else {}
    out = []
    for t in doc["tables"]:
        columns = tuple(Column(c["key"], c["label"], c.get("kind", "pct")) for c in t["columns"])
        rows = []
        for k, r in enumerate(t["rows"]):
            where = f"{source} {t['table']} row {k}"
            rows.append(PublishedRow(
                benchmark, t["table"], t["section"], _text(r["model"], where), columns,
                {key: _text(v, where) for key, v in r["values"].items()}, dict(r.get("setting") or {}),
                r.get("group"), tuple(r.get("aliases", ())) + tuple(aliases.get(r["model"], ())),
                {key: tuple(v) for key, v in (r.get("ci95") or {}).items()}, dict(r.get("ci95_halfwidth") or {})))
        out.append((t["table"], tuple(rows)))
    return tuple(out)


def _registry_aliases() -> dict[str, tuple[str, ...]]:
    """MedHorizon: each paper row's registry key and the checkpoints its model args load."""
    from .medhorizon.model_settings import SETTINGS

    out: dict[str, list[str]] = {}
    for s in SETTINGS:
        names = out.setdefault(s.paper_row, [])
        names.append(s.row)
        for part in s.model_args.split(","):
            key, _, value = part.partition("=")
            if key.strip() in ("pretrained", "model") and value.strip():
                names.append(value.strip())
    return {k: tuple(v) for k, v in out.items()}


def published_rows(benchmark: str, table: str | None = None) -> list[PublishedRow]:
    """Every published row of a benchmark's paper, or of one of its tables (``"Table 2"``)."""
    tables = published_tables(benchmark)
    if table is not None and table not in dict(tables):
        raise ValueError(f"{benchmark} has no published {table!r} (tables: {', '.join(t for t, _ in tables)})")
    return [r for t, rows in tables if table in (None, t) for r in rows]


def _norm(name: str) -> str:
    return re.sub(r"[\W_]", "", name.casefold())


def _names(name: str) -> set[str]:
    whole = _norm(name)
    last = _norm(name.rstrip("/").rsplit("/", 1)[-1])
    return {n for n in (whole, last) if n}


def find_row(benchmark: str, model: str, *, table: str | None = None, **setting: str) -> PublishedRow | None:
    """The first row (in the paper's order) of ``model`` (module doc: names, aliases, registry) that agrees
    with every given ``setting`` value its table splits by (``eval="blind"``, ``dataset="MIPO"``; compared
    like names; a table without that split ignores it); None when the paper has no such row."""
    wanted = _names(model)
    for row in published_rows(benchmark, table):
        names = set().union(*(_names(n) for n in (row.model, *row.aliases)))
        if not wanted & names:
            continue
        if all(k not in row.setting or _norm(str(row.setting[k])) == _norm(str(v)) for k, v in setting.items()):
            return row
    return None


def _aliases_of(benchmark: str, model: str) -> set[str]:
    """Every name of ``model`` (as printed in any table of the benchmark, its aliases) as compared."""
    names = _names(model)
    for row in published_rows(benchmark):
        if _norm(row.model) == _norm(model):
            for n in row.aliases:
                names |= _names(n)
    return names


def find_pair(a: str, b: str) -> tuple[PublishedRow, bool] | None:
    """Sureon Table 18's row for the runs ``a`` and ``b`` (names as printed, or aliases), and whether the paper
    lists them the other way round (Model A = ``b``); None when the paper has no such pair."""
    wa, wb = _names(a), _names(b)
    for row in published_rows("sureon", "Table 18"):
        first, second = _aliases_of("sureon", row.model), _aliases_of("sureon", row.setting["model_b"])
        if wa & first and wb & second:
            return row, False
        if wb & first and wa & second:
            return row, True
    return None


def format_pairs(pairs: list[dict]) -> list[str]:
    """Sureon Table 18 beside a ``compare`` run: one line per pair of runs the paper also compares (the pairs of
    :func:`~medhorizon_tasks.core.stats.pairwise_mcnemar`): the paper's Δ, raw and Holm p beside the run's."""
    lines = []
    for pair in pairs:
        found = find_pair(pair["a"], pair["b"])
        if found is None:
            continue
        row, swapped = found
        delta = 100 * (pair["accuracy_a"] - pair["accuracy_b"]) * (-1 if swapped else 1)
        first, second = (pair["b"], pair["a"]) if swapped else (pair["a"], pair["b"])
        p = "<0.001" if pair["pvalue"] < 0.001 else f"{pair['pvalue']:.3f}"
        holm = "<0.001" if pair["pvalue_holm"] < 0.001 else f"{pair['pvalue_holm']:.4f}"
        lines.append(f"  {first} vs {second}: paper Δ {row.printed['delta']} pts, p {row.printed['p_raw']}, "
                     f"p_holm {row.printed['p_holm']}; this run Δ {delta:.2f} pts, p {p}, p_holm {holm}"
                     + ("*" if pair["significant"] else ""))
    if lines:
        lines.insert(0, "The paper's numbers: Sureon Table 18 (D.1 SUREON Benchmark Evaluation; McNemar, Holm over its "
                        "66 pairs), beside the pairs of this run it also compares:")
    return lines


def row_names(benchmark: str, table: str | None = None) -> list[str]:
    """The models a paper's table(s) name, in order, each once (for messages)."""
    return list(dict.fromkeys(r.model for r in published_rows(benchmark, table)))


# ------------------------------------------------------------------ beside a run

def _rounded(percent: float, printed: str) -> Decimal:
    """``percent`` rounded half up to the decimals of ``printed`` (float dust removed first)."""
    decimals = len(printed.split(".", 1)[1]) if "." in printed else 0
    exact = Decimal(repr(round(percent, 9)))
    return exact.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)


def compare(row: PublishedRow, values: Mapping[str, tuple[float | None, tuple[float, float] | None] | None],
            keys=None) -> list[Cell]:
    """Each column of ``row`` (or of ``keys``) beside the run's ``values``: ``key -> (fraction, (lo, hi) or
    None)`` in 0..1 (a key the run lacks: no run value). Count columns are shown, never compared."""
    cells = []
    for col in row.columns:
        if keys is not None and col.key not in keys:
            continue
        printed = row.printed.get(col.key)
        published = row.value(col.key)
        run, ci = values.get(col.key) or (None, None)
        if col.kind != "pct" or run is None:
            cells.append(Cell(col.key, col.label, printed, published, None, None, None, None))
            continue
        run_pct = 100 * run
        ci_pct = None if ci is None or None in ci else (100 * ci[0], 100 * ci[1])
        diff = inside = None
        if published is not None:
            diff = clean_number(float(_rounded(run_pct, printed) - Decimal(printed)))
            if ci_pct is not None:
                inside = ci_pct[0] - 1e-9 <= published <= ci_pct[1] + 1e-9
        cells.append(Cell(col.key, col.label, printed, published, clean_number(run_pct), ci_pct, diff, inside))
    return cells


def comparison_json(row: PublishedRow, cells: list[Cell]) -> dict:
    """A row beside a run, for ``--json`` reports (percent)."""
    out = {"benchmark": row.benchmark, "table": row.table, "section": row.section, "model": row.model,
           "setting": dict(row.setting),
           "columns": [{"key": c.key, "label": c.label, "published": c.published, "printed": c.printed,
                        "run": c.run, "ci95": list(c.ci) if c.ci else None, "difference": c.difference,
                        "inside_ci95": c.inside} for c in cells]}
    if row.ci95:
        out["published_ci95"] = {k: list(v) for k, v in row.ci95.items()}
    if row.ci95_halfwidth:
        out["published_ci95_halfwidth"] = dict(row.ci95_halfwidth)
    return out


def _num(x: float | None, printed: str | None = None) -> str:
    if x is None:
        return "—"
    decimals = len(printed.split(".", 1)[1]) if printed and "." in printed else 1
    return f"{x:.{decimals}f}"


def format_comparison(row: PublishedRow, cells: list[Cell], what: str = "this run") -> str:
    """The row beside the run as a small text table (percent)."""
    head = ["column", "published", what, "95% CI", "difference", "published in CI"]
    body = []
    for c in cells:
        ci = f"[{c.ci[0]:.1f}, {c.ci[1]:.1f}]" if c.ci else "—"
        diff = "—" if c.difference is None else f"{c.difference:+.{_decimals(c.printed)}f}"
        inside = "—" if c.inside is None else ("yes" if c.inside else "NO")
        body.append([c.label, (c.printed or "—") + _published_ci(row, c.key), _num(c.run, c.printed), ci, diff,
                     inside])
    lines = [f"The paper's numbers: {row.describe()}, beside {what}:",
             *aligned([head, *body], right=range(1, len(head)), indent="  ")]
    if any(c.run is not None and c.ci is None and c.printed not in (None, "—") for c in cells):
        lines.append("  (—: no 95% interval for that value in this report)")
    return "\n".join(lines)


def _published_ci(row: PublishedRow, key: str) -> str:
    """The paper's own interval of a value, as printed: ``" [41.1, 52.5]"`` (Table 14), ``" ±5.7"`` (Table 3)."""
    if key in row.ci95:
        return f" [{row.ci95[key][0]}, {row.ci95[key][1]}]"
    return f" ±{row.ci95_halfwidth[key]}" if key in row.ci95_halfwidth else ""


def _decimals(printed: str | None) -> int:
    return len(printed.split(".", 1)[1]) if printed and "." in printed else 1


# ------------------------------------------------------------------ a report's values, per benchmark

def _acc(summary) -> tuple[float | None, tuple[float, float] | None] | None:
    """(accuracy, 95% CI) of a score report's summary: its own interval, else Wilson on correct / n."""
    if not isinstance(summary, Mapping) or summary.get("accuracy") is None:
        return None
    ci = summary.get("ci95") or summary.get("ci95_bootstrap")
    if not ci and isinstance(summary.get("n"), int) and summary["n"] > 0 and isinstance(summary.get("correct"), int):
        from ..core.stats import wilson_ci

        ci = wilson_ci(summary["correct"], summary["n"])
    return summary["accuracy"], (tuple(ci) if ci else None)


def run_values(report: Mapping, *, dataset: str | None = None, mg: bool = False) -> dict:
    """``key -> (fraction, 95% CI or None)`` of a score report, under the keys of the paper's columns:
    MedHorizon ``overall`` and task codes; Sureon ``mu``, categories and ``SM`` (``mg``: the multimodal
    gains instead, no interval); SurgHiBench the metrics of ``dataset`` (``"Overall"`` or a dataset; no
    interval: its metrics are per video, then averaged)."""
    bench = report.get("benchmark")
    if bench == "medhorizon":
        out = {"overall": _acc(report.get("overall"))}
        out.update({code: _acc(s) for code, s in (report.get("by_task") or {}).items()})
        return out
    if bench == "sureon":
        if mg:
            gain = report.get("mg") or {}
            out = {"mu": (gain.get("overall"), None)}
            out.update({c: (v, None) for c, v in (gain.get("by_category") or {}).items()})
            return out
        out = {"mu": _acc(report.get("mu")), "SM": _acc(report.get("sm")),
               "perception": _acc(report.get("perception")), "reasoning": _acc(report.get("reasoning"))}
        out.update({c: _acc(s) for c, s in (report.get("by_category") or {}).items()})
        return out
    if bench == "surghi":
        rows = {"overall": report.get("overall") or {}, **{_norm(k): v for k, v in (report.get("datasets") or {}).items()}}
        metrics = rows.get("overall" if dataset is None or _norm(dataset) == "overall" else _norm(dataset)) or {}
        return {k: (v, None) for k, v in metrics.items() if isinstance(v, float) and v == v}
    raise ValueError(f"not a score report of a benchmark with published tables (benchmark {bench!r})")
