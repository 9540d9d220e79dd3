"""The ``medhorizon-tasks`` command itself: every command listed without importing its module, only the chosen
command's module imported to run it, ``--version``, and a description and every default in each ``--help``."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import pytest

from medhorizon_tasks import __version__
from medhorizon_tasks.commands.help import shown_default, walk
from medhorizon_tasks.commands.main import COMMANDS, build_parser, main


def _subparsers(parser):
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def test_the_command_table_is_what_the_modules_add():
    """The top-level --help lists the commands from COMMANDS alone: each line, the order and the module that
    runs each command must be the modules' own (a command added to a module and not to the table fails here)."""
    full = _subparsers(build_parser())
    real = [(a.dest, a.help) for a in full._choices_actions]
    assert real == [(name, help) for name, _, help in COMMANDS]
    for name, module, _ in COMMANDS:
        handler = full.choices[name]._defaults.get("func")
        if handler is None:  # a command with sub-commands: its sub-commands' handlers are the module's
            handlers = {p._defaults["func"] for _, p, _ in walk(full.choices[name]) if "func" in p._defaults}
            # a sub-command may live in a sibling module of its own: surghi's zeroshot, leaderboard's submit
            assert {h.__module__ for h in handlers} <= {f"medhorizon_tasks.commands.{module}",
                                                        "medhorizon_tasks.commands.zeroshot",
                                                        "medhorizon_tasks.commands.leaderboard_submit"}, name
        else:
            assert handler.__module__ == f"medhorizon_tasks.commands.{module}", name


def test_the_lazy_top_level_help_lists_every_command_as_the_full_one_does():
    lazy, full = build_parser(()).format_help(), build_parser().format_help()
    assert lazy == full
    for name, _, _ in COMMANDS:
        assert f"    {name}" in lazy


def _modules_after(argv: list[str]) -> set[str]:
    code = ("import sys\nfrom medhorizon_tasks.commands.main import main\n"
            f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
            "print(' '.join(m for m in sys.modules if m.startswith('medhorizon_tasks.commands.')), file=sys.stderr)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(res.stderr.strip().splitlines()[-1].split())


# what the main command needs before it knows which command it runs
STARTUP = {f"medhorizon_tasks.commands.{m}" for m in ("main", "help", "examples", "common", "launch", "data_args")}


@pytest.mark.parametrize("argv, own", [
    (["--help"], set()),
    (["--version"], set()),
    (["score", "--help"], {"score", "paper"}),
    (["blind-audit", "--help"], {"compare"}),
    (["leaderboard", "build", "--help"], {"leaderboard", "leaderboard_submit"}),
    (["surghi", "zeroshot", "--help"], {"surghi", "zeroshot"}),
])
def test_only_the_chosen_commands_module_is_imported(argv, own):
    assert _modules_after(argv) == STARTUP | {f"medhorizon_tasks.commands.{m}" for m in own}


# Modules a `score` of a predictions file never uses, each costing every command start-up time (1-6 ms):
# importing one of them again at module level (typing for an annotation, sqlite3 for the file identities,
# csv / importlib.resources for readers `score` does not call) shows up here.
_NOT_FOR_SCORE = {"typing", "sqlite3", "csv", "importlib.resources", "secrets"}


def test_scoring_a_file_does_not_import_what_it_does_not_use(tmp_path):
    data = tmp_path / "release.jsonl"
    data.write_text(json.dumps({"key": "v1", "dataset": "Cholec80", "video_path": "Cholec80/v1.mp4", "num_frames": 60,
                                "fps": 1.0, "qa": [{"uid": 0, "question": "Which phase?", "answer": "B",
                                                    "options": ["Preparation", "Clipping", "Closure", "Drainage"],
                                                    "task_id": "PR"}]}) + "\n", encoding="utf-8")
    preds = tmp_path / "preds.jsonl"
    preds.write_text(json.dumps({"uid": 0, "prediction": "The answer is B."}) + "\n", encoding="utf-8")
    argv = ["score", "--benchmark", "medhorizon", "--data", str(data), "--predictions", str(preds), "--json"]
    code = ("import json, sys\nfrom medhorizon_tasks.commands.main import main\n"
            f"status = main({argv!r})\n"
            "print(json.dumps({'status': status, 'modules': sorted(sys.modules)}), file=sys.stderr)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={**os.environ, "MEDHORIZON_EXTRACTION_CACHE": "off"})
    out = json.loads(res.stderr.strip().splitlines()[-1])
    assert out["status"] == 0 and json.loads(res.stdout)["overall"]["accuracy"] == 1.0
    assert _NOT_FOR_SCORE.isdisjoint(out["modules"]), sorted(_NOT_FOR_SCORE & set(out["modules"]))


def test_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"medhorizon-tasks {__version__}"


def _help_lines(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each option's help in ``parser.format_help()`` (its lines joined), by its first option string."""
    text = parser.format_help()
    out, current = {}, None
    for line in text.splitlines():
        stripped = line.strip()
        if line.startswith("  -"):
            current = stripped.split()[0].rstrip(",")
            out[current] = stripped
        elif current and line.startswith("   ") and stripped:
            out[current] += " " + stripped
        else:
            current = None
    return out


def test_every_help_has_a_description_and_every_default():
    for words, parser, _ in walk(build_parser()):
        if words in (("run",), ("vlmeval",)):  # every argument is the framework's: their own help, checked below
            continue
        assert parser.description, f"{' '.join(words)}: no description"
        shown = _help_lines(parser)
        for action in parser._actions:
            default = shown_default(action)
            if default is None:
                continue
            line = " ".join(shown[action.option_strings[0]].split())
            assert "default" in line, f"{' '.join(words)} {action.option_strings[0]}: default {default} not shown"


@pytest.mark.parametrize("command, default", [("compare", "medhorizon"), ("blind-audit", "sureon")])
def test_the_benchmark_default_is_shown(command, default, capsys):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert f"(default: {default})" in out


@pytest.mark.parametrize("command", ["run", "vlmeval"])
def test_the_framework_launchers_have_their_own_help(command, capsys):
    assert main([command, "--help"]) == 0
    assert f"usage: medhorizon-tasks {command}" in capsys.readouterr().out
