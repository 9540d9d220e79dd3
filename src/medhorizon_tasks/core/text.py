"""Small pieces of the text reports, written once: counts, item-named messages, capped listings, numbers."""

from __future__ import annotations

import math

__all__ = ["plural", "with_item", "listing", "pct", "clean_number", "report_json", "valid_unicode", "printable",
           "aligned"]


def plural(n: int, singular: str, plural_form: str | None = None) -> str:
    """``"1 entry"``, ``"3 entries"``, ``"0 videos"``."""
    word = singular if n == 1 else (plural_form or (singular[:-1] + "ies" if singular.endswith("y") else singular + "s"))
    return f"{n} {word}"


def with_item(uid, message) -> str:
    """``item <uid>: <message>``, without doubling a prefix the message already carries."""
    text = str(message)
    return text if text.startswith(f"item {uid}:") else f"item {uid}: {text}"


def listing(title: str, entries: list[str], limit: int = 20) -> list[str]:
    """``title (n):`` and one indented line per entry, at most ``limit`` of them; nothing for no entries."""
    if not entries:
        return []
    shown = [f"  {e}" for e in entries[:limit]]
    more = [f"  ... and {len(entries) - limit} more"] if len(entries) > limit else []
    return [f"{title} ({len(entries)}):", *shown, *more]


def pct(x, digits: int = 1, *, width: int = 0, unit: str = "", missing: str = "—") -> str:
    """A fraction 0..1 as percent text for the reports: ``pct(0.2624)`` -> ``"26.2"``.

    ``digits`` decimals, right-aligned in ``width`` characters (0: no padding), ``unit`` appended
    (``"%"``); ``None`` or NaN (no value: an empty group, an undefined metric) is ``missing``, centred
    in ``width``.
    """
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return missing.center(width) if width else missing
    return f"{100 * x:{width}.{digits}f}{unit}"


def aligned(rows: list[list[str]], *, right=(), indent: str = "", gap: str = "  ") -> list[str]:
    """Rows of cells as aligned text lines (the first row is usually the header): columns padded to their
    widest cell, left-aligned except the column indexes in ``right``; cells made :func:`printable`."""
    rows = [[printable(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(max(map(len, rows), default=0))]
    return [indent + gap.join(c.rjust(widths[i]) if i in right else c.ljust(widths[i])
                              for i, c in enumerate(r)).rstrip() for r in rows]


def clean_number(x, digits: int = 12):
    """A float rounded to ``digits`` decimals, so floating-point dust (2.8e-17 for 0) never reaches a report;
    other values unchanged."""
    if isinstance(x, float) and math.isfinite(x):
        return round(x, digits) + 0.0  # + 0.0 turns -0.0 into 0.0
    return x


def valid_unicode(text) -> str:
    """``text`` as valid Unicode: a byte that was not UTF-8 in a file name (Python keeps it as a lone
    surrogate, ``"\\udcff"``) is shown as ``\\xff``, any other lone surrogate as ``\\ud800``. Such text can
    be printed, written as UTF-8 and read back by the package's own JSON reader, which refuses lone surrogates."""
    text = str(text)
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        pass
    return "".join(_unicode_char(c) for c in text)


def printable(text) -> str:
    """``text`` fit for a terminal, one line: :func:`valid_unicode`, and every control or otherwise
    unprintable character (an escape sequence's ESC, a carriage return, a line break) becomes a space, so text
    from a file cannot move the cursor."""
    return "".join(ch if ch.isprintable() else " " for ch in valid_unicode(text))


def _unicode_char(c: str) -> str:
    if not "\ud800" <= c <= "\udfff":
        return c
    if "\udc80" <= c <= "\udcff":  # os.fsdecode's surrogateescape of one undecodable byte
        return f"\\x{ord(c) - 0xDC00:02x}"
    return f"\\u{ord(c):04x}"


def report_json(value, indent: int | None = 2) -> str:
    """A report as JSON text: floats cleaned (:func:`clean_number`), NaN and infinities written as ``null``
    (JSON has no NaN; ``json.dumps`` would write an invalid ``NaN``), text made :func:`valid_unicode` (a file
    name that is not UTF-8 would make the JSON unwritable as UTF-8)."""
    import json

    def clean(v):
        if isinstance(v, float):
            return clean_number(v) if math.isfinite(v) else None
        if isinstance(v, str):
            return valid_unicode(v)
        if isinstance(v, dict):
            return {clean(k): clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        return v

    return json.dumps(clean(value), indent=indent, ensure_ascii=False)
