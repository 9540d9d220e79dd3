"""The installed package is complete, and the generated task YAMLs match their table."""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from medhorizon_tasks.adapters.lmms_eval.runner import task_path
from medhorizon_tasks.benchmarks.medhorizon.diagnostics import DIAGNOSTICS, expected_yaml_files

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    """A normal (non-editable) wheel of this checkout, built as `pip install .` builds it."""
    out = tmp_path_factory.mktemp("wheel")
    # built from a copy of the sources: setuptools reuses a build/ folder, whose stale files (a module since
    # moved) would go into the wheel, and the checkout is left as it was
    src = tmp_path_factory.mktemp("sources") / "medhorizon-tasks"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".git", ".venv", "venv", "build", "dist", "*.egg-info",
                                                             "__pycache__", ".pytest_cache", ".hypothesis",
                                                             "medhorizon_demo"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    str(src)], check=True, capture_output=True)
    (whl,) = out.glob("medhorizon_tasks-*.whl")
    return whl


def test_the_wheel_holds_every_module_task_yaml_and_the_card(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    src = ROOT / "src"
    modules = {p.relative_to(src).as_posix() for p in src.rglob("*.py")}
    assert modules and modules <= names, sorted(modules - names)
    yamls = {f"medhorizon_tasks/task_yaml/{p.name}" for p in (ROOT / "task_yaml").iterdir() if p.is_file()
             and (p.suffix in {".yaml", ".jsonl"} or p.name.endswith("_yaml"))}
    assert yamls <= names, sorted(yamls - names)
    assert "medhorizon_tasks/hf_dataset_card/README.md" in names
    tables = {f"medhorizon_tasks/benchmarks/{b}/published.json" for b in ("medhorizon", "sureon", "surghi")}
    assert tables <= names, "the papers' published tables are package data"
    assert "medhorizon_tasks/benchmarks/surghi/zeroshot_prompts.json" in names  # the paper's MIPO prompts
    (eps,) = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
    encoders = zipfile.ZipFile(wheel).read(eps).decode().split("[medhorizon_tasks.zeroshot_encoders]\n")[1]
    assert [line.split(" = ")[0] for line in encoders.split("\n\n")[0].splitlines()] == ["surgclip", "synthetic_probe"]


def test_a_non_editable_install_imports_every_module_and_runs_the_command(wheel, tmp_path):
    """A fresh venv with the wheel installed (its dependencies seen through this environment's site-packages,
    without this checkout's editable finder): every module imports from the wheel, and the command runs."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    deps = [p for p in map(Path, sys.path) if p.name == "site-packages" and (p / "numpy").is_dir()]
    # a plain path line: the .pth files there (this checkout's editable install) are not run
    Path(site, "zz_deps.pth").write_text("\n".join(map(str, deps)) + "\n")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--no-deps", "-q", str(wheel)],
                   check=True, capture_output=True)
    code = ("import importlib, pkgutil, medhorizon_tasks as m\n"
            "assert m.__file__.startswith(%r), m.__file__\n"
            "bad = []\n"
            "for i in pkgutil.walk_packages(m.__path__, 'medhorizon_tasks.'):\n"
            "    try: importlib.import_module(i.name)\n"
            "    except ModuleNotFoundError as e:\n"
            "        if e.name not in {'llava'}: bad.append((i.name, e))\n"
            "    except Exception as e: bad.append((i.name, e))\n"
            "assert not bad, bad\n"
            "from medhorizon_tasks.benchmarks.published import published_rows\n"
            "assert [len(published_rows(b)) for b in ('medhorizon', 'sureon', 'surghi')] == [39, 158, 102]\n"
            "from medhorizon_tasks.benchmarks.surghi.prompts import shipped_prompts\n"
            "assert len(shipped_prompts()['MIPO']['steps']) == 8\n"
            "print(sum(1 for _ in pkgutil.walk_packages(m.__path__, 'medhorizon_tasks.')))\n") % site
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run([str(py), "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.strip().splitlines()[-1]) >= len(list((ROOT / "src").rglob("*.py"))) - 1
    helped = subprocess.run([str(venv / "bin" / "medhorizon-tasks"), "--help"], capture_output=True, text=True,
                            env=env, cwd=tmp_path)
    assert helped.returncode == 0 and "leaderboard" in helped.stdout, helped.stderr[-2000:]


def test_the_dataset_card_is_installed_with_the_package():
    from importlib.resources import files

    card = files("medhorizon_tasks.hf_dataset_card") / "README.md"
    assert card.read_text(encoding="utf-8").startswith("---\n")


def test_generated_task_yamls_are_in_sync():
    folder = task_path()
    for name, text in expected_yaml_files().items():
        assert (folder / name).read_text() == text, f"regenerate {name}: python -m medhorizon_tasks.benchmarks.medhorizon.diagnostics --write task_yaml"


def test_every_diagnostic_task_exists():
    names = {p.stem for p in task_path().glob("*.yaml")}
    for variants in DIAGNOSTICS.values():
        for v in variants:
            assert v.task(False) in names and v.task(True) in names
