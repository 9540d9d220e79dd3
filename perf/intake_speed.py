"""Whether one hostile upload can stop the service: the latency of ``/``, ``/api/board`` and ``/healthz`` while
the worst bodies we can construct at the upload limit are read, checked and scored, against the same endpoints
idle, on a real ``leaderboard serve --synthetic`` (uvicorn, SQLite in a temporary folder).

Usage::

    python perf/intake_speed.py                 # bodies at the default limit, 100 MiB (~5 min on 2 busy cores)
    python perf/intake_speed.py --max-mb 10     # a smaller limit (smoke use, ~1 min)

The bodies (each just under the limit, POSTed to ``/api/submissions``; the escaped-quote body is what froze the
service for 40-70 s before issue 45):

* ``escaped-quotes``: a submission whose ``notes`` is one string of ``\\"`` (parsed whole, refused by its length);
* ``unterminated``: ``["`` then ``\\"`` to the end (a string that never closes: the old pre-parse count walked it
  again from each quote);
* ``digit-runs-in-text``: a submission whose ``notes`` is runs of 308 digits (the long-integer scan reads them
  all; the old one cost ~150 steps a byte);
* ``unicode-escapes``: ``notes`` of ``\\u00e9`` escapes (the slowest text for ``json.loads``);
* ``deep-after-text``: a long string, then 101 levels of nesting (the depth check's line search walks the text);
* ``valid-long-outputs``: a valid submission whose every output is as long as the limits allow (accepted
  before the timing starts, so that the board is not ranked again meanwhile; sent again, it is read, checked
  and found to be a duplicate).

Two clients (processes of their own) send the bodies over and over, at once, while a third asks ``/``,
``/api/board`` and ``/healthz`` in turn (each request timed alone). The reference, in the same run: the same
endpoints with four CPU-bound processes beside the server and no upload (on a machine of few cores, what the
readers' and senders' CPU use alone costs the server). Reported per endpoint: idle median, busy median and
worst, then with the uploads median, 95th percentile and worst, and worst / busy worst. The goal (issue 45 item 2): every request under 1 s while the bodies are
read.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import httpx

BIN = Path(sys.executable).parent / "medhorizon-tasks"
ENDPOINTS = ("/", "/api/board", "/healthz")
GOAL_S = 1.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _submission(datas, model: str, seed: int, output_chars: int = 0, **meta) -> dict:
    from medhorizon_tasks.leaderboard.submission import FORMAT, FORMAT_VERSION

    data = datas["medhorizon"]
    rng = random.Random(seed)
    preds = []
    for it in data.items:
        letter = it.answer if rng.random() < 0.7 else "ABCD"[("ABCD".index(it.answer) + 1) % 4]
        text = f"The answer is ({letter})."
        if output_chars:
            words = "the frame shows the instrument near the tissue and then it moves, " * (output_chars // 66 + 1)
            text = words[: output_chars - len(text) - 1] + " " + text
        preds.append({"id": it.uid, "output": text})
    return {"format": FORMAT, "format_version": FORMAT_VERSION,
            "metadata": {"model": model, "size": "7B", "input_protocol": {"fps": 1, "cap": 64, "frames": None},
                         "date": "2026-11-30", "benchmark": "medhorizon", "data_version": data.version, **meta},
            "predictions": preds}


def bodies(datas, limit: int) -> dict[str, bytes]:
    """The worst bodies, each just under ``limit`` bytes."""
    from medhorizon_tasks.leaderboard.submission import TEXT_LIMITS

    def with_notes(fill: str) -> bytes:
        head = json.dumps(_submission(datas, "hostile", 1, notes="@@")).encode()
        room = limit - len(head) - 64
        return head.replace(b'"@@"', b'"' + (fill * (room // len(fill))).encode() + b'"')

    n_items = len(datas["medhorizon"].ids)
    out = {
        "escaped-quotes": with_notes('\\"'),
        "unterminated": b'["' + b'\\"' * ((limit - 64) // 2),
        "digit-runs-in-text": with_notes("1" * 308 + " "),
        "unicode-escapes": with_notes("\\u00e9"),
        "deep-after-text": (b'["' + b"a" * (limit - 400) + b'", ' + b"[" * 101 + b"]" * 101 + b"]"),
        "valid-long-outputs": json.dumps(_submission(
            datas, "long outputs", 2, output_chars=min(TEXT_LIMITS["output"], (limit - 50_000) // n_items))).encode(),
    }
    for name, body in out.items():
        assert len(body) <= limit, (name, len(body), limit)
    return out


def _timed(client: httpx.Client, path: str) -> float:
    t0 = time.perf_counter()
    r = client.get(path)
    took = time.perf_counter() - t0
    if r.status_code != 200:
        raise RuntimeError(f"GET {path}: {r.status_code} {r.text[:200]}")
    return took


def _spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        sum(range(10_000))


def _send(url: str, paths: list[str], rounds: int) -> list[tuple[str, int]]:
    """In a sender process: POST each body in turn, ``rounds`` times; (body file, status) of each reply."""
    got = []
    with httpx.Client(base_url=url, timeout=600) as c:
        for _ in range(rounds):
            for path in paths:
                r = c.post("/api/submissions", content=Path(path).read_bytes(),
                           headers={"content-type": "application/json"})
                got.append((path, r.status_code))
    return got


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-mb", type=float, default=100.0, help="the server's --max-upload-mb (default 100)")
    ap.add_argument("--rounds", type=int, default=2, help="times each client sends every body (default 2)")
    ap.add_argument("--busy-s", type=float, default=60.0,
                    help="seconds of the reference phase: four busy processes beside the server, no upload (default 60)")
    args = ap.parse_args()

    from medhorizon_tasks.benchmarks.data import load_benchmark_data
    from medhorizon_tasks.commands.data_args import synthetic_paths

    datas = {"medhorizon": load_benchmark_data("medhorizon", synthetic_paths("medhorizon")[0])}
    limit = int(args.max_mb * 2 ** 20)
    hostile = bodies(datas, limit)
    with tempfile.TemporaryDirectory(prefix="mh-intake-speed-") as tmp:
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        argv = [str(BIN), "leaderboard", "serve", "--synthetic", "--host", "127.0.0.1", "--port", str(port),
                "--db", f"sqlite:///{Path(tmp) / 'board.sqlite3'}", "--rate-limit", "1000000/second",
                "--max-upload-mb", f"{args.max_mb:g}", "--log-level", "warning"]
        log = open(Path(tmp) / "serve.log", "wb")
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 180
            while True:
                try:
                    if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("leaderboard serve did not start: " + (Path(tmp) / "serve.log").read_text())
                time.sleep(0.2)
            with httpx.Client(base_url=url, timeout=120) as c:
                for i in range(5):  # a board with entries: / and /api/board rank them
                    r = c.post("/api/submissions", content=json.dumps(_submission(datas, f"m{i}", 10 + i)).encode())
                    assert r.status_code == 201, r.text
                # warm: the intake workers started; the valid body accepted and the board ranked with it, so
                # that what follows times the reading of uploads, not a board ranked again for a new entry
                # (perf/leaderboard_speed.py times that)
                c.post("/api/submissions", content=b'{"x": 1}')
                r = c.post("/api/submissions", content=hostile["valid-long-outputs"], timeout=600)
                assert r.status_code == 201, r.text[:500]
                for p in ENDPOINTS:
                    _timed(c, p)
                idle = {p: [] for p in ENDPOINTS}
                for _ in range(20):
                    for p in ENDPOINTS:
                        idle[p].append(_timed(c, p))
            # reference: the same number of busy processes beside the server (2 readers + 2 senders), no upload:
            # what the machine's CPUs alone do to the latency
            busy = {p: [] for p in ENDPOINTS}
            ctx = multiprocessing.get_context("spawn")
            with ProcessPoolExecutor(4, mp_context=ctx) as spinners:
                spins = [spinners.submit(_spin, args.busy_s) for _ in range(4)]
                with httpx.Client(base_url=url, timeout=120) as c:
                    while not all(j.done() for j in spins):
                        for p in ENDPOINTS:
                            busy[p].append(_timed(c, p))
                        time.sleep(0.05)
            loaded = {p: [] for p in ENDPOINTS}
            files = {}
            for name, body in hostile.items():  # the senders are processes of their own: no lock shared with
                files[name] = Path(tmp) / f"{name}.body"  # the client that times the endpoints
                files[name].write_bytes(body)
            names = list(hostile)
            t0 = time.perf_counter()
            with ProcessPoolExecutor(2, mp_context=ctx) as senders:
                jobs = [senders.submit(_send, url, [str(files[n]) for n in order], args.rounds)
                        for order in (names, names[::-1])]
                with httpx.Client(base_url=url, timeout=120) as c:
                    while not all(j.done() for j in jobs):
                        for p in ENDPOINTS:
                            loaded[p].append(_timed(c, p))
                        time.sleep(0.05)
                statuses = {name: set() for name in names}
                for j in jobs:
                    for path, code in j.result():
                        statuses[Path(path).stem].add(code)
            wall = time.perf_counter() - t0
        finally:
            proc.terminate()
            proc.wait(30)
    print(f"bodies at the limit ({args.max_mb:g} MiB), each sent {args.rounds * 2} times by 2 clients at once, "
          f"in {wall:.1f} s; replies: " + ", ".join(f"{n} {sorted(s)}" for n, s in statuses.items()))
    print("idle: the server alone; busy: four CPU-bound processes beside it, no upload (what the CPUs alone do); "
          "uploads: the bodies read meanwhile")
    print(f"{'endpoint':<12} {'idle median':>12} {'busy median':>12} {'busy worst':>11} {'uploads median':>15} "
          f"{'p95':>7} {'worst':>7} {'worst/busy worst':>17} {'requests':>9}")
    worst = 0.0
    for p in ENDPOINTS:
        xs, bs = sorted(loaded[p]), sorted(busy[p])
        p95 = xs[min(len(xs) - 1, int(0.95 * len(xs)))]
        worst = max(worst, xs[-1])
        print(f"{p:<12} {statistics.median(idle[p]) * 1000:>10.1f}ms {statistics.median(bs) * 1000:>10.1f}ms "
              f"{bs[-1] * 1000:>9.0f}ms {statistics.median(xs) * 1000:>13.1f}ms {p95 * 1000:>5.0f}ms "
              f"{xs[-1] * 1000:>5.0f}ms {xs[-1] / bs[-1]:>16.1f}x {len(xs):>9}")
    print(f"goal: every request under {GOAL_S:g} s while the bodies are read: "
          f"{'met' if worst < GOAL_S else 'NOT met'} (worst {worst:.2f} s); load: {os.getloadavg()[0]:.2f}")
    return 0 if worst < GOAL_S else 1


if __name__ == "__main__":
    sys.exit(main())
