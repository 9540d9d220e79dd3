"""The paper's row for a scored run (``score --paper-row``): which row, and the run beside it.

A helper of :mod:`.score`, not a command. The row is the one named by
``--paper-row`` (a model as the paper prints it, an alias, or a MedHorizon
registry row such as ``qwen3_vl_8b``), else the model of an lmms-eval samples
file (the checkpoint its model args load, matched through the protocol
registry :mod:`medhorizon_tasks.benchmarks.medhorizon.model_settings`); the
numbers come from :mod:`medhorizon_tasks.benchmarks.published`.
"""

from __future__ import annotations

from ..benchmarks.published import (
    PublishedRow,
    compare,
    comparison_json,
    find_row,
    format_comparison,
    row_names,
    run_values,
)
from ..core.errors import MedHorizonError

__all__ = ["add_paper_row_argument", "paper_comparisons", "run_model_names", "print_comparisons",
           "comparisons_json", "protocol_note"]

# The table each benchmark's score report is set beside.
_TABLES = {"medhorizon": ("Table 2",), "sureon": ("Table 3", "Table 14", "Table 15", "Table 16", "Table 17"),
           "surghi": ("Table 2", "Table 3", "Table 4", "Table 8", "Table 9", "Table 10")}
#: Sureon tables of the visual runs only (Table 3 has a blind row of its own).
_VISUAL_ONLY = ("Table 14", "Table 15", "Table 16", "Table 17")


def add_paper_row_argument(parser) -> None:
    parser.add_argument("--paper-row", metavar="NAME",
                        help="show the run beside this row of the paper's results table (MedHorizon Table 2, "
                        "Sureon Tables 3 / 14-17, SurgHiBench Tables 2-4 / 8-10): the model as the paper prints it (e.g. "
                        "Qwen3-VL-8B, HyperSurg) or a registry row (qwen3_vl_8b); default: the model of an "
                        "lmms-eval samples file, when the paper reports it")


def run_model_names(predictions: str) -> list[str]:
    """What an lmms-eval samples file says about its model (checkpoint first, then the model's name)."""
    from ..core.log_samples import run_description

    run = run_description(predictions)
    if run is None:
        return []
    names = []
    for part in str(run.get("model_args") or "").split(","):
        key, _, value = part.partition("=")
        if key.strip() in ("pretrained", "model", "model_version") and value.strip():
            names.append(value.strip())
    return [*names, *([run["model"]] if run.get("model") else [])]


def _find(benchmark: str, names: list[str], explicit: bool, **setting) -> list[PublishedRow]:
    for name in names:
        rows = [r for t in _TABLES[benchmark] for r in [find_row(benchmark, name, table=t, **setting)] if r]
        if rows:
            return rows
    if explicit:
        raise MedHorizonError(f"--paper-row {names[0]!r}: the paper's {' / '.join(_TABLES[benchmark])} has no such "
                              f"row{_setting_text(setting)}; rows: {', '.join(row_names(benchmark, _TABLES[benchmark][0]))}")
    return []


def _setting_text(setting: dict) -> str:
    return "" if not setting else " for " + ", ".join(f"{k} {v}" for k, v in setting.items())


def paper_comparisons(benchmark: str, report: dict, *, paper_row: str | None, predictions: str,
                      mode: str | None = None) -> list[tuple[PublishedRow, list]]:
    """``[(row, cells)]``: the run's report beside its paper row(s) (empty when none applies).

    MedHorizon: Table 2. Sureon: Table 3's row of the run's mode (visual or blind), its MG row when the
    report has the multimodal gain, and for a visual run Tables 14-17 (μ, perception / reasoning, each category,
    with the paper's bootstrap intervals). SurgHiBench: Tables 2-4 and supplement Tables 8-10 (SurgCLIP (β)'s
    phase-only datasets, HyperSurg's ablations as models of their own) for Overall and each dataset of the run
    the paper reports.
    """
    names = [paper_row] if paper_row else run_model_names(predictions)
    if not names:
        return []
    explicit = bool(paper_row)
    if benchmark == "medhorizon":
        return [(row, compare(row, run_values(report))) for row in _find(benchmark, names, explicit)]
    if benchmark == "sureon":
        mode = mode if mode in ("visual", "blind") else "visual"
        out = []
        for row in _find(benchmark, names, explicit, eval=mode):
            if row.table in _VISUAL_ONLY and mode != "visual":
                continue
            out.append((row, compare(row, run_values(report))))
            if row.table == "Table 3" and report.get("mg"):
                mg = find_row(benchmark, row.model, table="Table 3", eval="MG")
                if mg is not None:
                    out.append((mg, compare(mg, run_values(report, mg=True))))
        return out
    out = []
    for dataset in ["Overall", *sorted(report.get("datasets") or {})]:
        for row in _find(benchmark, names, explicit and dataset == "Overall", dataset=dataset):
            out.append((row, compare(row, run_values(report, dataset=dataset))))
    return out


def print_comparisons(comparisons: list[tuple[PublishedRow, list]], notes: list[str] = ()) -> None:
    for row, cells in comparisons:
        print()
        print(format_comparison(row, cells))
    for note in notes:
        print(note)


def comparisons_json(comparisons: list[tuple[PublishedRow, list]]) -> list[dict]:
    return [comparison_json(row, cells) for row, cells in comparisons]


def protocol_note(row: PublishedRow, run_input: str | None) -> str | None:
    """MedHorizon: the input the paper used for the row (Tables 6-7, the protocol registry), and the run's
    when it differs -- a number measured under another protocol is not the paper's number."""
    from ..benchmarks.medhorizon.model_settings import SETTINGS

    s = next((s for s in SETTINGS if s.paper_row == row.model), None)
    if s is None:
        return None
    if s.selector:
        paper = f"its own adaptive selector, {s.frames} frames"
    elif s.frames:
        paper = f"{s.frames} frames"
    elif s.fps and s.cap:
        paper = f"{s.fps:g} FPS, cap {s.cap}"
    else:
        paper = f"{s.input_shown} (cap not given)"
    text = f"note: the paper ran {row.model} with {paper} ({s.table}; `medhorizon-tasks protocol {s.row}`)"
    if run_input and run_input not in ("?", paper):
        return f"{text}; this run: {run_input}, not the paper's protocol"
    return text if run_input != paper else None
