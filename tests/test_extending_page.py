"""docs/extending.md's example model, installed from the page and run as the page says (issue 39, item 3).

The page's file blocks (first line ``# my_vlm/<path>``) are written into a folder, and the package is
installed the way an installer leaves it for Python: the folder on the path with a ``.dist-info`` whose
``entry_points.txt`` holds the page's ``pyproject.toml`` entry points (importlib.metadata's own mechanism,
which lmms-eval's model registry and the VLMEvalKit launcher read). The page's ``shell-session`` blocks are
then run in that environment, each command's shown lines checked as tests/test_docs_examples.py checks them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

from test_docs_examples import FENCE, _shows

PAGE = Path(__file__).resolve().parents[1] / "docs" / "extending.md"


def page_files() -> dict[str, str]:
    """``{path under my_vlm/: text}`` of the page's file blocks."""
    out = {}
    for m in FENCE.finditer(PAGE.read_text(encoding="utf-8")):
        first, _, rest = m.group(2).partition("\n")
        found = re.fullmatch(r"# my_vlm/(\S+)", first.strip())
        if found and m.group(1) in ("python", "toml"):
            out[found.group(1)] = m.group(2) if m.group(1) == "python" else rest
    return out


def page_commands(block_index: int) -> list[tuple[str, list[str]]]:
    blocks = [m.group(2) for m in FENCE.finditer(PAGE.read_text(encoding="utf-8")) if m.group(1) == "shell-session"]
    out: list[tuple[str, list[str]]] = []
    for line in blocks[block_index].splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def install(folder: Path) -> Path:
    """The page's package, installed into ``folder`` (returned: the path entry)."""
    files = page_files()
    assert set(files) == {"pyproject.toml", "my_vlm/registry.py", "my_vlm/lmms_models.py", "my_vlm/vlmeval_model.py"}
    site = folder / "site"
    for rel, text in files.items():
        if rel.startswith("my_vlm/"):
            (site / rel).parent.mkdir(parents=True, exist_ok=True)
            (site / rel).write_text(text)
    (site / "my_vlm" / "__init__.py").write_text("")
    project = tomllib.loads(files["pyproject.toml"])["project"]
    info = site / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n"
        for group, eps in project["entry-points"].items()))
    return site


@pytest.fixture(scope="module")
def installed(synthetic_build, tmp_path_factory):
    folder = tmp_path_factory.mktemp("extending")
    site = install(folder)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site), *[p for p in [env.get("PYTHONPATH")] if p]])
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["NO_COLOR"] = "1"
    env["LMUData"] = str(folder / "LMUData")  # VLMEvalKit's data folder: the test's own
    return folder, env


def run_block(index: int, cwd: Path, env: dict) -> list[str]:
    outputs = []
    for command, expected in page_commands(index):
        done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=1200)
        output = done.stdout + done.stderr
        assert done.returncode == 0, f"`{command}` exited {done.returncode}:\n{output[-4000:]}"
        missing = _shows(output, expected)
        assert missing is None, f"`{command}` did not print {missing!r}:\n{output[-4000:]}"
        outputs.append(output)
    return outputs


def test_the_page_names_its_files_and_commands():
    files = page_files()
    assert "class MyImageVLM(lmms)" in files["my_vlm/lmms_models.py"]
    assert "class MyVideoVLM(MyImageVLM)" in files["my_vlm/lmms_models.py"]
    assert "requested_size" in files["my_vlm/lmms_models.py"]
    assert [c.split()[:3] for c, _ in page_commands(0)] == [["medhorizon-tasks", "run", "--model"]] * 2 + \
        [["medhorizon-tasks", "score", "--predictions"]]


def test_the_example_models_run_through_lmms_eval_and_are_scored_as_the_page_says(installed):
    folder, env = installed
    run_block(0, folder, env)
    image = [json.loads(x) for x in (folder / "image.jsonl").read_text().splitlines()]
    video = [json.loads(x) for x in (folder / "video.jsonl").read_text().splitlines()]
    assert len(image) == len(video) == 88
    for r in image:
        assert r["model"] == "MyImageVLM" and r["task"] == "medhorizon_synthetic" and r["chronological"]
        assert 0 < r["frames"] <= 64 and len(r["timestamps"]) == r["frames"]
        assert r["timestamps"] == sorted(r["timestamps"]) and r["error"] is None
        assert all(max(w, h) <= 448 for w, h in r["sizes"])
    for r in video:
        assert r["model"] == "MyVideoVLM" and not r["chronological"], "the reversed order is marked"
        assert r["timestamps"] == sorted(r["timestamps"], reverse=True)
        assert r["sizes"] and all(max(w, h) == 32 for w, h in r["sizes"]), "decoded at the model's own size"


def test_the_example_model_runs_through_vlmevalkit_from_its_entry_point(installed):
    folder, env = installed
    (out,) = run_block(1, folder, env)
    assert "medhorizon-tasks: my_vlm_vlmeval x MedHorizon_Synthetic_cap64: Ov. under the default rule" in out
    records = [json.loads(x) for x in next((folder / "out" / "my_vlm_vlmeval").glob("*_records.jsonl")).read_text()
               .splitlines()]
    assert len(records) == 8 and all(r["raw_output"].startswith("The answer is ") for r in records)
