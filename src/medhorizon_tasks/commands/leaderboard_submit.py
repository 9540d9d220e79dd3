"""``medhorizon-tasks leaderboard submit FILE --server URL``: send a run to a board (``leaderboard serve``).

``FILE`` is a submission JSON (``leaderboard make``), sent as it is to ``POST /api/submissions``; or an
lmms-eval samples file or a predictions JSONL, sent to ``POST /api/runs`` with the metadata flags and, for a
samples file ``<stamp>_samples_<task>.jsonl``, the run's ``<stamp>_results.json`` beside it (or
``--config``): the server reads the run's input protocol and its departures from the standard protocol from
those files, as ``leaderboard make`` does. The submitter token comes from ``$MEDHORIZON_SUBMIT_TOKEN`` or
``--token-file`` (never the command line).

Printed: the entry's address, its rank and score with the 95% interval; or every problem the server named.
Exit status: 0 accepted (or the same run already on the board), 1 refused or the server not reached, 2 a
mistake in the command (a missing file, a bad URL, an unreadable token file).

The HTTP client is the standard library's ``urllib.request``: the command must work in a bare
``pip install medhorizon-tasks`` (httpx is a test dependency only), and one multipart POST needs no more.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from ..benchmarks.data import BENCHMARK_NAMES, BENCHMARKS
from ..core.errors import MedHorizonError

__all__ = ["add_submit_parser", "SUBMIT_TOKEN_ENV"]

SUBMIT_TOKEN_ENV = "MEDHORIZON_SUBMIT_TOKEN"
_SAMPLES = re.compile(r"(.+)_samples_(.+)\.jsonl")


def add_submit_parser(lsub) -> argparse.ArgumentParser:
    s = lsub.add_parser(
        "submit", allow_abbrev=False, help="send a run (samples, predictions or a submission JSON) to a board's server",
        description="Send a run to a leaderboard server (`leaderboard serve`) and print its reply: the entry's "
                    "address, rank and score with its 95% interval, or every problem. A samples file is sent with "
                    "the run's results file beside it, from which the server reads the run's input protocol. "
                    f"The submitter token comes from ${SUBMIT_TOKEN_ENV} or --token-file. Exit status: 0 "
                    "accepted, 1 refused (or the server not reached), 2 a mistake in the command.")
    s.add_argument("file", metavar="FILE", help="a submission JSON (`leaderboard make`), an lmms-eval samples file "
                                                "(<stamp>_samples_<task>.jsonl) or a predictions JSONL")
    s.add_argument("--server", required=True, metavar="URL", help="the board's address, e.g. https://board.example.org")
    s.add_argument("--benchmark", choices=BENCHMARKS,
                   help="samples / predictions: the benchmark (default: from the samples file's task name)")
    s.add_argument("--model", help="samples / predictions: the model name shown on the board")
    s.add_argument("--model-size", dest="size", help='samples / predictions: parameter count, e.g. "7B" (or "unknown")')
    s.add_argument("--fps", type=float, help="input protocol: frames per second (default: what the run recorded)")
    s.add_argument("--cap", type=int, help="input protocol: frame cap (default: what the run recorded)")
    s.add_argument("--frames", type=int, help="input protocol: fixed number of frames (0 = none)")
    s.add_argument("--date", help="YYYY-MM-DD (default: today)")
    s.add_argument("--mode", help="run mode (default: from the samples; sureon: visual or blind)")
    s.add_argument("--notes", help="free text shown with the entry")
    s.add_argument("--url", help="http(s) link for the model")
    s.add_argument("--config", metavar="RESULTS_JSON",
                   help="the run's lmms-eval results file (default: the <stamp>_results.json beside a "
                        "<stamp>_samples_<task>.jsonl)")
    s.add_argument("--token-file", metavar="PATH",
                   help=f"file holding the submitter token (default: ${SUBMIT_TOKEN_ENV}; neither: no token)")
    s.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the reply (default 600)")
    s.set_defaults(func=_cmd_submit)
    return s


# ------------------------------------------------------------------ what is sent

def _server(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise MedHorizonError(f"--server {url!r}: expected the board's http(s) address, e.g. http://127.0.0.1:8000")
    return url.strip().rstrip("/")


def _token(token_file: str | None) -> str | None:
    from ..core.settings import env_text

    if token_file is None:
        return env_text(SUBMIT_TOKEN_ENV)
    try:
        token = Path(token_file).expanduser().read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise MedHorizonError(f"--token-file {token_file}: cannot read it ({getattr(exc, 'strerror', None) or exc})") \
            from None
    if not token:
        raise MedHorizonError(f"--token-file {token_file}: the file is empty; it should hold the submitter token")
    return token


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise MedHorizonError(f"{what} {path}: cannot read it ({exc.strerror or exc})") from None


def _is_submission(body: bytes) -> bool:
    head = body.lstrip()[:4096]
    return head.startswith(b"{") and b"medhorizon-tasks-submission" in head


def _multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    """A multipart/form-data body (RFC 7578) and its content type."""
    import secrets

    boundary = "mh-" + secrets.token_hex(16)
    out = []
    for name, value in fields.items():
        out.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n'.encode()
                   + value.encode("utf-8") + b"\r\n")
    for name, (filename, data) in files.items():
        safe = filename.replace('"', "_").replace("\r", "_").replace("\n", "_")
        out.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; filename="{safe}"\r\n'
                   f"Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n")
    out.append(f"--{boundary}--\r\n".encode())
    return b"".join(out), f"multipart/form-data; boundary={boundary}"


def _request(args, path: Path, body: bytes) -> tuple[str, bytes, dict[str, str]]:
    """(route, body, headers) of what is sent for ``FILE``."""
    if _is_submission(body):
        return "/api/submissions", body, {"Content-Type": "application/json", "X-Filename": path.name[:200]}
    m = _SAMPLES.fullmatch(path.name)
    bench = args.benchmark or (next((b for b in BENCHMARKS if m.group(2).startswith(b)), None) if m else None)
    missing = [flag for flag, value in (("--benchmark", bench), ("--model", args.model), ("--model-size", args.size))
               if not value]
    if missing:
        raise MedHorizonError(f"{path.name}: a samples or predictions file is sent with {', '.join(missing)} "
                              "(the server makes the submission from it as `leaderboard make` does)")
    fields = {"benchmark": bench, "model": args.model, "size": args.size}
    for key in ("fps", "cap", "frames", "date", "mode", "notes", "url"):
        value = getattr(args, key)
        if value is not None:
            fields[key] = f"{value:g}" if isinstance(value, float) else str(value)
    files = {"file": (path.name, body)}
    config = Path(args.config) if args.config else (path.with_name(f"{m.group(1)}_results.json") if m else None)
    if config is not None and (args.config or config.is_file()):
        files["config"] = (config.name, _read(config, "--config"))
    data, content_type = _multipart(fields, files)
    return "/api/runs", data, {"Content-Type": content_type}


def _send(url: str, body: bytes, headers: dict[str, str], timeout: float) -> tuple[int, dict | None, str]:
    """(HTTP status, the JSON reply or None, the reply's text)."""
    import json
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, data=body, headers={**headers, "Accept": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - http(s) only (_server)
            status, text = resp.status, resp.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        status, text = exc.code, exc.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise _Unreached(f"{url}: the server did not answer ({reason})") from None
    try:
        reply = json.loads(text)
    except ValueError:
        reply = None
    return status, reply if isinstance(reply, dict) else None, text


class _Unreached(Exception):
    pass


# ------------------------------------------------------------------ what is printed

def _pct(x) -> str:
    return "—" if x is None else f"{100 * x:.1f}"


def _accepted_lines(server: str, reply: dict) -> list[str]:
    page = server + str(reply.get("page") or "")
    if reply.get("duplicate"):
        return [f"already on the board: {page}", str(reply.get("message") or "")]
    lines = [f"accepted: {page}"]
    scores = reply.get("scores") or {}
    if scores:
        name = BENCHMARK_NAMES.get(reply.get("benchmark"), reply.get("benchmark"))
        lo, hi = (scores.get("ci95") or [None, None])[:2]
        rank = (f"ranked apart, off protocol: {'; '.join(scores['off_protocol'])}" if scores.get("off_protocol")
                else f"rank {scores.get('rank')}")
        lines.append(f"{name}, data {reply.get('data_version')}: {rank}; {reply.get('metric')} "
                     f"{_pct(scores.get('value'))}% [95% CI {_pct(lo)}, {_pct(hi)}], n = {scores.get('n')}")
    return lines


def _cmd_submit(args) -> int:
    server = _server(args.server)
    path = Path(args.file)
    if not path.is_file():
        raise MedHorizonError(f"FILE {args.file}: no such file")
    route, body, headers = _request(args, path, _read(path, "FILE"))
    token = _token(args.token_file)
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        status, reply, text = _send(server + route, body, headers, args.timeout)
    except _Unreached as exc:
        print(f"not sent: {exc}", file=sys.stderr)
        return 1
    if reply is not None and reply.get("accepted") and status in (200, 201):
        print("\n".join(_accepted_lines(server, reply)))
        return 0
    problems = (reply or {}).get("problems") or ([reply["error"]] if reply and reply.get("error") else
                                                 [text.strip()[:500] or "(no reason given)"])
    print(f"refused (HTTP {status}): {len(problems)} problem{'s' if len(problems) != 1 else ''}", file=sys.stderr)
    for p in problems:
        print(f"  - {p}", file=sys.stderr)
    return 1
