"""The oracle report's account of what each item was shown: the release's evidence images or a fallback.

The paper's oracle shows "the variable number of available evidence images for
each item" (MedHorizon section 8, RQ2): every listed image. Items the release
lists no images for get one of the package's fallbacks (their evidence
windows' 1 FPS frames, or the whole video's, thinned to the cap), which the
paper does not describe. A run's oracle number is the paper's only as far as
its items got their images, so the report says how many items got each kind
and how many frames they were shown (min / median / max).
"""

from __future__ import annotations

from .release_check import ORACLE_SOURCES

__all__ = ["oracle_sources", "oracle_source_lines"]


def oracle_sources(records: list[dict]) -> dict:
    """``{"oracle_sources": {kind: {"n", "min", "median", "max"}}}`` over the oracle records that carry their
    ``oracle_source`` and ``oracle_frames`` (kinds in :data:`ORACLE_SOURCES` order, only those present);
    ``{}`` for records of another mode. A video error counts under its kind with the 0 frames it was shown."""
    by_kind: dict[str, list[int]] = {}
    for r in records:
        if r.get("oracle_source") in ORACLE_SOURCES and r.get("oracle_frames") is not None:
            by_kind.setdefault(r["oracle_source"], []).append(int(r["oracle_frames"]))
    if not by_kind:
        return {}
    import statistics  # here only: command start-up does not need it

    return {"oracle_sources": {k: {"n": len(c), "min": min(c), "median": statistics.median(c), "max": max(c)}
                               for k in ORACLE_SOURCES if (c := by_kind.get(k))}}


def oracle_source_lines(rep: dict) -> list[str]:
    """``oracle: 2 items shown the release's listed evidence images, every one (the paper's oracle): frames min 3
    / median 51.5 / max 100``, one line per kind present."""
    lines = []
    for kind, d in (rep.get("oracle_sources") or {}).items():
        lines.append(f"oracle: {d['n']} item{'s' if d['n'] != 1 else ''} shown {ORACLE_SOURCES[kind]}: "
                     f"frames min {d['min']} / median {d['median']:g} / max {d['max']}")
    return lines
