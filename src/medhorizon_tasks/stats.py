"""Confidence intervals and tests, delegated to statsmodels / scipy."""

from __future__ import annotations


def wilson_ci(correct: int, n: int, alpha: float = 0.05) -> tuple[float, float] | None:
    """Wilson score interval for a proportion (statsmodels); None when n == 0."""
    if n <= 0:
        return None
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(correct, n, alpha=alpha, method="wilson")
    return float(lo), float(hi)
