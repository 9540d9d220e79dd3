"""A run owns its outputs, through the real ``medhorizon-tasks run`` (lmms-eval CLI) against the local mock
provider (tests/openai_mock.py):

* a launcher killed with SIGKILL while its lmms-eval child waits for a reply: the child dies with it (before,
  it went on running and writing into a folder whose lock the kill had released);
* an earlier run's files dated a day ahead (clock skew, a copied folder, NFS), then a rerun of the same
  command that the provider stops at its first request (HTTP 401): the rerun is judged on what it wrote
  (nothing), not on the earlier files' dates (before: "lmms-eval run OK", exit 0); its FAILED line carries
  the provider's own message.
"""

import os
import signal
import subprocess
import sys
import time

import pytest

from medhorizon_tasks.adapters.lmms_eval.runner import OFFLINE_ENV
from openai_mock import MockProvider, answer, sleep, status

pytestmark = pytest.mark.e2e

TASK = "medhorizon_synthetic"
TIMEOUT_S = 900


def _command(out, base_url: str, limit: int = 2) -> list[str]:
    return [sys.executable, "-m", "medhorizon_tasks.commands.main", "run", "--model", "medhorizon_openai",
            "--model_args", f"model=gpt-5.4,base_url={base_url},api_key=test,num_concurrent=1,max_retries=1",
            "--tasks", TASK, "--limit", str(limit), "--output_path", str(out)]


def _env() -> dict:
    env = {**os.environ, **OFFLINE_ENV, "OMP_NUM_THREADS": "1"}
    for k in ("MEDHORIZON_DATA", "MEDHORIZON_VIDEO_ROOT", "MEDHORIZON_ALLOW_VIDEO_ERRORS"):
        env.pop(k, None)
    return env


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(x) for x in fh.read().split()]
    except OSError:
        return []


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"  # a zombie has ended
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc; the parent-death signal is Linux's")
def test_a_launcher_killed_with_sigkill_takes_its_lmms_eval_child_with_it(tmp_path):
    with MockProvider([sleep(300, answer("B"))], limit=1) as mock:
        proc = subprocess.Popen(_command(tmp_path / "out", mock.base_url), env=_env(), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        child = None
        try:
            deadline = time.monotonic() + TIMEOUT_S
            while not mock.bodies and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.2)  # the child is in the middle of the evaluation once its first request arrives
            assert mock.bodies, "the run never asked the provider"
            [child] = _children(proc.pid)
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            deadline = time.monotonic() + 60
            while _alive(child) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert not _alive(child), "the lmms-eval child outlived its launcher"
        finally:
            if proc.poll() is None:
                proc.kill()
            if child is not None and _alive(child):
                os.kill(child, signal.SIGKILL)


def test_a_rerun_is_judged_on_what_it_wrote_not_on_dates(tmp_path):
    out = tmp_path / "out"
    with MockProvider([answer("B"), answer("B"), status(401, "Incorrect API key provided: te**st.")],
                      limit=3) as mock:
        first = subprocess.run(_command(out, mock.base_url), env=_env(), capture_output=True, text=True,
                               timeout=TIMEOUT_S)
        assert first.returncode == 0, first.stderr[-3000:]
        ahead = time.time() + 86400
        for path in out.rglob("*"):
            os.utime(path, (ahead, ahead))
        rerun = subprocess.run(_command(out, mock.base_url), env=_env(), capture_output=True, text=True,
                               timeout=TIMEOUT_S)
    assert len(mock.bodies) == 3, "the rerun stopped at its first request"
    assert "run OK" not in rerun.stderr and rerun.returncode == 1, rerun.stderr[-3000:]
    [failed] = [line for line in rerun.stderr.splitlines() if "lmms-eval run FAILED" in line]
    assert "lmms-eval wrote no results" in failed
    assert "HTTP 401: Incorrect API key provided: te**st." in failed, "the provider's message on the FAILED line"
