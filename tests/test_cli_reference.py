"""``docs/cli.md`` is generated from the parser (``python -m medhorizon_tasks.commands.cli_reference``) and must be
what the parser says now: a flag added without regenerating it fails here."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from medhorizon_tasks.commands import cli_reference
from medhorizon_tasks.commands.help import walk
from medhorizon_tasks.commands.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "cli.md"


def test_the_cli_reference_is_current():
    res = subprocess.run([sys.executable, "-m", "medhorizon_tasks.commands.cli_reference", "--check",
                          "--out", str(PAGE)], capture_output=True, text=True, cwd=ROOT)
    assert res.returncode == 0, res.stderr + f"\nregenerate it: {cli_reference.COMMAND}"


def test_every_command_and_flag_is_on_the_page():
    page = PAGE.read_text(encoding="utf-8")
    for words, parser, _ in walk(build_parser()):
        assert f"## {' '.join(('medhorizon-tasks', *words))}\n" in page, words
        for action in parser._actions:
            for flag in action.option_strings:
                if words not in (("run",), ("vlmeval",)):
                    assert flag in page, (words, flag)


def test_a_new_flag_makes_the_page_stale(tmp_path):
    parser = build_parser()
    before = cli_reference.reference(parser)
    score = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["score"]
    score.add_argument("--brand-new", default="7", help="a flag nobody documented")
    after = cli_reference.reference(parser)
    assert before != after and "| `--brand-new BRAND_NEW` | `7` | a flag nobody documented |" in after
    page = tmp_path / "cli.md"
    page.write_text(before, encoding="utf-8")
    assert cli_reference.main(["--check", "--out", str(page)]) == 0
    page.write_text(before.replace("score a predictions file", "score a file"), encoding="utf-8")
    assert cli_reference.main(["--check", "--out", str(page)]) == 1
