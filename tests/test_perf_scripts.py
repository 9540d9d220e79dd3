"""The speed scripts in ``perf/`` run, in their smallest settings, and print the rows the README reports.

They are scripts, not part of the package, so nothing else imports them: a rename in the package broke
``perf/scoring_speed.py``'s breakdown (it wrapped a function scoring no longer calls) and no test saw it.
(``perf/decode_speed.py`` has its own end-to-end test in ``test_video.py``.) Times are printed, never
asserted: only that each number is there and that the work counted is the work claimed.

Also here: what a command's start costs. A command imports its own module only (``commands/main.py``'s
COMMANDS; ``tests/test_cli.py`` checks that), so a heavy import at the top of a command module is paid by
every run and ``--help`` of that command (scikit-learn, when every parser was built at start-up, made each
``score`` 1.4 s slower, 43 s instead of 10 s for the 25 commands of ``scoring_speed.py``).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("sklearn", "scipy", "pandas", "torch", "statsmodels", "av", "matplotlib", "transformers")


def _script(name: str, *args: str, timeout: int = 900) -> str:
    res = subprocess.run([sys.executable, str(ROOT / "perf" / name), *args], capture_output=True, text=True,
                         timeout=timeout, cwd=ROOT)
    assert res.returncode == 0, f"{name} {' '.join(args)} exited {res.returncode}:\n{res.stderr[-3000:]}"
    return res.stdout


def test_scoring_speed_prints_every_extractor_and_where_the_time_goes():
    out = _script("scoring_speed.py", "--quick")
    for name in ("ours", "authors'", "lmms-eval"):
        assert re.search(rf"^  {re.escape(name)} +[\d,]+ +[\d.]+ +[\d.]+", out, re.M), name
    # the simulated model's meant letter is what ours reads, on every output
    assert re.search(r"^  ours +100\.0% .* 100\.0%$", out, re.M)
    assert re.search(r"^  in process: cli\.main x 26 \(wall\) +[\d.]+ +[\d.]+ +[\d.]+ +[\d.]+$", out, re.M)
    # the breakdown times both extractions the score command runs, and they do take time
    spent = dict(re.findall(r"^  (extraction \(.*?\)) +([\d.]+) +\d+%$", out, re.M))
    assert set(spent) == {"extraction (ours: extract_choice)", "extraction (authors' rule, beside)"}
    assert float(spent["extraction (ours: extract_choice)"]) > 0
    assert "slowest imports of a score command" in out
    # every command's --help is timed, nested ones included
    for argv in ("--help", "score --help", "surghi zeroshot --help", "leaderboard build --help"):
        assert re.search(rf"^  medhorizon-tasks {re.escape(argv)} +[\d.]+$", out, re.M), argv


def test_compare_speed_times_the_paired_intervals_beside_the_old_path_with_the_same_numbers():
    out = _script("compare_speed.py", "--quick")
    assert re.search(r"^  ours: paired_differences, all pairs at once +[\d.]+ +[\d.]+ +1\.00$", out, re.M), out
    assert re.search(r"^machine load \(1-minute average\) at the start: \d+\.\d\d on \d+ cores$", out, re.M), out
    assert re.search(r"^McNemar of 999 entries against the leader \(1,253 items\), CPU seconds: ours \(mcnemar_tests\) "
                     r"[\d.]+", out, re.M), out
    # the old path (scipy.stats.bootstrap per pair, from git) timed in the same run, with the same intervals;
    # a checkout without that commit (a shallow clone) says so instead
    if subprocess.run(["git", "cat-file", "-e", "961713b^{commit}"], cwd=ROOT, capture_output=True).returncode:
        assert "NOTE: the old statistics (961713b) are not in this checkout: left out" in out
        return
    assert re.search(r"^  before \(961713b\): scipy\.stats\.bootstrap per pair \(5 pairs timed\) +[\d.]+ +[\d.]+ "
                     r"+[\d.]+$", out, re.M), out
    assert "  same interval and difference as before: 5 of 5 pairs" in out
    # the board's p-values: the old ones were statsmodels' to 1e-12, not bit for bit
    assert re.search(r", before \(961713b, one pair at a time\) [\d.]+ \([\d.]+x\); largest relative difference of p "
                     r"\d\.\de-1[2-9]$", out, re.M), out


def test_zeroshot_speed_counts_one_decode_and_one_encode_per_distinct_frame():
    out = _script("zeroshot_speed.py", "--repeat", "1")
    assert re.search(r"^  ours \(surghi zeroshot\) +1\.00 +1\.00 +[\d.]+ +1\.00$", out, re.M), out
    assert re.search(r"^  naive per-window loop +16\.00 +16\.00 +[\d.]+ +[\d.]+$", out, re.M), out
    assert re.search(r"^same labels: (\d+) of \1$", out, re.M), out


def test_pipeline_speed_reports_the_overlap_and_one_decode_per_plan(tmp_path):
    out = _script("pipeline_speed.py", "--quick", "--size", "128x72", "--seconds", "12", "--delay", "0.02",
                  "--directory", str(tmp_path))
    for name in ("one process", "two processes"):
        assert re.search(rf"^{name}: 12 requests over 3 plans; model [\d.]+ s, decode [\d.]+ s, wall [\d.]+ s$",
                         out, re.M), out
    assert len(re.findall(r"^  wall / max\(model, decode\): \d+\.\d\dx \((met|over 1.1x by .*)\); "
                          r"wall / serial sum: \d+\.\d\dx$", out, re.M)) == 2, out
    # several questions per video, one decode per distinct plan, in either process layout
    assert re.findall(r"^  decodes per distinct plan: (\d+\.\d\d)$", out, re.M) == ["1.00", "1.00"], out
    # the overlap measured past the first plan's decode, which every order waits for
    assert len(re.findall(r"^  wall / \(first decode \+ max\(model, decode\)\): \d+\.\d\dx \((met|over 1.05x by "
                          r"\d+\.\d\dx)\); first decode \d+\.\d\d s$", out, re.M)) == 2, out
    assert re.search(r"^  machine load \(1-minute average\) at the start \d+\.\d\d, at the end \d+\.\d\d, on \d+ "
                     r"cores$", out, re.M), out  # beside the two-process run


def test_blur_speed_reports_each_detector_and_the_pass():
    out = _script("blur_speed.py", "--quick")
    for row in ("text", "faces", "pass", "rapidocr_default", "decode"):
        assert re.search(rf"^ +{row}: +[\d.]+ ms/frame", out, re.M), row
    blurred = re.search(r"regions blurred: (\d+) in (\d+) frames", out)
    assert blurred and int(blurred[1]) > 0  # the synthetic frames carry captions and faces: something is found


def test_file_identity_speed_reports_the_first_read_and_the_remembered_one():
    out = _script("file_identity_speed.py", "--mib", "8", "--repeat", "1")
    assert re.search(r"^first identity \(read \+ XXH3-128\): [\d.]+ s = [\d.]+ GB/s", out, re.M), out
    assert re.search(r"^identity of the unchanged file again: [\d.]+ us", out, re.M), out
    assert re.search(r"^from the memo database \(a new process\): [\d.]+ us per file", out, re.M), out


def test_leaderboard_speed_reports_the_rates_the_readers_the_restart_and_builds_same_numbers():
    out = _script("leaderboard_speed.py", "--quick")
    assert re.search(r"^sqlite, 10 submissions \([\d.]+ MiB each\):$", out, re.M), out
    assert re.search(r"^  accepted, 1 worker, 1 client: 5 in [\d.]+ s = [\d.]+ submissions/s$", out, re.M), out
    assert re.search(r"^  accepted, 4 workers, 4 clients: 5 in [\d.]+ s = [\d.]+ submissions/s$", out, re.M), out
    assert re.search(r"^  50 readers x 4 GET /api/board on B: median [\d.]+ s, 90th percentile [\d.]+ s$", out, re.M), out
    assert re.search(r"^  leaderboard build of the 10 files: wall [\d.]+ s \(cpu [\d.]+ s\); build / served: first "
                     r"board after a restart [\d.]+x, median under 50 readers [\d.]+x", out, re.M), out
    # the work timed is the work claimed: accepted by one process, on the other's next board; the restarted
    # board is the one served before the kill; build's numbers
    assert "  accepted by B on A's next board: yes" in out
    assert re.search(r"^  A after a SIGKILL and a restart: first GET /api/board [\d.]+ s; the board before the kill: "
                     r"yes$", out, re.M), out
    assert "  same numbers as build (rank, value, CI, Holm p): 10 of 10 entries" in out
    assert re.search(r"^load: [\d.]+ \(1-minute\)", out, re.M), out


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["score", "--help"], ["compare", "--help"],
                                  ["protocol", "--help"], ["leaderboard", "build", "--help"], ["diagnose", "--help"],
                                  ["prepare-frames", "--help"], ["plot", "--help"], ["check", "--help"],
                                  ["videos", "--help"], ["build-dataset", "--help"], ["demo", "--help"]])
def test_starting_a_command_imports_no_heavy_library(argv):
    code = ("import sys\nfrom medhorizon_tasks.commands.main import main\n"
            f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules), file=sys.stderr)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stderr.strip().splitlines()[-1] == "[]", res.stderr


def test_scoring_plain_predictions_imports_no_numpy(tmp_path):
    """A whole ``score`` of a release and a predictions file (what scoring_speed.py times 25 times) runs without
    numpy (0.1 s of each command's start here: the oracle's frame planner brought it), nor any library of HEAVY;
    ``compare`` (McNemar, Holm, paired intervals) with numpy and scipy.special (McNemar's chi-square tail as
    statsmodels computes it) but without scipy.stats (0.5 s more) or any other of HEAVY, when, as between real
    models' runs, every pair differs on 25 items or more (fewer: scipy.stats' exact binomial tail)."""
    release = tmp_path / "release.jsonl"
    qa = [{"uid": k, "question": f"q{k}", "options": ["Preparation", "Dissection", "Clipping", "Closure"],
           "answer": "ABCD"[k % 4], "task_id": "PR"} for k in range(40)]
    release.write_text(json.dumps({"key": "v0", "dataset": "AutoLaparo", "video_path": "a/v0.mp4", "num_frames": 600,
                                   "fps": 1.0, "duration_seconds": 600.0, "qa": qa}) + "\n")
    preds, right = tmp_path / "run.jsonl", tmp_path / "right.jsonl"
    preds.write_text("".join(json.dumps({"uid": k, "prediction": f"The answer is {'ABCD'[k % 3]}."}) + "\n"
                             for k in range(40)))  # right on 10 items
    right.write_text("".join(json.dumps({"uid": k, "prediction": "ABCD"[k % 4]}) + "\n" for k in range(40)))
    compare_heavy = tuple(m for m in HEAVY if m != "scipy") + ("scipy.stats",)
    code = ("import sys, contextlib, io\nfrom medhorizon_tasks.commands.main import main\n"
            "def loaded(names):\n    return sorted(m for m in names if m in sys.modules)\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    assert main(['score', '--benchmark', 'medhorizon', '--data', {str(release)!r}, '--predictions', "
            f"{str(preds)!r}, '--json']) == 0\n"
            f"    print(loaded({('numpy', *HEAVY)!r}), file=sys.stderr)\n"
            f"    assert main(['compare', {str(preds)!r}, {str(right)!r}, '--labels', 'a,b', '--data', {str(release)!r}])"
            " == 0\n"
            f"    print(loaded({compare_heavy!r}), file=sys.stderr)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stderr.strip().splitlines()[-2:] == ["[]", "[]"], res.stderr
