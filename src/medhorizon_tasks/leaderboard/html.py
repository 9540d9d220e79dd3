"""The leaderboard as one static, self-contained HTML page.

No network: inline CSS, no fonts, images or scripts from elsewhere. The
tables are in the HTML itself (readable without JavaScript, by a crawler or
``chromium --dump-dom``); a few lines of inline JavaScript only let a reader
re-sort a table by clicking a column header. Every text from a submission is
escaped with :func:`html.escape`; a model links to its ``url`` only when that
is an http(s) address (validation already requires it; :func:`~.build.link_url`).
"""

from __future__ import annotations

import math
from html import escape

from .build import Board, board_footnote, link_url, table_rows

__all__ = ["render_html"]

_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2rem auto; max-width: 110rem;
       padding: 0 1rem; color: #1b1f24; background: #fff; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; }
h2 { font-size: 1.25rem; margin-top: 2.2rem; }
p.sub { color: #57606a; margin-top: 0; }
table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
th, td { border-bottom: 1px solid #d0d7de; padding: 0.35rem 0.6rem; text-align: left; white-space: nowrap; }
th { background: #f6f8fa; cursor: pointer; user-select: none; position: sticky; top: 0; }
th:hover { background: #eaeef2; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.leader td { font-weight: 600; }
td.sig-yes { color: #a40e26; }
td.sig-no { color: #57606a; }
p.foot { color: #57606a; font-size: 0.82rem; max-width: 70rem; }
.wrap { overflow-x: auto; }
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


def _value_attr(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f' data-value="{float(value):.10g}"'


def _board_html(board: Board) -> str:
    head, rows = table_rows(board)
    n_fixed = len(head) - len(board.secondary)
    out = [f'<section id="{escape(board.benchmark)}">', f"<h2>{escape(board.name)}</h2>",
           f'<div class="wrap"><table class="board" id="board-{escape(board.benchmark)}">', "<thead><tr>"]
    for i, h in enumerate(head):
        cls = ' class="num"' if i in _NUMERIC or i >= n_fixed else ""
        out.append(f"<th{cls}>{escape(h)}</th>")
    out.append("</tr></thead><tbody>")
    for e, row in zip(board.entries, rows):
        m = e.metadata
        values = [e.rank, None, None, None, None, e.headline, e.n,
                  e.p_holm if e.p_holm is not None else -1.0,
                  *[e.secondary.get(k) for k, _, _ in board.secondary]]
        cls = ' class="leader"' if e.significant is None and e.rank == 1 else ""
        out.append(f'<tr{cls} data-model="{escape(m["model"])}">')
        for i, (text, value) in enumerate(zip(row, values)):
            classes = []
            if i in _NUMERIC or i >= n_fixed:
                classes.append("num")
            if i == 7 and e.significant is not None:
                classes.append("sig-yes" if e.significant else "sig-no")
            attrs = (f' class="{" ".join(classes)}"' if classes else "") + _value_attr(value)
            cell = escape(text)
            if i == 1:
                url = link_url(m.get("url"))
                if url is not None:
                    cell = f'<a href="{escape(url, quote=True)}">{cell}</a>'
                if m.get("notes"):
                    attrs += f' title="{escape(m["notes"], quote=True)}"'
            out.append(f"<td{attrs}>{cell}</td>")
        out.append("</tr>")
    out.append("</tbody></table></div>")
    out.append(f'<p class="foot">{escape(board_footnote(board))}</p>')
    out.append("</section>")
    return "\n".join(out)


def render_html(boards: list[Board], title: str = "Leaderboard") -> str:
    """The whole page (UTF-8 text)."""
    names = ", ".join(b.name for b in boards)
    body = "\n".join(_board_html(b) for b in boards)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
            f"<h1>{escape(title)}</h1>\n"
            f'<p class="sub">{escape(names)} &middot; built by medhorizon-tasks; click a column header to sort.</p>\n'
            f"{body}\n<script>{_JS}</script>\n</body>\n</html>\n")
