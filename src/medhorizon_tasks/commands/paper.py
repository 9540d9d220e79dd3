"""The paper's row for a scored run (``score --paper-row``): which row, and the run beside it.

A helper of :mod:`.score`, not a command. The row is the one named by
``--paper-row`` (a model as the paper prints it, an alias, or a MedHorizon
registry row such as ``qwen3_vl_8b``), else the model of an lmms-eval samples
file (the checkpoint its model args load, matched through the protocol
registry :mod:`medhorizon_tasks.benchmarks.medhorizon.model_settings`); the
numbers come from :mod:`medhorizon_tasks.benchmarks.published`. Whether the run may stand beside it at all
(the paper's data: else refused; every item answered and the paper's protocol: else flagged) is
:mod:`medhorizon_tasks.benchmarks.paper_match`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..benchmarks.paper_match import (
    PaperCheck,
    data_problems,
    departure_flags,
    missing_flag,
    paper_datasets,
    surghi_dataset_problems,
)
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

__all__ = ["Comparison", "add_paper_row_argument", "paper_comparisons", "run_model_names", "print_comparisons",
           "comparisons_json", "refusals_json", "paper_json", "protocol_note", "medhorizon_departures"]

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


@dataclass
class Comparison:
    """A paper row beside the run: ``cells`` (empty when refused) and what the check found."""

    row: PublishedRow
    cells: list
    check: PaperCheck

    @property
    def refused(self) -> bool:
        return bool(self.check.refused)


def paper_comparisons(benchmark: str, report: dict, *, paper_row: str | None, predictions: str,
                      mode: str | None = None, items: list | None = None,
                      departures: list[str] = ()) -> list[Comparison]:
    """The run's report beside its paper row(s) (empty when none applies), each checked
    (:mod:`~medhorizon_tasks.benchmarks.paper_match`): refused when the data are not the paper's (``items``:
    MedHorizon / Sureon items), flagged for items without a prediction and for ``departures`` from the
    paper's protocol.

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
    flags = departure_flags(departures)

    def checked(row, values, refused, missing) -> Comparison:
        check = PaperCheck(list(refused), [*missing, *flags])
        return Comparison(row, [] if check.refused else compare(row, values), check)

    if benchmark == "medhorizon":
        refused = data_problems(benchmark, items or [])
        overall = report.get("overall") or {}
        missing = missing_flag(overall.get("missing", 0), overall.get("n"))
        return [checked(row, run_values(report), refused, missing) for row in _find(benchmark, names, explicit)]
    if benchmark == "sureon":
        refused = data_problems(benchmark, items or [])
        missing = missing_flag(len(report.get("missing") or []), len(items or []) or None)
        mode = mode if mode in ("visual", "blind") else "visual"
        out = []
        for row in _find(benchmark, names, explicit, eval=mode):
            if row.table in _VISUAL_ONLY and mode != "visual":
                continue
            out.append(checked(row, run_values(report), refused, missing))
            if row.table == "Table 3" and report.get("mg"):
                mg = find_row(benchmark, row.model, table="Table 3", eval="MG")
                if mg is not None:
                    out.append(checked(mg, run_values(report, mg=True), refused, missing))
        return out
    out = []
    datasets = report.get("datasets") or {}
    for dataset in ["Overall", *sorted(datasets)]:
        summary = report.get("overall") if dataset == "Overall" else datasets[dataset]
        refused = surghi_dataset_problems(dataset, datasets, paper_datasets(), paper_datasets(overall=True))
        missing = missing_flag((summary or {}).get("n_missing", 0), unit="annotated frame")
        for row in _find(benchmark, names, explicit and dataset == "Overall", dataset=dataset):
            out.append(checked(row, run_values(report, dataset=dataset), refused, missing))
    return out


def print_comparisons(comparisons: list[Comparison], notes: list[str] = ()) -> None:
    """Each shown row as a table with its flags; the refused rows, grouped, with the reason."""
    refused: dict[tuple, list[str]] = {}
    for c in comparisons:
        if c.refused:
            refused.setdefault((c.row.benchmark, c.row.model, tuple(c.row.setting.items()), tuple(c.check.refused)),
                               []).append(c.row.table)
            continue
        print()
        print(format_comparison(c.row, c.cells))
        for flag in c.check.flags:
            print(f"  NOT the paper's number as printed: {flag}")
    for (_, model, setting, reasons), tables in refused.items():
        where = ", ".join(f"{k} {v}" for k, v in setting)
        print()
        print(f"The paper's numbers are not set beside this run ({' / '.join(tables)}, row \"{model}\""
              f"{f' ({where})' if where else ''}): {'; '.join(reasons)}")
    for note in notes:
        print(note)


def comparisons_json(comparisons: list[Comparison]) -> list[dict]:
    """The rows set beside the run, each with its ``flags``."""
    return [{**comparison_json(c.row, c.cells), "flags": list(c.check.flags)} for c in comparisons if not c.refused]


def refusals_json(comparisons: list[Comparison]) -> list[dict]:
    """The rows not set beside the run, each with why."""
    return [{"table": c.row.table, "model": c.row.model, "setting": dict(c.row.setting),
             "refused": list(c.check.refused)} for c in comparisons if c.refused]


def paper_json(comparisons: list[Comparison]) -> dict:
    """What a ``--json`` report adds: ``paper`` (rows beside the run) and ``paper_refused``."""
    if not comparisons:
        return {}
    out = {"paper": comparisons_json(comparisons)}
    if any(c.refused for c in comparisons):
        out["paper_refused"] = refusals_json(comparisons)
    return out


def _paper_input(row: PublishedRow):
    """``(setting, input as the paper ran it)`` of a MedHorizon row in the protocol registry, else None."""
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
    return s, paper


def protocol_note(row: PublishedRow, run_input: str | None) -> str | None:
    """MedHorizon: the input the paper used for the row (Tables 6-7, the protocol registry), and the run's
    when it differs -- a number measured under another protocol is not the paper's number."""
    found = _paper_input(row)
    if found is None:
        return None
    s, paper = found
    text = f"note: the paper ran {row.model} with {paper} ({s.table}; `medhorizon-tasks protocol {s.row}`)"
    if run_input and run_input not in ("?", paper):
        return f"{text}; this run: {run_input}, not the paper's protocol"
    return text if run_input != paper else None


def medhorizon_departures(row: PublishedRow, run_input: str | None, report: dict) -> list[str]:
    """How a MedHorizon run departs from the protocol behind ``row``: another frame input than the row's
    (the registry), another answer extraction than the authors' scorer Table 2's numbers came from (only when
    the two rules disagree on some item, so that the choice changes the number)."""
    out = []
    found = _paper_input(row)
    if found is not None and run_input and run_input not in ("?", found[1]):
        out.append(f"input {run_input}, the paper's row {found[1]}")
    disagree = (report.get("overall") or {}).get("rules_disagree") or 0
    if report.get("extraction", "default") != "authors" and disagree:
        out.append(f"answers extracted with the package's rule; Table 2's come from the authors' scorer, and the "
                   f"two rules disagree on {disagree} item(s) (--extraction authors scores with it)")
    return out
