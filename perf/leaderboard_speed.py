"""The submission service's speed: submissions accepted per second (1 and 4 uvicorn workers), the board's
latency under 50 concurrent readers, and the first board after a SIGKILL and a restart, against ``leaderboard
build`` of the same files, on real ``leaderboard serve`` processes over SQLite and over PostgreSQL.

Usage::

    python perf/leaderboard_speed.py                       # 10, 100 and 1,000 submissions, SQLite and PostgreSQL
    python perf/leaderboard_speed.py --quick               # 10 submissions, SQLite (smoke use, a few minutes)
    python perf/leaderboard_speed.py --sizes 10,100 --backends sqlite,postgresql
    python perf/leaderboard_speed.py --kept-only 1000      # a new process's first board over 1,000 kept scores

Data: the 1,253-item MedHorizon-layout release of ``perf/scoring_speed.py`` and, for each submission, that
script's simulated model outputs (bare letters, sentences, JSON, reasoning paragraphs, multi-KB analyses, refusals:
about 0.4 MiB a submission), each model right with its own probability; written as ``leaderboard make`` writes a
submission. Two servers run on one store at once (as replicas do), each with ``--data medhorizon=RELEASE`` and
build's defaults (2,000 resamples, seed 0): **A** with one worker, **B** with ``--workers 4``; each has an
extraction cache of its own (empty at start), and each build gets an empty one too. PostgreSQL is a server of the
script's own (``initdb`` in the temporary folder, as the tests start it).

The store grows to each size in turn; at each:

* **accepted, 1 worker**: half of the new submissions POSTed one after the other to A by one client (each read,
  validated, scored and kept, with its score, before its reply): submissions per second;
* **accepted, 4 workers**: the other half POSTed to B by 4 clients at once: submissions per second;
* **next board**: whether the last submission accepted by B is on A's next ``GET /api/board`` (another process);
* **50 readers**: 50 clients each sending ``GET /api/board`` to B (4 workers) 4 times at once: the median and
  the 90th percentile of those 200 requests' latency (the clients share this script's process and the machine);
* **after a SIGKILL**: A killed (SIGKILL) and started again on the same store; its first ``GET /api/board``
  (the board ranked from the scores kept in the store: nothing scored again) and whether it is the board A
  served before the kill, number for number;
* **build**: ``medhorizon-tasks leaderboard build`` of the same files (a subprocess, wall seconds), and the
  ratios build / served;
* **same numbers**: every entry's rank, value, interval and Holm p on ``/api/board`` against build's CSV.

Goals (issue 46): the board of 100 MedHorizon submissions in a SQLite store answered in under 2 s after a
SIGKILL and a restart, the same numbers as before the kill (and 1,000 in under 2 s); an accepted submission on
every process's next board.
"""

from __future__ import annotations

import argparse
import concurrent.futures
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
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # the tests' PostgreSQL server

from scoring_speed import items_of, release_records, simulate  # noqa: E402

BIN = Path(sys.executable).parent / "medhorizon-tasks"
GOAL_N, GOAL_S = 100, 2.0  # issue 46: the first board of 100 submissions after a restart in under 2 s
SIZES = (10, 100, 1000)
READERS, READS = 50, 4


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a live process (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Serve:
    """``medhorizon-tasks leaderboard serve --data medhorizon=RELEASE --workers N`` on a free port, over ``db``."""

    def __init__(self, release: Path, db: str, cache: Path, log: Path, workers: int = 1):
        self.argv = [str(BIN), "leaderboard", "serve", "--data", f"medhorizon={release}", "--host", "127.0.0.1",
                     "--db", db, "--rate-limit", "1000000/second", "--log-level", "warning",
                     "--workers", str(workers)]
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

    def kill(self) -> None:
        """SIGKILL: no shutdown of any kind (a one-worker server is one process)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
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


def post_all(url: str, paths: list[Path], clients: int) -> tuple[float, int]:
    """POST ``paths`` to ``url`` from ``clients`` clients at once: (wall seconds, id of the last accepted)."""
    import httpx

    def send(chunk):
        last = None
        with httpx.Client(base_url=url, timeout=3600) as c:
            for path in chunk:
                r = c.post("/api/submissions", content=path.read_bytes(), headers={"content-type": "application/json"})
                if r.status_code != 201:
                    raise SystemExit(f"{path.name}: {r.status_code} {r.text[:2000]}")
                last = r.json()["id"]
        return last

    chunks = [paths[k::clients] for k in range(clients)]
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        lasts = list(pool.map(send, chunks))
    return time.perf_counter() - t0, max(x for x in lasts if x is not None)


def readers(url: str, n: int = READERS, reads: int = READS) -> list[float]:
    """``n`` clients each reading ``/api/board`` ``reads`` times, all at once: every request's seconds."""
    import httpx

    start = concurrent.futures.ThreadPoolExecutor(n)
    barrier = __import__("threading").Barrier(n)

    def read(_):
        out = []
        with httpx.Client(base_url=url, timeout=3600) as c:
            barrier.wait()
            for _ in range(reads):
                t0 = time.perf_counter()
                c.get("/api/board").raise_for_status()
                out.append(time.perf_counter() - t0)
        return out

    with start as pool:
        return [t for ts in pool.map(read, range(n)) for t in ts]


def run_backend(backend: str, sizes: list[int], folder: Path, release: Path, items: list, version: str,
                out=print) -> dict:
    import httpx

    pg = None
    if backend == "postgresql":
        from service_server import Postgres

        pg = Postgres(folder / f"pg-{backend}").start()
        db = pg.url
    else:
        db = f"sqlite:///{folder / 'board.sqlite3'}"
    subs = folder / "submissions"
    subs.mkdir(exist_ok=True)
    a = Serve(release, db, folder / f"a-extractions-{backend}", folder / f"a-{backend}.log").start()
    b = Serve(release, db, folder / f"b-extractions-{backend}", folder / f"b-{backend}.log", workers=4).start()
    files: list[Path] = []
    results = {}
    out(f"\n== {backend}: server A (1 worker) and server B (--workers 4) on one store")
    try:
        for n in sizes:
            new = [write_submission(subs, k, items, version) for k in range(len(files), n)]
            size_mib = sum(p.stat().st_size for p in new) / len(new) / 2 ** 20
            half = (len(new) + 1) // 2
            wall1, _ = post_all(a.url, new[:half], 1)
            wall4, last = post_all(b.url, new[half:], 4) if new[half:] else (float("nan"), None)
            files += new
            with httpx.Client(base_url=a.url, timeout=3600) as c:
                t0 = time.perf_counter()
                reply = c.get("/api/board")
                a_first = time.perf_counter() - t0
            before = reply.json()
            entries = before["boards"][0]["entries"]
            on_next = (last is None or any(e["id"] == last for e in entries)) and len(entries) == n
            lat = sorted(readers(b.url))
            a.kill()
            a.start()
            with httpx.Client(base_url=a.url, timeout=3600) as c:
                t0 = time.perf_counter()
                after = c.get("/api/board")
                cold = time.perf_counter() - t0
            same_after = after.json() == before
            b_wall, b_cpu, rows = build(files, release, folder / f"built-{backend}-{n}",
                                        folder / f"build-extractions-{backend}-{n}")
            same = same_numbers(entries, rows)
            med, p90 = statistics.median(lat), lat[int(0.9 * (len(lat) - 1))]
            results[n] = dict(accepted1=half / wall1, accepted4=(len(new) - half) / wall4, a_first=a_first,
                              readers=(med, p90), cold=cold, same_after=same_after, build=b_wall, same=same,
                              n_built=len(rows), on_next=on_next)
            out(f"\n{backend}, {n:,} submissions ({size_mib:.2f} MiB each):")
            out(f"  accepted, 1 worker, 1 client: {half} in {wall1:.2f} s = {half / wall1:.2f} submissions/s")
            if new[half:]:
                out(f"  accepted, 4 workers, 4 clients: {len(new) - half} in {wall4:.2f} s = "
                    f"{(len(new) - half) / wall4:.2f} submissions/s")
            out(f"  accepted by B on A's next board: {'yes' if on_next else 'NO'}; A's first board after them "
                f"{a_first:.3f} s")
            out(f"  {READERS} readers x {READS} GET /api/board on B: median {med:.3f} s, 90th percentile {p90:.3f} s")
            out(f"  A after a SIGKILL and a restart: first GET /api/board {cold:.3f} s; the board before the kill: "
                f"{'yes' if same_after else 'NO'}")
            out(f"  leaderboard build of the {n:,} files: wall {b_wall:.2f} s (cpu {b_cpu:.2f} s); build / served: "
                f"first board after a restart {b_wall / cold:.1f}x, median under {READERS} readers "
                f"{b_wall / med:.1f}x; build / one accepted submission (1 worker) {b_wall * half / wall1 / n:.2f}x "
                "(build's time per file over a submission's acceptance)")
            out(f"  same numbers as build (rank, value, CI, Holm p): {same} of {len(rows)} entries")
    finally:
        a.stop()
        b.stop()
        if pg is not None:
            pg.stop()
    return results


def run(sizes: list[int], backends: list[str], out=print) -> dict:
    from medhorizon_tasks.benchmarks.data import load_benchmark_data

    out(f"load: {os.getloadavg()[0]:.2f} (1-minute), {os.cpu_count()} CPUs")
    results = {}
    with tempfile.TemporaryDirectory(prefix="mh-leaderboard-bench-") as tmp:
        folder = Path(tmp)
        release, items = write_release(folder)
        version = load_benchmark_data("medhorizon", release).version
        out(f"MedHorizon-layout release of {len(items):,} items; each submission a simulated model's raw outputs on "
            "every item")
        for backend in backends:
            sub = folder / backend
            sub.mkdir()
            results[backend] = run_backend(backend, sizes, sub, release, items, version, out)
    out(f"\nload at the end: {os.getloadavg()[0]:.2f} (1-minute)")
    out(f"goal: the first board of {GOAL_N} submissions after a SIGKILL and a restart in under {GOAL_S:g} s, the same "
        "numbers as before the kill; an accepted submission on every process's next board")
    for backend, res in results.items():
        goal = res.get(GOAL_N)
        if goal is None:
            out(f"  {backend}: not measured at {GOAL_N} (sizes {', '.join(map(str, sizes))})")
            continue
        met = goal["cold"] < GOAL_S and goal["same_after"] and goal["on_next"]
        out(f"  {backend}: {goal['cold']:.3f} s, same board {'yes' if goal['same_after'] else 'NO'}, on the next "
            f"board {'yes' if goal['on_next'] else 'NO'}: {'met' if met else 'NOT met'}")
    return results


def kept_only(n: int, distinct: int = 40, out=print) -> dict:
    """The first board of a new process over a SQLite store of ``n`` entries with kept scores, without serving
    them first: ``distinct`` submissions are scored (as acceptance does), and each of the ``n`` rows is one of
    them (its bytes as received, a model name of its own) with its score kept beside it; then a new process loads
    the data (and its version, as ``serve`` does at start) and opens the store, and its first board is timed
    (``Boards.boards``, what the first ``GET /api/board`` does)."""
    import dataclasses

    from medhorizon_tasks.benchmarks.data import load_benchmark_data
    from medhorizon_tasks.leaderboard.submission import validate_submission
    from medhorizon_tasks.service.boards import Boards
    from medhorizon_tasks.service.store import Store

    out(f"load: {os.getloadavg()[0]:.2f} (1-minute), {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="mh-leaderboard-kept-") as tmp:
        folder = Path(tmp)
        release, items = write_release(folder)
        data = load_benchmark_data("medhorizon", release)
        db = f"sqlite:///{folder / 'board.sqlite3'}"
        store = Store(db)
        boards = Boards(store, {"medhorizon": data})
        scored = []
        for k in range(min(n, distinct)):
            body = write_submission(folder, k, items, data.version).read_bytes()
            scored.append((body, boards.score(validate_submission(json.loads(body), data), data, body)))
        t0 = time.perf_counter()
        for i in range(n):
            body, entry = scored[i % len(scored)]
            model = f"kept-{i:04d}"
            body = body + b" " * (1 + i // len(scored))  # bytes of its own: one row each
            entry = dataclasses.replace(entry, submission=dataclasses.replace(
                entry.submission, metadata={**entry.metadata, "model": model}))
            store.add(received=body, submission=body, benchmark="medhorizon", data_version=data.version,
                      model=model, kind="submission", filename=None, submitter=None,
                      score=boards.to_keep(entry, data))
        fill = time.perf_counter() - t0
        store.close()
        code = ("import json, sys, time\nt0 = time.perf_counter()\n"
                "from medhorizon_tasks.benchmarks.data import load_benchmark_data\n"
                "from medhorizon_tasks.service.boards import Boards\nfrom medhorizon_tasks.service.store import Store\n"
                f"data = load_benchmark_data('medhorizon', {str(release)!r})\ndata.version\nstore = Store({db!r})\n"
                "boards = Boards(store, {'medhorizon': data}, background=True)\nt1 = time.perf_counter()\n"
                "got, _ = boards.boards()\nt2 = time.perf_counter()\n"
                "print(json.dumps([len(got[0].entries), boards.rescoring(), t2 - t1, t1 - t0]))\n")
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        if res.returncode:
            raise SystemExit(res.stderr[-3000:])
        shown, waiting, first, start = json.loads(res.stdout)
    out(f"SQLite store of {n:,} entries with kept scores ({len(scored)} distinct scored submissions; filled in "
        f"{fill:.1f} s): a new process's first board: {first:.3f} s ({shown:,} entries, {waiting} rescoring; "
        f"start-up and data loading before it {start:.2f} s)")
    out(f"load at the end: {os.getloadavg()[0]:.2f} (1-minute)")
    return dict(first=first, shown=shown, waiting=waiting)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 submissions, SQLite only (smoke use)")
    parser.add_argument("--sizes", help="store sizes, increasing, comma-separated (default 10,100,1000)")
    parser.add_argument("--backends", help="sqlite, postgresql or both, comma-separated (default both; --quick: "
                                           "sqlite)")
    parser.add_argument("--kept-only", type=int, metavar="N",
                        help="only the first board of a new process over N entries with kept scores (no server)")
    args = parser.parse_args(argv)
    if args.kept_only:
        kept_only(args.kept_only)
        return
    sizes = [int(x) for x in args.sizes.split(",")] if args.sizes else ([10] if args.quick else list(SIZES))
    if sizes != sorted(set(sizes)) or sizes[0] < 2:
        parser.error("--sizes: increasing whole numbers, at least 2")
    backends = args.backends.split(",") if args.backends else (["sqlite"] if args.quick else ["sqlite", "postgresql"])
    if not backends or any(b not in ("sqlite", "postgresql") for b in backends):
        parser.error("--backends: sqlite, postgresql or both, comma-separated")
    run(sizes, backends)


if __name__ == "__main__":
    main()
