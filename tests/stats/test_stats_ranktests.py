"""The private rank-test primitives give R's numbers by default, scipy's on request.

References are scipy itself, called with the method that R's ``wilcox.test``
(resp. scipy's ``method="auto"``) would pick, plus hand arithmetic.
"""

import math
import time
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evaluation.stats import _ranktests
from evaluation.stats._ranktests import RankSample, mwu, wilcoxon_less

small_ints = st.lists(st.integers(min_value=0, max_value=6), min_size=0, max_size=25)
floats = st.lists(
    st.floats(min_value=-100, max_value=100, allow_nan=False, allow_subnormal=False),
    min_size=0,
    max_size=60,
)


def _scipy_mwu(x, y, alternative):
    # convention: scipy defaults (method="auto", use_continuity=True)
    return stats.mannwhitneyu(x, y, alternative=alternative)


def _r_mwu(x, y, alternative):
    """R's wilcox.test(x, y, alternative=...) expressed as a scipy call.

    Exact when both samples have fewer than 50 values and the pooled sample has
    no ties; otherwise the normal approximation with tie correction and
    continuity correction 0.5.
    """
    pooled = np.concatenate([x, y])
    exact = x.size < 50 and y.size < 50 and np.unique(pooled).size == pooled.size
    method = "exact" if exact else "asymptotic"
    return stats.mannwhitneyu(x, y, alternative=alternative, method=method, use_continuity=True)


@settings(max_examples=300, deadline=None)
@given(x=st.one_of(small_ints, floats), y=st.one_of(small_ints, floats))
def test_mwu_scipy_method_matches_scipy_auto_both_directions(x, y):
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    u1, p_greater, p_less = mwu(RankSample(x), RankSample(y), method="scipy")
    if x.size == 0 or y.size == 0:
        assert math.isnan(u1) and math.isnan(p_greater) and math.isnan(p_less)
        return
    ref_g = _scipy_mwu(x, y, "greater")
    ref_l = _scipy_mwu(x, y, "less")
    assert u1 == ref_g.statistic
    np.testing.assert_allclose(p_greater, ref_g.pvalue, rtol=1e-12, atol=0)
    np.testing.assert_allclose(p_less, ref_l.pvalue, rtol=1e-12, atol=0)


@settings(max_examples=300, deadline=None)
@given(x=st.one_of(small_ints, floats), y=st.one_of(small_ints, floats))
def test_mwu_r_method_matches_scipy_called_by_r_rule(x, y):
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    u1, p_greater, p_less = mwu(RankSample(x), RankSample(y), method="r")
    if x.size == 0 or y.size == 0:
        assert math.isnan(u1) and math.isnan(p_greater) and math.isnan(p_less)
        return
    ref_g = _r_mwu(x, y, "greater")
    ref_l = _r_mwu(x, y, "less")
    assert u1 == ref_g.statistic
    np.testing.assert_allclose(p_greater, ref_g.pvalue, rtol=1e-12, atol=0)
    np.testing.assert_allclose(p_less, ref_l.pvalue, rtol=1e-12, atol=0)


SIZES = [1, 2, 5, 8, 9, 10, 13, 20, 27, 35, 41, 48, 49]


@pytest.mark.parametrize("n1", SIZES)
@pytest.mark.parametrize("n2", [1, 3, 9, 16, 30, 49])
def test_mwu_r_is_exact_below_50_without_ties(n1, n2):
    # continuous values: no ties, so R's rule takes the exact null distribution
    rng = np.random.default_rng(1000 * n1 + n2)
    x = rng.normal(0.4, 1, n1)
    y = rng.normal(0.0, 1, n2)
    u1, p_greater, p_less = mwu(RankSample(x), RankSample(y), method="r")
    ref_g = stats.mannwhitneyu(x, y, alternative="greater", method="exact")
    ref_l = stats.mannwhitneyu(x, y, alternative="less", method="exact")
    assert u1 == ref_g.statistic
    np.testing.assert_allclose(p_greater, ref_g.pvalue, rtol=1e-12, atol=0)
    np.testing.assert_allclose(p_less, ref_l.pvalue, rtol=1e-12, atol=0)
    if n1 >= 9 and n2 >= 9:
        # scipy's "auto" (the old behaviour) used the normal approximation here
        old = mwu(RankSample(x), RankSample(y), method="scipy")[1]
        asym = stats.mannwhitneyu(x, y, alternative="greater", method="asymptotic").pvalue
        np.testing.assert_allclose(old, asym, rtol=1e-12)
        assert old != p_greater


@pytest.mark.parametrize(
    "x, y, why",
    [
        (np.arange(10.0), np.arange(5.0, 17.0), "ties across samples, both < 50"),
        (np.array([1.0, 1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0]), "tie within one sample"),
        (np.linspace(0.1, 5.1, 50), np.linspace(0.05, 4.95, 12), "one sample of 50, no ties"),
        (np.linspace(0.1, 5.1, 3), np.linspace(0.05, 4.95, 70), "3 vs 70: scipy exact, R normal"),
    ],
)
def test_mwu_r_uses_normal_approximation_with_ties_or_a_sample_of_50(x, y, why):
    for alt, idx in (("greater", 1), ("less", 2)):
        p = mwu(RankSample(x), RankSample(y), method="r")[idx]
        # convention: normal approximation, tie-corrected variance, continuity correction 0.5
        ref = stats.mannwhitneyu(x, y, alternative=alt, method="asymptotic", use_continuity=True).pvalue
        np.testing.assert_allclose(p, ref, rtol=1e-12, err_msg=why)


def test_mwu_large_samples_with_ties_match_scipy():
    rng = np.random.default_rng(7)
    x = rng.integers(0, 101, 3000).astype(float)
    y = rng.integers(5, 101, 2500).astype(float)
    for method in ("r", "scipy"):
        u1, p_greater, p_less = mwu(RankSample(x), RankSample(y), method=method)
        assert u1 == stats.mannwhitneyu(x, y).statistic
        np.testing.assert_allclose(p_greater, stats.mannwhitneyu(x, y, alternative="greater").pvalue, rtol=1e-12)
        np.testing.assert_allclose(p_less, stats.mannwhitneyu(x, y, alternative="less").pvalue, rtol=1e-12)


def test_mwu_hand_computed_exact_case():
    # x = [3, 4], y = [1, 2]: every x beats every y, U1 = 2 * 2 = 4.
    # Exact null of U for n1 = n2 = 2 has 6 equally likely rank splits;
    # only one gives U = 4, so P(U >= 4) = 1/6.  (Both conventions are exact here.)
    for method in ("r", "scipy"):
        u1, p_greater, p_less = mwu(RankSample(np.array([3.0, 4.0])), RankSample(np.array([1.0, 2.0])), method)
        assert u1 == 4.0
        assert math.isclose(p_greater, 1 / 6)
        assert math.isclose(p_less, 1.0)


def test_mwu_r_hand_computed_exact_nine_against_nine():
    # x = 10..18 all above y = 1..9: U1 = 81.  Under H0 each of the C(18, 9) = 48620
    # ways to pick x's ranks is equally likely; only the top nine give U1 = 81, so
    # R's exact p = 1/48620.  P(U1 <= 80) = 1 - 1/48620 gives p_less = 1.
    # The next-smaller U1 = 80 (swap 9 and 10) has P(U1 >= 80) = 2/48620.
    x, y = np.arange(10.0, 19.0), np.arange(1.0, 10.0)
    u1, p_greater, p_less = mwu(RankSample(x), RankSample(y), method="r")
    assert u1 == 81.0
    assert p_greater == 1 / 48620
    assert p_less == 1.0
    x[0], y[-1] = 9.5, 10.5  # 9.5 < 10.5: one pair reversed
    assert mwu(RankSample(x), RankSample(y), method="r")[:2] == (80.0, 2 / 48620)
    # scipy's "auto" (9 > 8 values) took the normal approximation instead
    assert mwu(RankSample(np.arange(10.0, 19.0)), RankSample(np.arange(1.0, 10.0)), "scipy")[1] > 1e-4


def test_exact_distribution_is_cached_per_pair_of_sizes():
    a = _ranktests._u_cdf(17, 31)
    assert _ranktests._u_cdf(31, 17) is a  # symmetric in the sizes, one cache entry
    assert a[-1] == 1.0 and a[0] == 1 / math.comb(48, 17)
    assert np.all(np.diff(a) >= 0)


def test_mwu_rejects_unknown_method():
    with pytest.raises(ValueError):
        mwu(RankSample(np.ones(3)), RankSample(np.ones(3)), method="exact")


def test_significance_matrix_of_20_systems_is_fast():
    # 20 systems x 40 translations without ties: 190 pairs, all on R's exact path
    from evaluation.stats import significance

    rng = np.random.default_rng(0)
    ts = np.repeat(np.arange(20), 40)
    tz = rng.normal(0, 1, 800) + np.repeat(np.linspace(0.5, -0.5, 20), 40)
    significance(ts, tz, 20)  # fills the cache for (40, 40)
    start = time.perf_counter()
    significance(ts, tz, 20)
    assert time.perf_counter() - start < 0.5


# ------------------------------------------------------------------ signed rank


def _scipy_wilcoxon_less(d):
    # convention: zero_method="wilcox" (drop zeros), correction=False, method="auto"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return stats.wilcoxon(d, zero_method="wilcox", correction=False, alternative="less", method="auto")


def _r_wilcoxon_less(d):
    """R's wilcox.test(bad, original, paired=TRUE, alternative="less") as a scipy call.

    Zeros dropped; exact when fewer than 50 non-zero differences remain and
    there are neither ties nor zeros, otherwise the normal approximation with
    tie correction and continuity correction (correct=TRUE).
    """
    nz = d[d != 0]
    exact = nz.size < 50 and nz.size == d.size and np.unique(np.abs(nz)).size == nz.size
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if exact:
            return stats.wilcoxon(d, zero_method="wilcox", alternative="less", method="exact")
        return stats.wilcoxon(d, zero_method="wilcox", correction=True, alternative="less", method="asymptotic")


signed = st.one_of(
    st.lists(st.integers(min_value=-5, max_value=5), min_size=1, max_size=70),
    st.lists(st.floats(min_value=-50, max_value=50, allow_nan=False, allow_subnormal=False),
             min_size=1, max_size=70),
)


@settings(max_examples=300, deadline=None)
@given(d=signed)
def test_wilcoxon_less_r_method_matches_scipy_called_by_r_rule(d):
    d = np.asarray(d, dtype=float)
    r_plus, p = wilcoxon_less(d)  # default: R's rule
    if not np.any(d != 0):
        assert math.isnan(r_plus) and math.isnan(p)
        return
    ref = _r_wilcoxon_less(d)
    assert r_plus == ref.statistic
    np.testing.assert_allclose(p, ref.pvalue, rtol=1e-10, atol=0)


@pytest.mark.parametrize("n", [5, 9, 14, 25, 49])
def test_wilcoxon_less_r_is_exact_below_50_without_ties_or_zeros(n):
    rng = np.random.default_rng(n)
    d = rng.normal(-0.3, 1, n)
    r_plus, p = wilcoxon_less(d)
    ref = stats.wilcoxon(d, zero_method="wilcox", alternative="less", method="exact")
    assert r_plus == ref.statistic
    np.testing.assert_allclose(p, ref.pvalue, rtol=1e-12)


def test_wilcoxon_less_r_uses_normal_approximation_from_50_or_with_ties_or_zeros():
    rng = np.random.default_rng(3)
    cases = {
        "50 non-zero, no ties": rng.normal(-0.2, 1, 50),
        "ties": np.array([-3.0, -3.0, -1.0, 2.0, -4.0, -5.0]),
        "one zero": np.array([0.0, -1.0, -2.5, 3.0, -4.0, -6.0, -7.0]),
    }
    for why, d in cases.items():
        _, p = wilcoxon_less(d)
        ref = stats.wilcoxon(d, zero_method="wilcox", correction=True, alternative="less", method="asymptotic")
        np.testing.assert_allclose(p, ref.pvalue, rtol=1e-12, err_msg=why)


# scipy's own small-sample path (a permutation test) is slow: keep the count modest
@settings(max_examples=60, deadline=None)
@given(
    d=st.one_of(
        st.lists(st.integers(min_value=-5, max_value=5), min_size=1, max_size=60),
        st.lists(st.floats(min_value=-50, max_value=50, allow_nan=False, allow_subnormal=False),
                 min_size=1, max_size=60),
    )
)
def test_wilcoxon_less_scipy_method_matches_scipy_auto(d):
    d = np.asarray(d, dtype=float)
    r_plus, p = wilcoxon_less(d, method="scipy")
    if not np.any(d != 0):
        assert math.isnan(r_plus) and math.isnan(p)
        return
    ref = _scipy_wilcoxon_less(d)
    assert r_plus == ref.statistic
    np.testing.assert_allclose(p, ref.pvalue, rtol=1e-10, atol=0)


def test_wilcoxon_less_hand_computed():
    # d = -1..-5: no positive difference, R+ = 0.  Exact null: each of the
    # 2^5 = 32 sign patterns equally likely, only "all negative" gives R+ = 0,
    # so p = 1/32 (exact under both conventions: n = 5 < 50, no ties, no zeros).
    for method in ("r", "scipy"):
        r_plus, p = wilcoxon_less(np.array([-1.0, -2.0, -3.0, -4.0, -5.0]), method=method)
        assert r_plus == 0.0
        assert p == 1 / 32
    # d = [-1, -2, 3]: R+ = 3; sign patterns with R+ <= 3: {}, {1}, {2}, {3}, {1, 2} -> 5/8
    assert wilcoxon_less(np.array([-1.0, -2.0, 3.0])) == (3.0, 5 / 8)


def test_wilcoxon_less_zero_differences_are_dropped():
    # zeros carry no sign: [0, 0, -1, -2] -> non-zero [-1, -2], ranks 1, 2, R+ = 0.
    # R: zeros present -> normal approximation with continuity correction:
    #   mean m(m+1)/4 = 1.5, var m(m+1)(2m+1)/24 = 30/24 (no ties),
    #   z = (0 - 1.5 + 0.5) / sqrt(1.25) = -0.894427..., p = Phi(z) = 0.18554...
    r_plus, p = wilcoxon_less(np.array([0.0, 0.0, -1.0, -2.0]))
    assert r_plus == 0.0
    assert math.isclose(p, 0.5 * math.erfc(1 / math.sqrt(1.25) / math.sqrt(2)), rel_tol=1e-12)
    assert math.isclose(p, 0.18554668476134878, rel_tol=1e-12)
    # scipy's "auto" (n = 4 <= 13): exact sign flips of [-1, -2]: P(R+ <= 0) = 1/4
    assert wilcoxon_less(np.array([0.0, 0.0, -1.0, -2.0]), method="scipy") == (0.0, 0.25)
