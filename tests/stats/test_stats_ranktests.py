"""The private rank-test primitives give scipy's numbers (the reference is scipy itself)."""

import math
import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evaluation.stats._ranktests import RankSample, mwu, wilcoxon_less

small_ints = st.lists(st.integers(min_value=0, max_value=6), min_size=0, max_size=25)
floats = st.lists(
    st.floats(min_value=-100, max_value=100, allow_nan=False, allow_subnormal=False),
    min_size=0,
    max_size=25,
)


def _scipy_mwu(x, y, alternative):
    # convention: scipy defaults (method="auto", use_continuity=True)
    return stats.mannwhitneyu(x, y, alternative=alternative)


@settings(max_examples=300, deadline=None)
@given(x=st.one_of(small_ints, floats), y=st.one_of(small_ints, floats))
def test_mwu_matches_scipy_both_directions(x, y):
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    u1, p_greater, p_less = mwu(RankSample(x), RankSample(y))
    if x.size == 0 or y.size == 0:
        assert math.isnan(u1) and math.isnan(p_greater) and math.isnan(p_less)
        return
    ref_g = _scipy_mwu(x, y, "greater")
    ref_l = _scipy_mwu(x, y, "less")
    assert u1 == ref_g.statistic
    np.testing.assert_allclose(p_greater, ref_g.pvalue, rtol=1e-12, atol=0)
    np.testing.assert_allclose(p_less, ref_l.pvalue, rtol=1e-12, atol=0)


def test_mwu_large_samples_with_ties_match_scipy():
    rng = np.random.default_rng(7)
    x = rng.integers(0, 101, 3000).astype(float)
    y = rng.integers(5, 101, 2500).astype(float)
    u1, p_greater, p_less = mwu(RankSample(x), RankSample(y))
    assert u1 == stats.mannwhitneyu(x, y).statistic
    np.testing.assert_allclose(p_greater, stats.mannwhitneyu(x, y, alternative="greater").pvalue, rtol=1e-12)
    np.testing.assert_allclose(p_less, stats.mannwhitneyu(x, y, alternative="less").pvalue, rtol=1e-12)


def test_mwu_hand_computed_exact_case():
    # x = [3, 4], y = [1, 2]: every x beats every y, U1 = 2 * 2 = 4.
    # Exact null of U for n1 = n2 = 2 has 6 equally likely rank splits;
    # only one gives U = 4, so P(U >= 4) = 1/6.
    u1, p_greater, p_less = mwu(RankSample(np.array([3.0, 4.0])), RankSample(np.array([1.0, 2.0])))
    assert u1 == 4.0
    assert math.isclose(p_greater, 1 / 6)
    assert math.isclose(p_less, 1.0)


def _scipy_wilcoxon_less(d):
    # convention: zero_method="wilcox" (drop zeros), correction=False, method="auto"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return stats.wilcoxon(d, zero_method="wilcox", correction=False, alternative="less", method="auto")


# scipy's own small-sample path (a permutation test) is slow: keep the count modest
@settings(max_examples=60, deadline=None)
@given(
    d=st.one_of(
        st.lists(st.integers(min_value=-5, max_value=5), min_size=1, max_size=60),
        st.lists(st.floats(min_value=-50, max_value=50, allow_nan=False, allow_subnormal=False),
                 min_size=1, max_size=60),
    )
)
def test_wilcoxon_less_matches_scipy(d):
    d = np.asarray(d, dtype=float)
    r_plus, p = wilcoxon_less(d)
    if not np.any(d != 0):
        assert math.isnan(r_plus) and math.isnan(p)
        return
    ref = _scipy_wilcoxon_less(d)
    assert r_plus == ref.statistic
    np.testing.assert_allclose(p, ref.pvalue, rtol=1e-10, atol=0)


def test_wilcoxon_less_hand_computed():
    # d = -1..-5: no positive difference, R+ = 0.  Exact null: each of the
    # 2^5 = 32 sign patterns equally likely, only "all negative" gives R+ = 0,
    # so p = 1/32.
    r_plus, p = wilcoxon_less(np.array([-1.0, -2.0, -3.0, -4.0, -5.0]))
    assert r_plus == 0.0
    assert math.isclose(p, 1 / 32)


def test_wilcoxon_less_zero_differences_are_dropped():
    # zeros carry no sign: [0, 0, -1, -2] behaves like [-1, -2]: p = 1/4
    r_plus, p = wilcoxon_less(np.array([0.0, 0.0, -1.0, -2.0]))
    assert r_plus == 0.0
    assert math.isclose(p, 0.25)
