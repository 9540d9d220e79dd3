"""``compare`` speed (issue 46): the paired intervals of every pair, and the whole command, against the
implementation before it (commit 961713b, read with ``git show``: ``scipy.stats.bootstrap`` once per pair,
McNemar one pair at a time), measured in the same run.

Usage::

    python perf/compare_speed.py            # 3 repetitions of ours, 1 of the old path (~3 min on 2 idle cores)
    python perf/compare_speed.py --quick    # the paired intervals only, 5 pairs of the old path (~20 s)

Data: ``scoring_speed.py``'s fixture, 25 runs x 1,253 items of realistic raw outputs (300 pairs).

1. Paired intervals in process (CPU time): ``stats.paired_differences`` of the 300 pairs (10,000 resamples,
   seed 0) against the old ``paired_difference`` pair by pair (on a sample of the pairs: it takes ~0.1 s
   a pair; per pair and for 300 extrapolated), with the intervals of the sampled pairs compared.
2. Through the CLI (each in a fresh interpreter; wall and CPU of the command):
   * a cold ``compare`` of the 25 files with the extraction cache off (it reads every answer);
   * 25 ``score`` + a warm ``compare`` (the answers read by ``score`` found in the extraction cache).
   Ours as ``.venv/bin/medhorizon-tasks``, and both ours and the old path through one wrapper
   (``python -c``: the old path's ``pairwise_mcnemar`` and ``paired_difference`` put in place of ours), so
   the ratio compares like with like.

The machine's 1-minute load average is printed at the start and the end: on a shared machine, wall times
grow with it; CPU times much less.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import scoring_speed as fixture  # noqa: E402  (the same 25 runs as the scoring benchmark)

OLD_COMMIT = "961713b"  # the last commit with scipy.stats.bootstrap once per pair
COLD_TARGET_S = 3.0
WARM_TARGET_S = 15.0
ROOT = Path(__file__).resolve().parents[1]


def old_stats():
    """``core/stats.py`` as of OLD_COMMIT, loaded beside ours; None when the checkout lacks that history."""
    try:
        src = subprocess.run(["git", "show", f"{OLD_COMMIT}:src/medhorizon_tasks/core/stats.py"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    name = "medhorizon_tasks.core._stats_before_46"
    spec = importlib.util.spec_from_loader(name, loader=None)
    mod = importlib.util.module_from_spec(spec)
    mod.__package__ = "medhorizon_tasks.core"  # its relative import (.errors) finds ours
    sys.modules[name] = mod
    exec(compile(src, f"stats.py at {OLD_COMMIT}", "exec"), mod.__dict__)
    return mod


# Runs the command line given after the mode; "before": the old statistics put in place of ours first.
_WRAPPER = r"""
import sys
mode, argv = sys.argv[1], sys.argv[2:]
if mode == "before":
    sys.path.insert(0, {perf!r})
    from compare_speed import old_stats
    from medhorizon_tasks.core import stats
    old = old_stats()
    stats.pairwise_mcnemar = old.pairwise_mcnemar
    stats.paired_differences = lambda runs, pairs, **kw: [old.paired_difference(runs[a], runs[b], names=(a, b), **kw)
                                                         for a, b in pairs]
from medhorizon_tasks.commands.main import main
sys.exit(main(argv))
"""


def _load() -> str:
    one, _, _ = os.getloadavg()
    return f"{one:.2f} on {os.cpu_count()} cores"


def _children_cpu() -> float:
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _timed(cmd: list[str], env: dict) -> tuple[float, float]:
    t, c = time.perf_counter(), _children_cpu()
    subprocess.run(cmd, capture_output=True, check=True, env=env)
    return time.perf_counter() - t, _children_cpu() - c


def correctness(data: Path, preds: list[Path]) -> dict:
    """Each run's per-item correctness, as ``compare`` scores it."""
    from medhorizon_tasks.benchmarks.medhorizon import release, scoring

    items = release.load_release(str(data))
    uids = [it.uid for it in items]
    return {p.stem: {r["uid"]: bool(r["correct"]) for r in scoring.score_predictions(
        items, scoring.read_predictions(str(p), uids))} for p in preds}


def bench_intervals(runs: dict, sample: int, out=print) -> None:
    import itertools

    from medhorizon_tasks.core import stats

    pairs = list(itertools.combinations(runs, 2))
    t = time.process_time()
    ours = stats.paired_differences(runs, pairs)
    ours_s = time.process_time() - t
    out(f"paired intervals of {len(pairs)} pairs ({len(runs)} runs x {len(next(iter(runs.values()))):,} items, "
        "10,000 resamples, seed 0), CPU seconds:")
    rows = [["ours: paired_differences, all pairs at once", f"{ours_s:.2f}", f"{1000 * ours_s / len(pairs):.1f}",
             "1.00"]]
    old = old_stats()
    if old is None:
        out(f"NOTE: the old statistics ({OLD_COMMIT}) are not in this checkout: left out")
    else:
        picked = random.Random(0).sample(range(len(pairs)), sample)
        t = time.process_time()
        before = [old.paired_difference(runs[pairs[k][0]], runs[pairs[k][1]]) for k in picked]
        per_pair = (time.process_time() - t) / sample
        rows.append([f"before ({OLD_COMMIT}): scipy.stats.bootstrap per pair ({sample} pairs timed)",
                     f"{per_pair * len(pairs):.2f}", f"{1000 * per_pair:.1f}", f"{per_pair * len(pairs) / ours_s:.1f}"])
        same = sum(b["ci95_bootstrap"] == ours[k]["ci95_bootstrap"] and b["difference"] == ours[k]["difference"]
                   for k, b in zip(picked, before))
        out(f"  same interval and difference as before: {same} of {sample} pairs")
    for line in fixture._table(["", f"{len(pairs)} pairs", "ms/pair", "before / ours"], rows):
        out("  " + line)


def bench_board(n_entries: int = 1000, out=print) -> None:
    """A leaderboard's test of every entry against its leader (``rank_board``), ours and the old pair by pair."""
    import numpy as np

    from medhorizon_tasks.core import stats

    rng = np.random.default_rng(0)
    entries = [{f"q{j}": bool(v) for j, v in enumerate(rng.uniform(size=fixture.N_ITEMS) < rng.uniform(0.3, 0.8))}
               for _ in range(n_entries)]
    runs = {f"entry {i + 1}": e for i, e in enumerate(entries)}
    pairs = [("entry 1", f"entry {i + 1}") for i in range(1, n_entries)]
    stats.mcnemar_tests(runs, pairs[:1])  # scipy.special imported before timing, as on a serving board
    t = time.process_time()
    ours = stats.mcnemar_tests(runs, pairs)
    ours_s = time.process_time() - t
    line = (f"McNemar of {n_entries - 1:,} entries against the leader ({fixture.N_ITEMS:,} items), CPU seconds: "
            f"ours (mcnemar_tests) {ours_s:.2f}")
    old = old_stats()
    if old is not None:
        t = time.process_time()
        before = [old.mcnemar_test(entries[0], e)["pvalue"] for e in entries[1:]]
        before_s = time.process_time() - t
        worst = max(abs(b - o["pvalue"]) / b for b, o in zip(before, ours))
        line += f", before ({OLD_COMMIT}, one pair at a time) {before_s:.2f} ({before_s / ours_s:.1f}x); " \
                f"largest relative difference of p {worst:.1e}"
    out(line)


def bench_cli(data: Path, preds: list[Path], folder: Path, reps: int, out=print) -> None:
    compare = ["compare", *map(str, preds), "--benchmark", "medhorizon", "--data", str(data), "--json"]
    scores = [["score", "--benchmark", "medhorizon", "--data", str(data), "--predictions", str(p), "--json"]
              for p in preds]
    wrapper = _WRAPPER.format(perf=str(Path(__file__).resolve().parent))
    caches = iter(folder / f"extractions{k}" for k in range(100))
    fixture.warm_up(data, preds, next(caches))  # bytecode written, as after an install

    def cold(cmd: list[str]) -> tuple[float, float]:
        return _timed(cmd, fixture._env("off"))

    def warm(prefix: list[str]) -> tuple[float, float, float, float]:
        """(wall, cpu) of the 25 scores + compare with a new cache, and of the compare alone."""
        env = fixture._env(next(caches))
        spent = [_timed([*prefix, *argv], env) for argv in scores]
        last = _timed([*prefix, *compare], env)
        return (sum(s[0] for s in spent) + last[0], sum(s[1] for s in spent) + last[1], *last)

    have_old = old_stats() is not None
    rows = []
    for label, prefix, n in ([("ours: medhorizon-tasks", [str(fixture.BIN)], reps),
                              ("ours: wrapper", [sys.executable, "-c", wrapper, "ours"], reps)]
                             + ([(f"before ({OLD_COMMIT}): wrapper", [sys.executable, "-c", wrapper, "before"], 1)]
                                if have_old else [])):
        c = [cold([*prefix, *compare]) for _ in range(n)]
        w = [warm(prefix) for _ in range(n)]
        med = lambda xs, i: statistics.median(x[i] for x in xs)  # noqa: E731
        rows.append([label, str(n), f"{med(c, 0):.2f}", f"{med(c, 1):.2f}", f"{med(w, 2):.2f}", f"{med(w, 3):.2f}",
                     f"{med(w, 0):.2f}", f"{med(w, 1):.2f}"])
        out(f"  ({label} done; load {_load()})")
    out(f"through the CLI: {len(preds)} runs x {fixture.N_ITEMS:,} items, seconds (median of the repetitions):")
    for line in fixture._table(["", "reps", "cold compare wall", "cpu", "warm compare wall", "cpu",
                                f"{len(preds)} score + warm compare wall", "cpu"], rows):
        out("  " + line)
    if have_old:
        ours, before = rows[1], rows[2]
        ratio = lambda i: float(before[i]) / float(ours[i])  # noqa: E731
        out(f"  before / ours (wrapper): cold compare {ratio(2):.1f}x wall, {ratio(3):.1f}x cpu; warm compare "
            f"{ratio(4):.1f}x wall, {ratio(5):.1f}x cpu; {len(preds)} score + warm compare {ratio(6):.1f}x wall, "
            f"{ratio(7):.1f}x cpu")
    cli = rows[0]
    out(f"  targets: cold compare < {COLD_TARGET_S:g} s: wall {cli[2]} s, cpu {cli[3]} s "
        f"({'met' if float(cli[2]) < COLD_TARGET_S else 'NOT met'} in wall time); "
        f"{len(preds)} score + warm compare < {WARM_TARGET_S:g} s: wall {cli[6]} s, cpu {cli[7]} s "
        f"({'met' if float(cli[6]) < WARM_TARGET_S else 'NOT met'} in wall time)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the paired intervals only, 5 pairs of the old path")
    parser.add_argument("--reps", type=int, default=3, help="repetitions of ours through the CLI (default 3)")
    args = parser.parse_args(argv)
    print(f"machine load (1-minute average) at the start: {_load()}")
    with tempfile.TemporaryDirectory(prefix="compare-speed-") as tmp:
        folder = Path(tmp)
        data, preds, _ = fixture.write_fixture(folder)
        os.environ["MEDHORIZON_EXTRACTION_CACHE"] = "off"  # this process scores without touching a cache
        bench_intervals(correctness(data, preds), 5 if args.quick else 20)
        bench_board()
        if not args.quick:
            print()
            bench_cli(data, preds, folder, args.reps)
    print(f"machine load (1-minute average) at the end: {_load()}")


if __name__ == "__main__":
    main()
