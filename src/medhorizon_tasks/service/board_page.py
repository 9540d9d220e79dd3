"""The served board: what a reader of a leaderboard expects of it, beside the numbers ``leaderboard build``
makes.

* **Search and filters** (model name, size, input protocol, verified only): a form of ``GET /`` whose query
  the server applies (it works without a script); the ranks stay those of the whole board.
* **When each entry was received** (a column; ``received_at`` in the JSON and CSV).
* **The "verified" mark**: the maintainers reproduced the entry (a maintainer action with its reason,
  :meth:`~.store.Store.verified`); on the board, the entry's page, the JSON and the CSV.
* **A plot per benchmark** (:mod:`.plot`, inline SVG).
* **An empty state per benchmark** the server holds data for.
* **The paper's published rows as reference rows** on a board whose data are the paper's release: marked
  "reported" (the paper printed them; nobody here verified them), in a table of their own, never ranked. On
  other data (the embedded synthetic benchmark) the board says why there are none.
"""

from __future__ import annotations

import csv
import dataclasses
import io
from collections.abc import Mapping
from html import escape

from ..benchmarks.data import BENCHMARK_NAMES, BENCHMARKS, BenchmarkData
from ..benchmarks.paper_match import board_problems
from ..benchmarks.published import published_rows
from ..leaderboard.build import Board, Entry
from ..leaderboard.html import board_section
from ..leaderboard.paper import HEADLINE
from ..leaderboard.submission import input_protocol_text
from .plot import board_plot
from .store import Action, StoredSubmission

__all__ = ["Filters", "filter_boards", "served_board_page", "annotate_json", "annotate_csv", "reference_rows",
           "entry_id"]


def entry_id(e: Entry) -> int | None:
    source = e.submission.source or ""
    tail = source.rsplit("/", 1)[-1]
    return int(tail) if source.startswith("/submissions/") and tail.isdigit() else None


@dataclasses.dataclass(frozen=True)
class Filters:
    """The board's search: model name contains ``q`` (any case), size is ``size``, input protocol is
    ``protocol`` (as shown), ``verified`` only."""

    q: str = ""
    size: str = ""
    protocol: str = ""
    verified: bool = False

    @classmethod
    def from_query(cls, query: Mapping[str, str]) -> "Filters":
        def text(key: str) -> str:
            return str(query.get(key) or "").strip()[:200]

        return cls(text("q"), text("size"), text("protocol"), text("verified") in ("1", "on", "yes", "true"))

    @property
    def active(self) -> bool:
        return bool(self.q or self.size or self.protocol or self.verified)

    def keeps(self, e: Entry, verified: Mapping[int, Action]) -> bool:
        m = e.metadata
        return ((not self.q or self.q.casefold() in str(m["model"]).casefold())
                and (not self.size or str(m.get("size", "")) == self.size)
                and (not self.protocol or input_protocol_text(m) == self.protocol)
                and (not self.verified or entry_id(e) in verified))


def filter_boards(boards: list[Board], f: Filters, verified: Mapping[int, Action]) -> list[Board]:
    """Copies of ``boards`` holding the entries ``f`` keeps (ranks unchanged)."""
    if not f.active:
        return boards
    return [dataclasses.replace(b, entries=[e for e in b.entries if f.keeps(e, verified)]) for b in boards]


# ------------------------------------------------------------------ reference rows

_REFERENCE: dict[tuple[str, str], tuple[list[dict], list[str]]] = {}


def reference_rows(benchmark: str, data: BenchmarkData) -> tuple[list[dict], list[str]]:
    """(the paper's published headline rows, why there are none): the rows when ``data`` is the paper's
    release, else no rows and the reasons (:func:`~..benchmarks.paper_match.board_problems`). Kept per data
    version: checking the release's 1,253 items took ~10 ms, on every board request."""
    key = (benchmark, data.version)
    if key not in _REFERENCE:
        _REFERENCE[key] = _reference_rows(benchmark, data)
    rows, problems = _REFERENCE[key]
    return [dict(r) for r in rows], list(problems)


def _reference_rows(benchmark: str, data: BenchmarkData) -> tuple[list[dict], list[str]]:
    problems = board_problems(data)
    if problems:
        return [], problems
    table, key = HEADLINE[benchmark]
    rows = []
    for r in published_rows(benchmark, table=table):
        if benchmark == "surghi" and r.setting.get("dataset") != "Overall":
            continue
        if r.printed.get(key) in (None, "", "—"):
            continue
        ci = r.ci95.get(key)
        rows.append({"model": r.model, "table": r.table, "setting": dict(r.setting), "reported": r.printed[key],
                     "ci95": list(ci) if ci else None, "verified": False})
    return rows, []


def _reference_html(board_name: str, benchmark: str, rows: list[dict], problems: list[str]) -> str:
    if problems:
        return (f'<p class="foot ref-none" id="ref-none-{benchmark}">No reference rows from the {escape(board_name)} '
                f"paper: the data this server holds are not its release ({escape('; '.join(problems))}).</p>")
    table, _ = HEADLINE[benchmark]
    body = "".join(
        f'<tr class="reported"><td data-label="Model">{escape(r["model"])} <span class="mark rep">reported</span>'
        f'</td><td data-label="Setting">{escape(", ".join(f"{k} {v}" for k, v in r["setting"].items()))}</td>'
        f'<td class="num" data-label="Reported %">{escape(r["reported"])}</td></tr>' for r in rows)
    return (f'<h3>Reported in the paper ({escape(table)})</h3><div class="wrap"><table class="board ref" '
            f'id="ref-{benchmark}"><thead><tr><th>Model</th><th>Setting</th><th class="num">Reported %</th></tr>'
            f"</thead><tbody>{body}</tbody></table></div>"
            '<p class="foot">Reference rows: the values the paper prints, on the same data; not run or verified '
            "here, and not ranked.</p>")


# ------------------------------------------------------------------ the page

def _filter_form(boards: list[Board], f: Filters, shown: int, total: int) -> str:
    entries = [e for b in boards for e in b.entries]
    sizes = sorted({str(e.metadata.get("size", "")) for e in entries} - {""})
    protocols = sorted({input_protocol_text(e.metadata) for e in entries})

    def options(values, chosen):
        return '<option value="">any</option>' + "".join(
            f'<option value="{escape(v, quote=True)}"{" selected" if v == chosen else ""}>{escape(v)}</option>'
            for v in values)

    note = (f'<p class="sub" id="shown">Showing {shown} of {total} entries (ranks are those of the whole board). '
            '<a href="/">Clear the filters</a></p>' if f.active else "")
    return ('<form class="filters" id="filters" method="get" action="/">'
            f'<label>Model <input type="search" id="q" name="q" value="{escape(f.q, quote=True)}" '
            'placeholder="name contains"></label>'
            f'<label>Size <select id="size" name="size">{options(sizes, f.size)}</select></label>'
            f'<label>Input protocol <select id="protocol" name="protocol">{options(protocols, f.protocol)}'
            "</select></label>"
            f'<label><input type="checkbox" id="verified" name="verified" value="1"'
            f'{" checked" if f.verified else ""}> verified only</label>'
            '<button type="submit" id="search">Search</button></form>' + note)


def served_board_page(all_boards: list[Board], elsewhere: list[StoredSubmission], title: str, *,
                      datas: Mapping[str, BenchmarkData], rows: Mapping[int, StoredSubmission],
                      verified: Mapping[int, Action], filters: Filters) -> str:
    from . import pages
    from .boards import entry_href

    boards = filter_boards(all_boards, filters, verified)
    by_bench = {b.benchmark: b for b in boards}

    def received(e: Entry):
        row = rows.get(entry_id(e))
        return ((f'<span title="{escape(row.received_at, quote=True)}">{escape(row.received_at[:10])}</span>', None)
                if row else ("", None))

    def badge(e: Entry) -> str:
        act = verified.get(entry_id(e))
        return ("" if act is None else
                f' <span class="mark ok" title="{escape("verified: " + act.reason, quote=True)}">verified</span>')

    parts = [_filter_form(all_boards, filters, sum(len(b.entries) for b in boards),
                          sum(len(b.entries) for b in all_boards))]
    for bench in BENCHMARKS:
        if bench not in datas:
            continue
        name = BENCHMARK_NAMES[bench]
        ref, problems = reference_rows(bench, datas[bench])
        board = by_bench.get(bench)
        if board is None or not board.entries:
            if board is None:
                why = 'No entries yet. <a href="/submit">Submit the first one</a>.'
            else:
                why = 'No entry matches the search. <a href="/">Clear the filters</a>.'
            parts.append(f'<section id="{bench}"><h2>{escape(name)}</h2>'
                         f'<p class="banner info empty" id="empty-{bench}">{why}</p>'
                         + _reference_html(name, bench, ref, problems) + "</section>")
            continue
        section = board_section(board, lambda e: e.submission.source or None,
                                extra=[("Received", received)], badge=badge)
        # the plot and the reference rows go inside the board's section, after its table and footnote
        section = section.removesuffix("</section>")
        parts.append(section + f'<details class="plot" open><summary>Plot</summary>{board_plot(board)}</details>'
                     + _reference_html(name, bench, ref, problems) + "</section>")
    if elsewhere:
        links = ", ".join(f'<a href="{entry_href(r.id)}">{escape(r.model)}</a>' for r in elsewhere[:20])
        parts.append(f'<p class="foot">{len(elsewhere)} kept submission(s) were made on other data versions than '
                     f"the data this server holds and are not ranked: {links}"
                     f"{' ...' if len(elsewhere) > 20 else ''}.</p>")
    names = ", ".join(BENCHMARK_NAMES[b] for b in BENCHMARKS if b in datas)
    sub = (f'<p class="sub">{escape(names)} &middot; served by medhorizon-tasks; click a column header to sort; a '
           "model's name opens its page; <em>verified</em>: the maintainers reproduced it.</p>")
    return pages.page(title, sub + "\n".join(parts), script=any(b.entries for b in boards))


# ------------------------------------------------------------------ JSON and CSV

def annotate_json(out: dict, rows: Mapping[int, StoredSubmission], verified: Mapping[int, Action],
                  datas: Mapping[str, BenchmarkData]) -> dict:
    """The board JSON with each entry's ``received_at`` and ``verified`` mark, and each held benchmark's
    reference rows (``reference_rows``, or ``reference_rows_absent`` saying why there are none)."""
    for b in out["boards"]:
        for e in b["entries"]:
            row, act = rows.get(e.get("id")), verified.get(e.get("id"))
            e["received_at"] = row.received_at if row else None
            e["verified"] = act is not None
            e["verified_reason"] = act.reason if act else None
    refs = {}
    for bench in BENCHMARKS:
        if bench in datas:
            ref, problems = reference_rows(bench, datas[bench])
            refs[bench] = {"rows": ref, "absent_because": problems}
    out["reference_rows"] = refs
    return out


def annotate_csv(text: str, rows: Mapping[int, StoredSubmission], verified: Mapping[int, Action]) -> str:
    """The board CSV (``leaderboard build``'s columns) with ``received_at`` and ``verified`` (yes/no) added
    after ``submission``."""
    reader = csv.DictReader(io.StringIO(text))
    fields = [*(reader.fieldnames or []), "received_at", "verified"]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for r in reader:
        source = r.get("submission") or ""
        tail = source.rsplit("/", 1)[-1]
        sub_id = int(tail) if tail.isdigit() else None
        row = rows.get(sub_id)
        w.writerow({**r, "received_at": row.received_at if row else "", "verified": "yes" if sub_id in verified
                    else "no"})
    return buf.getvalue()
