"""Reading and validating Sureon benchmark items.

Sureon (sections 3-4, appendix D.1 of the paper) has ten question categories
in two groups:

* perception: AD, EE, EA, PAD, IAI
* reasoning:  LAR, SPI, F, TO, SM

Eight categories are single-answer multiple-choice questions with seven
options (chance 1/7); Temporal Ordering (TO) asks for the order of three
events (exact, order-sensitive match; chance 1/6); Sequence Summarization
(SM) is open-ended and judged by an LLM against a reference summary.

Item file contract: JSON Lines, one item per line, with ``uid``,
``category`` (code or full name), ``question``, ``video_path`` (relative),
``start_s`` and ``end_s`` (``0 <= start_s < end_s``), and by kind:

* MCQ: ``options`` (exactly 7 distinct non-empty strings, or a mapping with
  the keys A-G; "A." prefixes are stripped) and ``answer`` (a letter A-G, or
  the option text);
* TO:  ``events`` (exactly 3 distinct labels) and ``answer`` (the 3 labels in
  their true order: a list that is a permutation of ``events``, or a string
  such as "X > Y > Z" read by :func:`medhorizon_tasks.core.extract.extract_order`);
* SM:  ``reference`` (non-empty text).

All problems of a file are collected and reported together (DataError), each
naming the uid (or the line, when there is no usable uid) and the field.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath

from ...core.errors import DataError
from ...core.extract import extract_order  # the same reader as predictions
from ...core.jsonl import iter_jsonl
from ...core.mcq import parse_answer_key, parse_options
from ...core.predictions import parse_uid

__all__ = ["Category", "CATEGORIES", "CATEGORY_CODES", "GROUPS", "KINDS", "LETTERS", "N_OPTIONS",
           "N_EVENTS", "SureonItem", "resolve_category", "parse_item", "load_items", "features", "to_row",
           "from_row"]

N_OPTIONS = 7
N_EVENTS = 3
LETTERS = tuple("ABCDEFG")
GROUPS = ("perception", "reasoning")
KINDS = ("mcq", "to", "sm")


@dataclass(frozen=True)
class Category:
    code: str
    name: str
    group: str  # "perception" | "reasoning"
    kind: str   # "mcq" | "to" | "sm"


#: The ten categories, in the column order of the paper's Table 3.
CATEGORIES: tuple[Category, ...] = (
    Category("AD", "Action Description", "perception", "mcq"),
    Category("EE", "Entity Existence", "perception", "mcq"),
    Category("EA", "Entity Attribute", "perception", "mcq"),
    Category("PAD", "Procedure-Agnostic Action Description", "perception", "mcq"),
    Category("IAI", "Instrument-Action Interaction", "perception", "mcq"),
    Category("LAR", "Local Action Reasoning", "reasoning", "mcq"),
    Category("SPI", "Safety Practice Identification", "reasoning", "mcq"),
    Category("F", "Forecasting", "reasoning", "mcq"),
    Category("TO", "Temporal Ordering", "reasoning", "to"),
    Category("SM", "Sequence Summarization", "reasoning", "sm"),
)
CATEGORY_CODES = tuple(c.code for c in CATEGORIES)
_BY_CODE = {c.code: c for c in CATEGORIES}


def _key(text: str) -> str:
    return re.sub(r"[^0-9a-z]", "", text.lower())


_ALIASES: dict[str, Category] = {}
for _c in CATEGORIES:
    _ALIASES[_key(_c.code)] = _c
    _ALIASES[_key(_c.name)] = _c
# The paper's Table 16 spells two names "Entity (Object) Existence / Attribute".
_ALIASES[_key("Entity (Object) Existence")] = _BY_CODE["EE"]
_ALIASES[_key("Entity (Object) Attribute")] = _BY_CODE["EA"]
_ALIASES[_key("Sequence Summarisation")] = _BY_CODE["SM"]


def resolve_category(value) -> Category | None:
    """The category for a code ("TO", "to") or a full name ("Temporal Ordering"); None if unknown."""
    if not isinstance(value, str) or not value.strip():
        return None
    return _ALIASES.get(_key(value))


@dataclass(frozen=True)
class SureonItem:
    """One Sureon question."""

    uid: str
    category: str                # code, e.g. "AD"
    group: str                   # "perception" | "reasoning"
    kind: str                    # "mcq" | "to" | "sm"
    question: str
    video_path: str              # relative to the video root
    start_s: float
    end_s: float
    options: tuple[str, ...] = ()            # 7 option texts for MCQ, else ()
    answer: str | tuple[str, str, str] | None = None  # letter (MCQ) | true order (TO) | None (SM)
    events: tuple[str, ...] = ()             # 3 event labels for TO, else ()
    reference: str = ""                      # reference summary for SM, else ""

    @property
    def category_name(self) -> str:
        return _BY_CODE[self.category].name

    @property
    def accuracy_scored(self) -> bool:
        """True for the items pooled into mu (MCQ and TO); SM is judged and reported separately."""
        return self.kind != "sm"


# ------------------------------------------------------------------ as a dataset (the Hub release)

def features():
    """The ``datasets.Features`` of a Sureon item row.

    ``answer`` is the MCQ letter (``""`` for TO and SM); a TO item's true order is ``answer_order``
    (``[]`` otherwise), so one column never mixes a letter with a list.
    """
    from datasets import Features, List, Value

    return Features({
        "uid": Value("string"), "category": Value("string"), "category_name": Value("string"),
        "group": Value("string"), "kind": Value("string"), "question": Value("string"),
        "video_path": Value("string"), "start_s": Value("float64"), "end_s": Value("float64"),
        "options": List(Value("string")), "answer": Value("string"), "answer_order": List(Value("string")),
        "events": List(Value("string")), "reference": Value("string"),
    })


def to_row(item: "SureonItem") -> dict:
    """A :class:`SureonItem` as a row of :func:`features`."""
    order = list(item.answer) if item.kind == "to" else []
    return {"uid": item.uid, "category": item.category, "category_name": item.category_name, "group": item.group,
            "kind": item.kind, "question": item.question, "video_path": item.video_path, "start_s": item.start_s,
            "end_s": item.end_s, "options": list(item.options), "answer": item.answer if item.kind == "mcq" else "",
            "answer_order": order, "events": list(item.events), "reference": item.reference}


def from_row(row: dict) -> dict:
    """A row back to the item-file record that ``load_items`` reads (the inverse of :func:`to_row`)."""
    rec = {k: row[k] for k in ("uid", "category", "question", "video_path", "start_s", "end_s")}
    if row["kind"] == "mcq":
        rec.update(options=list(row["options"]), answer=row["answer"])
    elif row["kind"] == "to":
        rec.update(events=list(row["events"]), answer=list(row["answer_order"]))
    else:
        rec["reference"] = row["reference"]
    return rec


# ------------------------------------------------------------------ parsing

def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _parse_options(raw, where: str, problems: list[str]) -> tuple[str, ...] | None:
    return parse_options(raw, LETTERS, where, problems)


def _parse_mcq_answer(raw, options: tuple[str, ...], where: str, problems: list[str]) -> str | None:
    return parse_answer_key(raw, options, LETTERS, where, problems)


def _parse_events(raw, where: str, problems: list[str]) -> tuple[str, ...] | None:
    if not isinstance(raw, list) or len(raw) != N_EVENTS:
        got = f"{len(raw)} entries" if isinstance(raw, list) else type(raw).__name__
        problems.append(f"{where} field 'events': expected a list of exactly {N_EVENTS} labels, got {got}")
        return None
    out = []
    for i, v in enumerate(raw):
        if not isinstance(v, str) or not v.strip():
            problems.append(f"{where} field 'events': event {i + 1} must be a non-empty string, got {v!r}")
            return None
        out.append(" ".join(v.split()))
    normalised = [_norm(e) for e in out]
    if len(set(normalised)) != N_EVENTS:
        dup = sorted({e for e in normalised if normalised.count(e) > 1})
        problems.append(f"{where} field 'events': labels must be distinct (ignoring case), repeated: {dup}")
        return None
    return tuple(out)


def _parse_order(raw, events: tuple[str, ...], where: str, problems: list[str]) -> tuple[str, str, str] | None:
    by_norm = {_norm(e): e for e in events}
    if isinstance(raw, str):
        order = extract_order(raw, events)
        if order is None:
            problems.append(f"{where} field 'answer': cannot read an order of the 3 events {list(events)} "
                            f"from {raw!r}")
        return order
    if not isinstance(raw, list) or not all(isinstance(v, str) for v in raw):
        problems.append(f"{where} field 'answer': expected a list of the {N_EVENTS} event labels in their true "
                        f"order, got {raw!r}")
        return None
    mapped = [by_norm.get(_norm(v)) for v in raw]
    if len(raw) != N_EVENTS or None in mapped or len(set(mapped)) != N_EVENTS:
        problems.append(f"{where} field 'answer': {raw!r} is not a permutation of the events {list(events)}")
        return None
    return tuple(mapped)  # type: ignore[return-value]


def _parse_time(record: dict, name: str, where: str, problems: list[str]) -> float | None:
    v = record.get(name)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        problems.append(f"{where} field '{name}': expected a number of seconds, got {v!r}")
        return None
    return float(v)


def _is_relative(path: str) -> bool:
    if PurePosixPath(path).is_absolute() or PureWindowsPath(path).is_absolute() or PureWindowsPath(path).drive:
        return False
    return ".." not in PurePosixPath(path.replace("\\", "/")).parts


def parse_item(record: object, line: int, problems: list[str]) -> SureonItem | None:
    """One item from one JSON value; problems are appended (never raised) so all are reported at once."""
    if not isinstance(record, dict):
        problems.append(f"line {line}: expected a JSON object (one item), got {type(record).__name__}")
        return None
    uid = parse_uid(record.get("uid"))
    if uid is None:
        problems.append(f"line {line}: field 'uid': missing or not an integer/string, got {record.get('uid')!r}")
        return None
    where = f"item {uid} (line {line}):"
    start = len(problems)

    cat = resolve_category(record.get("category"))
    if cat is None:
        problems.append(f"{where} field 'category': unknown category {record.get('category')!r} "
                        f"(expected one of {', '.join(CATEGORY_CODES)}, or their full names)")
    question = record.get("question")
    if not isinstance(question, str) or not question.strip():
        problems.append(f"{where} field 'question': missing or empty")
    video_path = record.get("video_path")
    if not isinstance(video_path, str) or not video_path.strip():
        problems.append(f"{where} field 'video_path': missing or not a non-empty string")
    elif not _is_relative(video_path.strip()):
        problems.append(f"{where} field 'video_path': {video_path!r} must be a relative path inside the video "
                        "root (no absolute path, no '..')")
    start_s = _parse_time(record, "start_s", where, problems)
    end_s = _parse_time(record, "end_s", where, problems)
    if start_s is not None and end_s is not None:
        if start_s < 0:
            problems.append(f"{where} field 'start_s': must be >= 0, got {start_s:g}")
        elif start_s >= end_s:
            problems.append(f"{where} field 'end_s': must be greater than start_s, got start_s={start_s:g} "
                            f"and end_s={end_s:g}")

    options: tuple[str, ...] = ()
    events: tuple[str, ...] = ()
    answer = None
    reference = ""
    if cat is not None and cat.kind == "mcq":
        if "options" not in record:
            problems.append(f"{where} field 'options': missing (a {cat.code} item is a 7-option MCQ)")
        else:
            parsed = _parse_options(record["options"], where, problems)
            if parsed is not None:
                options = parsed
                if "answer" not in record:
                    problems.append(f"{where} field 'answer': missing")
                else:
                    answer = _parse_mcq_answer(record["answer"], options, where, problems)
    elif cat is not None and cat.kind == "to":
        if "events" not in record:
            problems.append(f"{where} field 'events': missing (a TO item orders 3 events)")
        else:
            parsed = _parse_events(record["events"], where, problems)
            if parsed is not None:
                events = parsed
                if "answer" not in record:
                    problems.append(f"{where} field 'answer': missing")
                else:
                    answer = _parse_order(record["answer"], events, where, problems)
    elif cat is not None:  # sm
        ref = record.get("reference")
        if not isinstance(ref, str) or not ref.strip():
            problems.append(f"{where} field 'reference': missing or empty (an SM item is judged against it)")
        else:
            reference = ref.strip()

    if len(problems) > start:
        return None
    return SureonItem(uid=uid, category=cat.code, group=cat.group, kind=cat.kind, question=question.strip(),
                      video_path=video_path.strip(), start_s=start_s, end_s=end_s, options=options,
                      answer=answer, events=events, reference=reference)


def load_items(path: str | os.PathLike) -> list[SureonItem]:
    """All items of a Sureon item file (JSONL), validated; DataError lists every problem."""
    path = Path(path).expanduser()
    problems: list[str] = []
    items: list[SureonItem] = []
    seen: dict[str, list[int]] = {}
    for line, record in iter_jsonl(path):
        item = parse_item(record, line, problems)
        if isinstance(record, dict):
            uid = parse_uid(record.get("uid"))
            if uid is not None:
                seen.setdefault(uid, []).append(line)
        if item is not None:
            items.append(item)
    for uid, lines in seen.items():
        if len(lines) > 1:
            problems.append(f"item {uid}: field 'uid' is duplicated (lines {', '.join(map(str, lines))})")
    if problems:
        raise DataError(problems, source=str(path))
    if not items:
        raise DataError("the item file contains no items", source=str(path))
    return items
