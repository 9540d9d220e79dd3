"""The command-line reference (``docs/cli.md``), generated from the parser itself so that it cannot drift:
every command and sub-command, each argument with its default and help.

    python -m medhorizon_tasks.commands.cli_reference --out docs/cli.md

(``--check``: exit 1 when the file is not what would be written; ``tests/test_cli_reference.py`` runs it.)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .help import deprecated_spellings, shown_default, walk
from .main import build_parser

__all__ = ["reference", "main"]

COMMAND = "python -m medhorizon_tasks.commands.cli_reference --out docs/cli.md"
WIDE = 10_000  # usage lines unwrapped, whatever the terminal's width


def _cell(text: str) -> str:
    """Text for a Markdown table cell: one line, pipes and angle brackets escaped."""
    text = " ".join(text.split())
    return text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").replace("*", "\\*")


def _code(text: str) -> str:
    return f"`{text}`" if "`" not in text else f"`` {text} ``"


def _anchor(words: tuple[str, ...]) -> str:
    return "-".join(("medhorizon-tasks", *words))


def _launcher_help(name: str) -> str | None:
    """``run`` / ``vlmeval``: every argument is the framework's; their help is the launcher's own text."""
    if name == "run":
        from ..adapters.lmms_eval.runner import RUN_HELP

        return RUN_HELP
    if name == "vlmeval":
        from ..adapters.vlmeval.launch import HELP

        return HELP
    return None


def _section(words: tuple[str, ...], parser: argparse.ArgumentParser, line: str | None) -> list[str]:
    title = " ".join(("medhorizon-tasks", *words))
    out = [f"## {title}", ""]  # its anchor, on GitHub as in MkDocs: _anchor(words)
    launcher = _launcher_help(words[0]) if len(words) == 1 else None
    if launcher is not None:
        out += [_cell(line or ""), "", "```text", launcher.strip("\n"), "```", ""]
        return out
    fmt = argparse.HelpFormatter(parser.prog, width=WIDE)
    fmt.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    out += ["```text", fmt.format_help().strip(), "```", ""]
    if parser.description:
        out += [" ".join(parser.description.replace("%%", "%").split()), ""]
    if parser.epilog:
        out += ["```text", parser.epilog.replace("%%", "%"), "```", ""]
    rows, commands = [], []
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                sub = (*words, choice.dest)
                commands.append(f"| [{_code(' '.join(sub))}](#{_anchor(sub)}) | {_cell(fmt._expand_help(choice))} |")
            continue
        invocation = fmt._format_action_invocation(action)
        default = "required" if action.required else shown_default(action) or ""
        help = fmt._expand_help(action) if action.help else ""
        rows.append(f"| {_code(invocation)} | {_code(default) if default and default != 'required' else default} "
                    f"| {_cell(help)} |")
    if commands:
        out += ["| command | what it does |", "| --- | --- |", *commands, ""]
    if rows:
        out += ["| argument | default | help |", "| --- | --- | --- |", *rows, ""]
    old = deprecated_spellings(parser)
    if old:
        out += ["Old spellings, still accepted with a warning until the next release: "
                + ", ".join(f"`{o}` (now `{n}`)" for o, n in old.items()) + ".", ""]
    return out


def reference(parser: argparse.ArgumentParser | None = None) -> str:
    """The whole page."""
    parser = parser or build_parser()
    lines = ["# Command-line reference", "",
             "Every command of `medhorizon-tasks`, each argument with its default and help, generated from the "
             f"parser by `{COMMAND}` (do not edit by hand: `tests/test_cli_reference.py` fails when this page "
             "is not what the parser says). The same text is each command's `--help`.", ""]
    for words, p, line in walk(parser):
        lines += _section(words, p, line)
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m medhorizon_tasks.commands.cli_reference",
                                 description="Write the command-line reference generated from the parser.")
    ap.add_argument("--out", default="docs/cli.md", help="the page to write (default: %(default)s)")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 when the page is not current")
    args = ap.parse_args(argv)
    text, path = reference(), Path(args.out)
    if args.check:
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current != text:
            print(f"{path} is not current: run `{COMMAND}`", file=sys.stderr)
            return 1
        return 0
    path.write_text(text, encoding="utf-8")
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
