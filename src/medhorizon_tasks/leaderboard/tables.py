"""The leaderboard as text: the displayed table of a board (shared by Markdown and HTML), Markdown and CSV.

Renderer-neutral: cell texts (percent with the 95% interval, the test against
the leader, secondary metrics), the footnote, the title, and links are made
here once; :mod:`.html` and the Markdown / CSV writers below only lay them
out. Submitted text (model names, notes, URLs) is always shown as text, never
as markup or a spreadsheet formula.
"""

from __future__ import annotations

import csv
import html
import io
import math
import re
from urllib.parse import quote, urlsplit

import numpy as np

from ..core.text import aligned, pct, printable
from .build import Board, Entry
from .submission import input_protocol_text, model_label

__all__ = ["format_markdown", "format_csv", "format_text", "table_rows", "board_footnote", "default_title", "link_url",
           "fmt_p", "CSV_COLUMNS", "PAPER_NOTE"]

def fmt_p(p: float | None) -> str:
    if p is None:
        return "—"
    return "p<0.001" if p < 0.001 else f"p={p:.3f}"


def headline_text(e: Entry) -> str:
    """``77.3 [69.3, 85.2]``; where the bootstrap interval is one point (every item right, or every one
    wrong: every resample is the same), the Wilson interval beside it, which is not: ``100.0 [100.0, 100.0],
    Wilson [95.8, 100.0]``."""
    text = f"{pct(e.headline)} [{pct(e.ci[0])}, {pct(e.ci[1])}]"
    lo, hi = e.secondary.get("ci95_wilson_low"), e.secondary.get("ci95_wilson_high")
    if e.ci[0] == e.ci[1] and lo is not None and hi is not None:
        text += f", Wilson [{pct(lo)}, {pct(hi)}]"
    return text


def entry_label(e: Entry) -> str:
    """The model cell: the name, with the run's departures from the standard protocol when it has any
    (``"M [off protocol: frame order: reverse]"``), else :func:`~.submission.model_label`."""
    if e.off_protocol:
        return f"{e.metadata['model']} [off protocol: {'; '.join(e.off_protocol)}]"
    return model_label(e.metadata)


def rank_text(e: Entry) -> str:
    return "off protocol" if e.off_protocol else str(e.rank)


def significance_text(e: Entry) -> str:
    if e.off_protocol:
        return "— (ranked apart)"
    if e.significant is None:
        return "— (leader)" if e.rank == 1 else "—"
    return f"{'yes' if e.significant else 'no'} ({fmt_p(e.p_holm)})"


def secondary_text(value, kind: str, secondary: dict | None = None) -> str:
    if value is None:
        return "—"
    if kind == "mg":  # MG in points with its paired interval and McNemar's p (build._multimodal_gains)
        from ..core.stats import format_difference

        s = secondary or {}
        ci = [s.get("mg_ci95_low"), s.get("mg_ci95_high")]
        return format_difference({"difference": value, "ci95_bootstrap": ci if None not in ci else None,
                                  "pvalue": s.get("mg_pvalue")}).replace(", McNemar p", " p")
    return str(int(value)) if kind == "count" else pct(value)


def table_rows(board: Board) -> tuple[list[str], list[list[str]]]:
    """The displayed table of a board (header, rows of text), shared by Markdown and HTML."""
    head = ["Rank", "Model", "Size", "Input protocol", "Date", f"{board.metric} % [95% CI]", "n",
            "Sig. vs leader (Holm p)", *[label for _, label, _ in board.secondary]]
    rows = []
    for e in board.entries:
        m = e.metadata
        rows.append([rank_text(e), entry_label(e), m["size"], input_protocol_text(m), m["date"], headline_text(e),
                     f"{e.n} {board.n_unit}", significance_text(e),
                     *[secondary_text(e.secondary.get(k), kind, e.secondary) for k, _, kind in board.secondary]])
    return head, rows


def board_footnote(board: Board) -> str:
    return (f"Data version {board.data_version}; {len(board.entries)} entr{'y' if len(board.entries) == 1 else 'ies'}. "
            f"95% CI: {board.ci_method}. Sig. vs leader: {board.test_method}, alpha = {board.alpha:g}."
            + "".join(" " + n for n in board.notes))


_MD_PUNCT = re.compile(r"([\\`*_~\[\]|])")
_MD_TABLE = re.compile(r"([\\|])")
_SUBMITTED = (1, 2, 3, 4)  # model, size, input protocol (with the mode), date: the submitter's text


def _md_cell(text: str, *, submitted: bool = True) -> str:
    """Table-cell text shown as text: a model name, size or note is never markup.

    HTML-escaped (no tag, comment or entity of the submitter's reaches a renderer that allows raw HTML),
    ``\\`` and ``|`` (which would split the cell) backslash-escaped, line breaks made spaces; a
    ``submitted`` text also has its Markdown punctuation escaped: ``[`` / ``]`` (no link or image,
    whatever its URL), emphasis and code spans. The package's own cells ("[95% CI]") stay readable.
    """
    text = html.escape(" ".join(str(text).splitlines()), quote=False)
    return (_MD_PUNCT if submitted else _MD_TABLE).sub(r"\\\1", text)


def link_url(url) -> str | None:
    """``url`` when a model may link to it (an http(s) address with a host), else None; Markdown and HTML
    share this rule, so a ``javascript:`` or ``data:`` url never becomes a link, whatever built the board."""
    if not isinstance(url, str):
        return None
    url = url.strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    return url if parts.scheme.lower() in ("http", "https") and parts.netloc else None


def _md_url(url) -> str | None:
    """:func:`link_url`, fit for a Markdown link destination."""
    url = link_url(url)
    # Percent-encode what could end the destination or the table cell: ( ) < > [ ] | \ ` " ' and spaces.
    return None if url is None else quote(url, safe=":/?#@!$&*+,;=%-._~")


def default_title(boards: list[Board]) -> str:
    """"MedHorizon leaderboard", "MedHorizon and SurgHiBench leaderboards", ...: the page names what it ranks."""
    names = list(dict.fromkeys(b.name for b in boards))
    if not names:
        return "Leaderboard"
    if len(names) == 1:
        return f"{names[0]} leaderboard"
    return f"{', '.join(names[:-1])} and {names[-1]} leaderboards"


PAPER_NOTE = ("Published: the value the paper prints (MedHorizon Table 2, Sureon Table 3, SurgHiBench Table 2; "
              "shipped in medhorizon_tasks/benchmarks/*/published.json). Difference: the entry's value rounded as "
              "the paper rounds, minus the published one.")


def format_text(boards: list[Board], title: str | None = None, paper=None) -> str:
    """The leaderboards for a terminal: aligned plain text, nothing escaped (``p<0.001``, not the Markdown
    file's ``p&lt;0.001``); submitted text has its control characters replaced
    (:func:`~medhorizon_tasks.core.text.printable`). ``paper``: :func:`.paper.paper_lines`, shown after."""
    lines = [printable(title or default_title(boards)), ""]
    for board in boards:
        head, rows = table_rows(board)
        n_fixed = len(head) - len(board.secondary)
        lines += [board.name, *aligned([head, *rows], right={0, 5, 6, *range(n_fixed, len(head))}, indent="  "),
                  "  " + board_footnote(board), ""]
    if paper:
        from .paper import format_paper_text

        lines += ["Published values beside these entries", *("  " + x for x in format_paper_text(paper).splitlines()),
                  "  " + PAPER_NOTE, ""]
    return "\n".join(lines)


def format_markdown(boards: list[Board], title: str | None = None, paper=None) -> str:
    """The leaderboards as Markdown: one section and table per benchmark (and, with ``paper``
    (:func:`.paper.paper_lines`), the entries beside the papers' published rows)."""
    lines = [f"# {title or default_title(boards)}", ""]
    for board in boards:
        head, rows = table_rows(board)
        lines += [f"## {board.name}", ""]
        lines.append("| " + " | ".join(_md_cell(h, submitted=False) for h in head) + " |")
        n_fixed = len(head) - len(board.secondary)
        lines.append("|" + "|".join("---:" if i in (0, 5, 6) or i >= n_fixed else "---"
                                    for i in range(len(head))) + "|")
        for e, row in zip(board.entries, rows):
            cells = [_md_cell(c, submitted=i in _SUBMITTED) for i, c in enumerate(row)]
            url = _md_url(e.metadata.get("url"))
            if url:
                cells[1] = f"[{cells[1]}]({url})"
            lines.append("| " + " | ".join(cells) + " |")
        lines += ["", board_footnote(board), ""]
    if paper:
        from .paper import paper_table

        head, rows = paper_table(paper)
        lines += ["## Published values beside these entries", "",
                  "| " + " | ".join(_md_cell(h, submitted=False) for h in head) + " |",
                  "|---|---|---|---:|---:|---:|---|"]
        lines += ["| " + " | ".join(_md_cell(c, submitted=i == 1) for i, c in enumerate(r)) + " |" for r in rows]
        lines += ["", PAPER_NOTE, ""]
    return "\n".join(lines)


def _num(x, digits: int = 6):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return int(x)
    return round(float(x), digits)


def _pval(p):
    return "" if p is None else float(f"{p:.4g}")  # significant digits: a tiny p must not round to 0


CSV_COLUMNS = ("benchmark", "data_version", "rank", "model", "size", "fps", "cap", "frames", "mode", "date",
               "metric", "value", "ci95_low", "ci95_high", "n", "n_unit", "p_vs_leader", "p_vs_leader_holm",
               "sig_vs_leader")


# A spreadsheet runs a cell starting with one of these as a formula (OWASP "CSV injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def _csv_cell(value):
    """``value``, with text that a spreadsheet would run as a formula prefixed by ``'`` (shown, not run).
    Plain numbers such as ``-0.5`` stay numbers. A carriage return becomes a line feed: the writer quotes
    fields holding its line terminator (``\n``) only, and a bare ``\r`` would split the row for readers."""
    if not isinstance(value, str):
        return value
    if value.startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(value):
        value = "'" + value
    return value.replace("\r\n", "\n").replace("\r", "\n")


def format_csv(boards: list[Board]) -> str:
    """All boards as one CSV: one row per entry, fractions in 0..1 (not percent), empty cells for n/a.

    Common columns first (:data:`CSV_COLUMNS`), then every board's secondary
    metrics (blank on other benchmarks' rows), then off_protocol (the run's departures from the standard
    protocol, ``; ``-separated; such a row has no rank), url, notes, submission.
    Text starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return
    gets a leading ``'`` (see :func:`_csv_cell`).
    """
    extra: list[str] = []
    for board in boards:
        for k, _, _ in board.secondary:
            if k not in extra:
                extra.append(k)
        for k in ("ci95_wilson_low", "ci95_wilson_high", "mg_ci95_low", "mg_ci95_high", "mg_pvalue"):
            if any(k in e.secondary for e in board.entries) and k not in extra:
                extra.append(k)
    fields = [*CSV_COLUMNS, *extra, "off_protocol", "url", "notes", "submission"]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for board in boards:
        for e in board.entries:
            m = e.metadata
            p = m["input_protocol"]
            row = {"benchmark": board.benchmark, "data_version": board.data_version,
                   "rank": "" if e.off_protocol else e.rank, "off_protocol": "; ".join(e.off_protocol),
                   "model": m["model"], "size": m["size"], "fps": _num(p.get("fps")), "cap": _num(p.get("cap")),
                   "frames": _num(p.get("frames")), "mode": m.get("mode", ""), "date": m["date"],
                   "metric": board.metric, "value": _num(e.headline), "ci95_low": _num(e.ci[0]),
                   "ci95_high": _num(e.ci[1]), "n": e.n, "n_unit": board.n_unit,
                   "p_vs_leader": _pval(e.p_value), "p_vs_leader_holm": _pval(e.p_holm),
                   "sig_vs_leader": "" if e.off_protocol else "leader" if e.significant is None
                   else ("yes" if e.significant else "no"),
                   "url": m.get("url", ""), "notes": m.get("notes", ""), "submission": e.submission.source}
            for k in extra:
                row[k] = _num(e.secondary.get(k)) if k in e.secondary else ""
            w.writerow({k: _csv_cell(v) for k, v in row.items()})
    return buf.getvalue()


