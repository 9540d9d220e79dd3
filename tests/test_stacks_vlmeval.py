"""VLMEvalKit installed as upstream says (a git checkout, ``pip install -e .``, distribution ``vlmeval``, ``run.py``
at the checkout root), then this package without a second ``vlmeval`` (issue 44).

The checkout is tests/upstream_vlmevalkit/ (upstream's layout and call shapes, no torch), installed editable into
a venv of its own that sees the oldest-lmms-eval venv's packages (tests/framework_venvs.py) through a ``.pth``
file: this package is there, ms-vlmeval is not. Asserted: the launcher calls the checkout's ``run.py`` and exits
0 with numbers; ``vlmeval`` is imported from the checkout; the checkout's own missing ``rouge_score`` is one line
with the install line, exit 2, no traceback, no lock left; ``doctor`` names the checkout, then a second provider
that shadows it (exit 1), and the launcher says which one runs.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from framework_venvs import lmms_eval_venv

pytestmark = pytest.mark.e2e

CHECKOUT = Path(__file__).parent / "upstream_vlmevalkit"
DATASET = "MedHorizon_Synthetic_cap64"
SITE = f"lib/python{sys.version_info.major}.{sys.version_info.minor}/site-packages"


def _pip(python: Path, *args: str) -> None:
    done = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "--no-deps", "-q",
                           *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


@pytest.fixture(scope="module")
def stack(synthetic_build, tmp_path_factory):
    """(python of the venv, the checkout, env without rouge_score, env with it)."""
    base = lmms_eval_venv("0.6.0")
    tmp = tmp_path_factory.mktemp("vlmeval-git")
    checkout = tmp / "VLMEvalKit"
    shutil.copytree(CHECKOUT, checkout)
    venv = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    # this package and its requirements: the base venv's site folder, its own .pth files (the editable install of
    # this package) processed too
    (venv / SITE / "zz_base.pth").write_text(f"import site; site.addsitedir({str(base / SITE)!r})\n")
    python = venv / "bin" / "python"
    _pip(python, "-e", str(checkout))
    stub = tmp / "stub"  # the module upstream imports without requiring it, for the runs that have it
    (stub / "rouge_score").mkdir(parents=True)
    (stub / "rouge_score" / "__init__.py").write_text("")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update({"MEDHORIZON_SYNTHETIC_DIR": os.environ["MEDHORIZON_SYNTHETIC_DIR"], "LMUData": str(tmp / "LMUData"),
                "HF_HUB_OFFLINE": "1"})
    return python, checkout, env, {**env, "PYTHONPATH": str(stub)}


def _launch(stack, env, work: Path, *extra: str) -> subprocess.CompletedProcess:
    python = stack[0]
    return subprocess.run([str(python), "-m", "medhorizon_tasks.adapters.vlmeval.launch", "--model",
                           "medhorizon_needle", "--data", DATASET, "--work-dir", str(work), "--limit", "8", *extra],
                          capture_output=True, text=True, env=env, timeout=900)


def _doctor(stack, env) -> tuple[dict, int]:
    done = subprocess.run([str(stack[0]), "-c", "import sys; from medhorizon_tasks.commands.main import main; "
                           "sys.exit(main(['doctor', '--json']))"], capture_output=True, text=True, env=env,
                          timeout=300)
    return json.loads(done.stdout), done.returncode


def test_the_checkouts_run_py_runs_and_gives_numbers(stack, tmp_path):
    python, checkout, _, env = stack
    done = _launch(stack, env, tmp_path / "out")
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"medhorizon_needle x {DATASET}:" in done.stderr and "Traceback" not in done.stderr
    report = json.loads((tmp_path / "out" / "medhorizon_needle" / f"medhorizon_needle_{DATASET}_report.json")
                        .read_text())
    assert report["overall"]["n"] == 8 and 0.0 <= report["overall"]["accuracy"] <= 1.0
    where = subprocess.run([str(python), "-c", "import vlmeval; print(vlmeval.__file__)"], capture_output=True,
                           text=True, env=env, check=True).stdout.strip()
    assert Path(where).resolve().is_relative_to(checkout.resolve())


def test_the_checkouts_missing_import_is_one_line(stack, tmp_path):
    done = _launch(stack, stack[2], tmp_path / "out")
    assert done.returncode == 2, done.stderr[-3000:]
    lines = [line for line in done.stderr.splitlines() if "rouge_score" in line]
    assert len(lines) == 1 and "pip install rouge_score" in lines[0], done.stderr
    assert "Traceback" not in done.stderr
    assert not [p for p in tmp_path.rglob("*") if p.name.endswith(".lock")]


def test_doctor_names_the_checkout_then_a_shadowing_second_vlmeval(stack, tmp_path):
    python, checkout, _, env = stack
    doctor, status = _doctor(stack, env)
    vl = doctor["vlmeval"]
    assert [(p["distribution"], p["editable"]) for p in vl["providers"]] == [("vlmeval", True)]
    assert Path(vl["run_py"]) == checkout / "run.py" and status == 0, doctor["problems"]

    # a second distribution of the module vlmeval, as ms-vlmeval installs it (run.py inside the package)
    second = tmp_path / "ms-vlmeval"
    shutil.copytree(CHECKOUT / "vlmeval", second / "vlmeval")
    shutil.copy(CHECKOUT / "run.py", second / "vlmeval" / "run.py")
    (second / "setup.py").write_text("from setuptools import setup\nsetup(name='ms-vlmeval', version='0.0.20', "
                                     "packages=['vlmeval', 'vlmeval.dataset', 'vlmeval.vlm'])\n")
    _pip(python, str(second))
    try:
        doctor, status = _doctor(stack, env)
        names = sorted(p["distribution"] for p in doctor["vlmeval"]["providers"])
        assert names == ["ms-vlmeval", "vlmeval"] and status == 1
        assert any("two distributions provide the module vlmeval" in p and "shadowed" in p
                   for p in doctor["problems"]), doctor["problems"]
        done = _launch(stack, env, tmp_path / "out")
        said = [line for line in done.stderr.splitlines() if "two distributions provide the module vlmeval" in line]
        assert len(said) == 1 and f"takes {doctor['vlmeval']['runs']}" in said[0], done.stderr[-3000:]
    finally:
        subprocess.run([str(python), "-m", "pip", "uninstall", "-y", "-q", "ms-vlmeval"], check=True)
