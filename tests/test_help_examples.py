"""Every command's ``--help`` has a description, every option's default and an example that runs.

The examples (``commands/examples.py``) are parsed, every line, by the real parser; the cheap ones run as
written, in a temporary folder, on the suite's synthetic builds (as ``test_docs_examples.py`` runs the pages'
blocks). A line that runs a model (``run``, ``demo``, ``diagnose``, ``select``...) is parsed only; where a later
line reads what a ``run`` line writes, the run's samples file is written in lmms-eval's ``--log_samples``
format by a stand-in for the probe model (the needle answers right, the random guess is seeded), so that the
commands that read runs run for real.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from medhorizon_tasks.adapters.lmms_eval.runner import RUN_HELP
from medhorizon_tasks.adapters.vlmeval.launch import HELP as VLMEVAL_HELP
from medhorizon_tasks.benchmarks.medhorizon.release import load_release
from medhorizon_tasks.commands.examples import EXAMPLES, NEEDS_DOWNLOAD
from medhorizon_tasks.commands.help import shown_default, walk
from medhorizon_tasks.commands.main import build_parser

LAUNCHERS = {("run",): RUN_HELP, ("vlmeval",): VLMEVAL_HELP}
# lines that run a model or decode every video: parsed here, run by the docs pages' tests and the e2e tests
# (`leaderboard serve` runs until it is stopped: tests/test_service_api.py starts it as its example says, and
# tests/test_service_integrity.py runs `leaderboard submit` against it)
EXPENSIVE = {("demo",), ("diagnose",), ("sweep",), ("select",), ("prepare-frames",), ("surghi", "zeroshot"),
             ("build-dataset",), ("leaderboard", "serve"), ("leaderboard", "submit")}
PARSERS = {words: (parser, line) for words, parser, line in walk(build_parser())}


def _words(argv: list[str]) -> tuple[str, ...]:
    """The command words of an argument list (``leaderboard make``), as the parser's walk names them."""
    two = tuple(argv[:2])
    return two if two in PARSERS else tuple(argv[:1])


def help_problems(words: tuple[str, ...], parser: argparse.ArgumentParser) -> list[str]:
    """What the ``--help`` of the command ``words`` lacks: a description, its example (whole, one command a line),
    the default of an option that has one."""
    text = parser.format_help()
    problems = []
    if not parser.description or " ".join(parser.description.split())[:40] not in " ".join(text.split()):
        problems.append("no description")
    if "\nexample" not in text:
        problems.append("no example")
    problems += [f"example line {x!r} not shown whole" for x in EXAMPLES.get(words, ())
                 if f"\n  {x}\n" not in text + "\n"]
    fmt = parser._get_formatter()
    for action in parser._actions:
        default = shown_default(action)
        if default is not None and "default" not in fmt._expand_help(action).lower():
            problems.append(f"{action.option_strings[-1]}: default {default} not shown")
    return problems


@pytest.mark.parametrize("words", [w for w in PARSERS if w not in LAUNCHERS], ids=lambda w: " ".join(w) or "top")
def test_every_help_has_a_description_an_example_and_the_defaults(words):
    assert words in EXAMPLES, words
    assert help_problems(words, PARSERS[words][0]) == []


def test_the_launchers_help_gives_a_synthetic_example():
    for words, text in LAUNCHERS.items():
        example = [x.strip() for x in text.splitlines() if x.strip().startswith(f"medhorizon-tasks {words[0]} ")]
        assert any("medhorizon_needle" in x and "synthetic" in x.lower() for x in example), (words, example)


def test_a_missing_description_example_or_default_is_caught():
    """The check above fails on a parser that lacks them (argparse's own formatter says no default)."""
    bare = argparse.ArgumentParser(prog="medhorizon-tasks stats")
    bare.add_argument("--n", type=int, default=3, help="a number")
    assert help_problems(("stats",), bare) == ["no description", "no example",
                                              "example line 'medhorizon-tasks stats --synthetic' not shown whole",
                                              "--n: default 3 not shown"]


def _lines():
    for words, lines in EXAMPLES.items():
        for k, line in enumerate(lines):
            yield words, k, line


def _argv(line: str) -> list[str]:
    """The arguments of an example line: its first command, up to a shell redirection."""
    argv = shlex.split(line)
    assert argv[0] == "medhorizon-tasks", line
    return argv[1:argv.index(">")] if ">" in argv else argv[1:]


@pytest.mark.parametrize("words, k, line", list(_lines()), ids=[f"{' '.join(w) or 'top'}-{k}" for w, k, _ in _lines()])
def test_every_example_line_parses(words, k, line, capsys):
    argv = _argv(line)
    if argv[0] in ("run", "vlmeval"):  # the framework's arguments: a model and tasks of this package
        assert "--model" in argv and ("--tasks" in argv or "--data" in argv), line
        return
    args = build_parser([argv[0]]).parse_args(argv)
    assert args.func is not None
    assert "deprecated" not in capsys.readouterr().err, f"{line}: uses an old spelling"


# ----------------------------------------------------------------- running them

def _stand_in_run(argv: list[str], cwd: Path, items) -> None:
    """What ``medhorizon-tasks run --model medhorizon_needle|medhorizon_random --tasks T --output_path O`` leaves
    for the commands that read it: ``O/<stamp>_samples_T.jsonl`` (the answers of the probe model)."""
    opts = dict(zip(argv[1::2], argv[2::2]))
    model, out = opts["--model"], cwd / opts["--output_path"]
    seed = int(dict(kv.split("=") for kv in opts.get("--model_args", "seed=0").split(",")).get("seed", 0))
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    for task in opts["--tasks"].split(","):
        assert task.startswith("medhorizon_synthetic"), f"no stand-in for a run of {task}"
        text = task.endswith("_text")
        rows = []
        for i, it in enumerate(items):
            if model == "medhorizon_needle":
                reply = "I cannot answer without seeing the video." if text else f"The answer is {it.answer}."
            else:
                assert model == "medhorizon_random", model
                reply = rng.choice("ABCD")
            rows.append({"doc_id": i, "target": it.answer, "filtered_resps": [reply],
                         "accuracy": {"uid": it.uid, "mode": "text" if text else "visual"}})
        (out / f"20260101_000000_samples_{task}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture(scope="module")
def example_env(synthetic_build, surghi_sample):
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["NO_COLOR"] = "1"
    return env


@pytest.mark.parametrize("words", [w for w in EXAMPLES if w not in EXPENSIVE and w not in NEEDS_DOWNLOAD],
                         ids=lambda w: " ".join(w) or "top")
def test_the_cheap_examples_run_as_written(words, example_env, synthetic, tmp_path):
    items = load_release(synthetic.data_path)
    for line in EXAMPLES[words]:
        argv = _argv(line)
        if argv[0] == "run":
            _stand_in_run(argv, tmp_path, items)
            continue
        if _words(argv) in EXPENSIVE or argv[0] == "demo":
            continue  # parsed above
        done = subprocess.run(["bash", "-c", f"set -euo pipefail; {line}"], cwd=tmp_path,
                              env={**example_env, "HOME": str(tmp_path)}, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, f"{' '.join(words)}: `{line}` exited {done.returncode}:\n{done.stderr[-3000:]}"
        assert "deprecated" not in done.stderr, line
