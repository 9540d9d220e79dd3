"""Leaderboards for MedHorizon, Sureon and SurgHiBench.

A submission is one JSON file (predictions + metadata, :mod:`.submission`)
tied to a version hash of the benchmark data (:mod:`medhorizon_tasks.benchmarks.data`); a leaderboard
(:mod:`.build`) validates, scores, ranks and tests submissions against the
leader; :mod:`.tables` makes its text (Markdown, CSV, the cells both share),
:mod:`.html` a static HTML page, and :mod:`.publish` writes the three files.
The command line is ``medhorizon-tasks leaderboard``
(:mod:`medhorizon_tasks.commands.leaderboard`).
"""

import importlib

# Imported on first use: every `medhorizon-tasks` command builds the `leaderboard` sub-parser, and the
# scoring code (numpy, statistics) must not be paid for by the commands that never build a board.
_WHERE = {"Board": ".build", "Entry": ".build", "build_leaderboard": ".build", "write_leaderboard": ".publish",
          "BENCHMARKS": "..benchmarks.data", "BenchmarkData": "..benchmarks.data", "data_version": "..benchmarks.data",
          "load_benchmark_data": "..benchmarks.data",
          "FORMAT": ".submission", "FORMAT_VERSION": ".submission", "Submission": ".submission",
          "make_submission": ".submission", "validate_submission": ".submission"}


def __getattr__(name: str):
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["BENCHMARKS", "BenchmarkData", "Board", "Entry", "FORMAT", "FORMAT_VERSION", "Submission",
           "build_leaderboard", "data_version", "load_benchmark_data", "make_submission", "validate_submission",
           "write_leaderboard"]
