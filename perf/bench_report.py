"""How the speed scripts in ``perf/`` print: a video's description, aligned tables, goals met or not."""

from __future__ import annotations

from pathlib import Path


def describe(video: Path, index) -> str:
    seconds = round(index.meta().duration_s)
    return (f"{video.name}: {seconds // 3600}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}, "
            f"{index.width}x{index.height}, {index.fps:g} fps, {index.num_frames:,} frames, "
            f"{len(index.key_positions):,} keyframes, {video.stat().st_size / 2**20:.0f} MiB")


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    line = lambda r: "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
    return [line(header), "  ".join("-" * w for w in widths), *map(line, rows)]


def verdict(value: float, goal: float, at_least: bool) -> str:
    if (value >= goal) if at_least else (value <= goal):
        return "met"
    return f"short of {goal:g}x by {goal - value:.2f}x" if at_least else f"over {goal:g}x by {value - goal:.2f}x"
