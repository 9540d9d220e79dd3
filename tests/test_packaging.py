"""The installed package is complete, and the generated task YAMLs match their table."""

from pathlib import Path

import tomllib

from medhorizon_tasks.adapters.lmms_eval.runner import task_path
from medhorizon_tasks.benchmarks.medhorizon.diagnostics import DIAGNOSTICS, expected_yaml_files

ROOT = Path(__file__).resolve().parents[1]


def test_every_subpackage_is_listed_for_the_wheel():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    src = ROOT / "src"
    found = {".".join(p.parent.relative_to(src).parts) for p in src.rglob("__init__.py")}
    # the task YAMLs and the dataset card live at the top level and are installed as data packages
    assert found | {"medhorizon_tasks.task_yaml", "medhorizon_tasks.hf_dataset_card"} == listed


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
