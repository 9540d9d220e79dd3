"""What every command's ``--help`` shows, whoever wrote its parser: a description (its help line when it has none
of its own), each option's default and an example that runs (:mod:`.examples`); and the old spellings of renamed
options (:func:`old_spellings`).

:func:`finish_help` walks a parser and its sub-parsers once they are built; :func:`walk` is the walk, which the
CLI reference (:mod:`.cli_reference`) and the tests reuse.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator

from .examples import epilog

__all__ = ["DefaultsHelpFormatter", "finish_help", "walk", "shown_default", "old_spellings", "old_switch",
           "deprecated_spellings"]

def shown_default(action: argparse.Action) -> str | None:
    """The default ``--help`` shows beside an option, or None when there is none to show (not an option, a
    required one, or a default that says nothing: not given, a switch off, empty)."""
    if not action.option_strings or action.required:
        return None
    if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
        return None
    default = action.default
    if default is None or default is False or default is argparse.SUPPRESS or default == "":
        return None
    if isinstance(default, (list, tuple)):
        return " ".join(map(str, default)) if default else None
    return str(default)


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """``(default: X)`` after each option's help, unless the help already says what its default is; example
    lines (an epilog starting "example") kept as written, one command a line."""

    def _fill_text(self, text, width, indent):
        if text.startswith("example"):
            return "\n".join(indent + line for line in text.splitlines())
        return super()._fill_text(text, width, indent)

    def _get_help_string(self, action):
        help = action.help or ""
        default = shown_default(action)
        if default is None or "default" in help.lower():
            return help
        shown = default.replace("%", "%%")
        return f"{help} (default: {shown})" if help else f"(default: {shown})"


def walk(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[
        tuple[tuple[str, ...], argparse.ArgumentParser, str | None]]:
    """Every parser under ``parser`` (itself first): ``(command words, parser, its help line or None)``, in the
    order of ``--help``."""
    yield path, parser, None
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            lines = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                for p, s, h in walk(sub, (*path, name)):
                    yield p, s, (lines.get(name) if p == (*path, name) else h)


def finish_help(parser: argparse.ArgumentParser) -> None:
    """Give every (sub-)parser the defaults-showing formatter and, when it has none, a description (its help
    line) and its example (:func:`.examples.epilog`); give an option without help one, so that its default
    shows."""
    for words, p, line in walk(parser):
        if p.formatter_class is argparse.HelpFormatter:
            p.formatter_class = DefaultsHelpFormatter
        if not p.description and line:
            p.description = line.replace("%%", "%")
        if not p.epilog:
            p.epilog = epilog(words)
        for action in p._actions:
            default = shown_default(action)
            if action.help is None and default is not None:  # argparse shows no line for an option without help
                action.help = "(default: " + default.replace("%", "%%") + ")"


class _OldSpelling:
    """Mixin of an option's action that warns when the option is given by a spelling it is losing."""

    old_spellings: dict[str, str] = {}
    note = "the old spelling is accepted until the next release"

    def __call__(self, parser, namespace, values, option_string=None):
        if option_string in self.old_spellings:
            print(f"{parser.prog}: warning: {option_string} is deprecated, use {self.old_spellings[option_string]} "
                  f"({self.note})", file=sys.stderr)
        super().__call__(parser, namespace, values, option_string)


def old_spellings(parser: argparse.ArgumentParser, new: str, *old: str) -> None:
    """Accept ``old`` spellings of the option ``new`` (already added) for one more release, with a warning on
    stderr when one is used. They parse exactly as ``new`` does (same action: required, groups and all) but
    are not shown by ``--help``; the CLI reference lists them (:func:`deprecated_spellings`)."""
    action = parser._option_string_actions[new]
    if not isinstance(action, _OldSpelling):
        action.__class__ = type(f"Renamed{type(action).__name__}", (_OldSpelling, type(action)), {})
        action.old_spellings = {}
    for spelling in old:
        action.old_spellings[spelling] = new
        parser._option_string_actions[spelling] = action


class _OldSwitch(_OldSpelling, argparse._StoreConstAction):
    pass


def old_switch(parser: argparse.ArgumentParser, new: str, old: str, *, note: str) -> None:
    """Accept the switch ``old`` for one more release, now that the switch ``new`` (already added) says the
    opposite (``--verbose`` once echoed what ``--quiet`` now hides): ``old`` sets ``new``'s destination to its
    default, with a warning saying ``note`` (what the default now is). Hidden from ``--help`` as
    :func:`old_spellings` are."""
    switch = parser._option_string_actions[new]
    action = _OldSwitch(option_strings=[old], dest=switch.dest, const=switch.default, help=argparse.SUPPRESS)
    action.old_spellings = {old: new}
    action.note = f"{note}; the old switch is accepted until the next release"
    parser._option_string_actions[old] = action  # parsed, but not one of the parser's listed options


def deprecated_spellings(parser: argparse.ArgumentParser) -> dict[str, str]:
    """``{old spelling: new}`` of the options of ``parser``."""
    actions = {id(a): a for a in parser._option_string_actions.values()}.values()
    return {old: new for action in actions for old, new in getattr(action, "old_spellings", {}).items()}
