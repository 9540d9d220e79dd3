"""Helpers shared by several command modules: the usage exit status, loading a MedHorizon release by
benchmark name, and ``[KEY=]VALUE`` arguments."""

from __future__ import annotations

from ..core.errors import MedHorizonError

__all__ = ["EXIT_USAGE", "BENCHMARKS", "load_items", "pairs", "add_extraction_argument", "medhorizon_only"]

EXIT_USAGE = 2
BENCHMARKS = ("medhorizon", "sureon", "surghi")


def load_items(benchmark: str, data: str | None):
    if benchmark != "medhorizon":
        raise MedHorizonError(f"unknown benchmark {benchmark!r} (available: medhorizon)")
    from ..benchmarks.medhorizon.release import load_release

    return load_release(data)


def add_extraction_argument(parser, what: str) -> None:
    """``--extraction {default,authors}``: the MedHorizon answer rule that decides each item."""
    from ..core.extract import EXTRACTIONS

    parser.add_argument("--extraction", choices=list(EXTRACTIONS), default="default",
                        help=f"medhorizon: the answer rule that {what} (default: the package's; authors: the "
                        "MedHorizon authors' scorer's, the first standalone A-D, else the first character)")


def medhorizon_only(benchmark: str, extraction: str) -> None:
    """The authors' rule is MedHorizon's: refuse it for another benchmark."""
    if benchmark != "medhorizon" and extraction != "default":
        raise MedHorizonError(f"--extraction {extraction} is the MedHorizon authors' rule: it applies to "
                              "--benchmark medhorizon only")


def pairs(values: list[str] | None, known: tuple[str, ...] | None, what: str) -> dict[str | None, list[str]]:
    """``[KEY=]VALUE`` arguments -> ``{key or None: [values]}``; with ``known``, KEY must be one of them."""
    out: dict[str | None, list[str]] = {}
    for v in values or []:
        key, sep, rest = v.partition("=")
        if sep and (known is None or key in known) and rest:
            out.setdefault(key, []).append(rest)
        elif sep and known is None:
            raise MedHorizonError(f"{what} {v!r}: expected SOURCE=PATH")
        else:
            out.setdefault(None, []).append(v)
    return out
