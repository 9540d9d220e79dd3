"""SurgHiBench phase/step task through the real lmms-eval CLI on the synthetic sample; `score` reads its output."""

import json

import pytest

from medhorizon_tasks.adapters.lmms_eval.runner import run_lmms_eval
from medhorizon_tasks.commands.main import main
from medhorizon_tasks.data.synthetic.surghi import build_surghi_sample

pytestmark = pytest.mark.e2e

TASK = "surghi_synthetic"
KEYS = ("phase_acc", "phase_f1", "step_acc", "step_f1", "multi_level", "both_wrong", "both_right",
        "step_given_phase", "sibling", "cousin", "semantic_step")
HALF_WIDTH = 4  # the task's default window: +/- 4 s at 1 FPS


@pytest.fixture(scope="module")
def runs(synthetic, tmp_path_factory):
    out = tmp_path_factory.mktemp("surghi")
    sample = build_surghi_sample()
    needle = run_lmms_eval("medhorizon_needle", [TASK], out / "needle")
    rand = run_lmms_eval("medhorizon_random", [TASK], out / "random")
    return sample, needle, rand


def _score(sample, samples_file, capsys) -> dict:
    assert main(["score", "--benchmark", "surghi", "--predictions", str(samples_file), "--data",
                 str(sample.annotations_path), "--hierarchy", str(sample.hierarchy_path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_score_reads_the_samples_and_agrees_with_lmms_eval(runs, capsys):
    sample, needle, rand = runs
    for run in (needle, rand):
        rep = _score(sample, run.samples[TASK], capsys)
        assert set(rep["datasets"]) == {"SynthTree", "SynthDAG"} and rep["overall"]["n_videos"] == 6
        for k in KEYS:
            assert run.metric(TASK, k) == pytest.approx(rep["overall"][k], abs=1e-12), k
    assert needle.metric(TASK, "multi_level") > 0.85 > 0.5 > rand.metric(TASK, "multi_level")
    assert rep["hierarchies"]["SynthDAG"]["tree_likeness"] == 0.5
    assert rep["hierarchies"]["SynthTree"]["tree_likeness"] == 1.0


def _codes_in_view(video: dict, t: int) -> list[int | None]:
    """The code each frame of the window shows (None: no code), on the 1 FPS grid."""
    out = []
    for k in range(-HALF_WIDTH, HALF_WIDTH + 1):
        if 0 <= t + k < 60:
            seg = next(s for s in video["segments"] if s["start"] <= t + k < s["end"])
            out.append(seg["code"] if seg["coded"] else None)
    return out


def test_needle_predictions_follow_what_each_window_shows(runs):
    """When the frame's own label is the code seen most often in its window, the needle is exact;
    with no code in view it refuses (invalid); otherwise it names a label that is in view (a
    sibling or cousin confusion at a segment boundary)."""
    sample, needle, _ = runs
    manifest = json.loads(sample.manifest_path.read_text())
    videos = {v["video"]: v for v in manifest["videos"]}
    lines = [json.loads(x) for x in needle.samples[TASK].read_text().splitlines()]
    assert len(lines) == manifest["frames"] == 120
    clean = refused = boundary = 0
    for rec in lines:
        r = rec["phase_acc"]
        video = videos[r["video"]]
        phases = list(json.loads(sample.hierarchy_path.read_text())[r["dataset"]]["phases"])
        seg = next(s for s in video["segments"] if s["start"] <= r["frame"] < s["end"])
        view = [c for c in _codes_in_view(video, r["frame"]) if c is not None]
        counts = {c: view.count(c) for c in view}
        if not view:
            refused += 1
            assert r["pred_phase"] is None and r["pred_step"] is None, r
        elif seg["coded"] and all(counts[seg["code"]] > n for c, n in counts.items() if c != seg["code"]):
            clean += 1
            assert (r["pred_phase"], r["pred_step"]) == (r["gt_phase"], r["gt_step"]), r
        else:
            boundary += 1
            in_view = {(s["phase"], s["step"]) for s in video["segments"] if s["coded"] and s["code"] in counts}
            assert (r["pred_phase"], r["pred_step"]) in in_view, r
            assert r["pred_phase"] in phases
        assert "Phases (choose exactly one):" in rec["input"]
    assert clean >= 60 and refused >= 1 and boundary >= 3, (clean, refused, boundary)
    rep = {}
    for rec in lines:  # every prompt lists the window's frames, the evaluated one at its centre
        t = rec["phase_acc"]["frame"]
        n = len([k for k in range(-HALF_WIDTH, HALF_WIDTH + 1) if 0 <= t + k < 60])
        assert f"You are given {n} frames" in rec["input"], rec["input"]
        rep[t] = n
    assert max(rep.values()) == 2 * HALF_WIDTH + 1


def test_leaderboard_from_the_lmms_eval_samples(runs, tmp_path, capsys):
    """The CLI path a user takes: samples -> submission -> validate -> build."""
    import csv

    sample, needle, rand = runs
    data = ["--data", str(sample.annotations_path), "--hierarchy", str(sample.hierarchy_path)]
    subs = []
    for name, run in (("needle", needle), ("random", rand)):
        sub = tmp_path / f"{name}.json"
        assert main(["leaderboard", "make", "--benchmark", "surghi", *data, "--predictions", str(run.samples[TASK]),
                     "--model", name, "--model-size", "n/a", "--fps", "1", "-o", str(sub)]) == 0
        subs.append(str(sub))
    assert main(["leaderboard", "validate", *subs, *data]) == 0
    assert capsys.readouterr().out.count("OK ") == 2
    assert main(["leaderboard", "build", *subs, *data, "-o", str(tmp_path / "board"), "--n-resamples", "200"]) == 0
    rows = list(csv.DictReader((tmp_path / "board" / "leaderboard.csv").open()))
    assert [r["model"] for r in rows] == ["needle", "random"]
    assert float(rows[0]["value"]) == pytest.approx(needle.metric(TASK, "multi_level"), abs=1e-6)
    assert float(rows[1]["value"]) == pytest.approx(rand.metric(TASK, "multi_level"), abs=1e-6)
    assert float(rows[0]["ci95_low"]) <= float(rows[0]["value"]) <= float(rows[0]["ci95_high"])
    # exact paired permutation test over 6 videos, the needle better on each: p = 2 / 2^6
    assert rows[0]["sig_vs_leader"] == "leader" and rows[1]["sig_vs_leader"] == "yes"
    assert float(rows[1]["p_vs_leader"]) == pytest.approx(2 / 64)
    # a submission on other data (one annotated frame relabelled) is refused with the reason
    other = tmp_path / "other.jsonl"
    lines = sample.annotations_path.read_text().splitlines()
    first = json.loads(lines[0])
    first["step"] = "exposure"
    other.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    assert main(["leaderboard", "validate", subs[0], "--data", str(other), "--hierarchy",
                 str(sample.hierarchy_path)]) == 1
    assert "data_version" in capsys.readouterr().err
