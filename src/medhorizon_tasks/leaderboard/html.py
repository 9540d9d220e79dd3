"""The leaderboard as one static, self-contained HTML page.

No network: inline CSS, no fonts, images or scripts from elsewhere. The
tables are in the HTML itself (readable without JavaScript, by a crawler or
``chromium --dump-dom``); a few lines of inline JavaScript only let a reader
re-sort a table by clicking a column header. Every text from a submission is
escaped with :func:`html.escape`; a model links to its ``url`` only when that
is an http(s) address (validation already requires it; :func:`~.build.link_url`).
The tables fit a 1,400 px window (and down to ~900 px) without scrolling sideways;
the page's title names the benchmarks unless one is given (:func:`default_title`).
"""

from __future__ import annotations

import math
import re
from html import escape

from .build import Board
from .tables import board_footnote, default_title, link_url, table_rows

__all__ = ["render_html", "default_title", "board_section", "PAGE_CSS", "SORT_JS"]

# The table must fit a laptop screen (about 1,400 px) without scrolling sideways: headers and text cells
# wrap at spaces and after the punctuation that joins the parts of a name (- _ / . @, marked <wbr>), never
# inside a word; numbers stay on one line, the interval of the headline may go under its value. Only below
# ~900 px does the table keep a minimum width and scroll inside its own box, never the page; below 640 px (a
# phone, 390 px) each row is a card of "label value" lines (the label from the cell's data-label), nothing cut.
_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 1.5rem auto; max-width: 110rem;
       padding: 0 1rem; color: #1b1f24; background: #fff; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.25rem; margin-top: 2rem; }
p.sub { color: #57606a; margin-top: 0; }
.wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-size: 0.86rem; line-height: 1.3; }
th, td { border-bottom: 1px solid #d0d7de; padding: 0.3rem 0.4rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; cursor: pointer; user-select: none; position: sticky; top: 0; font-size: 0.8rem;
     vertical-align: bottom; overflow-wrap: normal; }
th:hover { background: #eaeef2; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num, td.date, td.added { white-space: nowrap; }
td.model { min-width: 7rem; }
td.model div { max-width: 18rem; overflow-wrap: normal; word-break: normal; }
td.text { overflow-wrap: normal; word-break: normal; }
td.proto { min-width: 6.5rem; }
td.sig { white-space: nowrap; }
td.head { white-space: normal; }
td.head span { white-space: nowrap; }
td.head span.ci { color: #57606a; font-size: 0.88em; }
tr.leader td { font-weight: 600; }
td.sig-yes { color: #a40e26; }
td.sig-no { color: #57606a; }
p.foot { color: #57606a; font-size: 0.82rem; max-width: 70rem; }
@media (max-width: 1250px) {
  table { font-size: 0.75rem; }
  th { font-size: 0.72rem; }
  th, td { padding: 0.22rem 0.2rem; }
  td.model { min-width: 6rem; }
  td.proto { min-width: 4rem; }
  td.sig, td.num.count, td.head span.ci { white-space: normal; }
}
@media (max-width: 900px) {
  body { margin: 1rem auto; padding: 0 0.5rem; }
  table.board { min-width: 52rem; }
}
@media (max-width: 640px) {
  table.board, table.board tbody, table.board tr, table.board td { display: block; min-width: 0; width: auto; }
  table.board thead { display: none; }
  table.board tr { border: 1px solid #d0d7de; border-radius: 6px; margin-bottom: 0.6rem; padding: 0.2rem 0.3rem; }
  table.board td { border: none; display: flex; gap: 0.5rem; white-space: normal; text-align: left;
                   overflow-wrap: anywhere; }
  table.board td > * { min-width: 0; }
  table.board td[data-label]::before { content: attr(data-label); font-weight: 600; flex: 0 0 7.5rem; }
  table.board td.model div { max-width: none; }
}
"""

# Click a header to sort by it (numbers by their data-value), again to reverse.
_JS = """
document.querySelectorAll("table.board").forEach(function (table) {
  table.querySelectorAll("th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
      var asc = th.getAttribute("data-order") !== "asc";
      th.setAttribute("data-order", asc ? "asc" : "desc");
      function key(r) { var c = r.cells[col], v = c.getAttribute("data-value");
        return v !== null && v !== "" ? parseFloat(v) : c.textContent.toLowerCase(); }
      rows.sort(function (a, b) { var x = key(a), y = key(b); return (x < y ? -1 : x > y ? 1 : 0) * (asc ? 1 : -1); });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""

_NUMERIC = {0, 5, 6}  # rank, headline, n (and every secondary column)
_MODEL, _HEADLINE, _N, _SIG = 1, 5, 6, 7
_CELL_CLASSES = {1: ["model"], 2: ["text"], 3: ["text", "proto"], 4: ["date"], 7: ["sig"]}


PAGE_CSS, SORT_JS = _CSS, _JS  # the served board's pages use the same style and sorting


_JOINERS = re.compile(r"([-_/.@])(?=[^\s])")


def _breakable(text: str) -> str:
    """``text`` escaped, with a break opportunity (``<wbr>``) after each ``- _ / . @`` inside a name, so that
    a long name without spaces wraps between its parts instead of inside a word (or not at all)."""
    return _JOINERS.sub(r"\1<wbr>", escape(text))


def _value_attr(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f' data-value="{float(value):.10g}"'


def _board_html(board: Board, entry_href=None, extra=(), badge=None) -> str:
    head, rows = table_rows(board)
    n_fixed = len(head) - len(board.secondary)
    head = [*head, *(h for h, _ in extra)]
    out = [f'<section id="{escape(board.benchmark)}">', f"<h2>{escape(board.name)}</h2>",
           f'<div class="wrap"><table class="board" id="board-{escape(board.benchmark)}">', "<thead><tr>"]
    for i, h in enumerate(head):
        cls = ' class="num"' if i in _NUMERIC or i >= n_fixed else ""
        cls = "" if i >= len(head) - len(extra) else cls
        out.append(f"<th{cls}>{_breakable(h)}</th>")
    out.append("</tr></thead><tbody>")
    for e, row in zip(board.entries, rows):
        m = e.metadata
        values = [None if e.off_protocol else e.rank, None, None, None, None, e.headline, e.n,
                  e.p_holm if e.p_holm is not None else -1.0,
                  *[e.secondary.get(k) for k, _, _ in board.secondary]]
        cls = ' class="leader"' if e.is_leader and e.rank == 1 else ' class="off-protocol"' if e.off_protocol else ""
        out.append(f'<tr{cls} data-model="{escape(m["model"])}">')
        added = [column(e) for _, column in extra]  # (html, sort value) of each added column
        for i, (text, value) in enumerate(zip(row, values)):
            classes = []
            if i == _HEADLINE:
                classes.append("head")
            elif i in _NUMERIC or i >= n_fixed:
                classes += ["num", "count"] if i == _N else ["num"]
            classes += _CELL_CLASSES.get(i, [])
            if i == _SIG and e.significant is not None:
                classes.append("sig-yes" if e.significant else "sig-no")
            attrs = (f' class="{" ".join(classes)}"' if classes else "") + _value_attr(value)
            cell = _breakable(text) if i in (_MODEL, 2, 3) else escape(text)  # model, size, input protocol
            if i == _HEADLINE:
                cell = _headline_cell(text)
            if i == _MODEL:
                url = link_url(m.get("url"))
                page = entry_href(e) if entry_href is not None else None
                if page is not None:  # served: the name opens the entry's page, its url is a link of its own
                    cell = f'<a href="{escape(page, quote=True)}">{cell}</a>'
                    if url is not None:
                        cell += f' <a class="ext" href="{escape(url, quote=True)}" rel="nofollow noopener">&#8599;</a>'
                elif url is not None:
                    cell = f'<a href="{escape(url, quote=True)}">{cell}</a>'
                if badge is not None:
                    cell += badge(e)
                # the block caps the column's width: a long name wraps instead of squeezing every other column
                cell = f"<div>{cell}</div>"
                if m.get("notes"):
                    attrs += f' title="{escape(m["notes"], quote=True)}"'
            out.append(f'<td{attrs} data-label="{escape(head[i], quote=True)}">{cell}</td>')
        for (h, _), (cell, value) in zip(extra, added):
            out.append(f'<td class="added" data-label="{escape(h, quote=True)}"{_value_attr(value)}>{cell}</td>')
        out.append("</tr>")
    out.append("</tbody></table></div>")
    out.append(f'<p class="foot">{escape(board_footnote(board))}</p>')
    out.append("</section>")
    return "\n".join(out)


def _headline_cell(text: str) -> str:
    """``value [lo, hi]`` as two unbreakable pieces, so a narrow column puts the interval under the value."""
    value, sep, ci = text.partition(" [")
    if not sep:
        return escape(text)
    return f'<span class="v">{escape(value)}</span> <span class="ci">{escape("[" + ci)}</span>'


def _paper_html(paper) -> str:
    """The entries beside the papers' published rows (:func:`.paper.paper_lines`), one plain table."""
    from .paper import paper_table
    from .tables import PAPER_NOTE

    head, rows = paper_table(paper)
    out = ['<section id="paper">', "<h2>Published values beside these entries</h2>",
           '<div class="wrap"><table class="paper"><thead><tr>']
    num = ' class="num"'
    out += [f"<th{num if 3 <= i <= 5 else ''}>{escape(h)}</th>" for i, h in enumerate(head)]
    out.append("</tr></thead><tbody>")
    for r in rows:
        out.append("<tr>" + "".join(f"<td{num if 3 <= i <= 5 else ''}>{escape(c)}</td>" for i, c in enumerate(r))
                   + "</tr>")
    out += ["</tbody></table></div>", f'<p class="foot">{escape(PAPER_NOTE)}</p>', "</section>"]
    return "\n".join(out)


def board_section(board: Board, entry_href=None, extra=(), badge=None) -> str:
    """One board's ``<section>``: its table (the model names linking to ``entry_href(entry)`` when given, as
    the submission service's board does) and its footnote. The service adds columns of its own: ``extra`` is
    ``[(header, entry -> (cell HTML, sort value or None))]``, after the built board's columns; ``badge(entry)``
    is HTML put after the model's name (the "verified" mark)."""
    return _board_html(board, entry_href, extra, badge)


def render_html(boards: list[Board], title: str | None = None, paper=None) -> str:
    """The whole page (UTF-8 text). ``title`` (page title and heading) defaults to :func:`default_title`;
    ``paper`` (:func:`.paper.paper_lines`) adds the entries beside the papers' published rows."""
    if title is None:
        title = default_title(boards)
    names = ", ".join(b.name for b in boards)
    body = "\n".join(_board_html(b) for b in boards) + ("\n" + _paper_html(paper) if paper else "")
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
            f"<h1>{escape(title)}</h1>\n"
            f'<p class="sub">{escape(names)} &middot; built by medhorizon-tasks; click a column header to sort.</p>\n'
            f"{body}\n<script>{_JS}</script>\n</body>\n</html>\n")
