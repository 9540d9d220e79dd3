"""Issue 44 without building a stack: the version facts read from a framework's files, the extras' ranges beside
them, ``doctor`` on an out-of-range lmms-eval and a shadowed vlmeval (distributions laid on ``sys.path`` as pip
lays them: a ``.dist-info`` folder), and the docs pointing every journey at ``doctor``."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from medhorizon_tasks.adapters.lmms_eval import versions as lmms
from medhorizon_tasks.adapters.vlmeval import versions as vlm

ROOT = Path(__file__).resolve().parents[1]


def _dist(site: Path, name: str, version: str, *, top: str | None = None, direct_url: dict | None = None) -> None:
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    if top:
        (info / "top_level.txt").write_text(top + "\n")
    if direct_url:
        (info / "direct_url.json").write_text(json.dumps(direct_url))


def _doctor(env_path: Path) -> tuple[dict, int]:
    env = {**os.environ, "PYTHONPATH": str(env_path)}
    done = subprocess.run([sys.executable, "-c", "import sys; from medhorizon_tasks.commands.main import main; "
                           "sys.exit(main(['doctor', '--json']))"], capture_output=True, text=True, env=env,
                          timeout=300)
    return json.loads(done.stdout), done.returncode


def test_version_facts_are_read_from_the_frameworks_files(tmp_path):
    """A 0.6-shaped lmms-eval tree: TaskConfig without reasoning_tags, no GenerationResult, no gemma4 wrapper."""
    root = tmp_path / "lmms_eval"
    (root / "api").mkdir(parents=True)
    (root / "__init__.py").write_text("")
    (root / "api" / "__init__.py").write_text("")
    (root / "api" / "task.py").write_text("class TaskConfig(dict):\n    task: str = None\n    metadata: dict = None\n")
    (root / "api" / "instance.py").write_text("class Instance:\n    pass\n")
    (root / "api" / "model.py").write_text("class lmms:\n    pass\n")
    (root / "models").mkdir()
    (root / "models" / "__init__.py").write_text("def get_model(name):\n    pass\n")
    (root / "models" / "registry_v2.py").write_text("class ModelManifest:\n    pass\n")
    assert lmms.missing_task_fields(lmms.task_config_fields(root)) == ["reasoning_tags"]
    problems = lmms.model_problems(root)
    assert problems["medhorizon_needle"] == [] and problems["medhorizon_random"] == []
    assert problems["medhorizon_resume"] == []  # it reads GenerationResult only where lmms-eval has it
    assert "lmms_eval.models.simple.gemma4" in problems["medhorizon_gemma4"]
    assert "lmms_eval.api.instance.GenerationResult" in problems["medhorizon_openai"]
    # the installed one (0.7.3) has everything
    assert lmms.missing_task_fields() == [] and not any(lmms.model_problems().values())


@pytest.mark.parametrize("found, inside", [("0.6.0", True), ("0.6.1", True), ("0.7", True), ("0.7.2", True),
                                           ("0.7.3", True), ("0.7.1", False), ("0.5.0", False), ("0.8.0", False), ("1.0", False)])
def test_the_lmms_eval_range(found, inside):
    assert lmms.in_range(found) is inside
    assert (lmms.range_problem(found) is None) is inside


def test_doctor_names_an_out_of_range_lmms_eval_and_a_shadowed_vlmeval(tmp_path):
    site = tmp_path / "site"
    _dist(site, "lmms-eval", "0.5.0")  # first on sys.path: what `pip show lmms-eval` would say
    checkout = tmp_path / "VLMEvalKit"
    (checkout / "vlmeval").mkdir(parents=True)
    (checkout / "vlmeval" / "__init__.py").write_text("")
    (checkout / "run.py").write_text("def main():\n    pass\n")
    _dist(site, "vlmeval", "0.1.0", direct_url={"url": f"file://{checkout}", "dir_info": {"editable": True}})
    doctor, status = _doctor(site)
    assert status == 1
    assert doctor["lmms_eval"]["version"] == "0.5.0" and not doctor["lmms_eval"]["in_range"]
    assert any("lmms-eval 0.5.0 is outside the supported range" in p for p in doctor["problems"])
    names = sorted(p["distribution"] for p in doctor["vlmeval"]["providers"])
    assert names == ["ms-vlmeval", "vlmeval"]  # the checkout beside the ms-vlmeval of this venv
    shadow = [p for p in doctor["problems"] if "two distributions provide the module vlmeval" in p]
    assert len(shadow) == 1 and "ms-vlmeval 0.0.20" in shadow[0] and str(checkout / "vlmeval") in shadow[0]
    assert f"takes {doctor['vlmeval']['runs']}" in shadow[0] and "shadowed" in shadow[0]
    assert doctor["vlmeval"]["runs"].startswith("ms-vlmeval")  # the checkout is not on sys.path: shadowed

    # the checkout on sys.path first: `import vlmeval` takes it, run.py is the checkout's root one
    doctor, status = _doctor(Path(f"{site}{os.pathsep}{checkout}"))
    assert doctor["vlmeval"]["runs"].startswith("vlmeval 0.1.0 (editable)")
    assert doctor["vlmeval"]["run_py"] == str(checkout / "run.py") and status == 1


def test_doctor_in_this_venv_is_clean():
    doctor, status = _doctor(Path(""))
    assert status == 0 and doctor["problems"] == []
    assert doctor["lmms_eval"]["in_range"] and "medhorizon_synthetic" in doctor["lmms_eval"]["tasks"]
    assert doctor["vlmeval"]["run_py"].endswith("vlmeval/run.py")
    assert doctor["optional"]["decoders"]["av"]["present"]


def test_run_py_is_found_in_the_package_or_beside_it(tmp_path):
    inside = tmp_path / "a" / "vlmeval"
    inside.mkdir(parents=True)
    (inside / "run.py").write_text("")
    assert vlm.run_script(inside) == inside / "run.py"
    beside = tmp_path / "b" / "vlmeval"
    beside.mkdir(parents=True)
    (beside.parent / "run.py").write_text("")
    assert vlm.run_script(beside) == beside.parent / "run.py"
    assert vlm.run_script(tmp_path / "c" / "vlmeval") is None


def test_an_import_failure_is_one_line_with_its_install_line():
    line = vlm.import_problem(ModuleNotFoundError("No module named 'rouge_score'", name="rouge_score"))
    assert "no module named 'rouge_score'" in line and "`pip install rouge_score`" in line and "\n" not in line


JOURNEYS = ["getting-started", "stacks", "medhorizon-lmms-eval", "models", "scaling", "vlmevalkit", "sureon",
            "surghibench", "data", "leaderboards", "hosting", "diagnostics", "selectors", "extending"]


@pytest.mark.parametrize("page", JOURNEYS)
def test_every_journey_page_points_to_doctor(page):
    text = (ROOT / "docs" / f"{page}.md").read_text()
    assert "medhorizon-tasks doctor" in text and ("stacks.md" in text or page == "stacks")


def test_the_stacks_page_is_in_the_nav_and_the_readme():
    assert "stacks.md" in (ROOT / "mkdocs.yml").read_text()
    readme = (ROOT / "README.md").read_text()
    assert "(docs/stacks.md)" in readme
    assert readme.index("```bash\napt-get update") < readme.index("docs/stacks.md")  # the first command stays first


def test_a_broken_release_is_outside_the_range_with_its_reason():
    assert "cannot build its task index" in lmms.range_problem("0.7.1")


def test_an_install_without_its_own_task_templates_is_named(tmp_path):
    """PyPI's lmms-eval 0.7.1 and 0.7.2 wheels ship no extensionless templates: no task loads, not even lmms-eval's
    own. Found from the files, so a git checkout calling itself 0.7.2 (which has them) is not named."""
    root = tmp_path / "lmms_eval"
    (root / "tasks" / "a").mkdir(parents=True)
    (root / "tasks" / "a" / "a.yaml").write_text("include: _default_template_yaml\ntask: a\n")
    assert lmms.missing_templates(root) == ["tasks/a/_default_template_yaml"]
    assert "cannot build its task index" in lmms.templates_problem(root)
    (root / "tasks" / "a" / "_default_template_yaml").write_text("output_type: generate_until\n")
    assert lmms.missing_templates(root) == [] and lmms.templates_problem(root) is None
