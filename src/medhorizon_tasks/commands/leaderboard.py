"""``medhorizon-tasks leaderboard {version, make, validate, build}``.

* ``version --benchmark B [--data D] [--hierarchy H]``: print the data version hash.
* ``make --benchmark B --predictions P --model M --model-size S [--fps --cap --frames] [--out SUB.json]``:
  a submission from an existing predictions file (stdout without ``--out``).
* ``validate SUB... [--data [B=]D] [--hierarchy H]``: "OK" per valid file (exit 0), or every
  problem of every invalid file on stderr (exit 1).
* ``build SUB... [--data [B=]D ...] [--paper-row MODEL=ROW] --out OUTDIR``: leaderboard.md, .csv and .html, with
  each entry whose model the paper reports beside its published row.

``--data`` is one path (for every benchmark), or ``BENCHMARK=PATH``, repeated
when submissions of several benchmarks are built together. MedHorizon falls
back to ``$MEDHORIZON_DATA``.
"""

from __future__ import annotations

import argparse
import sys

from ..benchmarks.data import BENCHMARK_NAMES, BENCHMARKS, BenchmarkData, load_benchmark_data
from ..core.errors import DataError, MedHorizonError
from ..core.settings import env_text
from .data_args import add_benchmark_argument, add_synthetic_argument
from .help import old_spellings

__all__ = ["add_parser"]


def _data_map(values: list[str] | None) -> dict[str | None, str]:
    """``--data`` values -> {benchmark: path}; key None for a plain path (every benchmark)."""
    out: dict[str | None, str] = {}
    for v in values or []:
        bench, sep, path = v.partition("=")
        key = bench if sep and bench in BENCHMARKS else None
        path = path if key else v
        if key in out:
            what = f"for {key}" if key else "without a benchmark"
            raise MedHorizonError(f"--data given twice {what}: {out[key]!r} and {path!r}")
        out[key] = path
    return out


class _DataLoader:
    """Loads each benchmark's data once, on first need."""

    def __init__(self, values: list[str] | None, hierarchy: str | None):
        self.paths = _data_map(values)
        self.hierarchy = hierarchy
        self.cache: dict[str, BenchmarkData] = {}
        self.plain_used: list[str] = []

    def _load(self, bench: str, path: str | None) -> BenchmarkData:
        return load_benchmark_data(bench, path, hierarchy=self.hierarchy if bench == "surghi" else None)

    def _reads_as(self, path: str, bench: str) -> str | None:
        """The other benchmark whose data ``path`` is, if any (asked only once ``path`` failed as ``bench``)."""
        for other in BENCHMARKS:
            if other == bench:
                continue
            try:
                self._load(other, path)
            except MedHorizonError:
                continue
            return other
        return None

    def get(self, bench: str, submission: str | None = None) -> BenchmarkData:
        """``bench``'s data; ``submission``: the file that needs it, named when it is for another benchmark
        than the data given."""
        from ..benchmarks.medhorizon.release import DATA_ENV

        if bench in self.cache:
            return self.cache[bench]
        wrong = f"this is a {bench} submission, not "
        explicit = bench in self.paths
        if explicit:
            path = self.paths[bench]
        else:
            path = self.paths.get(None)
            others = [b for b in BENCHMARKS if b in self.paths]
            if path is None and others and not (bench == "medhorizon" and env_text(DATA_ENV)):
                raise DataError(f"{wrong}{' or '.join(others)}: --data gives {' and '.join(others)} data only; "
                                f"pass --data {bench}=PATH", source=submission)
            if path is not None:
                other = [b for b in self.plain_used if b != bench]
                if other:
                    raise MedHorizonError(f"--data {path} names no benchmark, and the submissions are for "
                                          f"{other[0]} and {bench}: pass --data {other[0]}=PATH --data {bench}=PATH")
                self.plain_used.append(bench)
        try:
            data = self._load(bench, path)
        except DataError as exc:
            other = self._reads_as(path, bench) if path is not None else None
            if other is not None:
                given = f"{bench}={path}" if explicit else path
                raise DataError(f"{wrong}{other}: --data {given} is {BENCHMARK_NAMES[other]} data, not "
                                f"{BENCHMARK_NAMES[bench]} data; pass the {BENCHMARK_NAMES[bench]} data with "
                                f"--data {bench}=PATH", source=submission) from None
            raise DataError(exc.problems, source=f"{bench} data {exc.source or path or ''}".rstrip()) from None
        self.cache[bench] = data
        return data


def _benchmark_of(obj) -> str | None:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    bench = meta.get("benchmark") if isinstance(meta, dict) else None
    return bench if bench in BENCHMARKS else None


def _cmd_version(args) -> int:
    print(load_benchmark_data(args.benchmark, args.data, hierarchy=args.hierarchy).version)
    return 0


def _cmd_make(args) -> int:
    from ..leaderboard.submission import dumps_submission, make_submission, write_submission

    data = load_benchmark_data(args.benchmark, args.data, hierarchy=args.hierarchy)
    sub = make_submission(data, args.predictions, model=args.model, size=args.size, fps=args.fps, cap=args.cap,
                          frames=args.frames, date=args.date, mode=args.mode, notes=args.notes, url=args.url,
                          missing_as_wrong=args.missing_as_wrong)
    if args.out in (None, "-"):
        sys.stdout.write(dumps_submission(sub))
    else:
        path = write_submission(sub, args.out)
        print(f"wrote {path}: {len(sub['predictions'])} predictions, {data.benchmark} data {data.version}",
              file=sys.stderr)
    return 0


def _cmd_validate(args) -> int:
    from ..leaderboard.submission import read_submission, validate_submission

    loader = _DataLoader(args.data, args.hierarchy)
    bad = 0

    def invalid(path, problems):
        print(f"{path}: INVALID, {len(problems)} problem(s):", file=sys.stderr)
        for p in problems:
            print(f"  - {p}", file=sys.stderr)

    for path in args.submissions:
        try:
            obj = read_submission(path)
        except DataError as exc:
            bad += 1
            invalid(path, exc.problems)
            continue
        bench = _benchmark_of(obj)
        data = loader.get(bench, path) if bench else None  # bad data is not the submission's fault: exit 2
        try:
            sub = validate_submission(obj, data, source=path)
        except DataError as exc:
            bad += 1
            invalid(path, exc.problems)
            continue
        m = sub.metadata
        print(f"OK {path}: {m['benchmark']}, model {m['model']}, {len(sub.predictions)} predictions, "
              f"data {m['data_version']}")
    return 1 if bad else 0


def _cmd_build(args) -> int:
    from ..core.text import printable
    from ..leaderboard.build import build_leaderboard
    from ..leaderboard.paper import format_paper_text, paper_lines
    from ..leaderboard.publish import write_leaderboard
    from ..leaderboard.submission import read_submission

    loader = _DataLoader(args.data, args.hierarchy)
    data: dict[str, BenchmarkData] = {}
    for path in args.submissions:
        try:
            bench = _benchmark_of(read_submission(path))
        except DataError:
            continue  # build_leaderboard reports it with the others
        if bench and bench not in data:
            data[bench] = loader.get(bench, path)
    boards = build_leaderboard(args.submissions, data, n_resamples=args.n_resamples, seed=args.seed,
                               alpha=args.alpha)
    paper = paper_lines(boards, _paper_rows(args.paper_row))
    paths = write_leaderboard(boards, args.out, title=args.title, paper=paper)
    for board in boards:
        leader = board.entries[0]
        print(f"{board.name}: {len(board.entries)} entries, data {board.data_version}, leader "
              f"{printable(leader.metadata['model'])} ({100 * leader.headline:.1f})")
    if paper:
        print("Published values beside these entries:")
        print(format_paper_text(paper))
    for p in paths.values():
        print(p)
    return 0


def _paper_rows(values: list[str] | None) -> dict[str, str]:
    """``--paper-row MODEL=ROW`` values -> ``{entry model: paper row}``."""
    out = {}
    for v in values or []:
        model, sep, row = v.rpartition("=")
        if not sep or not model or not row:
            raise MedHorizonError(f"--paper-row {v!r}: expected MODEL=ROW (an entry's model name, the paper's row)")
        out[model] = row
    return out


def add_parser(sub) -> argparse.ArgumentParser:
    """Add ``leaderboard`` and its sub-commands to the main parser's sub-parsers."""
    lb = sub.add_parser("leaderboard", help="make, validate and build leaderboard submissions",
                        description="Leaderboard submissions (predictions + metadata, tied to a version "
                                    "hash of the benchmark data): make one, validate it, build the tables.")
    lsub = lb.add_subparsers(dest="leaderboard_command", required=True)

    def data_args(x, multi: bool):
        if multi:
            x.add_argument("--data", action="append", metavar="[BENCHMARK=]PATH",
                           help="the benchmark data (medhorizon: release, default $MEDHORIZON_DATA; sureon: items "
                                "JSONL; surghi: annotation or task-item rows); BENCHMARK=PATH, repeated, for "
                                "several benchmarks")
        else:
            x.add_argument("--data", help="medhorizon: release JSONL or dataset folder (default $MEDHORIZON_DATA); "
                                          "sureon: the items JSONL; surghi: annotation or task-item rows")
        x.add_argument("--hierarchy", help="surghi: hierarchy JSON for datasets the package does not ship "
                                           "(part of the data version; default: hierarchies.json beside the rows)")
        add_synthetic_argument(x)

    v = lsub.add_parser("version", help="print the version hash of a benchmark's data")
    v.add_argument("--benchmark", required=True, choices=BENCHMARKS)
    data_args(v, multi=False)
    v.set_defaults(func=_cmd_version)

    m = lsub.add_parser("make", help="make a submission from a predictions file")
    add_benchmark_argument(m, list(BENCHMARKS), None)
    m.add_argument("--predictions", required=True,
                   help="what `score` reads: plain predictions JSONL or lmms-eval --log_samples JSONL "
                        "(surghi: frame rows JSONL/CSV or lmms-eval samples)")
    data_args(m, multi=False)
    m.add_argument("--model", required=True, help="model name shown on the board")
    m.add_argument("--model-size", dest="size", required=True, help='parameter count, e.g. "7B" (or "unknown")')
    old_spellings(m, "--model-size", "--size")
    m.add_argument("--fps", type=float, help="input protocol: frames per second sampled")
    m.add_argument("--cap", type=int, help="input protocol: frame cap")
    m.add_argument("--frames", type=int, help="input protocol: fixed number of frames (0 = none)")
    m.add_argument("--date", help="YYYY-MM-DD (default: today)")
    m.add_argument("--mode", help="run mode (default: from the samples; sureon: visual or blind)")
    m.add_argument("--notes", help="free text shown on hover")
    m.add_argument("--url", help="http(s) link for the model")
    m.add_argument("--missing-as-wrong", action="store_true",
                   help="write items the file lacks with a null output (scored wrong) instead of refusing")
    m.add_argument("--out", help="submission JSON to write (default: stdout)")
    old_spellings(m, "--out", "-o")
    m.set_defaults(func=_cmd_make)

    c = lsub.add_parser("validate", help="check submissions against the data; every problem is listed")
    c.add_argument("submissions", nargs="+", metavar="SUB")
    data_args(c, multi=True)
    c.set_defaults(func=_cmd_validate)

    b = lsub.add_parser("build", help="write leaderboard.md, .csv and .html from submissions")
    b.add_argument("submissions", nargs="+", metavar="SUB")
    data_args(b, multi=True)
    b.add_argument("--out", required=True, help="output folder")
    old_spellings(b, "--out", "-o")
    b.add_argument("--title", default=None, help="page title (default: names the benchmarks, e.g. \"MedHorizon leaderboard\")")
    b.add_argument("--n-resamples", type=int, default=2000, help="bootstrap resamples, and permutations of the SurgHiBench test (default 2000)")
    b.add_argument("--seed", type=int, default=0, help="resampling seed (default 0)")
    b.add_argument("--alpha", type=float, default=0.05, help="significance level after Holm (default 0.05)")
    b.add_argument("--paper-row", action="append", metavar="MODEL=ROW",
                   help="show the entry MODEL beside the paper's row ROW (default: each entry whose model name, an "
                        "alias or -- MedHorizon -- the protocol registry matches a row of MedHorizon Table 2, Sureon "
                        "Table 3 or SurgHiBench Table 2); repeated for several entries")
    b.set_defaults(func=_cmd_build)
    return lb
