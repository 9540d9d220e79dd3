"""Each leaderboard entry beside its paper's row: the published headline, the entry's with its interval.

An entry is matched to a row of its benchmark's paper by its model name (as
the paper prints it, an alias, or -- MedHorizon -- through the protocol
registry: a registry row or the checkpoint it loads), or by ``rows``
(``{entry model: paper row}``, ``leaderboard build --paper-row MODEL=ROW``).
The headline compared is the board's: MedHorizon Table 2 "Ov.", Sureon Table 3
"μ" of the entry's mode (visual or blind), SurgHiBench Table 2 "Multi-level" of
"Overall". Numbers come from :mod:`medhorizon_tasks.benchmarks.published`;
the cells are made here once, for the Markdown, HTML and terminal renderings.

A board whose data are not the paper's (:attr:`~.build.Board.paper_refused`, from
:func:`medhorizon_tasks.benchmarks.paper_match.board_problems`: the synthetic sets and samples, a subset,
SurgHiBench datasets other than the paper's) sets no entry beside a row (its notes say why; an explicit
``--paper-row`` for one of its entries is an error). An entry whose run departs from the paper's protocol
(``metadata.departures``, e.g. ``no blur``) is shown with that label.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..benchmarks.data import BENCHMARK_NAMES
from ..benchmarks.published import Cell, PublishedRow, compare, find_row, row_names
from ..core.errors import MedHorizonError
from ..core.text import aligned
from .build import Board, Entry
from .submission import model_label

__all__ = ["PaperLine", "paper_lines", "paper_table", "format_paper_text"]

# benchmark -> (table, column key) of the board's headline
HEADLINE = {"medhorizon": ("Table 2", "overall"), "sureon": ("Table 3", "mu"), "surghi": ("Table 2", "multi_level")}


@dataclass(frozen=True)
class PaperLine:
    benchmark: str
    entry: Entry
    row: PublishedRow
    cell: Cell


def _setting(board: Board, entry: Entry) -> dict:
    if board.benchmark == "sureon":
        return {"eval": entry.metadata.get("mode") or "visual"}
    if board.benchmark == "surghi":
        return {"dataset": "Overall"}
    return {}


def paper_lines(boards: list[Board], rows: Mapping[str, str] | None = None) -> list[PaperLine]:
    """Every entry whose model the paper reports, beside that row's headline (module doc). ``rows`` names the
    paper row of an entry's model explicitly; a name that is no entry, or a row the paper lacks, is an error."""
    rows = dict(rows or {})
    models = {e.metadata["model"] for b in boards for e in b.entries}
    unknown = [m for m in rows if m not in models]
    if unknown:
        raise MedHorizonError(f"--paper-row {unknown[0]}=...: no entry is named {unknown[0]!r} (entries: "
                              f"{', '.join(sorted(models))})")
    out = []
    for board in boards:
        table, key = HEADLINE[board.benchmark]
        for e in board.entries:
            name = e.metadata["model"]
            if board.paper_refused:
                if name in rows:
                    raise MedHorizonError(f"--paper-row {name}={rows[name]}: not set beside the paper's {board.name} "
                                          f"{table}: {'; '.join(board.paper_refused)}")
                continue
            row = find_row(board.benchmark, rows.get(name, name), table=table, **_setting(board, e))
            if row is None:
                if name in rows:
                    raise MedHorizonError(f"--paper-row {name}={rows[name]}: the paper's {board.name} {table} has no "
                                          f"such row; rows: {', '.join(row_names(board.benchmark, table))}")
                continue
            ci = None if any(x != x for x in e.ci) else e.ci  # NaN: no interval
            (cell,) = compare(row, {key: (e.headline, ci)}, keys=[key])
            out.append(PaperLine(board.benchmark, e, row, cell))
    return out


def paper_table(lines: list[PaperLine]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of text (percent), shared by every rendering."""
    head = ["Benchmark", "Model", "Paper row", "Published", "This run [95% CI]", "Difference", "Published in CI"]
    body = []
    for line in lines:
        c, row = line.cell, line.row
        setting = ", ".join(str(v) for v in row.setting.values())
        run = "—" if c.run is None else f"{c.run:.1f}" + (f" [{c.ci[0]:.1f}, {c.ci[1]:.1f}]" if c.ci else "")
        body.append([BENCHMARK_NAMES[line.benchmark], model_label(line.entry.metadata),
                     f"{row.table} {c.label}: {row.model}" + (f" ({setting})" if setting else ""),
                     c.printed or "—", run, "—" if c.difference is None else f"{c.difference:+.1f}",
                     "—" if c.inside is None else ("yes" if c.inside else "no")])
    return head, body


def format_paper_text(lines: list[PaperLine]) -> str:
    """The comparison for the terminal: aligned columns, nothing escaped (control characters of submitted
    names are replaced by :func:`~medhorizon_tasks.core.text.printable`, so a name cannot move the cursor)."""
    head, body = paper_table(lines)
    return "\n".join(aligned([head, *body]))
