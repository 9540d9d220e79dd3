"""Extractions kept on disk between commands: ``compare`` (or a leaderboard build) of runs that ``score`` already
read gets their answers from what ``score`` stored instead of reading every output again.

* **What is stored**: the readings (letter, status) of one batch -- the model outputs of one predictions file
  scored against one set of items, under one rule -- in one small JSON file.
* **Key**: a hash of everything the readings depend on: this extractor's version (a hash of the source of
  :mod:`medhorizon_tasks.core.extract`, so that any change to a rule makes every older entry unreachable), the
  Python version (``re`` and ``unicodedata`` are part of the rules), the rule's name, and every output text
  with its options, in order. The same outputs scored again find the entry; anything else does not.
* **Validation**: an entry is used only when it is whole (one reading per output, each a letter -- ``ok`` --
  or the code of another status); anything else is read again and the entry rewritten, never trusted.
* **Writing**: atomically (:mod:`medhorizon_tasks.core.safeio`); concurrent writers of one entry write the same
  bytes. A cache that cannot be written (read-only, full disk) costs the time to extract again next time,
  never a failure.

Where: ``$MEDHORIZON_EXTRACTION_CACHE`` (a folder; ``0`` / ``off`` turns the cache off), default
``~/.cache/medhorizon_tasks/extractions`` (``$XDG_CACHE_HOME`` if set); one byte per output and rule. Deleting
the folder costs one extraction per output on next use. Batches of fewer than :data:`MIN_BATCH` outputs are
not stored (reading them again is cheaper than a file).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from ..settings import env_text
from .choice import Extraction
from .letters import _ALPHABET

__all__ = ["CACHE_ENV", "MIN_BATCH", "cache_root", "extractor_version", "extract_many"]

CACHE_ENV = "MEDHORIZON_EXTRACTION_CACHE"
MIN_BATCH = 100
_OFF = {"0", "off", "false", "no", "none"}
_FORMAT = 2  # of the entry files


def cache_root() -> Path | None:
    """The cache folder, or None when ``$MEDHORIZON_EXTRACTION_CACHE`` turns the cache off."""
    value = env_text(CACHE_ENV) or ""
    if value.lower() in _OFF and value:
        return None
    if value:
        return Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "medhorizon_tasks" / "extractions"


@functools.lru_cache(maxsize=1)
def extractor_version() -> str:
    """A hash of the extractor's source files, the Python version and the Unicode database: what decides a
    reading besides the output and its options."""
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{_FORMAT}|{sys.version}|{unicodedata.unidata_version}".encode())
    for path in sorted(Path(__file__).parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def _content(pairs: Sequence[tuple[str, Sequence[str] | None]]) -> str:
    """A hash of every output text with its options, in order (each length-prefixed: no two batches share
    one)."""
    h = hashlib.blake2b(digest_size=16)
    update = h.update
    update(b"%d\0" % len(pairs))
    for text, options in pairs:
        b = text.encode("utf-8", "surrogatepass")
        update(b"%d:" % len(b))
        update(b)
        if options is None:
            update(b"-")
            continue
        update(b"%d[" % len(options))
        for o in options:
            ob = (o if isinstance(o, str) else "\0" + repr(o)).encode("utf-8", "surrogatepass")
            update(b"%d:" % len(ob))
            update(ob)
    return h.hexdigest()


# A reading as one character: its letter when ``ok``, else its status's code.
_CODES = {"empty": "e", "refusal": "r", "hedge": "h", "unparsed": "u"}
_DECODE = {**{c: Extraction(c, "ok") for c in _ALPHABET}, **{v: Extraction(None, k) for k, v in _CODES.items()}}


def _load(path: Path, n: int) -> list[Extraction] | None:
    """The entry's readings when it is whole, else None."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("format") != _FORMAT:
        return None
    readings = data.get("readings")
    if not isinstance(readings, str) or len(readings) != n:
        return None
    try:
        return [_DECODE[c] for c in readings]
    except KeyError:  # a character that is no reading
        return None


def _store(path: Path, readings: list[Extraction]) -> None:
    from ..safeio import atomic_write_text

    text = json.dumps({"format": _FORMAT, "readings": "".join(r.letter if r.status == "ok" else _CODES[r.status]
                                                              for r in readings)})
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(path, text)
    except OSError:  # the cache is a saving, never a condition of scoring
        pass


def extract_many(rules: Mapping[str, Callable[[str, Sequence[str] | None], Extraction]],
                 pairs: Sequence[tuple[str, Sequence[str] | None]]) -> dict[str, list[Extraction]]:
    """``{name: [rule(text, options) for text, options in pairs]}`` for each named rule, read from the cache
    when these outputs were read under that rule before, else extracted and stored (:data:`MIN_BATCH` outputs
    or more)."""
    root = cache_root() if len(pairs) >= MIN_BATCH else None
    if root is None:
        return {name: [rule(text, options) for text, options in pairs] for name, rule in rules.items()}
    content = _content(pairs)
    out = {}
    for name, rule in rules.items():
        key = hashlib.blake2b(f"{extractor_version()}|{name}|{content}".encode(), digest_size=16).hexdigest()
        path = root / f"{key}.json"
        found = _load(path, len(pairs))
        if found is None:
            found = [rule(text, options) for text, options in pairs]
            _store(path, found)
        out[name] = found
    return out
