"""The oracle task shows every listed evidence image (issue 40, item 4; MedHorizon section 8 RQ2: "the oracle
setting uses the variable number of available evidence images for each item"), through the real commands.

One `medhorizon-tasks run` of the random probe on ``medhorizon_oracle`` over a release of one synthetic video
whose items list 3 and 100 evidence images, and two fallback items (evidence windows only; no evidence), the
probe recording how many images each request carried; then `score` on the samples file. The cap (64) bounds
the fallbacks only, and the report says what each kind of item was shown.
"""

import json
import os
import subprocess
import sys

import pytest

from medhorizon_tasks.adapters.lmms_eval.runner import OFFLINE_ENV

pytestmark = pytest.mark.e2e

TASK = "medhorizon_oracle"
THREE = [100, 700, 1300]
HUNDRED = list(range(0, 1500, 15))  # every 3 s of the 300 s video: 100 distinct frames
EVIDENCE = [{"support": "local", "images": THREE}, {"support": "local", "images": HUNDRED},
            {"support": "local", "frame_windows": [[0, 1499]]},  # the whole video: 300 frames at 1 FPS -> 64
            {"support": "global"}]                                 # no evidence: the whole video's, capped -> 64
EXPECTED = [3, 100, 64, 64]


def _cli(args, env):
    return subprocess.run([sys.executable, "-m", "medhorizon_tasks.commands.main", *args], env=env,
                          capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def oracle_run(synthetic, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("oracle_images")
    records = [json.loads(x) for x in synthetic.data_path.read_text().splitlines()]
    rec = next(r for r in records if r["num_frames"] == 1500 and r["fps"] == 5.0)  # a 300 s video at 5 fps
    template = rec["qa"][0]
    rec = {**rec, "qa": [{**template, "uid": f"img{k}", "evidence": ev} for k, ev in enumerate(EVIDENCE)]}
    data = tmp / "release.jsonl"
    data.write_text(json.dumps(rec) + "\n")
    env = {**os.environ, **OFFLINE_ENV, "OMP_NUM_THREADS": "1", "MEDHORIZON_DATA": str(data),
           "MEDHORIZON_VIDEO_ROOT": str(synthetic.video_root)}
    for k in ("MEDHORIZON_ALLOW_VIDEO_ERRORS", "MEDHORIZON_FRAME_CACHE"):
        env.pop(k, None)
    received = tmp / "received.jsonl"
    out = tmp / "out"
    run = _cli(["run", "--model", "medhorizon_random", "--model_args", f"record_path={received}", "--tasks", TASK,
                "--output_path", str(out), "--log_samples"], env)
    samples = sorted(out.rglob(f"*_samples_{TASK}.jsonl"))
    assert run.returncode == 0 and samples and received.exists(), run.stderr[-3000:]
    score = _cli(["score", "--benchmark", "medhorizon", "--data", str(data), "--predictions", str(samples[-1])], env)
    assert score.returncode == 0, score.stderr[-3000:]
    by_doc = {json.loads(x)["doc_id"]: json.loads(x) for x in samples[-1].read_text().splitlines()}
    shown = {by_doc[r["doc_id"]]["accuracy"]["uid"]: r["n_images"]
             for r in map(json.loads, received.read_text().splitlines())}
    return shown, by_doc, score.stdout


def test_every_listed_evidence_image_is_shown_and_the_cap_bounds_the_fallbacks_only(oracle_run):
    shown, by_doc, _ = oracle_run
    assert shown == {f"img{k}": n for k, n in enumerate(EXPECTED)}
    records = {s["accuracy"]["uid"]: s["accuracy"] for s in by_doc.values()}
    assert [records[f"img{k}"]["oracle_frames"] for k in range(4)] == EXPECTED
    assert [records[f"img{k}"]["oracle_source"] for k in range(4)] == ["images", "images", "windows", "fps_cap"]


def test_score_reports_each_kind_with_its_frames(oracle_run):
    _, _, report = oracle_run
    assert ("oracle: 2 items shown the release's listed evidence images, every one (the paper's oracle): "
            "frames min 3 / median 51.5 / max 100") in report
    assert ("oracle: 1 item shown the package's fallback: the evidence windows' 1 FPS frames, thinned to the cap: "
            "frames min 64 / median 64 / max 64") in report
    assert ("oracle: 1 item shown the package's fallback: no evidence listed, the whole video's 1 FPS frames "
            "thinned to the cap: frames min 64 / median 64 / max 64") in report
