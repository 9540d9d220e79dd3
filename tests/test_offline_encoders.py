"""docs/surghibench.md's offline encoders (issue 39 item 7): the page's commands, run as written on tiny
checkpoints made here in the folders the page names, with the Hub switched off."""

import os
import subprocess
import sys
from pathlib import Path

from test_extending_page import FENCE, _shows
from tiny_encoders import build_hf_clip, build_open_clip_dir

PAGE = Path(__file__).resolve().parents[1] / "docs" / "surghibench.md"


def _commands() -> list[tuple[str, list[str]]]:
    block = next(m.group(2) for m in FENCE.finditer(PAGE.read_text(encoding="utf-8"))
                 if m.group(1) == "shell-session" and "surghi zeroshot" in m.group(2))
    out: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def test_the_offline_encoder_commands_run_as_the_page_says(surghi_sample, tmp_path):
    build_open_clip_dir(tmp_path / "clip-open_clip")
    build_hf_clip(tmp_path / "clip-transformers")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "MEDHORIZON_SYNTHETIC_DIR": str(surghi_sample.root.parent), "HF_HOME": str(tmp_path / "no-hub-cache")}
    commands = _commands()
    assert [c.split()[5] for c, _ in commands] == ["open_clip:local-dir:clip-open_clip", "hf:clip-transformers"]
    for command, expected in commands:
        assert command.startswith("HF_HUB_OFFLINE=1 ")
        done = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=900)
        output = done.stdout + done.stderr
        assert done.returncode == 0, output[-3000:]
        assert _shows(output, expected) is None, output[-3000:]
        assert "initialized randomly" not in output and "initialised randomly" not in output, "the weights were read"
        assert "nearly constant" in output
