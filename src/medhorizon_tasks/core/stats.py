"""Confidence intervals and tests, as statsmodels / scipy compute them.

The statistics of the Sureon paper (sections 3-4, appendix D.1), on per-item
correctness. Input contract everywhere: one run of one model on one benchmark
is a mapping ``uid -> bool`` (True = the item was answered correctly); a plain
sequence of bools where only the rate matters. Accuracies are fractions in
0..1; reports multiply by 100.

- ``wilson_ci``: "the analytic Wilson score interval".
- ``bootstrap_ci`` / ``accuracy_summary``: "95% bootstrap confidence intervals
  ... non-parametric bootstrap intervals (10,000 resamples over benchmark
  items)", checked against Wilson.
- ``mcnemar_test`` / ``pairwise_mcnemar`` / ``format_pairwise``: "Because
  model (and surgeon) predictions are paired on the same benchmark samples,
  pairwise differences are tested using McNemar's test with Holm-Bonferroni
  correction across all (12 choose 2) = 66 model pairs" (Table 18).
- ``multimodal_gain``: "MG = S_v - S_wv as the accuracy difference between the
  visual (S_v) and blind (S_wv) passes"; ``paired_difference``: its interval
  (a paired bootstrap over the shared items) and McNemar's p, which the paper
  does not give.
- ``blind_consistency``: "we query each guesser multiple times at non-zero
  temperature and score it by its consistency, the fraction of trials in which
  it recovers the correct answer" (S, appendix B.4.2), thresholded at
  tau = 3/5 (appendix B.4.3).

Formulas are not invented here: the tests check each function against a hand
computation and against the library called directly. The Wilson interval,
McNemar's test and Holm's correction are statsmodels' own formulas, written
out (the same operations in the same order; the exact binomial tail in
integers, the chi-square tail as ``erfc``), because importing statsmodels
(which imports pandas and scipy.stats) costs seconds per process: more than
scoring a whole run. Scoring needs only ``wilson_ci``, which imports nothing;
numpy and scipy are imported by the functions that use them.
"""

from __future__ import annotations

import itertools
import math
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction

from .errors import DataError

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (command start-up time)
if TYPE_CHECKING:
    import numpy as np

__all__ = [
    "wilson_ci", "bootstrap_ci", "mean_ci", "accuracy_summary", "mcnemar_test", "holm_adjust",
    "pairwise_mcnemar", "format_pairwise", "multimodal_gain", "paired_difference", "format_difference",
    "blind_consistency",
    "MCNEMAR_EXACT_BELOW", "BLIND_TAU",
]

#: McNemar uses the exact binomial test when the discordant count b + c is below this.
MCNEMAR_EXACT_BELOW = 25
#: Blind-guesser consistency threshold of the paper ("S < tau = 3/5" passes).
BLIND_TAU = Fraction(3, 5)

# Above this many resampled values per batch, scipy's bootstrap is run in batches
# (10,000 resamples of 76K training items would otherwise need ~6 GB at once).
_BOOTSTRAP_MAX_CELLS = 20_000_000


_Z: dict[float, float] = {}


def _z(alpha: float) -> float:
    """The two-sided critical value z_{1 - alpha/2} (scipy's ``norm.isf(alpha / 2)`` to ~1e-15)."""
    z = _Z.get(alpha)
    if z is None:
        from statistics import NormalDist  # here: statistics is slow to import, and most runs need one z

        z = _Z[alpha] = NormalDist().inv_cdf(1.0 - alpha / 2.0)
    return z


def wilson_ci(correct: int, n: int, alpha: float = 0.05) -> tuple[float, float] | None:
    """Wilson score interval for a proportion; None when n == 0.

    Paper: "we verify our non-parametric bootstrap intervals ... against the
    analytic Wilson score interval". statsmodels' ``proportion_confint(correct,
    n, alpha, method="wilson")``, clipped to [0, 1] as there, in closed form
    (tests: equal to it within 1e-12): p = correct / n,
    (p + z^2 / 2n  -/+  z sqrt(p (1 - p) / n + z^2 / 4n^2)) / (1 + z^2 / n).
    ``correct`` outside 0..n is a DataError (statsmodels returns NaN).
    """
    if n <= 0:
        return None
    if not 0 <= correct <= n:
        raise DataError(f"wilson_ci: {correct!r} correct of {n!r} items is not a proportion")
    z = _z(alpha)
    z2 = z ** 2
    q = correct / n
    denom = 1 + z2 / n
    center = (q + z2 / (2 * n)) / denom
    dist = z * math.sqrt(q * (1.0 - q) / n + z2 / (4.0 * n ** 2))
    dist /= denom
    return float(min(max(center - dist, 0.0), 1.0)), float(min(max(center + dist, 0.0), 1.0))


# --------------------------------------------------------------------------- inputs

def _as_bool(value, where: str) -> bool:
    """A correctness value: bool, numpy bool, or the integers 0/1; anything else is an error
    (a None or a score would otherwise silently count as wrong or right)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    np = sys.modules.get("numpy")  # a numpy value implies numpy is loaded: no import needed to test for one
    if np is not None:
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, np.integer) and value in (0, 1):
            return bool(value)
    raise DataError(f"{where}: correctness must be a bool, got {value!r}")


def _as_bool_array(correct: Sequence[bool] | np.ndarray | Mapping[str, bool]) -> np.ndarray:
    import numpy as np

    if isinstance(correct, Mapping):
        return np.array([_as_bool(v, f"item {k}") for k, v in correct.items()], dtype=bool)
    arr = np.asarray(correct)
    if arr.ndim != 1:
        raise DataError(f"correctness must be one-dimensional, got shape {arr.shape}")
    if arr.dtype == bool:
        return arr
    return np.array([_as_bool(v, f"position {i}") for i, v in enumerate(arr.tolist())], dtype=bool)


def _show(uids: Iterable[str], limit: int = 5) -> str:
    uids = sorted(uids, key=str)
    text = ", ".join(map(str, uids[:limit]))
    return text + (f", ... ({len(uids)} in all)" if len(uids) > limit else "")


def _check_same_uids(a: Mapping, b: Mapping, name_a: str = "a", name_b: str = "b") -> list:
    """The shared uids in a fixed order; DataError (a ValueError) naming up to 5 uids per side."""
    only_a = a.keys() - b.keys()
    only_b = b.keys() - a.keys()
    if only_a or only_b:
        problems = []
        if only_a:
            problems.append(f"{len(only_a)} uid(s) only in {name_a}: {_show(only_a)}")
        if only_b:
            problems.append(f"{len(only_b)} uid(s) only in {name_b}: {_show(only_b)}")
        raise DataError(problems, source=f"paired comparison of {name_a} and {name_b} "
                                         "needs the same items")
    return sorted(a.keys(), key=str)


# --------------------------------------------------------------------------- intervals

def bootstrap_ci(correct: Sequence[bool] | np.ndarray, *, n_resamples: int = 10_000, seed: int = 0,
                 alpha: float = 0.05, method: str = "percentile") -> tuple[float, float] | None:
    """Bootstrap CI of the mean accuracy, resampling items (``scipy.stats.bootstrap``).

    Paper: "95% bootstrap confidence intervals", "non-parametric bootstrap
    intervals (10,000 resamples over benchmark items)". Items are resampled
    with replacement, all of them i.i.d. (no clustering by video, as in the
    paper); the generator is ``np.random.default_rng(seed)``, so one seed gives
    one interval.

    Method: percentile by default. The paper names no method; percentile is
    the plain "2.5th and 97.5th percentile of the resampled means" that such
    reports usually mean, its endpoints are always attainable accuracies in
    [0, 1], and it stays defined at the boundaries. scipy's own default, BCa,
    needs a jackknife acceleration that is undefined when every item agrees
    (scipy then warns and returns NaN). ``method`` is passed through
    ("percentile", "basic", "BCa") for callers that want another.

    None when there are no items. When all items are correct (or all wrong)
    every resample has the same mean p, so the interval is (p, p); it is
    returned directly, without calling scipy and without warnings. (A Wilson
    interval, unlike this, is not degenerate there - report both.)
    """
    import numpy as np

    x = _as_bool_array(correct)
    n = x.size
    if n == 0:
        return None
    p = float(x.mean())
    if x.all() or not x.any():
        return p, p
    from scipy.stats import bootstrap

    batch = None
    if n_resamples * n > _BOOTSTRAP_MAX_CELLS:
        batch = max(1, _BOOTSTRAP_MAX_CELLS // n)
    res = bootstrap((x.astype(float),), np.mean, n_resamples=n_resamples, batch=batch,
                    vectorized=True, axis=-1, confidence_level=1.0 - alpha, method=method,
                    rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def mean_ci(values: Sequence[float] | np.ndarray, *, n_resamples: int = 10_000, seed: int = 0,
            alpha: float = 0.05) -> tuple[float, float] | None:
    """Percentile bootstrap CI of the mean of real values (resampling items, as :func:`bootstrap_ci` does
    for correctness): the intervals of per-item diagnostics such as attention shares. NaN values are left
    out; None when none is left; (x, x) when every value is x (one item included)."""
    import numpy as np

    x = np.asarray([float(v) for v in values], dtype=float)
    x = x[~np.isnan(x)]
    if x.size == 0:
        return None
    if np.all(x == x[0]):
        return float(x[0]), float(x[0])
    from scipy.stats import bootstrap

    res = bootstrap((x,), np.mean, n_resamples=n_resamples, vectorized=True, axis=-1,
                    confidence_level=1.0 - alpha, method="percentile", rng=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def accuracy_summary(correct: Sequence[bool] | np.ndarray | Mapping[str, bool], *,
                     n_resamples: int = 10_000, seed: int = 0) -> dict:
    """Accuracy with both 95% intervals, as in the paper's Table 14 ("Accuracy (%) |
    Bootstrap 95% CI (%)") and its check "against the analytic Wilson score interval".

    {"accuracy", "correct", "n", "ci95_bootstrap": [lo, hi], "ci95_wilson": [lo, hi]};
    fractions in 0..1; accuracy and both intervals are None when n == 0.
    """
    x = _as_bool_array(correct)
    n = int(x.size)
    k = int(x.sum())
    boot = bootstrap_ci(x, n_resamples=n_resamples, seed=seed)
    wil = wilson_ci(k, n)
    return {"accuracy": k / n if n else None, "correct": k, "n": n,
            "ci95_bootstrap": list(boot) if boot is not None else None,
            "ci95_wilson": list(wil) if wil is not None else None}


# --------------------------------------------------------------------------- paired tests

def _mcnemar(only_a: int, only_b: int) -> tuple[float, float, bool]:
    """(statistic, p-value, exact) from the discordant counts, as statsmodels' ``mcnemar(table,
    exact=only_a + only_b < MCNEMAR_EXACT_BELOW, correction=True)`` computes them."""
    n = only_a + only_b
    if n < MCNEMAR_EXACT_BELOW:
        k = min(only_a, only_b)
        # 2 * P(X <= k), X ~ Binomial(n, 1/2), at most 1: in integers, so the one rounding is the division.
        tail = sum(math.comb(n, i) for i in range(k + 1))
        return float(k), min(1.0, 2 * tail / 2 ** n), True
    statistic = (abs(only_a - only_b) - 1) ** 2 / (1.0 * n)
    return statistic, math.erfc(math.sqrt(statistic / 2.0)), False  # chi-square, 1 df: P(X > s)


def mcnemar_test(a: Mapping[str, bool], b: Mapping[str, bool]) -> dict:
    """McNemar's test of two runs paired on the same items (statsmodels' formulas).

    Paper: "Because model (and surgeon) predictions are paired on the same
    benchmark samples, pairwise differences are tested using McNemar's test".

    Both runs must cover the same uids (DataError, a ValueError, otherwise: an
    unpaired item would silently drop out of the test). Table, in
    statsmodels' layout::

                     b correct     b wrong
        a correct    both_correct  only_a
        a wrong      only_b        both_wrong

    Only the discordant cells only_a (b) and only_b (c) carry information.
    When b + c < 25 the exact binomial test is used (``exact=True``: two-sided
    binomial on min(b, c) of b + c trials at p = 1/2; statistic = min(b, c));
    otherwise the chi-square statistic with continuity correction,
    (|b - c| - 1)^2 / (b + c), on 1 degree of freedom. 25 is the usual rule
    of thumb (the chi-square approximation is poor for few discordant pairs;
    the exact test is conservative, so it is not used where the approximation
    is good). With no discordant pairs the exact test gives p = 1. The
    p-values equal statsmodels' ``mcnemar`` within 1e-12 relative (the tests
    check it): the binomial tail is summed exactly in integers, the chi-square
    tail is ``erfc(sqrt(s / 2))``.

    Returns {"n", "both_correct", "only_a", "only_b", "both_wrong",
    "statistic", "pvalue", "exact"}.
    """
    if list(a) == list(b) and set(map(type, a.values())) | set(map(type, b.values())) <= {bool}:
        # the same items in the same order, plain booleans (every entry of a board): counted by C loops, not
        # item by item (ranking a board of 1,000 entries ran 999 of these tests at about 7 ms each)
        uids = a
        cells = Counter(zip(a.values(), b.values()))
        both, only_a = cells[(True, True)], cells[(True, False)]
        only_b, neither = cells[(False, True)], cells[(False, False)]
    else:
        uids = _check_same_uids(a, b)
        cells = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
        for uid in uids:
            cells[(_as_bool(a[uid], f"a: item {uid}"), _as_bool(b[uid], f"b: item {uid}"))] += 1
        both, only_a = cells[(True, True)], cells[(True, False)]
        only_b, neither = cells[(False, True)], cells[(False, False)]
    statistic, pvalue, exact = _mcnemar(only_a, only_b)
    return {"n": len(uids), "both_correct": both, "only_a": only_a, "only_b": only_b,
            "both_wrong": neither, "statistic": statistic, "pvalue": pvalue, "exact": exact}


def holm_adjust(pvalues: Sequence[float], alpha: float = 0.05) -> tuple[list[float], list[bool]]:
    """Holm-Bonferroni adjusted p-values and rejections, as statsmodels' ``multipletests(method="holm")``.

    Paper: "Holm-Bonferroni correction across all ... model pairs". Note
    ``method="holm"``: statsmodels' default is Holm-Sidak, which gives
    slightly smaller adjusted values. Holm: sort ascending, multiply the i-th
    smallest (i = 0..m-1) by m - i, take the running maximum, cap at 1; a
    hypothesis is rejected while every smaller p-value is at most alpha / (m - i).
    statsmodels' numpy operations, in its order (the tests check equality).
    """
    import numpy as np

    p = np.asarray(pvalues, dtype=float)
    if p.size == 0:
        return [], []
    order = np.argsort(p)
    ps = np.take(p, order)
    m = len(ps)
    notreject = ps > alpha / np.arange(m, 0, -1)
    first = np.nonzero(notreject)[0]
    notreject[(first[0] if first.size else m):] = True
    adjusted = np.maximum.accumulate(ps * np.arange(m, 0, -1))
    adjusted[adjusted > 1] = 1
    out_p = np.empty_like(adjusted)
    out_p[order] = adjusted
    out_r = np.empty_like(notreject)
    out_r[order] = ~notreject
    return [float(v) for v in out_p], [bool(v) for v in out_r]


def pairwise_mcnemar(runs: Mapping[str, Mapping[str, bool]], *, alpha: float = 0.05) -> dict:
    """McNemar's test for every unordered pair of runs, Holm-corrected over all pairs.

    Paper (Table 18): "McNemar's test on paired predictions, Holm-Bonferroni
    corrected across all (12 choose 2) = 66 model pairs ... * denotes
    significance at the Holm-corrected 0.05 level."

    ``runs``: name -> (uid -> bool), all on the same uids (DataError
    otherwise, naming the runs). Pairs are in ``itertools.combinations``
    order of the runs as given (a before b). Each pair: {"a", "b",
    "accuracy_a", "accuracy_b", "delta" (accuracy_a - accuracy_b, the
    paper's Delta Acc.), "n", "only_a", "only_b", "statistic", "exact",
    "pvalue" (raw), "pvalue_holm", "significant" (Holm-adjusted p <= alpha)}.
    Returns {"runs": [names], "accuracy": {name: acc}, "ci95": {name: [lo, hi] (Wilson)}, "n": items,
    "pairs": [...], "alpha"}.
    Each pair's numbers are those of :func:`mcnemar_test` on the two runs; the
    discordant counts of all pairs come from one matrix product.
    """
    import numpy as np

    names = list(runs)
    uids: list = []
    if names:
        ref = names[0]
        for other in names[1:]:
            _check_same_uids(runs[ref], runs[other], repr(ref), repr(other))
        uids = sorted(runs[ref].keys(), key=str)
    accuracy, ci95 = {}, {}
    for name in names:
        x = _as_bool_array(runs[name])
        accuracy[name] = float(x.mean()) if x.size else None
        bounds = wilson_ci(int(x.sum()), int(x.size))  # 95%, whatever alpha the tests use
        ci95[name] = list(bounds) if bounds else None
    # One row per run, the items in one order: only_a of (i, j) = #(row i correct and row j wrong).
    rows = np.array([[runs[name][u] for u in uids] for name in names], dtype=np.int64).reshape(len(names), len(uids))
    only = rows @ (1 - rows).T
    index = {name: i for i, name in enumerate(names)}
    pairs = []
    for a, b in itertools.combinations(names, 2):
        only_a, only_b = int(only[index[a], index[b]]), int(only[index[b], index[a]])
        statistic, pvalue, exact = _mcnemar(only_a, only_b)
        acc_a, acc_b = accuracy[a], accuracy[b]
        pairs.append({"a": a, "b": b, "accuracy_a": acc_a, "accuracy_b": acc_b,
                      "delta": (acc_a - acc_b) if acc_a is not None else None,
                      "n": len(uids), "only_a": only_a, "only_b": only_b,
                      "statistic": statistic, "exact": exact, "pvalue": pvalue})
    adjusted, reject = holm_adjust([p["pvalue"] for p in pairs], alpha=alpha)
    for pair, adj, rej in zip(pairs, adjusted, reject):
        pair["pvalue_holm"] = adj
        pair["significant"] = rej
    return {"runs": names, "accuracy": accuracy, "ci95": ci95, "n": len(uids), "pairs": pairs, "alpha": alpha}


def _fmt_p(p: float) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def format_pairwise(result: Mapping) -> str:
    """The pairwise result of ``pairwise_mcnemar`` as a terminal matrix.

    Rows and columns are the runs (columns numbered, to keep long names out of
    the header); a cell is the Holm-adjusted McNemar p-value, with ``*`` where
    it is significant at alpha (as the paper's Table 18); the diagonal shows
    each run's accuracy in %.
    """
    names = list(result["runs"])
    alpha = result["alpha"]
    acc = dict(result.get("accuracy") or {})
    cell: dict[tuple[str, str], str] = {}
    for pair in result["pairs"]:
        text = _fmt_p(pair["pvalue_holm"]) + ("*" if pair["significant"] else " ")
        cell[(pair["a"], pair["b"])] = cell[(pair["b"], pair["a"])] = text
        acc.setdefault(pair["a"], pair["accuracy_a"])
        acc.setdefault(pair["b"], pair["accuracy_b"])
    for name in names:
        a = acc.get(name)
        cell[(name, name)] = (f"{100 * a:.1f}%" if a is not None else "n/a") + " "
    labels = [f"({i + 1}) {name}" for i, name in enumerate(names)]
    lw = max([len(s) for s in labels] + [1])
    cw = max([len(v) for v in cell.values()] + [len(f"({len(names)})")])
    lines = [" " * lw + " | " + " ".join(f"({j + 1})".rjust(cw) for j in range(len(names)))]
    lines.append("-" * len(lines[0]))
    for label, row in zip(labels, names):
        lines.append(label.ljust(lw) + " | "
                     + " ".join(cell.get((row, col), "").rjust(cw) for col in names))
    lines.append("")
    lines.append(f"cells: McNemar p, Holm-corrected over {len(result['pairs'])} pair(s); "
                 f"* significant at alpha={alpha:g}; diagonal: accuracy")
    ci95 = result.get("ci95") or {}
    if any(ci95.get(name) for name in names):
        lines.append("")
        lines.append(f"accuracy [95% Wilson interval] over n = {result.get('n')} items:")
        for label, name in zip(labels, names):
            a, ci = acc.get(name), ci95.get(name)
            shown = f"{100 * a:.1f}%" if a is not None else "n/a"
            if ci:
                shown += f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"
            lines.append(f"  {label.ljust(lw)}  {shown}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- visual dependence

def multimodal_gain(visual: Mapping[str, bool], blind: Mapping[str, bool],
                    groups: Mapping[str, str] | None = None) -> dict:
    """Multimodal gain MG = S_v - S_wv on the same items, overall and per group.

    Paper: "It is defined as the accuracy difference between a model given the
    visual input (S_v) and the same model answering blind (S_wv):
    MG = S_v - S_wv" (reported per category in Table 3, in points; here a
    fraction in -1..1).

    ``visual`` and ``blind`` must cover the same uids (DataError, a
    ValueError, otherwise). ``groups`` maps uid -> group (e.g. category);
    every scored uid needs one (DataError otherwise), extra uids are ignored.
    Returns {"overall": MG, "by_group": {group: MG}, "s_v", "s_wv", "n"};
    ``overall`` and the accuracies are None when there are no items.
    """
    uids = _check_same_uids(visual, blind, "visual", "blind")

    import numpy as np

    def gain(subset: list) -> tuple[float, float, float]:
        s_v = float(np.mean([_as_bool(visual[u], f"visual: item {u}") for u in subset]))
        s_wv = float(np.mean([_as_bool(blind[u], f"blind: item {u}") for u in subset]))
        return s_v - s_wv, s_v, s_wv

    out: dict = {"overall": None, "by_group": {}, "s_v": None, "s_wv": None, "n": len(uids)}
    if uids:
        out["overall"], out["s_v"], out["s_wv"] = gain(uids)
    if groups is not None:
        missing = [u for u in uids if u not in groups]
        if missing:
            raise DataError(f"{len(missing)} uid(s) without a group: {_show(missing)}",
                            source="multimodal_gain")
        members: dict[str, list] = {}
        for u in uids:
            members.setdefault(groups[u], []).append(u)
        out["by_group"] = {g: gain(members[g])[0] for g in sorted(members, key=str)}
    return out


def paired_difference(a: Mapping[str, bool], b: Mapping[str, bool], *, n_resamples: int = 10_000, seed: int = 0,
                      alpha: float = 0.05, names: tuple[str, str] = ("a", "b")) -> dict:
    """Accuracy of ``a`` minus accuracy of ``b`` on the same items, with a paired bootstrap interval and
    McNemar's p: what MG = S_v - S_wv (``a`` visual, ``b`` blind) needs to be compared with 0.

    Paired: one resample draws item indices with replacement and takes both runs' answers on those items,
    so the difference's interval reflects that the two runs share their items (an unpaired combination of
    the two accuracies' intervals would be far too wide). The difference of two means on the same
    resample is the mean of the per-item differences d = a - b (each -1, 0 or 1), so this is
    ``scipy.stats.bootstrap`` (percentile, ``np.random.default_rng(seed)``) of the mean of d, as
    :func:`bootstrap_ci` for one run; when every d is the same the interval is (d, d) (no resample can
    differ) and McNemar's p is 1 when that d is 0. p: :func:`mcnemar_test` (statsmodels' formulas;
    exact binomial below 25 discordant pairs).

    Returns {"difference", "ci95_bootstrap": [lo, hi], "pvalue", "exact", "n", "only_a", "only_b",
    "ci_method"}; difference, interval and p are None when there are no items. Both runs must cover the
    same uids (DataError naming them otherwise).
    """
    import numpy as np

    uids = _check_same_uids(a, b, *names)
    test = mcnemar_test(a, b)
    out = {"difference": None, "ci95_bootstrap": None, "pvalue": None, "exact": test["exact"], "n": len(uids),
           "only_a": test["only_a"], "only_b": test["only_b"],
           "ci_method": f"paired percentile bootstrap over items ({n_resamples} resamples, seed {seed})"}
    if not uids:
        return out
    d = np.array([int(_as_bool(a[u], f"{names[0]}: item {u}")) - int(_as_bool(b[u], f"{names[1]}: item {u}"))
                  for u in uids], dtype=float)
    out["difference"] = float(d.mean())
    out["pvalue"] = test["pvalue"]
    if np.all(d == d[0]):
        out["ci95_bootstrap"] = [float(d[0]), float(d[0])]
        return out
    from scipy.stats import bootstrap

    batch = max(1, _BOOTSTRAP_MAX_CELLS // d.size) if n_resamples * d.size > _BOOTSTRAP_MAX_CELLS else None
    res = bootstrap((d,), np.mean, n_resamples=n_resamples, batch=batch, vectorized=True, axis=-1,
                    confidence_level=1.0 - alpha, method="percentile", rng=np.random.default_rng(seed))
    out["ci95_bootstrap"] = [float(res.confidence_interval.low), float(res.confidence_interval.high)]
    return out


def format_difference(diff: Mapping, *, p: bool = True) -> str:
    """``+12.5 [+3.1, +21.9], McNemar p=0.012``: a :func:`paired_difference` in points (or ``—``)."""
    if diff.get("difference") is None:
        return "—"
    text = f"{100 * diff['difference']:+.1f}"
    ci = diff.get("ci95_bootstrap")
    if ci:
        text += f" [{100 * ci[0]:+.1f}, {100 * ci[1]:+.1f}]"
    if p and diff.get("pvalue") is not None:
        text += f", McNemar p{'<0.001' if diff['pvalue'] < 0.001 else '=' + format(diff['pvalue'], '.3f')}"
    return text


def blind_consistency(runs: Sequence[Mapping[str, str | None]], answers: Mapping[str, str], *,
                      tau: float | Fraction = BLIND_TAU) -> dict:
    """Blind-guesser consistency S per item, flagged when S >= tau.

    Paper (appendix B.4.2): "we query each guesser multiple times at non-zero
    temperature and score it by its consistency, the fraction of trials in
    which it recovers the correct answer":
    S(g, x) = (1/R) sum_r 1[g_r(Q, O) = A]; a configuration passes when the
    guesser fails, "S < tau = 3/5" (B.4.3), so an item is flagged (answerable
    blind) when S >= tau.

    ``runs``: R blind runs of one guesser, each uid -> extracted answer (a
    letter, or None when unextractable). ``answers``: uid -> gold answer; the
    items scored are exactly these. A uid missing from a run, or None, counts
    as not recovered; a run with uids outside ``answers`` is an error
    (DataError), as it means the runs and the key belong to different item
    sets. Answers are compared exactly (normalising is the extractor's job).
    tau is compared as a fraction (3/5 exactly; a float is rounded to the
    nearest fraction with denominator <= 10^6), so 3 of 5 is flagged, 2 of 5
    is not.

    Returns {"items": {uid: {"S", "n_recovered", "flagged"}}, "n_items",
    "n_flagged", "n_runs", "tau"}.
    """
    runs = list(runs)
    if not runs:
        raise DataError("blind_consistency needs at least one run")
    t = tau if isinstance(tau, Fraction) else Fraction(tau).limit_denominator(1_000_000)
    if not 0 < t <= 1:
        raise DataError(f"tau must be in (0, 1], got {tau!r}")
    for r, run in enumerate(runs):
        extra = run.keys() - answers.keys()
        if extra:
            raise DataError(f"run {r}: {len(extra)} uid(s) not in the answer key: {_show(extra)}",
                            source="blind_consistency")
    R = len(runs)
    items = {}
    for uid in sorted(answers, key=str):
        gold = answers[uid]
        k = sum(1 for run in runs if run.get(uid) is not None and run.get(uid) == gold)
        s = Fraction(k, R)
        items[uid] = {"S": float(s), "n_recovered": k, "flagged": s >= t}
    n_flagged = sum(1 for v in items.values() if v["flagged"])
    return {"items": items, "n_items": len(items), "n_flagged": n_flagged, "n_runs": R,
            "tau": float(t)}
