"""Zero-shot text prompts per dataset and level: the paper's, a user's file, or a label template.

Supplement A.2: "For GraSP, BernBypass70, and StrasbyPass70, we use the text descriptions provided by
SurgLaVi [18]"; "for MIPO ... we wrote prompts ... Tables 6 and 7 list the MIPO prompts". MIPO's are
shipped verbatim in ``zeroshot_prompts.json`` (beside this module, with their source); SurgLaVi's
descriptions are not redistributed here: pass them with ``--prompts FILE``::

    {"GraSP": {"phases": {"Idle": ["..."], ...}, "steps": {"Cut": ["...", "..."], ...}}, ...}

A class may have one prompt (a string) or several (a list; their similarities are averaged). A level
given in the file must cover every class of the dataset's hierarchy; a label the hierarchy lacks is an
error naming the dataset, level and label. For a dataset (or level) with no prompt anywhere, the
label template (default ``"{label}"``: the class name itself) is used, and the report says so
("label template ..., not the paper's"), so nobody mistakes it for the published protocol.
"""

from __future__ import annotations

import json
import os
import string
from dataclasses import dataclass
from importlib import resources
from typing import Any, Mapping

import numpy as np

from ...core.errors import DataError, MedHorizonError
from ...core.safeio import read_json
from .hierarchy import Hierarchy

__all__ = ["LEVELS", "DEFAULT_TEMPLATE", "LevelPrompts", "shipped_prompts", "load_prompt_file",
           "resolve_prompts", "template_note", "check_template"]

LEVELS = ("phases", "steps")
DEFAULT_TEMPLATE = "{label}"
SHIPPED_FILE = "zeroshot_prompts.json"


@dataclass(frozen=True)
class LevelPrompts:
    """One level's classes (in hierarchy order), each class's prompts, and where they come from."""

    labels: tuple[str, ...]
    prompts: tuple[tuple[str, ...], ...]
    source: str
    paper: bool  # the paper's own prompts (shipped, or named so by the user's file)

    def texts(self) -> list[str]:
        return [p for ps in self.prompts for p in ps]

    def owner(self, text_index: int) -> str:
        """The class of the ``text_index``-th text of :meth:`texts`."""
        for label, ps in zip(self.labels, self.prompts):
            if text_index < len(ps):
                return label
            text_index -= len(ps)
        raise IndexError(text_index)

    def class_means(self, scores: np.ndarray) -> np.ndarray:
        """``(..., n_texts)`` scores -> ``(..., n_classes)``: each class's prompts averaged."""
        out, i = [], 0
        for ps in self.prompts:
            out.append(scores[..., i:i + len(ps)].mean(axis=-1))
            i += len(ps)
        return np.stack(out, axis=-1)


def _key(name: str) -> str:
    return "".join(name.casefold().split()).replace("_", "").replace("-", "")


def shipped_prompts() -> dict:
    """The prompts shipped as package data: ``{dataset: {"source", "phases", "steps"}}``."""
    text = resources.files(__package__).joinpath(SHIPPED_FILE).read_text(encoding="utf-8")
    return json.loads(text)


def load_prompt_file(path: str | os.PathLike) -> dict[str, dict[str, dict[str, list[str]]]]:
    """``--prompts FILE``: ``{dataset: {"phases"|"steps": {label: prompt or [prompts]}}}``, its shape checked
    (every problem at once, naming dataset, level and label)."""
    obj = read_json(path)
    problems: list[str] = []
    out: dict = {}
    if not isinstance(obj, Mapping) or not obj:
        raise DataError('expected {dataset: {"phases": {label: [prompt, ...]}, "steps": {...}}}', source=str(path))
    spellings: dict[str, list[str]] = {}
    for ds in obj:
        spellings.setdefault(_key(str(ds)), []).append(str(ds))
    for names in spellings.values():
        if len(names) > 1:  # datasets are matched by name with case and spacing aside: one set would be dropped
            problems.append(f"datasets {' and '.join(map(repr, names))} are one dataset (names are compared "
                            "ignoring case, spaces, '-' and '_'): keep one key, with all its prompts")
    for ds, levels in obj.items():
        if not isinstance(levels, Mapping):
            problems.append(f"{ds}: expected an object with phases and/or steps")
            continue
        for level in levels:
            if level not in LEVELS and level != "source":
                problems.append(f"{ds}: {level}: unknown level (expected phases, steps)")
        for level in LEVELS:
            if level not in levels:
                continue
            classes = levels[level]
            if not isinstance(classes, Mapping) or not classes:
                problems.append(f"{ds}: {level}: expected an object label -> prompt or list of prompts")
                continue
            for label, prompts in classes.items():
                ps = [prompts] if isinstance(prompts, str) else prompts
                if not isinstance(ps, list) or not ps or not all(isinstance(p, str) and p.strip() for p in ps):
                    problems.append(f"{ds}: {level}: {label!r}: expected a non-empty prompt or list of prompts")
                    continue
                out.setdefault(str(ds), {}).setdefault(level, {})[str(label)] = [p.strip() for p in ps]
    if problems:
        raise DataError(problems, source=f"prompts {path}")
    return out


def _level(ds: str, level: str, given: Mapping[str, list[str]], h: Hierarchy, source: str, paper: bool,
           problems: list[str]) -> LevelPrompts | None:
    bad = len(problems)
    labels = h.phases if level == "phases" else h.steps
    canon = h.canonical_phase if level == "phases" else h.canonical_step
    by_class: dict[str, list[str]] = {}
    named_as: dict[str, str] = {}
    for label, ps in given.items():
        c = canon(label)
        if c not in labels:
            problems.append(f"{ds}: {level}: {label!r} is not a {level[:-1]} of the {ds} hierarchy "
                            f"(its {level}: {', '.join(labels)})")
            continue
        if c in named_as:
            problems.append(f"{ds}: {level}: {named_as[c]!r} and {label!r} both name the {level[:-1]} {c!r}: keep "
                            "one key, with all its prompts")
            continue
        named_as[c] = label
        by_class.setdefault(c, []).extend(ps)
    missing = [lab for lab in labels if lab not in by_class]
    if missing:
        problems.append(f"{ds}: {level}: no prompt for {', '.join(repr(m) for m in missing)} (a level given in "
                        f"prompts must cover every class of the hierarchy)")
    if len(problems) > bad:
        return None
    return LevelPrompts(tuple(labels), tuple(tuple(by_class[lab]) for lab in labels), source, paper)


def check_template(template: str) -> None:
    """``--label-template``: text with exactly the field ``{label}`` (a literal brace written ``{{`` or ``}}``);
    anything else is one MedHorizonError saying what to change, never a traceback of ``str.format``."""
    fix = "its one field is {label}; write a literal brace as {{ or }}"
    try:
        fields = [(name, spec, conv) for _, name, spec, conv in string.Formatter().parse(template) if name is not None]
    except ValueError as exc:  # "Single '{' encountered", "expected '}' before end of string"
        raise MedHorizonError(f"--label-template {template!r}: unbalanced brace ({exc}); {fix}") from None
    for name, spec, conv in fields:
        if name != "label":
            what = "a positional field" if name == "" or name.isdigit() else "an unknown field"
            raise MedHorizonError(f"--label-template {template!r}: {what} {{{name}}}; {fix}")
    if not fields:
        raise MedHorizonError(f"--label-template must contain {{label}}, got {template!r}")
    try:
        template.format(label="label")
    except (ValueError, TypeError) as exc:  # a format spec or conversion text cannot take
        raise MedHorizonError(f"--label-template {template!r}: {exc}; {fix}") from None


def template_note(template: str) -> str:
    return f"label template {template!r}, not the paper's"


def resolve_prompts(hierarchies: Mapping[str, Hierarchy], levels: Mapping[str, tuple[str, ...]], *,
                    user: Mapping[str, Any] | None = None, user_source: str | None = None,
                    template: str = DEFAULT_TEMPLATE) -> tuple[dict[str, dict[str, LevelPrompts]], list[str]]:
    """``({dataset: {level: LevelPrompts}}, notes)`` for every dataset of ``hierarchies``, for the levels
    ``levels[dataset]`` it is scored on.

    Per dataset and level, in order: the user's file (a dataset matched by name, case and spacing aside),
    the shipped prompts (MIPO, Tables 6-7), the label template. ``notes`` names the user's datasets that
    are not in the data (ignored). DataError lists every problem of the prompts.
    """
    check_template(template)
    shipped = shipped_prompts()
    user = dict(user or {})
    problems: list[str] = []
    out: dict[str, dict[str, LevelPrompts]] = {}
    for ds, h in hierarchies.items():
        mine = user.get(ds) or next((v for k, v in user.items() if _key(k) == _key(ds)), None)
        ours = next((v for k, v in shipped.items() if _key(k) == _key(ds)), None)
        out[ds] = {}
        for level in levels[ds]:
            bad = len(problems)
            if mine is not None and level in mine:
                got = _level(ds, level, mine[level], h, f"{user_source} [{ds}]", False, problems)
            elif ours is not None and level in ours:
                got = _level(ds, level, ours[level], h, f"shipped: {ours['source']}", True, problems)
                if len(problems) > bad:
                    problems.append(f"{ds}: the shipped {level} prompts do not fit this dataset's hierarchy: "
                                    "pass --prompts with prompts for its labels")
            else:
                labels = h.phases if level == "phases" else h.steps
                got = LevelPrompts(tuple(labels), tuple((template.format(label=lab),) for lab in labels),
                                   template_note(template), False)
            if got is not None:
                out[ds][level] = got
    if problems:
        raise DataError(problems, source=f"prompts {user_source}" if user_source else "prompts")
    notes = []
    keys = {_key(ds): ds for ds in hierarchies}
    for name in user:
        if name not in hierarchies and _key(name) not in keys:
            notes.append(f"prompts for dataset {name!r} in {user_source}: not in the data, ignored")
    return out, notes
