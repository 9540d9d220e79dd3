"""A loaded MedHorizon release against the published counts (check, every pre-flight), and the oracle's
fall-back items in its reports."""

import json

import pytest

from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.benchmarks.medhorizon.release_check import PUBLISHED, check_release
from medhorizon_tasks.commands.main import main
from published_release import published_items, write_release


def _check(capsys, data, *extra):
    rc = main(["check", "--benchmark", "medhorizon", "--data", str(data), "--no-videos", *extra])
    out = capsys.readouterr().out
    return rc, out


def test_the_published_release_passes_without_a_warning(tmp_path, capsys):
    data = write_release(tmp_path / "release.jsonl", published_items())
    check = check_release(load_release(data))
    assert check.matches and not check.subset and check.warnings() == []
    assert (check.n_items, check.n_videos) == (1253, 340)
    rc, out = _check(capsys, data)
    assert rc == 0 and "warning" not in out
    # --no-videos checked the data only, and says so (it said "all present, readable and matching the data")
    assert "1253 items load and validate; their 340 videos under" in out and "were not checked" in out
    assert "all present" not in out


def test_a_release_without_one_task_is_a_subset_and_each_difference_is_named(tmp_path, capsys):
    items = [it for it in published_items() if it["task"] != "LLS"]
    data = write_release(tmp_path / "release.jsonl", items)
    rc, out = _check(capsys, data)
    assert rc == 0, "a subset is allowed: the check warns, it does not stop"
    lines = out.splitlines()
    assert lines[1].startswith("warning: this MedHorizon release is a subset of the published release")
    assert "1,214 items over 340 videos, published 1,253 over 340" in lines[1]
    assert "  - 1,214 items, published 1,253 (Table 3)" in lines
    assert "  - task LLS items: 0, published 39 (appendix 6.3)" in lines
    assert not any(f"task {t} items" in out for t in PUBLISHED["task"] if t != "LLS"), "only LLS differs by task"
    answers = {t: sum(1 for it in items if it["answer"] == t) for t in "ABCD"}
    for letter, n in answers.items():
        assert f"  - answer {letter} items: {n:,}, published {PUBLISHED['answer'][letter]:,} (appendix 6.3)" in lines
    rc, out = _check(capsys, data, "--json")
    rel = json.loads(out)["release"]
    assert (rel["items"], rel["matches_published"], rel["subset"]) == (1214, False, True)
    assert "task LLS items: 0, published 39 (appendix 6.3)" in rel["differences"]


def test_a_release_with_more_than_published_is_not_called_a_subset(tmp_path, capsys):
    items = published_items()
    items.append({**items[-1], "uid": 5000, "task": "PR", "source": "Cholec80", "video": "extra"})
    check = check_release(load_release(write_release(tmp_path / "release.jsonl", items)))
    assert not check.subset
    assert check.warnings()[0].startswith("warning: this MedHorizon release is not the published release")
    assert "task PR items: 518, published 517 (appendix 6.3)" in check.differences
    assert any(d.startswith("source 'Cholec80' items: 1, not in the paper") for d in check.differences)


def test_every_preflight_says_it(tmp_path, capsys, monkeypatch):
    """The pre-flight of a run (lmms-eval start-up, the VLMEvalKit launcher) prints the same warning and goes on."""
    from medhorizon_tasks.runs.preflight import stop_unless_ready

    data = write_release(tmp_path / "release.jsonl", [it for it in published_items() if it["task"] != "WR"])
    monkeypatch.setenv("MEDHORIZON_DATA", str(data))
    stop_unless_ready({"medhorizon": False})
    err = capsys.readouterr().err
    assert "warning: this MedHorizon release is a subset" in err and "task WR items: 0, published 26" in err


@pytest.fixture()
def odd_evidence(tmp_path):
    """Three items: evidence windows, global support, and local support in a shape the loader does not read."""
    qa = [{"uid": 0, "question": "Q0?", "options": ["a", "b", "c", "d"], "answer": "A", "task_id": "PR",
           "evidence": {"support": "local", "frame_windows": [[10, 20]]}},
          {"uid": 1, "question": "Q1?", "options": ["a", "b", "c", "d"], "answer": "B", "task_id": "WR",
           "evidence": {"support": "global"}},
          {"uid": 2, "question": "Q2?", "options": ["a", "b", "c", "d"], "answer": "C", "task_id": "IR",
           "evidence": {"support": "local", "segments": [{"from": 3, "to": 9}]}}]
    p = tmp_path / "release.jsonl"
    p.write_text(json.dumps({"key": "v", "dataset": "GraSP", "video_path": "v.mp4", "num_frames": 100, "fps": 1.0,
                             "qa": qa}) + "\n")
    return p


def test_oracle_reports_count_and_list_the_items_that_fell_back(odd_evidence, tmp_path, capsys):
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"uid": u, "prediction": "A"}) + "\n" for u in range(3)))
    assert main(["score", "--benchmark", "medhorizon", "--data", str(odd_evidence), "--predictions", str(preds),
                 "--mode", "oracle", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["oracle_fallback"] == {"n": 2, "global": ["1"], "no_windows": ["2"]}
    assert main(["score", "--benchmark", "medhorizon", "--data", str(odd_evidence), "--predictions", str(preds),
                 "--mode", "oracle"]) == 0
    out = capsys.readouterr().out
    assert "oracle mode: 2 of 3 items were shown the 1 FPS + cap frames instead of evidence frames:" in out
    assert "1: global support: the whole procedure is the evidence (by design)" in out
    assert "1: local, proxy or unstated support but no evidence windows the loader could read: items 2" in out
    assert main(["score", "--benchmark", "medhorizon", "--data", str(odd_evidence), "--predictions", str(preds),
                 "--mode", "visual", "--json"]) == 0
    assert "oracle_fallback" not in json.loads(capsys.readouterr().out), "only the oracle mode falls back"
    rc, out = _check(capsys, odd_evidence)
    assert "warning: 1 item(s) have local, proxy or no evidence support but no evidence windows the loader could " \
           "read; in oracle mode they fall back to the 1 FPS + cap rule: items 2" in out


def test_the_embedded_synthetic_benchmark_is_named_as_such_in_one_line(synthetic, tmp_path):
    """Issue 39 item 4: `check --synthetic` and the leaderboard's notes call the embedded data what it is,
    in one line, instead of a partial download followed by twenty lines of counts."""
    import subprocess
    import sys

    name = "the embedded synthetic benchmark (88 items over 16 videos), not the release"
    r = subprocess.run([sys.executable, "-m", "medhorizon_tasks.commands.main", "check", "--benchmark", "medhorizon",
                        "--synthetic", "--no-videos"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert f"note: this is {name}: its scores test the pipeline" in r.stdout
    assert "partial download" not in r.stdout and "subset" not in r.stdout and "\n  - " not in r.stdout
    check = check_release(load_release(synthetic.data_path))
    assert check.synthetic and len(check.warnings()) == 1

    from medhorizon_tasks.benchmarks.data import load_benchmark_data
    from medhorizon_tasks.leaderboard import build_leaderboard, make_submission

    data = load_benchmark_data("medhorizon", synthetic.data_path)
    preds = tmp_path / "p.jsonl"
    preds.write_text("".join(json.dumps({"uid": it.uid, "prediction": it.answer}) + "\n" for it in data.items))
    (board,) = build_leaderboard([make_submission(data, preds, model="m", size="7B", fps=1, cap=64)],
                                 {"medhorizon": data}, n_resamples=20)
    assert board.notes[-1] == f"Not comparable with the MedHorizon paper's published rows: the data are {name}."
    # a release that is short of items keeps its subset warning and its counts
    short = check_release(load_release(write_release(tmp_path / "r.jsonl", published_items()[:-3])))
    assert not short.synthetic and short.subset and "subset of the published release" in short.warnings()[0]
