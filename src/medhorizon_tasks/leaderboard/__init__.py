"""Leaderboards for MedHorizon, Sureon and SurgHiBench.

A submission is one JSON file (predictions + metadata, :mod:`.submission`)
tied to a version hash of the benchmark data (:mod:`.data`); a leaderboard
(:mod:`.build`) validates, scores, ranks and tests submissions against the
leader and writes Markdown, CSV and a static HTML page (:mod:`.html`). The
command line is ``medhorizon-tasks leaderboard`` (:mod:`.cli`).
"""

from .build import Board, Entry, build_leaderboard, write_leaderboard
from .data import BENCHMARKS, BenchmarkData, data_version, load_benchmark_data
from .submission import FORMAT, FORMAT_VERSION, Submission, make_submission, validate_submission

__all__ = ["BENCHMARKS", "BenchmarkData", "Board", "Entry", "FORMAT", "FORMAT_VERSION", "Submission",
           "build_leaderboard", "data_version", "load_benchmark_data", "make_submission", "validate_submission",
           "write_leaderboard"]
