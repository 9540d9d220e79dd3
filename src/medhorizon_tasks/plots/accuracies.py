"""Accuracies and their 95% intervals as the figures read them: :class:`Acc`, a number, or a summary mapping
(``ci95`` / ``ci95_bootstrap`` / ``ci95_wilson`` / ``ci95_lo`` and ``ci95_hi``, else Wilson from ``correct`` /
``n``), with the key vocabulary of accuracy dicts. The lowest module of :mod:`medhorizon_tasks.plots`: the
constants more than one of its modules uses live here."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..benchmarks.medhorizon.taxonomy import TASK_CODES

CHANCE = 0.25  # four-way multiple choice
SUMMARY_KEYS = ("fine_grained", "semantic_reasoning", "overall")
_SUMMARY_LABELS = {"fine_grained": "Fine-grained", "semantic_reasoning": "Semantic reasoning", "overall": "Overall"}
_KEY_ALIASES = {"fine_grained": "fine_grained", "finegrained": "fine_grained", "fine_grained_understanding":
                "fine_grained", "semantic_reasoning": "semantic_reasoning", "semantic": "semantic_reasoning",
                "overall": "overall", "ov": "overall", "ov.": "overall", "all": "overall"}
_TASK_BY_LOWER = {c.lower(): c for c in TASK_CODES}
DIAGNOSTIC_KINDS = ("budgets", "evidence", "order", "sampling")

#: How an interval was made -> the words the legend uses for it.
CI_METHODS = {
    "wilson": "Wilson score",
    "bootstrap": "percentile bootstrap over items",
    "wilson_lmms": "Wilson score, n = lmms-eval's effective samples",
    "given": "as given in the input",
}
_NO_CI = "the input gives no interval and no item counts"

SURGHI_METRICS = (("phase_acc", "Phase acc"), ("phase_f1", "Phase F1"), ("step_acc", "Step acc"),
                  ("step_f1", "Step F1"), ("multi_level", "Multi-level"), ("both_wrong", "Both-wrong ↓"),
                  ("both_right", "Both-right"), ("step_given_phase", "Step|Phase"), ("sibling", "Sibling"),
                  ("cousin", "Cousin ↓"), ("semantic_step", "Semantic step"))


@dataclass(frozen=True)
class Acc:
    """An accuracy (0..1) and, when known, its 95% interval ``[lo, hi]``; ``method`` is a key of
    :data:`CI_METHODS`, said in the legend."""

    value: float
    lo: float | None = None
    hi: float | None = None
    method: str | None = None

    @property
    def has_ci(self) -> bool:
        return self.lo is not None and self.hi is not None


# ------------------------------------------------------------------ values

def _norm(name: str) -> str:
    return re.sub(r"[\s\-]+", "_", str(name).strip().lower())


def _canon_key(key: str) -> str:
    """``overall`` / family name / task code for any accepted spelling; other keys unchanged."""
    n = _norm(key)
    if n in _KEY_ALIASES:
        return _KEY_ALIASES[n]
    return _TASK_BY_LOWER.get(n, str(key))


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


#: The largest count taken as one: every integer up to it is exact as a float (the statistics use floats).
MAX_COUNT = 2 ** 53


def _is_count(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= MAX_COUNT


#: The largest frame count a figure takes: a day of video at 30 fps is 2.6 million frames, and the paper's
#: budgets go to 512 (frame scaling) and 1 FPS caps of a few thousand; a larger count is a broken file.
MAX_FRAMES = 2 ** 24


def _frame_count(n, where: str) -> int:
    """``n`` as a number of frames (1 .. :data:`MAX_FRAMES`); ValueError naming ``where`` otherwise (a log axis
    of an absurd count cannot even be drawn)."""
    if not _is_count(n) or not 0 < n <= MAX_FRAMES:
        shown = repr(n) if len(repr(n)) <= 40 else repr(n)[:37] + "..."
        raise ValueError(f"{where}: expected a number of frames 1..{MAX_FRAMES:,}, got {shown}")
    return n


def _frame_digits(digits: str, where: str) -> int:
    """A frame count written in a task name (``medhorizon_frames64``), bounded before it is converted."""
    if len(digits) > 9:
        raise ValueError(f"{where}: expected a number of frames 1..{MAX_FRAMES:,}, got a {len(digits)}-digit number")
    return _frame_count(int(digits), where)


def _value(x, where: str) -> float | None:
    """An accuracy as a fraction, None when missing; a percent value (> 1) is an error, not guessed."""
    if x is None:
        return None
    if not _is_number(x):
        raise ValueError(f"{where}: accuracy must be a number 0..1 or None, got {x!r}")
    x = float(x)
    if math.isnan(x):
        return None
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"{where}: accuracy must be a fraction 0..1 (plots show it as percent), got {x!r}")
    return x


def _interval(ci, value: float, where: str) -> tuple[float, float]:
    if not isinstance(ci, (list, tuple)) or len(ci) != 2 or not all(_is_number(c) for c in ci):
        raise ValueError(f"{where}: expected a 95% interval [lo, hi] of fractions, got {ci!r}")
    lo, hi = float(ci[0]), float(ci[1])
    # Rounding in a writer may put an end a hair past the value; anything more is a broken file.
    if not (0.0 <= lo <= hi <= 1.0) or not lo - 1e-9 <= value <= hi + 1e-9:
        raise ValueError(f"{where}: interval {ci!r} is not [lo, hi] within 0..1 around the accuracy {value!r}")
    return min(lo, value), max(hi, value)


def _wilson(correct, n, value: float, where: str) -> Acc:
    from ..core.stats import wilson_ci

    if not (_is_count(correct) and _is_count(n) and n > 0 and correct <= n):
        return Acc(value)
    if abs(correct / n - value) > 1e-6:
        raise ValueError(f"{where}: accuracy {value!r} is not correct / n = {correct}/{n}")
    lo, hi = wilson_ci(correct, n)
    return Acc(value, min(lo, value), max(hi, value), "wilson")


def _summary_acc(d: Mapping, where: str, *, lo_hi_method: str = "given") -> Acc | None:
    """The accuracy of a summary mapping and its interval: ``ci95`` (named by ``ci_method``), else
    ``ci95_bootstrap``, ``ci95_wilson``, ``ci95_lo`` / ``ci95_hi``, else Wilson from ``correct`` / ``n``."""
    value = _value(d.get("accuracy"), f"{where}.accuracy")
    if value is None:
        return None
    method_of_ci95 = {"wilson": "wilson", "bootstrap": "bootstrap"}.get(str(d.get("ci_method", "")).lower(), "given")
    for key, method in (("ci95", method_of_ci95), ("ci95_bootstrap", "bootstrap"), ("ci95_wilson", "wilson")):
        if d.get(key) is not None:
            lo, hi = _interval(d[key], value, f"{where}.{key}")
            return Acc(value, lo, hi, method)
    if d.get("ci95_lo") is not None or d.get("ci95_hi") is not None:
        lo, hi = _interval([d.get("ci95_lo"), d.get("ci95_hi")], value, f"{where}.ci95_lo/ci95_hi")
        return Acc(value, lo, hi, lo_hi_method)
    return _wilson(d.get("correct"), d.get("n"), value, where)


def _acc(x, where: str) -> Acc | None:
    """An :class:`Acc` from a number, an Acc or a summary mapping; None when there is no accuracy."""
    if isinstance(x, Acc):
        value = _value(x.value, where)
        if value is None:
            return None
        if x.lo is None and x.hi is None:
            return Acc(value)
        lo, hi = _interval([x.lo, x.hi], value, f"{where} interval")
        return Acc(value, lo, hi, x.method if x.method in CI_METHODS else "given")
    if isinstance(x, Mapping):
        return _summary_acc(x, where)
    value = _value(x, where)
    return None if value is None else Acc(value)


def _accuracies(acc: Mapping, where: str, canon=_canon_key) -> dict[str, Acc | None]:
    if acc is None:
        return {}
    if not isinstance(acc, Mapping):
        raise ValueError(f"{where}: expected {{key: accuracy}}, got {type(acc).__name__}")
    return {canon(k): _acc(v, f"{where} {k!r}") for k, v in acc.items()}


def _ordered_runs(runs: Mapping, canon: dict, order: tuple[str, ...]) -> list[tuple[str, str]]:
    """(original key, canonical name) pairs: the known names in ``order``, then the others as given."""
    named = [(k, canon.get(_norm(k), None)) for k in runs]
    known = sorted([(k, c) for k, c in named if c], key=lambda kc: order.index(kc[1]))
    return known + [(k, str(k)) for k, c in named if not c]
