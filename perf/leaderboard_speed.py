"""The submission service's speed: submissions accepted per second and the board's latency, against
``leaderboard build`` of the same files, on a real ``leaderboard serve`` (uvicorn, SQLite in a temporary folder).

Usage::

    python perf/leaderboard_speed.py              # 10, 100 and 1,000 submissions (~30 min on 2 busy cores)
    python perf/leaderboard_speed.py --quick      # 10 submissions (smoke use, ~1 min)
    python perf/leaderboard_speed.py --sizes 10,100

Data: the 1,253-item MedHorizon-layout release of ``perf/scoring_speed.py`` and, for each submission, that
script's simulated model outputs (bare letters, sentences, JSON, reasoning paragraphs, multi-KB analyses, refusals:
about 0.4 MiB a submission), each model right with its own probability; written as ``leaderboard make`` writes a
submission. The server is started with ``--data medhorizon=RELEASE`` and build's defaults (2,000 resamples,
seed 0), its extraction cache in a folder of its own (empty at start); each build gets an empty one too, so both
read every output once.

The store grows to each size in turn; at each:

* **accepted**: the submissions that brought the store to that size, POSTed one after the other to
  ``/api/submissions`` by one client (each read, validated, scored and kept before its reply): submissions per
  second, and the server's CPU seconds per submission (``/proc``; what an idle machine would show);
* **next board**: whether the last accepted submission is on the next ``GET /api/board``;
* **GET /api/board**, then **GET /**: the first request after the last accepted submission (the board is
  ranked again: each entry's test against the leader, Holm) and the median of the next ones (same store: the
  ranked board is reused while the store's list of submissions is unchanged);
* **after a restart**: the server started again on the same store, its first ``GET /`` (every entry scored
  from the store's bytes, its readings found in the server's extraction cache) and the median of the next ones;
* **build**: ``medhorizon-tasks leaderboard build`` of the same files (a subprocess, wall and CPU seconds),
  and the ratios build / served (each accepted submission was scored when it was received, and its reply
  placed it on the ranked board, so the first board request after it is already fast; a restarted server's
  first request scores every entry again, as build does, but finds the outputs' readings in its cache);
* **same numbers**: every entry's rank, value, interval and Holm p on ``/api/board`` against build's CSV.

The goal (issue 37): the board of 100 such submissions served in under 1 s after the first request, and an
accepted submission on the next board request.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the shared pieces beside this script

from scoring_speed import items_of, release_records, simulate  # noqa: E402

BIN = Path(sys.executable).parent / "medhorizon-tasks"
GOAL_N, GOAL_S = 100, 1.0  # issue 37: the board of 100 submissions in under 1 s after the first request
SIZES = (10, 100, 1000)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Serve:
    """``medhorizon-tasks leaderboard serve --data medhorizon=RELEASE`` on a free port, over ``db``."""

    def __init__(self, release: Path, db: Path, cache: Path, log: Path):
        self.argv = [str(BIN), "leaderboard", "serve", "--data", f"medhorizon={release}", "--host", "127.0.0.1",
                     "--db", f"sqlite:///{db}", "--rate-limit", "1000000/second", "--log-level", "warning"]
        self.env = {**os.environ, "MEDHORIZON_EXTRACTION_CACHE": str(cache)}
        self.log = log
        self.proc: subprocess.Popen | None = None

    def start(self) -> "Serve":
        import httpx

        port = _free_port()
        self.url = f"http://127.0.0.1:{port}"
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen([*self.argv, "--port", str(port)], env=self.env, stdout=log, stderr=log)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"leaderboard serve exited {self.proc.returncode}:\n"
                                 + self.log.read_text(errors="replace")[-3000:])
            try:
                if httpx.get(self.url + "/healthz", timeout=5).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        self.stop()
        raise SystemExit("leaderboard serve did not answer within 300 s")

    def cpu(self) -> float:
        return _cpu_seconds(self.proc.pid)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(60)


def write_release(folder: Path) -> tuple[Path, list]:
    records = release_records()
    path = folder / "mlvbench_test.jsonl"
    path.write_text("".join(json.dumps(rec, ensure_ascii=False) + "\n" for rec in records), encoding="utf-8")
    return path, items_of(records)


def write_submission(folder: Path, k: int, items: list, version: str) -> Path:
    """Submission ``k``: a simulated model's raw outputs on every item, as ``leaderboard make`` writes them."""
    from medhorizon_tasks.leaderboard.submission import FORMAT, FORMAT_VERSION, dumps_submission

    r = random.Random(5000 + k)
    accuracy = r.uniform(0.3, 0.8)
    sub = {"format": FORMAT, "format_version": FORMAT_VERSION,
           "metadata": {"model": f"sim-{k:04d}", "size": "7B", "input_protocol": {"fps": 1, "cap": 64, "frames": None},
                        "date": "2026-11-30", "benchmark": "medhorizon", "data_version": version},
           "predictions": [{"id": str(uid), "output": simulate(r, options, answer, accuracy)[0]}
                           for uid, options, answer in items]}
    path = folder / f"sub{k:04d}.json"
    path.write_text(dumps_submission(sub), encoding="utf-8")
    return path


def timed_get(client, url: str, repeat: int) -> tuple[float, float, object]:
    """(first request's seconds, median of the next ``repeat``, the first reply)."""
    t0 = time.perf_counter()
    first = client.get(url)
    t_first = time.perf_counter() - t0
    first.raise_for_status()
    rest = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        client.get(url).raise_for_status()
        rest.append(time.perf_counter() - t0)
    return t_first, statistics.median(rest), first


def build(files: list[Path], release: Path, out: Path, cache: Path) -> tuple[float, float, list[dict]]:
    """``leaderboard build`` of ``files``: (wall s, CPU s, its CSV rows)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run([str(BIN), "leaderboard", "build", *map(str, files), "--data", f"medhorizon={release}",
                          "--out", str(out)], capture_output=True, text=True,
                         env={**os.environ, "MEDHORIZON_EXTRACTION_CACHE": str(cache)})
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise SystemExit(f"leaderboard build exited {res.returncode}:\n{res.stderr[-3000:]}")
    with open(out / "leaderboard.csv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), rows


def same_numbers(served: list[dict], built: list[dict]) -> int:
    """How many of build's entries have the served board's rank, value, interval and Holm p (as the CSV rounds)."""
    by_model = {e["model"]: e for e in served}
    same = 0
    for row in built:
        e = by_model.get(row["model"])
        if e is None:
            continue
        holm = "" if e["p_vs_leader_holm"] is None else float(f"{e['p_vs_leader_holm']:.4g}")
        got = (e["rank"], round(e["value"], 6), round(e["ci95"][0], 6), round(e["ci95"][1], 6), holm)
        want = (int(row["rank"]), float(row["value"]), float(row["ci95_low"]), float(row["ci95_high"]),
                "" if row["p_vs_leader_holm"] == "" else float(row["p_vs_leader_holm"]))
        same += got == want
    return same


def run(sizes: list[int], repeat: int, out=print) -> dict:
    import httpx

    from medhorizon_tasks.benchmarks.data import load_benchmark_data

    results = {}
    with tempfile.TemporaryDirectory(prefix="mh-leaderboard-bench-") as tmp:
        folder = Path(tmp)
        release, items = write_release(folder)
        version = load_benchmark_data("medhorizon", release).version
        subs = folder / "submissions"
        subs.mkdir()
        server = Serve(release, folder / "board.sqlite3", folder / "serve-extractions", folder / "serve.log").start()
        client = httpx.Client(base_url=server.url, timeout=3600)
        files: list[Path] = []
        out(f"leaderboard serve on SQLite; MedHorizon-layout release of {len(items):,} items; each submission a "
            "simulated model's raw outputs on every item; board requests: the first, then the median of "
            f"{repeat} more")
        try:
            for n in sizes:
                new = [write_submission(subs, k, items, version) for k in range(len(files), n)]
                size_mib = sum(p.stat().st_size for p in new) / len(new) / 2 ** 20
                cpu0, t0, posts, last = server.cpu(), time.perf_counter(), [], None
                for path in new:
                    body = path.read_bytes()
                    t1 = time.perf_counter()
                    r = client.post("/api/submissions", content=body, headers={"content-type": "application/json"})
                    posts.append(time.perf_counter() - t1)
                    if r.status_code != 201:
                        raise SystemExit(f"{path.name}: {r.status_code} {r.text[:2000]}")
                    last = r.json()["id"]
                wall, cpu = time.perf_counter() - t0, server.cpu() - cpu0
                files += new
                api_first, api_med, reply = timed_get(client, "/api/board", repeat)
                entries = reply.json()["boards"][0]["entries"]
                on_next = any(e["id"] == last for e in entries) and len(entries) == n
                html_first, html_med, _ = timed_get(client, "/", repeat)

                server.stop()
                server.start()
                client = httpx.Client(base_url=server.url, timeout=3600)
                cold_first, cold_med, _ = timed_get(client, "/", repeat)

                b_wall, b_cpu, rows = build(files, release, folder / f"built{n}", folder / f"build-extractions{n}")
                same = same_numbers(entries, rows)
                results[n] = dict(wall=wall, cpu=cpu, posts=posts, api=(api_first, api_med), html=(html_first,
                                  html_med), cold=(cold_first, cold_med), build=(b_wall, b_cpu), same=same,
                                  on_next=on_next)
                out("")
                out(f"{n:,} submissions ({size_mib:.2f} MiB each):")
                out(f"  accepted: {len(new):,} in {wall:.2f} s = {len(new) / wall:.2f} submissions/s "
                    f"(median POST {statistics.median(posts):.3f} s; server CPU {cpu / len(new):.3f} s each)")
                out(f"  last accepted on the next board: {'yes' if on_next else 'NO'}")
                out(f"  GET /api/board: first {api_first:.3f} s, median {api_med:.3f} s")
                out(f"  GET /: first {html_first:.3f} s, median {html_med:.3f} s")
                out(f"  after a restart, GET /: first {cold_first:.3f} s, median {cold_med:.3f} s")
                out(f"  leaderboard build of the {n:,} files: wall {b_wall:.2f} s, cpu {b_cpu:.2f} s; build / "
                    f"served: /api/board first {b_wall / api_first:.1f}x, median {b_wall / api_med:.1f}x; "
                    f"after a restart, first {b_wall / cold_first:.1f}x")
                out(f"  same numbers as build (rank, value, CI, Holm p): {same} of {len(rows)} entries")
        finally:
            server.stop()
    out("")
    out(f"goal: the board of {GOAL_N} submissions in under {GOAL_S:g} s after the first request, and an accepted "
        "submission on the next board request")
    goal = results.get(GOAL_N)
    if goal is None:
        out(f"  not measured at {GOAL_N} (sizes {', '.join(map(str, sizes))})")
    else:
        worst = max(goal["api"][1], goal["html"][1], goal["cold"][1])
        out(f"  slowest median board request at {GOAL_N}: {worst:.3f} s ({'met' if worst < GOAL_S else 'NOT met'}); "
            f"first after an accepted submission: {goal['api'][0]:.3f} s; on the next board: "
            f"{'yes' if goal['on_next'] else 'NO'}")
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 submissions only, 3 repeated requests (smoke use)")
    parser.add_argument("--sizes", help="store sizes, increasing, comma-separated (default 10,100,1000)")
    parser.add_argument("--repeat", type=int, help="board requests after the first (default 10; --quick: 3)")
    args = parser.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",")] if args.sizes else ([10] if args.quick else list(SIZES))
    if sizes != sorted(set(sizes)) or sizes[0] < 1:
        parser.error("--sizes: increasing whole numbers, at least 1")
    run(sizes, args.repeat or (3 if args.quick else 10))


if __name__ == "__main__":
    main()
