"""The service's HTML pages: the submission form, an entry's page, a message (a refusal, an error); the frame
every page shares (:func:`page`). The board is :mod:`.board_page`, the maintainers' view :mod:`.maintainer_pages`.

Every text that a submitter controls (model name, size, notes, URL, file name, the problems that quote
them) goes through :func:`html.escape` here or in ``leaderboard.html``; a URL becomes a link only when it is
http(s) (:func:`~..leaderboard.tables.link_url`). The pages carry no script but the board's sorting script,
which the Content-Security-Policy allows by its hash alone (:data:`CSP`).
"""

from __future__ import annotations

import base64
import hashlib
from html import escape

from ..benchmarks.data import BENCHMARK_NAMES, BENCHMARKS
from ..leaderboard.build import Board, Entry
from ..leaderboard.html import PAGE_CSS, SORT_JS
from ..leaderboard.submission import SUREON_MODES, TEXT_LIMITS, input_protocol_text
from ..leaderboard.tables import fmt_p, link_url, pct
from .store import StoredSubmission

__all__ = ["page", "submit_page", "entry_page", "message_page", "CSP"]

_CSS = PAGE_CSS + """
nav { margin: 0.3rem 0 1rem; } nav a { margin-right: 1rem; }
.banner { padding: 0.6rem 0.8rem; border-radius: 6px; margin: 1rem 0; }
.ok { background: #dafbe1; border: 1px solid #4ac26b; } .bad { background: #ffebe9; border: 1px solid #ff8182; }
.info { background: #ddf4ff; border: 1px solid #54aeff; }
ul.problems li { font-family: ui-monospace, monospace; font-size: 0.85rem; overflow-wrap: anywhere; }
form.submit label { display: block; margin-top: 0.6rem; font-weight: 600; }
form.submit input[type=text], form.submit select { width: 24rem; max-width: 100%; }
form.submit .hint { color: #57606a; font-weight: normal; font-size: 0.85rem; }
table.group { width: auto; min-width: 28rem; }
table.meta th { width: 12rem; cursor: default; position: static; }
a.ext { text-decoration: none; }
code { overflow-wrap: anywhere; }
form.filters { display: flex; flex-wrap: wrap; gap: 0.4rem 1rem; align-items: end; margin: 0.6rem 0; }
form.filters label { font-size: 0.85rem; font-weight: 600; }
form.filters input[type=search], form.filters select { display: block; max-width: 100%; font-weight: normal; }
.mark { font-size: 0.72rem; font-weight: 600; border-radius: 4px; padding: 0 0.3rem; white-space: nowrap; }
.mark.ok { background: #dafbe1; color: #116329; border: 1px solid #4ac26b; }
.mark.rep { background: #fff8c5; color: #7d4e00; border: 1px solid #d4a72c; }
tr.reported td { color: #57606a; }
details.plot { margin: 0.8rem 0; } details.plot summary { cursor: pointer; font-weight: 600; }
svg.plot { max-width: 100%; height: auto; display: block; }
table.log td, table.log th { font-size: 0.8rem; }
form.act { display: flex; flex-wrap: wrap; gap: 0.3rem; }
form.act input[type=text] { width: 12rem; max-width: 100%; }
form.login input[type=password] { width: 24rem; max-width: 100%; }
@media (max-width: 640px) {
  table.group { min-width: 0; }
  table.meta th { width: auto; }
}
"""


def _b64_sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


CSP = ("default-src 'none'; img-src 'self' data:; "
       f"style-src 'sha256-{_b64_sha256(_CSS)}'; script-src 'sha256-{_b64_sha256(SORT_JS)}'; "
       "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")

_NAV = ('<nav><a href="/">Board</a><a href="/submit">Submit</a><a href="/api/board">JSON</a>'
        '<a href="/board.csv">CSV</a><a href="/maintainer">Maintainers</a></nav>')


def page(title: str, body: str, *, script: bool = False) -> str:
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{escape(title)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
            f"<h1>{escape(title)}</h1>\n{_NAV}\n{body}\n" + (f"<script>{SORT_JS}</script>\n" if script else "")
            + "</body>\n</html>\n")


def _field(name: str, label: str, hint: str = "", value: str = "") -> str:
    limit = TEXT_LIMITS.get(name)  # the length validation takes, said here and kept by the browser
    if limit:
        hint = f"{hint}; at most {limit:,} characters" if hint else f"at most {limit:,} characters"
        value = value[:limit]
    size = f' maxlength="{limit}"' if limit else ""
    return (f'<label for="{name}">{escape(label)} <span class="hint">{escape(hint)}</span></label>'
            f'<input type="text" id="{name}" name="{name}" value="{escape(value[:2000], quote=True)}"{size}>')


def submit_page(held: dict[str, str], csrf_token: str, *, require_token: bool, max_mb: float,
                problems: list[str] | None = None, form: dict[str, str] | None = None, rate: str | None = None) -> str:
    """The form (with the refusal's problems above it when ``problems``); ``rate``: the rate limit, said."""
    form = form or {}
    out = []
    if problems:
        out.append(f'<div class="banner bad" id="refused"><strong>Refused: {len(problems)} problem(s); nothing was '
                   'kept.</strong><ul class="problems">'
                   + "".join(f"<li>{escape(p)}</li>" for p in problems) + "</ul></div>")
    versions = "".join(f"<li>{escape(BENCHMARK_NAMES[b])}: data <code>{escape(v)}</code></li>" for b, v in held.items())
    out.append(f"<p>This server scores submissions against the data it holds:</p><ul>{versions}</ul>"
               "<p>Upload a submission JSON as <code>medhorizon-tasks leaderboard make</code> writes it (the fields "
               "below are then not used), or an lmms-eval samples file or predictions JSONL with the fields "
               f"filled in. At most {max_mb:.0f} MiB.</p>"
               + (f'<p id="rate">Rate limit: {escape(rate)}.</p>' if rate else ""))
    opts = "".join(f'<option value="{b}"{" selected" if form.get("benchmark") == b else ""}>{escape(BENCHMARK_NAMES[b])}'
                   "</option>" for b in BENCHMARKS if b in held)
    modes = "".join(f'<option value="{m}"{" selected" if form.get("mode") == m else ""}>{m}</option>'
                    for m in ("", *SUREON_MODES))
    token = (_field("token", "Submitter token", "given to you by the board's maintainer") if require_token else "")
    out.append('<form class="submit" method="post" action="/submit" enctype="multipart/form-data">'
               f'<input type="hidden" name="csrf" value="{escape(csrf_token, quote=True)}">'
               '<label for="file">File <span class="hint">submission JSON, samples or predictions JSONL'
               '</span></label><input type="file" id="file" name="file" required>'
               '<label for="config">Run config <span class="hint">with a samples file: the run\'s '
               '&lt;stamp&gt;_results.json beside it, which says its input protocol (else give FPS and cap, or '
               'frames)</span></label><input type="file" id="config" name="config">'
               f'<label for="benchmark">Benchmark</label><select id="benchmark" name="benchmark">{opts}</select>'
               + _field("model", "Model", "shown on the board", form.get("model", ""))
               + _field("size", "Size", 'parameters, e.g. "7B" or "unknown"', form.get("size", ""))
               + _field("fps", "FPS", "input protocol: frames per second", form.get("fps", ""))
               + _field("cap", "Cap", "input protocol: frame cap", form.get("cap", ""))
               + _field("frames", "Frames", "input protocol: fixed number of frames (0 = none)",
                        form.get("frames", ""))
               + _field("date", "Date", "YYYY-MM-DD (default: today)", form.get("date", ""))
               + f'<label for="mode">Mode <span class="hint">Sureon: visual or blind</span></label>'
                 f'<select id="mode" name="mode">{modes}</select>'
               + _field("notes", "Notes", "shown on hover", form.get("notes", ""))
               + _field("url", "URL", "http(s) link for the model", form.get("url", ""))
               + token + '<p><button type="submit" id="send">Submit</button></p></form>')
    return page("Submit to the leaderboard", "\n".join(out))


def _interval(ci) -> str:
    return "—" if not ci or ci[0] is None else f"[{pct(ci[0])}, {pct(ci[1])}]"


def _meta_rows(pairs) -> str:
    return "".join(f"<tr><th>{escape(k)}</th><td>{v}</td></tr>" for k, v in pairs)


def entry_page(row: StoredSubmission, board: Board | None, entry: Entry | None, *, banner: str | None = None,
               maintainer: bool = False, verified=None) -> str:
    """A submission's page: its metadata, when it was received, its scores with intervals (aggregates only),
    and its verified mark (``verified``: the maintainers' verify action, or None)."""
    out = []
    if banner:
        out.append(f'<p class="banner ok" id="banner">{escape(banner)}</p>')
    if row.state != "public":
        out.append(f'<p class="banner info">This entry is {escape(row.state)}: it is not on the public board.</p>')
    meta = entry.metadata if entry is not None else {}
    url = link_url(meta.get("url"))
    pairs = [("Model", escape(row.model)), ("Benchmark", escape(BENCHMARK_NAMES.get(row.benchmark, row.benchmark))),
             ("Size", escape(str(meta.get("size", "")))), ("Input protocol", escape(input_protocol_text(meta))),
             ("Date", escape(str(meta.get("date", "")))), ("Received", escape(row.received_at)),
             ("Data version", f"<code>{escape(row.data_version)}</code>"),
             ("SHA-256 of the upload", f"<code>{escape(row.sha256)}</code>"),
             ("Uploaded as", escape(f"{row.kind}" + (f" ({row.filename})" if row.filename else "")))]
    if url:
        pairs.append(("URL", f'<a href="{escape(url, quote=True)}" rel="nofollow noopener">{escape(url)}</a>'))
    if meta.get("notes"):
        pairs.append(("Notes", escape(meta["notes"])))
    departures = entry.off_protocol if entry is not None else meta.get("departures")
    if departures:
        pairs.append(("Off protocol (ranked apart)", f'<span id="off-protocol">{escape("; ".join(map(str, departures)))}'
                                                     "</span>"))
    pairs.append(("Verified", f'<span class="mark ok" id="verified">verified</span> {escape(verified.reason)} '
                              f"({escape(verified.at)})" if verified is not None else
                  '<span id="verified">no</span> (the maintainers have not reproduced it)'))
    if maintainer and row.submitter:
        pairs.append(("Submitter", escape(row.submitter)))
    out.append(f'<table class="meta" id="meta">{_meta_rows(pairs)}</table>')
    if board is not None and entry is not None:
        lo, hi = entry.ci
        head = [("Metric", escape(board.metric)),
                ("Score", f'<span id="score">{pct(entry.headline)}</span> [{pct(lo)}, {pct(hi)}] '
                          f"({entry.n} {escape(board.n_unit)})"),
                ("95% interval", escape(board.ci_method))]
        if entry.rank:
            sig = ("leader" if entry.significant is None else
                   f"{'significantly' if entry.significant else 'not significantly'} below the leader "
                   f"(Holm {fmt_p(entry.p_holm)}; {board.test_method})")
            head += [("Rank", f'<span id="rank">{entry.rank}</span> of {len(board.entries)}'),
                     ("Against the leader", escape(sig))]
        out.append(f'<h2>Scores</h2><table class="meta" id="scores">{_meta_rows(head)}</table>')
        for g in entry.groups:
            rows = "".join(
                f'<tr><td>{escape(str(r.get("label", r["key"])))}</td><td class="num">{pct(r["value"])}</td>'
                f'<td class="num">{_interval(r["ci95"])}</td><td class="num">{r["n"]}</td></tr>' for r in g["rows"])
            out.append(f'<h2>By {escape(g["name"].lower())}</h2><div class="wrap"><table class="board group">'
                       f'<thead><tr><th>{escape(g["name"])}</th><th class="num">%</th><th class="num">95% CI</th>'
                       f'<th class="num">{escape(g["unit"])}</th></tr></thead><tbody>{rows}</tbody></table></div>'
                       f'<p class="foot">Interval: {escape(g["ci_method"])}.</p>')
    else:
        out.append('<p class="foot">Not scored here: made on another data version than the data this server '
                   "holds.</p>")
    return page(f"{row.model} on {BENCHMARK_NAMES.get(row.benchmark, row.benchmark)}", "\n".join(out))


def message_page(title: str, text: str) -> str:
    return page(title, f"<p>{escape(text)}</p>")
