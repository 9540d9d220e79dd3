"""Reference tests for ``medhorizon_tasks.core.stats``: each wrapper against a hand
computation and, where one exists, against the library called directly."""

import itertools
import math
import subprocess
import sys
import warnings

import numpy as np
import pytest

from medhorizon_tasks.core import stats as S

Z975 = 1.959963984540054  # standard normal 97.5th percentile


def run(values, prefix="u"):
    """uid -> bool from a list of 0/1."""
    return {f"{prefix}{i:02d}": bool(v) for i, v in enumerate(values)}


def paired(both, only_a, only_b, neither):
    """Two runs on the same uids with the given 2x2 McNemar table."""
    a, b = [], []
    for n, (va, vb) in ((both, (1, 1)), (only_a, (1, 0)), (only_b, (0, 1)), (neither, (0, 0))):
        a += [va] * n
        b += [vb] * n
    return run(a), run(b)


# ----------------------------------------------------------------------------- Wilson

def test_wilson_matches_closed_form():
    k, n = 7, 20
    p = k / n
    z2 = Z975 ** 2
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z975 / (1 + z2 / n) * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n))
    lo, hi = S.wilson_ci(k, n)
    assert lo == pytest.approx(centre - half, abs=1e-12)
    assert hi == pytest.approx(centre + half, abs=1e-12)
    assert (round(lo, 4), round(hi, 4)) == (0.1812, 0.5671)
    assert S.wilson_ci(0, 0) is None


def test_wilson_equals_statsmodels():
    from statsmodels.stats.proportion import proportion_confint

    for alpha in (0.05, 0.01, 0.1, 0.2, 0.001):
        for n in [*range(1, 41), 100, 400, 1253, 76_000]:
            for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
                ref = proportion_confint(k, n, alpha=alpha, method="wilson")
                assert S.wilson_ci(k, n, alpha) == pytest.approx(ref, abs=1e-12, rel=0), (k, n, alpha)
    for k, n in ((0, 5), (5, 5), (0, 1253), (1253, 1253)):
        lo, hi = S.wilson_ci(k, n)
        assert 0.0 <= lo < hi <= 1.0


def test_wilson_rejects_counts_that_are_not_a_proportion():
    for k, n in ((11, 10), (-1, 10)):
        with pytest.raises(ValueError, match="not a proportion"):
            S.wilson_ci(k, n)


def test_wilson_imports_no_statistics_library():
    # Scoring computes one Wilson interval per report; statsmodels (with pandas and scipy.stats)
    # would cost seconds per `score` process, numpy a few tenths.
    code = ("import sys, medhorizon_tasks.core.stats as S; S.wilson_ci(3, 10); "
            "print(sorted(m for m in ('statsmodels', 'scipy', 'pandas', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# ----------------------------------------------------------------------------- bootstrap

def _sample_400():
    # 210 of 400 correct, in a fixed shuffled order
    x = np.array([True] * 210 + [False] * 190)
    np.random.default_rng(123).shuffle(x)
    return x


def test_bootstrap_reproducible_per_seed_and_matches_scipy():
    from scipy.stats import bootstrap

    x = _sample_400()
    a = S.bootstrap_ci(x, seed=7)
    assert a == S.bootstrap_ci(list(x), seed=7)  # same seed, same interval; lists accepted
    assert a != S.bootstrap_ci(x, seed=8)
    ref = bootstrap((x.astype(float),), np.mean, n_resamples=10_000, vectorized=True, axis=-1,
                    method="percentile", rng=np.random.default_rng(7))
    assert a == (ref.confidence_interval.low, ref.confidence_interval.high)


def test_bootstrap_close_to_normal_approximation_n400():
    x = _sample_400()
    p = 210 / 400
    half = Z975 * math.sqrt(p * (1 - p) / 400)  # 0.04894
    lo, hi = S.bootstrap_ci(x, seed=0)
    assert lo < p < hi
    assert lo == pytest.approx(p - half, abs=0.006)
    assert hi == pytest.approx(p + half, abs=0.006)
    # the paper's check: bootstrap agrees with Wilson to well under a point at this n
    wlo, whi = S.wilson_ci(210, 400)
    assert abs(lo - wlo) < 0.006 and abs(hi - whi) < 0.006


def test_bootstrap_alpha_widens_interval():
    x = _sample_400()
    lo95, hi95 = S.bootstrap_ci(x, n_resamples=2000)
    lo80, hi80 = S.bootstrap_ci(x, n_resamples=2000, alpha=0.2)
    assert lo95 < lo80 < hi80 < hi95


@pytest.mark.parametrize("method", ["percentile", "BCa", "basic"])
def test_bootstrap_degenerate_without_warnings(method):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert S.bootstrap_ci([True] * 30, method=method) == (1.0, 1.0)
        assert S.bootstrap_ci(np.zeros(30, dtype=bool), method=method) == (0.0, 0.0)
        assert S.bootstrap_ci([True], method=method) == (1.0, 1.0)
    assert S.bootstrap_ci([]) is None


def test_bootstrap_rejects_non_bool():
    with pytest.raises(ValueError):
        S.bootstrap_ci([1, 0, None])
    with pytest.raises(ValueError):
        S.bootstrap_ci([0.5, 1.0])


def test_accuracy_summary():
    x = _sample_400()
    out = S.accuracy_summary(x, n_resamples=2000, seed=3)
    assert out["accuracy"] == 0.525 and out["correct"] == 210 and out["n"] == 400
    assert out["ci95_bootstrap"] == list(S.bootstrap_ci(x, n_resamples=2000, seed=3))
    assert out["ci95_wilson"] == list(S.wilson_ci(210, 400))
    # a uid -> bool mapping is accepted too
    assert S.accuracy_summary(run([1, 1, 0, 1]), n_resamples=200)["accuracy"] == 0.75
    empty = S.accuracy_summary([])
    assert empty == {"accuracy": None, "correct": 0, "n": 0,
                     "ci95_bootstrap": None, "ci95_wilson": None}


# ----------------------------------------------------------------------------- McNemar

def test_mcnemar_exact_small_discordant():
    from statsmodels.stats.contingency_tables import mcnemar

    a, b = paired(both=3, only_a=1, only_b=6, neither=4)
    out = S.mcnemar_test(a, b)
    # b + c = 7 < 25: exact two-sided binomial, 2 * P(X <= 1; 7, 1/2) = 2 * (1 + 7) / 128
    assert out["exact"] is True
    assert out["pvalue"] == pytest.approx(0.125, abs=1e-12)
    assert out["statistic"] == 1.0
    assert (out["n"], out["both_correct"], out["only_a"], out["only_b"], out["both_wrong"]) \
        == (14, 3, 1, 6, 4)
    ref = mcnemar([[3, 1], [6, 4]], exact=True)
    assert out["pvalue"] == pytest.approx(ref.pvalue, abs=1e-15)


def test_mcnemar_chi2_with_continuity_correction_large():
    a, b = paired(both=100, only_a=30, only_b=12, neither=150)
    out = S.mcnemar_test(a, b)
    stat = (abs(30 - 12) - 1) ** 2 / (30 + 12)  # 289 / 42
    assert out["exact"] is False
    assert out["statistic"] == pytest.approx(stat, rel=1e-12)
    # chi-square with 1 df: P(X > s) = erfc(sqrt(s / 2))
    assert out["pvalue"] == pytest.approx(math.erfc(math.sqrt(stat / 2)), rel=1e-9)
    assert out["pvalue"] == pytest.approx(0.008712, abs=1e-5)


def test_mcnemar_equals_statsmodels_on_every_small_table():
    from statsmodels.stats.contingency_tables import mcnemar

    for only_a, only_b in itertools.product(range(36), repeat=2):
        out = S.mcnemar_test(*paired(3, only_a, only_b, 2))
        exact = only_a + only_b < S.MCNEMAR_EXACT_BELOW
        ref = mcnemar([[3, only_a], [only_b, 2]], exact=exact, correction=True)
        assert out["exact"] is exact
        assert out["statistic"] == float(ref.statistic)
        assert out["pvalue"] == pytest.approx(float(ref.pvalue), rel=1e-12, abs=1e-300), (only_a, only_b)


def test_mcnemar_is_statsmodels_bit_for_bit_on_arrays():
    """Issue 46: McNemar's p of all pairs at once, as statsmodels computes it (scipy's binomial and chi-square
    tails), equal with ``==``: every exact table (b + c < 25) and chi-square tables up to 2,000 discordant
    items. (The integer binomial tail used before differs from statsmodels' in the last bit at 4 vs 11.)"""
    from statsmodels.stats.contingency_tables import mcnemar

    tables = [(b, n - b) for n in range(60) for b in range(n + 1)]
    tables += [(b, n - b) for n in range(60, 2000, 37) for b in range(0, n + 1, 11)]
    stat, p, exact = S.mcnemar_pvalues([b for b, _ in tables], [c for _, c in tables])
    for k, (b, c) in enumerate(tables):
        ref = mcnemar([[0, b], [c, 0]], exact=b + c < S.MCNEMAR_EXACT_BELOW, correction=True)
        assert (stat[k], p[k], exact[k]) == (ref.statistic, ref.pvalue, b + c < 25), (b, c)
    assert {bool(e) for e in exact} == {True, False}
    # one pair at a time, and every pair of a compare, give the same numbers
    one = S.mcnemar_test(*paired(3, 4, 11, 2))
    assert one["pvalue"] == mcnemar([[3, 4], [11, 2]], exact=True).pvalue
    assert (one["both_correct"], one["only_a"], one["only_b"], one["both_wrong"]) == (3, 4, 11, 2)


def test_mcnemar_tests_of_many_pairs_equal_one_by_one():
    rng = np.random.default_rng(3)
    runs = {f"m{i}": run(rng.uniform(size=60) < 0.3 + 0.1 * i) for i in range(6)}
    pairs = [("m0", "m1"), ("m5", "m0"), ("m2", "m2"), ("m3", "m4")]
    assert S.mcnemar_tests(runs, pairs) == [S.mcnemar_test(runs[a], runs[b]) for a, b in pairs]
    with pytest.raises(ValueError, match="no run named m9"):
        S.mcnemar_tests(runs, [("m0", "m9")])


def test_mcnemar_threshold_and_no_discordance():
    assert S.mcnemar_test(*paired(5, 20, 4, 5))["exact"] is True     # b + c = 24
    assert S.mcnemar_test(*paired(5, 20, 5, 5))["exact"] is False    # b + c = 25
    same = S.mcnemar_test(*paired(4, 0, 0, 3))
    assert same["pvalue"] == 1.0 and same["exact"] is True


def test_mcnemar_uid_mismatch_names_at_most_five():
    a = run([1] * 10)
    b = {k: v for k, v in list(a.items())[:2]}
    b["zz"] = True
    with pytest.raises(ValueError) as exc:
        S.mcnemar_test(a, b)
    msg = str(exc.value)
    assert "8 uid(s) only in a" in msg and "u02, u03, u04, u05, u06, ..." in msg
    assert "u07" not in msg
    assert "1 uid(s) only in b: zz" in msg


# ----------------------------------------------------------------------------- Holm

def test_holm_with_ties_and_monotonicity():
    adjusted, reject = S.holm_adjust([0.01, 0.04, 0.04, 0.03])
    # sorted 0.01, 0.03, 0.04, 0.04 times 4, 3, 2, 1 = 0.04, 0.09, 0.08, 0.04;
    # running maximum -> 0.04, 0.09, 0.09, 0.09; back in input order:
    assert adjusted == pytest.approx([0.04, 0.09, 0.09, 0.09], abs=1e-12)
    assert reject == [True, False, False, False]
    assert S.holm_adjust([0.3, 0.6]) == ([0.6, 0.6], [False, False])
    assert S.holm_adjust([0.4, 0.9])[0] == [0.8, 0.9]
    assert S.holm_adjust([0.7, 0.8])[0] == [1.0, 1.0]   # capped at 1
    assert S.holm_adjust([]) == ([], [])


def test_holm_equals_statsmodels():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(5)
    cases = [[0.01, 0.04, 0.04, 0.03], [0.05], [0.0, 1.0, 0.5], [0.05 / 3, 0.05 / 2, 0.05, 0.2]]
    cases += [list(rng.uniform(0, 0.1, size=m)) for m in (2, 10, 66, 300)]
    cases += [list(np.round(rng.uniform(0, 0.02, size=300), 4)) for _ in range(3)]  # many ties
    for p in cases:
        reject, adjusted, _, _ = multipletests(p, alpha=0.05, method="holm")
        assert S.holm_adjust(p) == ([float(v) for v in adjusted], [bool(v) for v in reject])
        reject, adjusted, _, _ = multipletests(p, alpha=0.01, method="holm")
        assert S.holm_adjust(p, alpha=0.01) == ([float(v) for v in adjusted], [bool(v) for v in reject])


def test_holm_is_not_statsmodels_default():
    from statsmodels.stats.multitest import multipletests

    p = [0.01, 0.04, 0.04, 0.03]
    sidak = multipletests(p)[1]  # default method: Holm-Sidak
    assert sidak[0] == pytest.approx(1 - 0.99 ** 4)  # 0.0394..., not 0.04
    assert S.holm_adjust(p)[0][0] != pytest.approx(sidak[0])


# ----------------------------------------------------------------------------- pairwise

def test_pairwise_mcnemar_and_format():
    n = 40
    runs = {"Strong": run([1] * 36 + [0] * 4),
            "Mid model": run([1] * 20 + [0] * 20),
            "Weak": run([0] * 36 + [1] * 4)}
    res = S.pairwise_mcnemar(runs)
    assert res["runs"] == ["Strong", "Mid model", "Weak"] and res["alpha"] == 0.05
    assert [(p["a"], p["b"]) for p in res["pairs"]] == [
        ("Strong", "Mid model"), ("Strong", "Weak"), ("Mid model", "Weak")]
    raw = [S.mcnemar_test(runs[p["a"]], runs[p["b"]])["pvalue"] for p in res["pairs"]]
    assert [p["pvalue"] for p in res["pairs"]] == raw
    assert [p["pvalue_holm"] for p in res["pairs"]] == S.holm_adjust(raw)[0]
    first = res["pairs"][0]
    assert first["accuracy_a"] == 0.9 and first["accuracy_b"] == 0.5
    assert first["delta"] == pytest.approx(0.4)
    assert first["only_a"] == 16 and first["only_b"] == 0 and first["n"] == n
    assert all(p["significant"] == (p["pvalue_holm"] <= 0.05) for p in res["pairs"])
    assert res["pairs"][1]["significant"] is True  # 36 vs 4 of 40, 32 discordant one way

    text = S.format_pairwise(res)
    lines = text.splitlines()
    assert "(2) Mid model" in text and "90.0%" in text and "50.0%" in text and "10.0%" in text
    assert "<0.001*" in text and "alpha=0.05" in text
    assert len({len(line) for line in lines[:5]}) <= 2  # aligned table (trailing marker column)
    # diagonal cells sit in their own column
    row_weak = next(line for line in lines if line.startswith("(3) Weak"))
    assert row_weak.rstrip().endswith("10.0%")
    # each run's interval, so one `compare` scores every run with its CI and tests every pair
    assert res["n"] == n and res["ci95"]["Mid model"] == list(S.wilson_ci(20, n))
    lo, hi = S.wilson_ci(36, n)
    assert f"  (1) Strong     90.0% [{100 * lo:.1f}, {100 * hi:.1f}]" in lines


def test_pairwise_equals_pair_by_pair_tests():
    rng = np.random.default_rng(11)
    n = 300
    truth = rng.uniform(size=n)
    runs = {f"model {i}": {f"q{j:03d}": bool(truth[j] < 0.3 + 0.05 * i + 0.1 * rng.uniform()) for j in range(n)}
            for i in range(8)}
    runs["model 2"]["q007"] = np.bool_(True)   # numpy and 0/1 values are correctness values too
    runs["model 3"]["q008"] = 1
    res = S.pairwise_mcnemar(runs)
    assert len(res["pairs"]) == 28
    for pair in res["pairs"]:
        t = S.mcnemar_test(runs[pair["a"]], runs[pair["b"]])
        for key in ("n", "only_a", "only_b", "statistic", "exact", "pvalue"):
            assert pair[key] == t[key], key
    assert {p["exact"] for p in res["pairs"]} == {True, False}  # both branches exercised
    adjusted, reject = S.holm_adjust([p["pvalue"] for p in res["pairs"]])
    assert [p["pvalue_holm"] for p in res["pairs"]] == adjusted
    assert [p["significant"] for p in res["pairs"]] == reject


def test_pairwise_rejects_non_bool_values():
    runs = {"A": run([1, 0, 1]), "B": run([1, 1, 1])}
    runs["B"]["u01"] = None
    with pytest.raises(ValueError, match="u01"):
        S.pairwise_mcnemar(runs)


def test_pairwise_uid_mismatch_names_runs():
    runs = {"A": run([1, 0, 1]), "B": run([1, 1, 1]), "C": run([1, 1])}
    with pytest.raises(ValueError, match="'A' and 'C'"):
        S.pairwise_mcnemar(runs)


def test_pairwise_single_run():
    res = S.pairwise_mcnemar({"only": run([1, 0])})
    assert res["pairs"] == []
    assert "50.0%" in S.format_pairwise(res)


# ----------------------------------------------------------------------------- MG

def test_multimodal_gain_by_hand():
    uids = ["x1", "x2", "x3", "y1", "y2", "y3"]
    visual = dict(zip(uids, [True, True, False, True, False, False]))   # 3/6
    blind = dict(zip(uids, [False, True, False, False, False, True]))   # 2/6
    groups = {u: u[0].upper() for u in uids} | {"other": "Z"}          # extra uid ignored
    out = S.multimodal_gain(visual, blind, groups)
    assert out["overall"] == pytest.approx(1 / 6)
    assert out["s_v"] == pytest.approx(0.5) and out["s_wv"] == pytest.approx(1 / 3)
    assert out["by_group"] == pytest.approx({"X": 2 / 3 - 1 / 3, "Y": 1 / 3 - 1 / 3})
    assert S.multimodal_gain(visual, blind)["by_group"] == {}
    # MG can be negative
    assert S.multimodal_gain(blind, visual)["overall"] == pytest.approx(-1 / 6)


def test_multimodal_gain_errors():
    v = run([1, 0, 1])
    with pytest.raises(ValueError, match="only in visual: u02"):
        S.multimodal_gain(v, run([1, 0]))
    with pytest.raises(ValueError, match="without a group: u02"):
        S.multimodal_gain(v, run([0, 0, 0]), {"u00": "A", "u01": "A"})


# ----------------------------------------------------------------------------- blind consistency

def _scipy_paired_interval(a: dict, b: dict, n_resamples: int, seed: int, alpha: float = 0.05) -> list[float]:
    """The paired interval as it was computed before issue 46: ``scipy.stats.bootstrap`` of the per-item
    differences, one call per pair (batched as ``bootstrap_ci`` batches)."""
    from scipy.stats import bootstrap

    d = np.array([int(a[u]) - int(b[u]) for u in sorted(a)], dtype=float)
    batch = max(1, S._BOOTSTRAP_MAX_CELLS // d.size) if n_resamples * d.size > S._BOOTSTRAP_MAX_CELLS else None
    res = bootstrap((d,), np.mean, n_resamples=n_resamples, batch=batch, vectorized=True, axis=-1,
                    confidence_level=1.0 - alpha, method="percentile", rng=np.random.default_rng(seed))
    return [float(res.confidence_interval.low), float(res.confidence_interval.high)]


@pytest.mark.parametrize("n_items, n_resamples, seed, alpha, max_cells", [
    (40, 3000, 4, 0.05, None), (301, 2000, 0, 0.01, None), (7, 999, 3, 0.1, None),
    (150, 1001, 2, 0.05, 20_000),  # scipy's draw in batches of 133 resamples, as for a large benchmark
])
def test_paired_differences_equal_scipy_bootstrap_pair_by_pair(monkeypatch, n_items, n_resamples, seed, alpha,
                                                               max_cells):
    """Issue 46: all pairs from one resample draw and one matrix product give, for each pair, the very interval
    of ``scipy.stats.bootstrap`` on that pair alone (same draws, same percentile rule), and the difference and
    McNemar's p of ``paired_difference``."""
    if max_cells:
        monkeypatch.setattr(S, "_BOOTSTRAP_MAX_CELLS", max_cells)
    rng = np.random.default_rng(n_items)
    runs = {f"m{i}": run(rng.uniform(size=n_items) < 0.2 + 0.15 * i) for i in range(5)}
    runs["same as m1"] = dict(runs["m1"])  # no discordant item: (0, 0), no resampling
    pairs = [(a, b) for a in runs for b in runs if a != b]
    many = S.paired_differences(runs, pairs, n_resamples=n_resamples, seed=seed, alpha=alpha)
    assert len(many) == len(pairs)
    for (a, b), got in zip(pairs, many):
        if {a, b} == {"m1", "same as m1"}:
            assert got["ci95_bootstrap"] == [0.0, 0.0] and got["pvalue"] == 1.0
        else:
            assert got["ci95_bootstrap"] == _scipy_paired_interval(runs[a], runs[b], n_resamples, seed, alpha), (a, b)
        assert got == S.paired_difference(runs[a], runs[b], n_resamples=n_resamples, seed=seed, alpha=alpha)
        test = S.mcnemar_test(runs[a], runs[b])
        assert (got["pvalue"], got["only_a"], got["only_b"]) == (test["pvalue"], test["only_a"], test["only_b"])
        assert got["difference"] == np.mean([int(runs[a][u]) - int(runs[b][u]) for u in sorted(runs[a])])


def test_paired_differences_draw_the_resamples_once(monkeypatch):
    """The 300 pairs of 25 runs cost one draw of resample indices, not 300."""
    draws = []
    real = np.random.default_rng

    class Counting:
        def __init__(self, seed):
            self._rng = real(seed)

        def integers(self, *args, **kwargs):
            draws.append(args)
            return self._rng.integers(*args, **kwargs)

    monkeypatch.setattr(np.random, "default_rng", Counting)
    rng = real(0)
    runs = {f"m{i}": run(rng.uniform(size=50) < 0.3 + 0.02 * i) for i in range(25)}
    pairs = list(itertools.combinations(runs, 2))
    out = S.paired_differences(runs, pairs, n_resamples=500)
    assert len(out) == 300 and draws == [(0, 50, (500, 50))]
    # an interval lies around its difference and holds about 95% of the resampled differences
    assert all(d["ci95_bootstrap"][0] <= d["difference"] <= d["ci95_bootstrap"][1] for d in out)


def test_paired_differences_edge_cases():
    a, b = run([1, 1, 1]), run([0, 0, 0])
    (everywhere,) = S.paired_differences({"a": a, "b": b}, [("a", "b")])
    assert everywhere["ci95_bootstrap"] == [1.0, 1.0] and everywhere["difference"] == 1.0
    empty = S.paired_differences({"a": {}, "b": {}}, [("a", "b")])[0]
    assert empty["difference"] is None and empty["ci95_bootstrap"] is None and empty["pvalue"] is None
    assert S.paired_differences({"a": a}, []) == []
    with pytest.raises(ValueError, match="1 uid\\(s\\) only in a: u02"):
        S.paired_differences({"a": a, "b": run([1, 0])}, [("a", "b")])
    with pytest.raises(ValueError, match="no run named c"):
        S.paired_differences({"a": a, "b": b}, [("a", "c")])
    with pytest.raises(ValueError, match="b: item u01"):
        S.paired_differences({"a": a, "b": {**b, "u01": None}}, [("a", "b")])


def test_blind_consistency_tau_boundary():
    answers = {"q1": "A", "q2": "B", "q3": "C", "q4": "D"}
    runs = [
        {"q1": "A", "q2": "B", "q3": "C", "q4": "D"},
        {"q1": "A", "q2": "B", "q3": None, "q4": "D"},
        {"q1": "A", "q2": "E", "q4": "D"},             # q3 missing: not recovered
        {"q1": "B", "q2": "E", "q3": "C", "q4": "D"},
        {"q1": "C", "q2": None, "q3": "a"},            # case is not normalised
    ]
    out = S.blind_consistency(runs, answers)
    items = out["items"]
    assert items["q1"] == {"S": 0.6, "n_recovered": 3, "flagged": True}    # 3 of 5 >= 3/5
    assert items["q2"] == {"S": 0.4, "n_recovered": 2, "flagged": False}   # 2 of 5 < 3/5
    assert items["q3"] == {"S": 0.4, "n_recovered": 2, "flagged": False}
    assert items["q4"] == {"S": 0.8, "n_recovered": 4, "flagged": True}
    assert (out["n_items"], out["n_flagged"], out["n_runs"], out["tau"]) == (4, 2, 5, 0.6)


def test_blind_consistency_float_tau_exact_boundary():
    answers = {"q": "A"}
    runs = [{"q": "A"}] * 6 + [{"q": "B"}] * 4          # 6 of 10
    assert S.blind_consistency(runs, answers, tau=0.6)["items"]["q"]["flagged"] is True
    assert S.blind_consistency(runs, answers, tau=0.61)["items"]["q"]["flagged"] is False
    assert S.blind_consistency(runs, answers, tau=1)["n_flagged"] == 0


def test_blind_consistency_errors():
    with pytest.raises(ValueError, match="at least one run"):
        S.blind_consistency([], {"q": "A"})
    with pytest.raises(ValueError, match="run 1: 1 uid"):
        S.blind_consistency([{"q": "A"}, {"q": "A", "stray": "B"}], {"q": "A"})
    with pytest.raises(ValueError, match="tau"):
        S.blind_consistency([{"q": "A"}], {"q": "A"}, tau=0)
