"""Writing a leaderboard: ``leaderboard.md``, ``leaderboard.csv`` and ``leaderboard.html``, all or nothing."""

from __future__ import annotations

import os
from pathlib import Path

from ..core.safeio import atomic_write_files
from .build import Board
from .html import render_html
from .tables import format_csv, format_markdown


def write_leaderboard(boards: list[Board], out_dir: str | os.PathLike, *, title: str | None = None,
                      paper=None) -> dict[str, Path]:
    """Write ``leaderboard.md``, ``leaderboard.csv`` and ``leaderboard.html`` into ``out_dir`` (with ``paper``,
    :func:`.paper.paper_lines`, the entries beside the papers' rows in the Markdown and HTML); a failure
    (full disk, a folder in the way) is one WriteError naming the file."""
    out = Path(out_dir)
    texts = {"md": format_markdown(boards, title, paper), "csv": format_csv(boards),
             "html": render_html(boards, title, paper)}
    paths = {ext: out / f"leaderboard.{ext}" for ext in texts}
    # All or nothing: a full disk leaves the previous three files as they were, never a mixed set.
    atomic_write_files({paths[ext]: text for ext, text in texts.items()})
    return paths
