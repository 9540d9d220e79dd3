"""``medhorizon-tasks leaderboard serve``: the submission service on the benchmark data given (or the embedded
synthetic benchmarks), over a store at ``--db`` (see :mod:`medhorizon_tasks.service`)."""

from __future__ import annotations

import argparse
import sys

from ..core.errors import MedHorizonError

__all__ = ["add_serve_parser"]


def _cmd_serve(args) -> int:
    import uvicorn

    from ..benchmarks.data import BENCHMARK_NAMES, BENCHMARKS
    from ..service.app import ServiceConfig, create_app
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
    loader = DataLoader(args.data, args.hierarchy)
    datas = {b: loader.get(b) for b in BENCHMARKS if b in loader.paths}
    rate = parse_rate(args.rate_limit)
    if args.max_upload_mb <= 0:
        raise MedHorizonError(f"--max-upload-mb {args.max_upload_mb:g}: must be above 0")
    maintainer = MaintainerToken(args.maintainer_token_file)
    store = open_store(args.db, max_mb=args.max_store_mb)
    title = args.title or " · ".join(BENCHMARK_NAMES[b] for b in datas) + " leaderboard"
    app = create_app(ServiceConfig(datas=datas, store=store, title=title, max_upload_mb=args.max_upload_mb,
                                   require_token=args.require_token, rate=rate, maintainer=maintainer,
                                   n_resamples=args.n_resamples, seed=args.seed, alpha=args.alpha))
    for b, d in datas.items():
        print(f"{BENCHMARK_NAMES[b]}: data {d.version} ({len(d.ids)} items)", file=sys.stderr)
    print(f"store: {store.safe_url} ({len(store.list(include_hidden=True))} submissions); maintainer actions "
          f"{'on' if maintainer.configured else 'off (no token)'}; submitter tokens "
          f"{'required' if args.require_token else 'not required'}", file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level, proxy_headers=True,
                forwarded_allow_ips=args.forwarded_allow_ips, server_header=False, timeout_keep_alive=5,
                limit_concurrency=args.limit_concurrency)
    return 0


def add_serve_parser(lsub, data_args) -> argparse.ArgumentParser:
    s = lsub.add_parser(
        "serve", help="run the submission service: a board that receives, validates, scores and publishes",
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
                   help="submissions per submitter (token, else client address) per second/minute/hour/day "
                        "(default 20/hour)")
    s.add_argument("--maintainer-token-file", default=None, metavar="PATH",
                   help="file holding the maintainer's token (read again when it changes); default: "
                        "$MEDHORIZON_MAINTAINER_TOKEN; neither: maintainer actions are off")
    s.add_argument("--forwarded-allow-ips", default="127.0.0.1", metavar="IPS",
                   help="proxies whose X-Forwarded-For names the client (for the rate limit; default 127.0.0.1)")
    s.add_argument("--limit-concurrency", type=int, default=64,
                   help="connections served at once before new ones get 503 (default 64)")
    s.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"],
                   help="uvicorn's log level (default info)")
    s.add_argument("--n-resamples", type=int, default=2000, help="bootstrap resamples (default 2000, as build)")
    s.add_argument("--seed", type=int, default=0, help="resampling seed (default 0, as build)")
    s.add_argument("--alpha", type=float, default=0.05, help="significance level after Holm (default 0.05)")
    s.set_defaults(func=_cmd_serve)
    return s
