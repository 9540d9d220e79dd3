"""Every shell example on the README and the docs/ pages runs as written.

A fenced ``bash`` or ``console`` block either runs here, on the embedded synthetic data with the probe models,
in a temporary folder (the blocks of one page in order, in one folder, so that a later block can read what an
earlier one wrote), or carries a visible marker on the line before it: ``**Needs a GPU ...**``, ``**Needs a
download ...**`` or ``**Needs an API key ...**``. At most a fifth of the blocks may be marked. The README's
two set-up commands are the ones ``.ci/run`` runs, word for word (CI runs them; running them here would
install the package and run this suite again).

In a ``console`` block, lines starting with ``$ `` are commands; the lines after one are what it prints, and
each of them must appear in its output, in order (``...`` alone stands for any lines, inside a line for any
text; runs of spaces are one space). A shown line is never a field with its value left blank (``data:``): a
reader takes that for what the command prints.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
MARK = re.compile(r"^\*\*Needs (a GPU|a download|an API key)\b")
SHELL = {"bash", "console", "sh", "shell"}
SETUP = "Set-up"


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    text: str
    mark: str | None   # why it is not run here ("a GPU", "a download", "an API key"), or None

    def __str__(self):
        try:
            return f"{self.page.relative_to(ROOT)}:{self.line}"
        except ValueError:
            return f"{self.page}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for m in FENCE.finditer(text):
        if m.group(1) not in SHELL:
            continue
        before = [x for x in text[:m.start()].splitlines() if x.strip()]
        mark = MARK.match(before[-1]) if before else None
        found.append(Block(page, text.count("\n", 0, m.start()) + 1, m.group(1), m.group(2),
                           mark.group(1) if mark else None))
    return found


ALL = [b for p in PAGES for b in blocks(p)]


def _setup_blocks():
    readme = [b for b in ALL if b.page.name == "README.md"]
    return readme[:2]


def _commands(block: Block) -> list[tuple[str, list[str]]]:
    """(command, expected output lines) of a block: a bash block is one command; a console block is split."""
    if block.lang != "console":
        return [(block.text, [])]
    out: list[tuple[str, list[str]]] = []
    for line in block.text.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out and out[-1][0].endswith("\\") and not out[-1][1]:
            out[-1] = (out[-1][0] + "\n" + line, [])
        elif out:
            out[-1][1].append(line)
    return out


def _squash(s: str) -> str:
    return re.sub(r"\s+", " ", s).strip()


def _matcher(want: str):
    """A shown line as a test of an output line: ``...`` inside it stands for any text (a path that differs
    from machine to machine: ``data:   .../medhorizon_synthetic.jsonl``); the rest is matched as it is."""
    if "..." not in want:
        return lambda line: want in line
    pattern = re.compile(".*?".join(re.escape(part) for part in want.split("...")))
    return lambda line: pattern.search(line) is not None


def _shows(output: str, expected: list[str]) -> str | None:
    """None when every expected line is in the output in order, else the first line that is not."""
    lines = [_squash(x) for x in output.splitlines()]
    at = 0
    for want in (_squash(x) for x in expected):
        if not want or want == "...":
            continue
        match = _matcher(want)
        while at < len(lines) and not match(lines[at]):
            at += 1
        if at == len(lines):
            return want
        at += 1
    return None


def test_every_page_has_its_blocks_found():
    assert len(ALL) >= 20
    assert all(b.text.strip() for b in ALL)


def test_at_most_a_fifth_of_the_blocks_are_marked():
    marked = [b for b in ALL if b.mark]
    assert len(marked) * 5 <= len(ALL), [str(b) for b in marked]


def test_the_readme_set_up_commands_are_what_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    install, tests = _setup_blocks()
    assert install.text.strip() in ci and tests.text.strip() in ci


RUN = [b for b in ALL if not b.mark and b not in _setup_blocks()]


@pytest.fixture(scope="module")
def example_env(synthetic_build, surghi_sample):
    """The suite's synthetic builds (``MEDHORIZON_SYNTHETIC_DIR``, set by the fixture, is inherited), this
    interpreter's commands first on the PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["NO_COLOR"] = "1"
    return env


SENTINEL = "@@medhorizon-docs-example {}@@"


def _script(commands: list[str]) -> str:
    """One bash script for a block: its commands in order in one shell (an ``export`` holds for the rest of
    the block), each output preceded by a sentinel line, stopping at the first command that fails."""
    lines = ["set -euo pipefail", "exec 2>&1"]
    for k, command in enumerate(commands):
        lines += [f"echo '{SENTINEL.format(k)}'", command]
    return "\n".join(lines)


def run_block(block: Block, cwd: Path, env: dict) -> None:
    """Run one block in ``cwd`` and check what each command printed against what the page shows."""
    commands = _commands(block)
    done = subprocess.run(["bash", "-c", _script([c for c, _ in commands])], cwd=cwd, env={**env, "HOME": str(cwd)},
                          capture_output=True, text=True, timeout=1200)
    parts = re.split(r"^@@medhorizon-docs-example (\d+)@@$", done.stdout, flags=re.M)
    outputs = {int(k): text for k, text in zip(parts[1::2], parts[2::2])}
    last = max(outputs, default=-1)
    assert done.returncode == 0 and last == len(commands) - 1, (
        f"{block}: `{commands[max(last, 0)][0]}` exited {done.returncode}:\n{done.stdout[-4000:]}")
    for k, (command, expected) in enumerate(commands):
        missing = _shows(outputs[k], expected)
        assert missing is None, f"{block}: `{command}` did not print {missing!r}:\n{outputs[k][-4000:]}"


@pytest.mark.e2e
@pytest.mark.parametrize("page", sorted({b.page for b in RUN}), ids=lambda p: p.name)
def test_the_pages_examples_run_as_written(page, example_env, tmp_path):
    for block in (b for b in RUN if b.page == page):
        run_block(block, tmp_path, example_env)


def test_no_shown_line_is_a_field_left_blank():
    """docs/getting-started.md showed `synthetic` printing ``data:`` and ``videos:`` with nothing after them
    (issue 45 item 7): the line matched any path, and a reader took it for the output."""
    blank = [f"{b}: {line!r}" for b in ALL if b.lang == "console" for _, shown in _commands(b) for line in shown
             if re.fullmatch(r"\s*[\w .-]+:\s*", line)]
    assert blank == []


def test_a_line_with_dots_inside_matches_any_text_there():
    assert _shows("data:   /home/x/.cache/v2/medhorizon_synthetic.jsonl\nvideos: /home/x/v2/videos\n",
                  ["data:   .../medhorizon_synthetic.jsonl", "videos: .../videos"]) is None
    assert _shows("data:   /home/x/other.jsonl\n", ["data: .../medhorizon_synthetic.jsonl"]) is not None
    assert _shows("a (b) [c]\n", ["a (b) [c]"]) is None  # the rest is text, not a pattern


def test_a_block_that_fails_or_prints_otherwise_is_caught(tmp_path):
    """The runner itself: a failing command and a missing line of output are both reported."""
    page = tmp_path / "page.md"
    page.write_text("```console\n$ echo one && echo two\none\n...\ntwo\n$ export X=3\n$ echo $X\n3\n```\n"
                    "```console\n$ echo one\nthree\n```\n```bash\nfalse\necho never\n```\n")
    good, wrong, failing = blocks(page)
    run_block(good, tmp_path, dict(os.environ))
    with pytest.raises(AssertionError, match="did not print 'three'"):
        run_block(wrong, tmp_path, dict(os.environ))
    with pytest.raises(AssertionError, match="exited 1"):
        run_block(failing, tmp_path, dict(os.environ))
