"""The oldest supported lmms-eval (0.6.0), installed first, then this package with its ``lmms`` extra (issue 44):
pip keeps the user's lmms-eval, and the synthetic run through the real ``lmms-eval`` CLI writes results with an
accuracy. 0.6's ``TaskConfig`` has no ``reasoning_tags`` (the task YAMLs set it): the start-up drops it for this
package's tasks and says so in one line. Asserted on the files lmms-eval writes (it exits 0 when a task fails).

The venv is built from PyPI once and kept (tests/framework_venvs.py).
"""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from framework_venvs import lmms_eval_venv

pytestmark = pytest.mark.e2e

# the oldest supported; $MEDHORIZON_TEST_LMMS_EVAL names another release, or an lmms-eval git checkout's folder, to
# run the same checks against (the hand checks of docs/stacks.md)
OLDEST = os.environ.get("MEDHORIZON_TEST_LMMS_EVAL") or "0.6.0"


def _env(synthetic_dir: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    env.update({"MEDHORIZON_SYNTHETIC_DIR": synthetic_dir, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": ""})
    return env


@pytest.fixture(scope="module")
def oldest(synthetic_build, tmp_path_factory):
    """(venv, the CLI's completed process, its output folder, doctor's JSON and exit status)."""
    venv = lmms_eval_venv(OLDEST)
    env = _env(os.environ["MEDHORIZON_SYNTHETIC_DIR"])
    out = tmp_path_factory.mktemp("lmms-eval-oldest") / "out"
    cli = subprocess.run([str(venv / "bin" / "lmms-eval"), "--model", "medhorizon_needle", "--tasks",
                          "medhorizon_synthetic,medhorizon_synthetic_oracle", "--limit", "8", "--output_path", str(out), "--log_samples"],
                         capture_output=True, text=True, env=env, timeout=900)
    doctor = subprocess.run([str(venv / "bin" / "medhorizon-tasks"), "doctor", "--json"], capture_output=True,
                            text=True, env=env, timeout=300)
    return venv, cli, out, json.loads(doctor.stdout), doctor.returncode


def _wanted_version() -> str:
    """The version the stack's lmms-eval says it is: the release's, or the checkout's pyproject's."""
    if os.sep not in OLDEST:
        return OLDEST
    text = (Path(OLDEST) / "pyproject.toml").read_text()
    return re.search(r'^version\s*=\s*"([^"]+)"', text, re.M).group(1)


def test_pip_kept_the_users_lmms_eval(oldest):
    venv = oldest[0]
    shown = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "show", "lmms-eval"], capture_output=True,
                           text=True, check=True).stdout.splitlines()
    assert f"Version: {_wanted_version()}" in shown
    if os.sep in OLDEST:  # a checkout stays the editable checkout
        assert f"Editable project location: {OLDEST}" in shown, shown


def test_the_synthetic_run_writes_results_with_an_accuracy(oldest, synthetic):
    from medhorizon_tasks.benchmarks.medhorizon import scoring
    from medhorizon_tasks.benchmarks.medhorizon.release import load_release

    _, cli, out, _, _ = oldest
    results = sorted(out.rglob("*_results.json"))
    assert results, f"no results file; stderr tail:\n{cli.stderr[-3000:]}"
    res = json.loads(results[-1].read_text())["results"]
    assert res["medhorizon_synthetic_oracle"]["accuracy,none"] == pytest.approx(1.0)  # the evidence frames arrive
    uids = [it.uid for it in load_release(synthetic.data_path)]
    for task in ("medhorizon_synthetic", "medhorizon_synthetic_oracle"):
        samples = sorted(out.rglob(f"*_samples_{task}.jsonl"))
        assert samples and len(samples[-1].read_text().splitlines()) == 8, task
        preds = scoring.read_predictions(samples[-1], uids)
        ours = scoring.report(scoring.score_predictions([it for it in load_release(synthetic.data_path)
                                                         if it.uid in preds], preds))["overall"]
        assert ours["n"] == 8 and ours["accuracy"] == pytest.approx(res[task]["accuracy,none"]), task


def test_the_missing_task_field_is_said_once_at_start(oldest):
    cli = oldest[1]
    said = [line for line in cli.stderr.splitlines() if "has no TaskConfig field reasoning_tags" in line]
    assert len(said) == (1 if OLDEST.startswith("0.6") else 0), cli.stderr[-3000:]
    assert "unexpected keyword argument" not in cli.stderr


def test_doctor_in_the_oldest_stack(oldest):
    _, _, _, doctor, status = oldest
    lm = doctor["lmms_eval"]
    assert lm["version"] == _wanted_version() and lm["in_range"] and lm["task_folder_added"]
    assert {"medhorizon_synthetic", "sureon_synthetic_visual", "surghi_synthetic"} <= set(lm["tasks"])
    assert {"medhorizon_needle", "medhorizon_resume", "medhorizon_qwen2_5_vl"} <= set(lm["models"])
    assert ("medhorizon_openai" in lm["models_unavailable"]) == OLDEST.startswith("0.6")  # its helpers are 0.7's
    assert any("reasoning_tags" in line for line in lm["differs"]) == OLDEST.startswith("0.6")
    assert not doctor["vlmeval"]["installed"] and status == 0, doctor["problems"]
