"""A board's plot as inline SVG: each entry's score with its 95% interval, and -- for a model with entries at
several frame budgets -- its score against the frames.

Plain SVG elements with presentation attributes (``fill``, ``stroke``, ``font-size``), never a ``style``
attribute or element: the pages' Content-Security-Policy allows only the page's own stylesheet (by its hash),
and matplotlib's SVG output styles every element with ``style="..."``, which that policy blocks. The figure
scales to its box (``viewBox``), so it fits a 390 px phone as it fits a laptop. Every text from a submission is
escaped.
"""

from __future__ import annotations

import math
from collections import defaultdict
from html import escape

from ..leaderboard.build import Board, Entry
from ..leaderboard.submission import model_label
from ..leaderboard.tables import pct

__all__ = ["board_plot", "frames_of"]

_W, _LEFT, _RIGHT, _ROW, _TOP = 640, 200, 24, 16, 24
_DOT, _LINE, _GRID, _TEXT, _MUTED = "#0969da", "#0969da", "#d0d7de", "#1b1f24", "#57606a"


def frames_of(entry: Entry) -> int | None:
    """The frames an entry's model saw at most: its cap, else its fixed number of frames (None: neither)."""
    p = entry.metadata.get("input_protocol") or {}
    for key in ("cap", "frames"):
        value = p.get(key)
        if isinstance(value, (int, float)) and value > 0:
            return int(value)
    return None


def _short(text: str, n: int = 30) -> str:
    return escape(text if len(text) <= n else text[: n - 1] + "…")


def _ok(x) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))


def _axis_x(x0: float, x1: float, y: float, h: float, ticks) -> list[str]:
    out = []
    for frac, label in ticks:
        x = x0 + frac * (x1 - x0)
        out.append(f'<line x1="{x:.1f}" y1="{y:.1f}" x2="{x:.1f}" y2="{y + h:.1f}" stroke="{_GRID}"/>')
        out.append(f'<text x="{x:.1f}" y="{y + h + 12:.1f}" font-size="10" text-anchor="middle" '
                   f'fill="{_MUTED}">{escape(label)}</text>')
    return out


def _intervals(board: Board) -> list[str]:
    """Panel 1: one line per entry (rank order), a dot at its score and a bar across its interval."""
    entries = [e for e in board.entries if _ok(e.headline)]
    h = _ROW * max(1, len(entries))
    x0, x1 = _LEFT, _W - _RIGHT
    out = [f'<text x="0" y="14" font-size="12" font-weight="600" fill="{_TEXT}">{escape(board.metric)} (%) with its '
           f"95% interval, each entry</text>"]
    out += _axis_x(x0, x1, _TOP, h, [(t / 100, f"{t}") for t in range(0, 101, 20)])

    def sx(v: float) -> float:
        return x0 + max(0.0, min(1.0, v)) * (x1 - x0)

    for i, e in enumerate(entries):
        y = _TOP + _ROW * i + _ROW / 2
        lo, hi = e.ci
        label = f"{e.rank}. {model_label(e.metadata)}" if e.rank else model_label(e.metadata)
        out.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" font-size="11" text-anchor="end" fill="{_TEXT}">'
                   f"{_short(label)}</text>")
        if _ok(lo) and _ok(hi):
            out.append(f'<line class="ci" x1="{sx(lo):.1f}" y1="{y:.1f}" x2="{sx(hi):.1f}" y2="{y:.1f}" '
                       f'stroke="{_LINE}" stroke-width="2"/>')
        tip = f"{model_label(e.metadata)}: {pct(e.headline)}" + (f" [{pct(lo)}, {pct(hi)}]" if _ok(lo) else "")
        out.append(f'<circle class="score" cx="{sx(e.headline):.1f}" cy="{y:.1f}" r="4" fill="{_DOT}" '
                   f'data-value="{e.headline:.6g}"><title>{escape(tip)}</title></circle>')
    return out, _TOP + h + 18


def _frames_panel(board: Board, top: float) -> tuple[list[str], float]:
    """Panel 2: score against frames (log scale) for each model with entries at two or more frame budgets."""
    series: dict[str, dict[int, Entry]] = defaultdict(dict)
    for e in board.entries:
        f = frames_of(e)
        if f is not None and _ok(e.headline):
            key = e.metadata["model"] + (f" ({e.metadata['mode']})" if e.metadata.get("mode") else "")
            best = series[key].get(f)
            if best is None or e.headline > best.headline:
                series[key][f] = e
    series = {k: v for k, v in series.items() if len(v) >= 2}
    title = (f'<text x="0" y="{top + 14:.1f}" font-size="12" font-weight="600" fill="{_TEXT}">'
             f"{escape(board.metric)} (%) against frames, each model at several caps</text>")
    if not series:
        return [title, f'<text class="none" x="0" y="{top + 32:.1f}" font-size="11" fill="{_MUTED}">No model has '
                       "entries at two or more frame caps yet.</text>"], top + 40
    h = 160
    y0, x0, x1 = top + _TOP, _LEFT, _W - _RIGHT
    frames = sorted({f for s in series.values() for f in s})
    lo_f, hi_f = math.log2(frames[0]), math.log2(frames[-1])
    span = hi_f - lo_f or 1.0

    def sx(f: int) -> float:
        return x0 + (math.log2(f) - lo_f) / span * (x1 - x0) if hi_f > lo_f else (x0 + x1) / 2

    def sy(v: float) -> float:
        return y0 + h - max(0.0, min(1.0, v)) * h

    out = [title]
    out += _axis_x(x0, x1, y0, h, [((math.log2(f) - lo_f) / span if hi_f > lo_f else 0.5, str(f)) for f in frames])
    for t in range(0, 101, 25):
        y = sy(t / 100)
        out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x1}" y2="{y:.1f}" stroke="{_GRID}"/>')
        out.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" font-size="10" text-anchor="end" fill="{_MUTED}">{t}</text>')
    colours = ("#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#57606a")
    for i, (name, pts) in enumerate(sorted(series.items())):
        colour = colours[i % len(colours)]
        xs = sorted(pts)
        path = " ".join(f"{sx(f):.1f},{sy(pts[f].headline):.1f}" for f in xs)
        out.append(f'<polyline class="series" data-model="{escape(name, quote=True)}" points="{path}" fill="none" '
                   f'stroke="{colour}" stroke-width="1.5"/>')
        for f in xs:
            e = pts[f]
            lo, hi = e.ci
            if _ok(lo) and _ok(hi):
                out.append(f'<line x1="{sx(f):.1f}" y1="{sy(lo):.1f}" x2="{sx(f):.1f}" y2="{sy(hi):.1f}" '
                           f'stroke="{colour}"/>')
            out.append(f'<circle class="frames" cx="{sx(f):.1f}" cy="{sy(e.headline):.1f}" r="3" fill="{colour}">'
                       f"<title>{escape(name)}, {f} frames: {pct(e.headline)}</title></circle>")
        ly = y0 + h + 30 + 14 * i
        out.append(f'<text x="{x0}" y="{ly:.1f}" font-size="11" fill="{colour}">&#9632; {_short(name, 60)}</text>')
    return out, y0 + h + 30 + 14 * len(series)


def board_plot(board: Board) -> str:
    """The ``<svg>`` of one board (both panels), to put inline in a page."""
    first, y = _intervals(board)
    second, height = _frames_panel(board, y)
    label = f"{board.name}: {board.metric} of each entry with its 95% interval, and against frames"
    return (f'<svg class="plot" id="plot-{escape(board.benchmark)}" role="img" aria-label="{escape(label)}" '
            f'viewBox="0 0 {_W} {height:.0f}" width="{_W}" height="{height:.0f}" '
            f'xmlns="http://www.w3.org/2000/svg"><title>{escape(label)}</title>'
            + "".join(first + second) + "</svg>")
