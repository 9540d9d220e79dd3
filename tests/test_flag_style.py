"""One flag style across the package's own commands: one spelling per idea (where outputs go, the data, the
video root, quiet), dashes rather than underscores except lmms-eval's own flags that ``diagnose`` / ``sweep`` pass
through, and the old spellings still accepted for one release, with a warning."""

from __future__ import annotations

import pytest

from medhorizon_tasks.commands.help import deprecated_spellings, walk
from medhorizon_tasks.commands.main import build_parser, main

# idea -> (the spelling, spellings of the same idea that must not appear)
IDEAS = {
    "where outputs go": ("--out", {"--output", "--output-path", "--output-dir", "--out-dir", "--outdir", "--work-dir",
                                   "--report", "--results", "--save", "--dest", "--records", "--write"}),
    "the data": ("--data", {"--annotations", "--src", "--source-file", "--data-dir", "--dataset", "--items",
                            "--release", "--input-data"}),
    "the video root": ("--video-root", {"--root", "--videos", "--video-dir", "--videos-dir"}),
    "quiet": ("--quiet", {"--no-progress", "--silent", "--no-progress-bar", "--verbose", "--echo", "--progress"}),
    "the model's size": ("--model-size", {"--size", "--params"}),
}
# lmms-eval's flags, spelled as lmms-eval spells them where the package hands them to lmms-eval
PASSED_THROUGH = {"--model_args", "--num_processes", "--output_path", "--gen_kwargs", "--log_samples"}


def _options():
    for words, parser, _ in walk(build_parser()):
        for action in parser._actions:
            for flag in action.option_strings:
                yield " ".join(words), flag


def test_one_spelling_per_idea():
    wrong = [f"{command} {flag}: {idea} is {good}" for command, flag in _options()
             for idea, (good, bad) in IDEAS.items() if flag in bad]
    assert not wrong, "\n".join(wrong)


def test_dashes_not_underscores():
    wrong = [f"{command} {flag}" for command, flag in _options() if "_" in flag and flag not in PASSED_THROUGH]
    assert not wrong, wrong


def test_long_options_only():
    """One name per option: no short aliases (``-o`` beside ``--out`` in one command, not in the others), only
    argparse's own ``-h``."""
    wrong = [f"{command} {flag}" for command, flag in _options() if not flag.startswith("--") and flag != "-h"]
    assert not wrong, wrong


def test_one_name_per_option():
    """An option has one spelling in ``--help``; its old ones are hidden (checked below)."""
    wrong = [f"{' '.join(words)} {action.option_strings}" for words, parser, _ in walk(build_parser())
             for action in parser._actions if len(action.option_strings) > 1 and action.option_strings != ["-h", "--help"]]
    assert not wrong, wrong


def test_the_walk_sees_the_commands_that_use_each_spelling():
    """The checks above look at every command: each spelling is in use, on the nested commands too."""
    seen = {}
    for command, flag in _options():
        seen.setdefault(flag, set()).add(command)
    for idea, (good, _) in IDEAS.items():
        assert seen.get(good), idea
    assert "surghi zeroshot" in seen["--quiet"] and "videos check" in seen["--video-root"]


# every old spelling, and an argument list that uses it
OLD = [
    (["score", "--benchmark", "surghi", "--annotations", "A", "--predictions", "P"], "--annotations", "data", "A"),
    (["build-dataset", "--src", "S", "--out", "O"], "--src", "data", ["S"]),
    (["videos", "check", "--root", "R"], "--root", "video_root", "R"),
    (["videos", "link", "--report", "F", "--video-root", "R"], "--report", "out", "F"),
    (["videos", "check", "--cache", "C", "--video-root", "R"], "--cache", "check_cache", "C"),
    (["surghi", "import", "--source", "grasp", "--labels", "L", "--out", "O"], "--labels", "data", "L"),
    (["surghi", "zeroshot", "--encoder", "E", "--out", "O", "--no-progress"], "--no-progress", "quiet", True),
    (["leaderboard", "make", "--benchmark", "medhorizon", "--predictions", "P", "--model", "M", "--size", "7B"],
     "--size", "size", "7B"),
    (["protocol", "qwen3_vl_8b", "--output-path", "X"], "--output-path", "out", "X"),
    (["score", "--benchmark", "medhorizon", "--predictions", "P", "--records", "R"], "--records", "out", "R"),
    (["leaderboard", "make", "--benchmark", "medhorizon", "--predictions", "P", "--model", "M", "--model-size", "7B",
      "-o", "S"], "-o", "out", "S"),
    (["leaderboard", "build", "S", "-o", "B"], "-o", "out", "B"),
    # --verbose echoed lmms-eval's output, which is now the default (--quiet hides it): the old switch says so
    (["diagnose", "order", "--model", "M", "--verbose"], "--verbose", "quiet", False),
    (["sweep", "--model", "M", "--quiet", "--verbose"], "--verbose", "quiet", False),
]


@pytest.mark.parametrize("argv, old, dest, value", OLD, ids=[o[1] for o in OLD])
def test_an_old_spelling_still_works_and_says_it_is_deprecated(argv, old, dest, value, capsys):
    args = build_parser([argv[0]]).parse_args(argv)
    assert getattr(args, dest) == value
    err = capsys.readouterr().err
    assert f"{old} is deprecated, use --" in err


def test_the_old_spellings_of_one_command_are_the_ones_tested():
    """Each tested old spelling is hidden by the command it is tested with (not merely accepted somewhere)."""
    parsers = {" ".join(words): parser for words, parser, _ in walk(build_parser())}
    for argv, old, _, _ in OLD:
        words = [w for w in argv if not w.startswith("-")][:2]
        command = " ".join(words) if " ".join(words) in parsers else words[0]
        assert old in deprecated_spellings(parsers[command]), (command, old)


def test_every_old_spelling_is_tested_and_hidden_from_help():
    tested = {o[1] for o in OLD}
    for words, parser, _ in walk(build_parser()):
        old = deprecated_spellings(parser)
        assert set(old) <= tested, (words, old)
        shown = parser.format_help()
        for spelling in old:
            assert f"{spelling} " not in shown and f"{spelling}," not in shown, (words, spelling)


def test_the_new_spelling_runs_a_command_end_to_end(tmp_path, capsys):
    """protocol --out: the run folder in the printed command (and the old spelling gives the same line)."""
    assert main(["protocol", "qwen3_vl_8b", "--out", str(tmp_path / "runs")]) == 0
    new = capsys.readouterr().out
    assert main(["protocol", "qwen3_vl_8b", "--output-path", str(tmp_path / "runs")]) == 0
    captured = capsys.readouterr()
    assert captured.out == new and new.startswith("medhorizon-tasks run ") and "deprecated" in captured.err
    assert new.rstrip().endswith(f"--output_path {tmp_path / 'runs'}")
