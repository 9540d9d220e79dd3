"""``medhorizon-tasks leaderboard {version, make, validate, build, serve}``.

* ``version --benchmark B [--data D] [--hierarchy H]``: print the data version hash.
* ``make --benchmark B --predictions P --model M --model-size S [--fps --cap --frames] [--out SUB.json]``:
  a submission from an existing predictions file (stdout without ``--out``).
* ``validate SUB... [--data [B=]D] [--hierarchy H]``: "OK" per valid file (exit 0), or every
  problem of every invalid file on stderr (exit 1).
* ``build SUB... [--data [B=]D ...] [--paper-row MODEL=ROW] --out OUTDIR``: leaderboard.md, .csv and .html, with
  each entry whose model the paper reports beside its published row.
* ``serve [--data B=PATH ... | --synthetic] [--db URL] [--host --port]``: the submission service
  (:mod:`medhorizon_tasks.service`).
* ``submit FILE --server URL``: send a run to a board (:mod:`.leaderboard_submit`).

``--data`` is one path (for every benchmark), or ``BENCHMARK=PATH``, repeated
when submissions of several benchmarks are built together. MedHorizon falls
back to ``$MEDHORIZON_DATA``.
"""

from __future__ import annotations

import argparse
import os
import sys

from ..benchmarks.data import BENCHMARKS, BenchmarkData, load_benchmark_data
from ..core.errors import DataError, MedHorizonError
from .data_args import add_benchmark_argument, add_synthetic_argument
from .help import old_spellings
from .leaderboard_submit import add_submit_parser

__all__ = ["add_parser"]


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
    from .data_loader import DataLoader

    loader = DataLoader(args.data, args.hierarchy)
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
    from .data_loader import DataLoader

    loader = DataLoader(args.data, args.hierarchy)
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
    from ..leaderboard.build import DEFAULT_N_RESAMPLES  # one default for build, serve and the demo
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
        add_synthetic_argument(x, every=multi)

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
    b.add_argument("--n-resamples", type=int, default=DEFAULT_N_RESAMPLES,
                   help=f"bootstrap resamples, and permutations of the SurgHiBench test (default {DEFAULT_N_RESAMPLES})")
    b.add_argument("--seed", type=int, default=0, help="resampling seed (default 0)")
    b.add_argument("--alpha", type=float, default=0.05, help="significance level after Holm (default 0.05)")
    b.add_argument("--paper-row", action="append", metavar="MODEL=ROW",
                   help="show the entry MODEL beside the paper's row ROW (default: each entry whose model name, an "
                        "alias or -- MedHorizon -- the protocol registry matches a row of MedHorizon Table 2, Sureon "
                        "Table 3 or SurgHiBench Table 2); repeated for several entries")
    b.set_defaults(func=_cmd_build)

    add_serve_parser(lsub, data_args)
    add_submit_parser(lsub)
    return lb


# ------------------------------------------------------------------ serve: the submission service

_WORKER_ENV = "_MH_SERVE_WORKER"  # serve's options handed to its worker processes (not a user setting)


def _service_config(args, csrf_key: bytes | None = None):
    """The service's configuration from serve's options (checked; data loaded, store opened)."""
    from ..benchmarks.data import BENCHMARK_NAMES, BENCHMARKS
    from ..service.app import ServiceConfig
    from ..service.security import MaintainerToken, parse_rate
    from ..service.store import open_store
    from .data_loader import DataLoader

    if not args.synthetic and not args.data:
        raise MedHorizonError("leaderboard serve: give the benchmark data (--data BENCHMARK=PATH, repeated) or "
                              "--synthetic (the embedded synthetic benchmarks)")
    for v in args.data or []:
        bench, sep, _ = v.partition("=")
        if not sep or bench not in BENCHMARKS:
            raise MedHorizonError(f"--data {v!r}: expected BENCHMARK=PATH with BENCHMARK one of "
                                  f"{', '.join(BENCHMARKS)} (a server holds each benchmark's data by name)")
    if args.workers < 1:
        raise MedHorizonError(f"--workers {args.workers}: must be 1 or more")
    loader = DataLoader(args.data, args.hierarchy)
    datas = {b: loader.get(b) for b in BENCHMARKS if b in loader.paths}
    _check_serve_options(args)
    rate = parse_rate(args.rate_limit)
    maintainer = MaintainerToken(args.maintainer_token_file)
    store = open_store(args.db, max_mb=args.max_store_mb)
    title = args.title or " · ".join(BENCHMARK_NAMES[b] for b in datas) + " leaderboard"
    return ServiceConfig(datas=datas, store=store, title=title, max_upload_mb=args.max_upload_mb,
                         require_token=args.require_token, rate=rate, maintainer=maintainer,
                         n_resamples=args.n_resamples, seed=args.seed, alpha=args.alpha,
                         off_protocol=args.off_protocol, csrf_key=csrf_key)


def worker_app():
    """The application of one ``serve --workers N`` worker process (uvicorn's factory): the same options as the
    parent, the same store and CSRF key, so any worker answers any request."""
    import json

    from ..service.app import create_app

    options = json.loads(os.environ[_WORKER_ENV])
    key = bytes.fromhex(options.pop("csrf_key"))
    return create_app(_service_config(argparse.Namespace(**options), csrf_key=key))


def _cmd_serve(args) -> int:
    import json
    import secrets

    import uvicorn

    from ..benchmarks.data import BENCHMARK_NAMES
    from ..service.app import create_app

    key = secrets.token_bytes(32)
    cfg = _service_config(args, csrf_key=key)
    store, maintainer = cfg.store, cfg.maintainer
    for b, d in cfg.datas.items():
        print(f"{BENCHMARK_NAMES[b]}: data {d.version} ({len(d.ids)} items)", file=sys.stderr)
    print(f"store: {store.safe_url} ({len(store.list(include_hidden=True))} submissions); maintainer actions "
          f"{'on' if maintainer.configured else 'off (no token)'}; submitter tokens "
          f"{'required' if args.require_token else 'not required'}; "
          f"{args.workers} worker process{'es' if args.workers > 1 else ''}", file=sys.stderr, flush=True)
    options = dict(host=args.host, port=args.port, log_level=args.log_level, proxy_headers=True,
                   forwarded_allow_ips=args.forwarded_allow_ips, server_header=False, timeout_keep_alive=5,
                   limit_concurrency=args.limit_concurrency)
    if args.workers == 1:
        uvicorn.run(create_app(cfg), **options)
        return 0
    # several processes (uvicorn's workers): each builds its application from the same options; the store holds
    # everything they share (submissions, scores, the rate limit's counts, the generation their memos follow)
    store.close()
    handed = {k: v for k, v in vars(args).items() if k != "func"}
    os.environ[_WORKER_ENV] = json.dumps({**handed, "csrf_key": key.hex()})
    uvicorn.run("medhorizon_tasks.commands.leaderboard:worker_app", factory=True, workers=args.workers, **options)
    return 0


# (option, attribute, lowest, highest, what is accepted): every number `serve` takes, checked before anything starts
_SERVE_NUMBERS = (
    ("--port", "port", 0, 65535, "a TCP port, 0 (any free one) to 65535"),
    ("--max-upload-mb", "max_upload_mb", 0.001, 4096, "MiB from 0.001 to 4096"),
    ("--max-store-mb", "max_store_mb", 0.01, 2 ** 30, "MiB from 0.01 to 2^30"),
    ("--limit-concurrency", "limit_concurrency", 1, 100_000, "connections from 1 to 100000"),
    ("--n-resamples", "n_resamples", 1, 1_000_000, "resamples from 1 to 1000000"),
    ("--seed", "seed", 0, 2 ** 32 - 1, "a seed from 0 to 2^32-1"),
    ("--alpha", "alpha", 1e-12, 1 - 1e-12, "a significance level above 0 and below 1"),
)


def _check_serve_options(args) -> None:
    """One line for the first number of ``serve`` out of its range (NaN and infinities included): a server
    that would start and then fail every request, or die in a traceback, is refused at the start instead."""
    import math

    for option, attr, low, high, accepted in _SERVE_NUMBERS:
        value = getattr(args, attr, None)
        if value is None:
            continue
        if not (math.isfinite(value) and low <= value <= high):
            raise MedHorizonError(f"{option} {value:g}: expected {accepted}")


def add_serve_parser(lsub, data_args) -> argparse.ArgumentParser:
    from ..leaderboard.build import DEFAULT_N_RESAMPLES
    # allow_abbrev=False: `--maintainer-token X` must be an unknown argument, not a short `--maintainer-token-file`
    # whose error message would print the token
    s = lsub.add_parser(
        "serve", allow_abbrev=False, help="run the submission service: a board that receives, validates, scores and publishes",
        description="A web service (FastAPI + uvicorn) that receives submissions through a form and a JSON API, "
                    "checks them as `leaderboard validate` does, keeps them in a database and serves the boards "
                    "`leaderboard build` would make of them. The benchmark data stay on the server. The "
                    "maintainer's token comes from $MEDHORIZON_MAINTAINER_TOKEN or --maintainer-token-file, "
                    "never from the command line.")
    data_args(s, multi=True)
    s.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; behind a reverse "
                                                       "proxy keep it so)")
    s.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    s.add_argument("--db", default=None, metavar="URL",
                   help="the store: sqlite:///PATH or postgresql://USER@HOST:PORT/NAME (default: sqlite:/// of "
                        "leaderboard.sqlite3 in the user's data folder, $XDG_DATA_HOME or ~/.local/share, "
                        "medhorizon-tasks/)")
    s.add_argument("--title", default=None, help="the board's title (default: names the benchmarks)")
    s.add_argument("--max-upload-mb", type=float, default=100.0,
                   help="largest upload taken, in MiB (default 100: 1,253 MedHorizon items with reasoning outputs "
                        "of 16k tokens each are about 80 MiB); larger ones are refused before they are read")
    s.add_argument("--max-store-mb", type=float, default=None,
                   help="SQLite only: the largest the store may grow, in MiB; past it a submission is refused "
                        "as on a full disk (default: no limit but the disk)")
    s.add_argument("--require-token", action="store_true",
                   help="take submissions with a submitter token only (tokens are issued by a maintainer: "
                        "POST /api/submitters)")
    s.add_argument("--rate-limit", default="20/hour", metavar="N/UNIT",
                   help="accepted submissions per submitter (token, else client address) per "
                        "second/minute/hour/day (default 20/hour; attempts, refused ones included, are capped at "
                        "10 times as many, at least 30)")
    s.add_argument("--maintainer-token-file", default=None, metavar="PATH",
                   help="file holding the maintainer's token (read again when it changes); default: "
                        "$MEDHORIZON_MAINTAINER_TOKEN; neither: maintainer actions are off")
    s.add_argument("--forwarded-allow-ips", default="127.0.0.1", metavar="IPS",
                   help="proxies whose X-Forwarded-For names the client (for the rate limit; default 127.0.0.1)")
    s.add_argument("--workers", type=int, default=1, metavar="N",
                   help="worker processes (uvicorn's workers; default 1): they share one store, its boards and "
                        "its rate limit, as several serve processes (replicas) on one PostgreSQL do")
    s.add_argument("--limit-concurrency", type=int, default=64,
                   help="connections served at once before new ones get 503 (default 64)")
    s.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"],
                   help="uvicorn's log level (default info)")
    s.add_argument("--n-resamples", type=int, default=DEFAULT_N_RESAMPLES,
                   help=f"bootstrap resamples (default {DEFAULT_N_RESAMPLES}, as build and the demo)")
    s.add_argument("--seed", type=int, default=0, help="resampling seed (default 0, as build)")
    s.add_argument("--alpha", type=float, default=0.05, help="significance level after Holm (default 0.05)")
    s.add_argument("--off-protocol", choices=["mark", "refuse"], default="mark",
                   help="a run that departs from the benchmark's standard protocol (order perturbed, text only, "
                        "oracle, selected frames, a sampling variant, a task of its own): mark it and rank it apart "
                        "(default), or refuse it")
    s.set_defaults(func=_cmd_serve)
    return s
