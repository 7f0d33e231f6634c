"""Worker reliability (docs/methods.md §4) against scipy called directly and hand arithmetic."""

import math
import warnings
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evaluation.stats import (
    assumption_a,
    assumption_a_share,
    reliability,
    reliability_appraise,
    reliability_welch,
    standardise,
)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _pairs(draw_lists):
    worker, bad, original = zip(*draw_lists, strict=True) if draw_lists else ((), (), ())
    return np.array(worker, dtype=np.int64), np.array(bad, float), np.array(original, float)


pair_rows = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=4),
        st.integers(min_value=0, max_value=100),
        st.integers(min_value=0, max_value=100),
    ),
    max_size=60,
)


# ----------------------------------------------------------------- paired t


@settings(max_examples=200, deadline=None)
@given(rows=pair_rows)
def test_paired_t_equals_loop_of_scipy_ttest_rel(rows):
    worker, bad, original = _pairs(rows)
    res = reliability(worker, bad, original, n_workers=5)
    for w in range(5):
        m = worker == w
        d = bad[m] - original[m]
        assert res.n_pairs[w] == m.sum()
        if m.sum() < 2 or np.all(d == d[0]):
            # not computable: too few pairs, or all differences equal (t undefined;
            # scipy would say -inf/+inf or NaN, R stops) -> NaN, never reliable
            assert math.isnan(res.p[w]) and not res.reliable[w]
            continue
        # convention: one-sided paired t, H1 mean(bad - original) < 0
        ref = _quiet(stats.ttest_rel, bad[m], original[m], alternative="less")
        np.testing.assert_allclose(res.p[w], ref.pvalue, rtol=1e-9, atol=1e-300)
        np.testing.assert_allclose(res.statistic[w], ref.statistic, rtol=1e-9)
        assert res.reliable[w] == (ref.pvalue < 0.05)


def test_paired_t_hand_computed():
    # bad = 40, 50, 60 vs original = 50, 70, 65 -> d = -10, -20, -5
    # mean = -35/3; sum of squared deviations = 25/9 + 625/9 + 400/9 = 350/3
    # var = 175/3, se = sqrt(var / 3) = sqrt(175)/3, t = -35/sqrt(175) = -sqrt(7)
    # df = 2: cdf(t) = 1/2 + t / (2 sqrt(2 + t^2)) = 1/2 - sqrt(7)/6 = 0.0590...
    res = reliability([0, 0, 0], [40, 50, 60], [50, 70, 65], n_workers=1)
    assert math.isclose(res.statistic[0], -math.sqrt(7), rel_tol=1e-12)
    assert math.isclose(res.p[0], 0.5 - math.sqrt(7) / 6, rel_tol=1e-10)
    assert math.isclose(res.mean_diff[0], -35 / 3)
    assert res.n_pairs[0] == 3
    assert not res.reliable[0]  # 0.059 is not < 0.05


def test_threshold_is_strict_and_configurable():
    res = reliability([0, 0, 0], [40, 50, 60], [50, 70, 65], n_workers=1)
    p = res.p[0]
    assert not reliability([0, 0, 0], [40, 50, 60], [50, 70, 65], 1, threshold=p).reliable[0]
    assert reliability([0, 0, 0], [40, 50, 60], [50, 70, 65], 1, threshold=0.06).reliable[0]


def test_not_computable_cases_are_nan_and_unreliable():
    worker = [0, 1, 1, 2, 2, 2, 3, 3]
    bad = [10, 20, 30, 5, 6, 7, 40, 40]
    original = [50, 40, 50, 15, 16, 17, 40, 40]
    res = reliability(worker, bad, original, n_workers=5)
    # worker 0: one pair; worker 1: differences -20, -20 (all equal);
    # worker 2: -10 x 3 (all equal, scipy says t = -inf, p = 0 -- we say NaN);
    # worker 3: zero differences; worker 4: no pairs at all
    assert np.isnan(res.p).all()
    assert not res.reliable.any()
    assert res.n_pairs.tolist() == [1, 2, 3, 2, 0]
    assert math.isnan(res.mean_diff[4])
    assert _quiet(stats.ttest_rel, [5, 6, 7], [15, 16, 17], alternative="less").pvalue == 0.0


def test_min_pairs():
    args = ([0, 0, 0], [40, 50, 60], [50, 70, 65], 1)
    assert math.isnan(reliability(*args, min_pairs=4).p[0])
    assert not math.isnan(reliability(*args, min_pairs=3).p[0])
    with pytest.raises(ValueError):
        reliability(*args, min_pairs=0)


def test_empty_input():
    res = reliability([], [], [], n_workers=3)
    assert res.p.shape == (3,) and np.isnan(res.p).all()
    assert res.n_pairs.tolist() == [0, 0, 0]
    assert not res.reliable.any()


def test_input_validation():
    with pytest.raises(ValueError):
        reliability([0, 3], [1, 2], [3, 4], n_workers=3)  # code out of range
    with pytest.raises(TypeError):
        reliability([0.0, 1.0], [1, 2], [3, 4], n_workers=3)  # float codes
    with pytest.raises(ValueError):
        reliability([0, 1], [1, 2, 3], [3, 4], n_workers=3)  # length mismatch
    with pytest.raises(ValueError):
        reliability([0, 1], [1, np.nan], [3, 4], n_workers=3)  # NaN score
    with pytest.raises(ValueError):
        reliability([0, 1], [1, 2], [3, 4], n_workers=3, test="sign")


# ---------------------------------------------------------------- wilcoxon


def _r_wilcoxon_less(bad, original):
    """R's wilcox.test(bad, original, paired=TRUE, alternative="less") as a scipy call."""
    d = bad - original
    nz = d[d != 0]
    if nz.size < 50 and nz.size == d.size and np.unique(np.abs(nz)).size == nz.size:
        # no zeros, no ties, fewer than 50 differences: exact
        return _quiet(stats.wilcoxon, bad, original, alternative="less", zero_method="wilcox", method="exact")
    # otherwise: zeros dropped, normal approximation with tie and continuity correction
    return _quiet(stats.wilcoxon, bad, original, alternative="less", zero_method="wilcox",
                  correction=True, method="asymptotic")


wilcoxon_rows = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=4),
        st.floats(min_value=0, max_value=100, allow_nan=False, allow_subnormal=False),
        st.integers(min_value=0, max_value=100),
    ),
    max_size=150,
)


@settings(max_examples=150, deadline=None)
@given(rows=st.one_of(pair_rows, wilcoxon_rows))
def test_wilcoxon_equals_loop_of_r_wilcox_test(rows):
    # integer rows tie often (normal approximation); float bad scores rarely tie
    # (exact below 50 pairs); up to 150 rows, so some workers reach 50 pairs
    worker, bad, original = _pairs(rows)
    res = reliability(worker, bad, original, n_workers=5, test="wilcoxon")
    for w in range(5):
        m = worker == w
        d = bad[m] - original[m]
        if m.sum() < 2 or not np.any(d != 0):
            assert math.isnan(res.p[w]) and not res.reliable[w]
            continue
        ref = _r_wilcoxon_less(bad[m], original[m])
        np.testing.assert_allclose(res.p[w], ref.pvalue, rtol=1e-10)
        assert res.statistic[w] == ref.statistic


@settings(max_examples=60, deadline=None)
@given(rows=pair_rows)
def test_wilcoxon_scipy_method_equals_loop_of_scipy_wilcoxon(rows):
    worker, bad, original = _pairs(rows)
    res = reliability(worker, bad, original, n_workers=5, test="wilcoxon", method="scipy")
    for w in range(5):
        m = worker == w
        d = bad[m] - original[m]
        if m.sum() < 2 or not np.any(d != 0):
            assert math.isnan(res.p[w]) and not res.reliable[w]
            continue
        # convention: scipy.stats.wilcoxon(bad, original, alternative="less") with its
        # defaults zero_method="wilcox", correction=False, method="auto"
        ref = _quiet(stats.wilcoxon, bad[m], original[m], alternative="less",
                     zero_method="wilcox", correction=False, method="auto")
        np.testing.assert_allclose(res.p[w], ref.pvalue, rtol=1e-10)
        assert res.statistic[w] == ref.statistic


def test_wilcoxon_hand_computed_and_zero_handling():
    # worker 0: five pairs, all bad lower: R+ = 0, exact p = 1/2^5 = 0.03125 < 0.05
    # worker 1: all differences zero -> no evidence -> NaN
    # worker 2: [-5, -5, 0]: zero dropped, two tied negative ranks 1.5, 1.5, R+ = 0.
    #   R: zeros and ties -> normal approximation with continuity correction:
    #   mean m(m+1)/4 = 1.5; var = m(m+1)(2m+1)/24 - sum(t^3 - t)/48 = 30/24 - 6/48 = 9/8;
    #   z = (0 - 1.5 + 0.5) / sqrt(9/8) = -0.9428..., p = Phi(z) = 0.1729
    #   (scipy's "auto" enumerated the 4 sign flips instead: p = 1/4)
    worker = [0] * 5 + [1] * 3 + [2] * 3
    bad = [10, 20, 30, 40, 50, 7, 8, 9, 10, 10, 20]
    original = [11, 22, 33, 44, 55, 7, 8, 9, 15, 15, 20]
    res = reliability(worker, bad, original, n_workers=3, test="wilcoxon")
    assert math.isclose(res.p[0], 1 / 32) and res.reliable[0]
    assert math.isnan(res.p[1]) and not res.reliable[1]
    z = -1 / math.sqrt(9 / 8)
    assert math.isclose(res.p[2], 0.5 * math.erfc(-z / math.sqrt(2)), rel_tol=1e-12)
    assert math.isclose(res.p[2], 0.17288929307558015, rel_tol=1e-12)
    old = reliability(worker, bad, original, n_workers=3, test="wilcoxon", method="scipy")
    assert math.isclose(old.p[0], 1 / 32) and math.isclose(old.p[2], 0.25)
    with pytest.raises(ValueError):
        reliability(worker, bad, original, n_workers=3, test="wilcoxon", method="R")


# ------------------------------------------------------------ Welch / MWU


def _welch_rows(seed, n_workers=6):
    rng = np.random.default_rng(seed)
    n_rep, n_bad = 80, 90
    rw = rng.integers(0, n_workers - 1, n_rep)  # last worker: no data
    first = rng.integers(0, 101, n_rep).astype(float)
    repeat = np.clip(first + rng.integers(-15, 16, n_rep), 0, 100)
    bw = rng.integers(0, n_workers - 1, n_bad)
    original = rng.integers(20, 101, n_bad).astype(float)
    bad = np.clip(original - rng.integers(-5, 40, n_bad), 0, 100)
    return rw, first, repeat, bw, bad, original


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_welch_equals_scipy_ttest_ind_unequal_var(seed):
    rw, first, repeat, bw, bad, original = _welch_rows(seed)
    res = reliability_welch(rw, first, repeat, bw, bad, original, n_workers=6)
    for w in range(5):
        d1 = np.abs(first[rw == w] - repeat[rw == w])
        d2 = original[bw == w] - bad[bw == w]
        # convention: Welch (equal_var=False), one-sided H1 mean(d1) < mean(d2), unpaired
        ref = stats.ttest_ind(d1, d2, equal_var=False, alternative="less")
        np.testing.assert_allclose(res.p[w], ref.pvalue, rtol=1e-9)
        np.testing.assert_allclose(res.statistic[w], ref.statistic, rtol=1e-9)
        np.testing.assert_allclose(res.df[w], ref.df, rtol=1e-9)
        assert res.n_repeat_pairs[w] == d1.size and res.n_bad_pairs[w] == d2.size
    assert math.isnan(res.p[5]) and not res.reliable[5]


def _r_mwu_less(d1, d2):
    """R's wilcox.test(d1, d2, alternative="less") as a scipy call."""
    pooled = np.r_[d1, d2]
    exact = d1.size < 50 and d2.size < 50 and np.unique(pooled).size == pooled.size
    return stats.mannwhitneyu(d1, d2, alternative="less", use_continuity=True,
                              method="exact" if exact else "asymptotic")


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("method", ["r", "scipy"])
def test_mann_whitney_variant_equals_scipy(seed, method):
    rw, first, repeat, bw, bad, original = _welch_rows(seed)
    res = reliability_welch(rw, first, repeat, bw, bad, original, n_workers=6, test="mann-whitney",
                            method=method)
    for w in range(5):
        d1 = np.abs(first[rw == w] - repeat[rw == w])
        d2 = original[bw == w] - bad[bw == w]
        if method == "r":
            # convention: R's rule (exact below 50 without ties, else normal with tie and
            # continuity correction), one-sided less
            ref = _r_mwu_less(d1, d2)
        else:
            # convention: scipy defaults (continuity correction, method="auto"), one-sided less
            ref = stats.mannwhitneyu(d1, d2, alternative="less")
        np.testing.assert_allclose(res.p[w], ref.pvalue, rtol=1e-12)
        assert res.statistic[w] == ref.statistic
        assert res.reliable[w] == (ref.pvalue < 0.05)
    assert math.isnan(res.p[5])


def test_mann_whitney_variant_is_exact_below_50_without_ties():
    # worker 0: 10 ask-again pairs and 12 bad-reference pairs with distinct differences.
    # R: exact (both < 50, no ties); scipy's "auto" would have used the normal
    # approximation (neither sample has <= 8 values).
    rng = np.random.default_rng(4)
    first = rng.uniform(40, 60, 10)
    repeat = first + rng.uniform(0, 5, 10)
    original = rng.uniform(50, 90, 12)
    bad = original - rng.uniform(0, 30, 12)
    rw, bw = np.zeros(10, dtype=np.int64), np.zeros(12, dtype=np.int64)
    res = reliability_welch(rw, first, repeat, bw, bad, original, n_workers=1, test="mann-whitney")
    d1, d2 = np.abs(first - repeat), original - bad
    ref = stats.mannwhitneyu(d1, d2, alternative="less", method="exact")
    np.testing.assert_allclose(res.p[0], ref.pvalue, rtol=1e-12)
    old = reliability_welch(rw, first, repeat, bw, bad, original, 1, test="mann-whitney", method="scipy")
    np.testing.assert_allclose(old.p[0], stats.mannwhitneyu(d1, d2, alternative="less",
                                                            method="asymptotic").pvalue, rtol=1e-12)
    assert old.p[0] != res.p[0]


def test_welch_edge_cases():
    # worker 0: d1 = 0, 0 (a perfectly consistent judge) vs d2 = 10, 30 -> computable
    # worker 1: one ask-again pair -> NaN (variance needs 2 values)
    # worker 2: d1 constant 5 and d2 constant 20 -> zero standard error -> NaN
    rw = [0, 0, 1, 2, 2]
    first = [50, 60, 70, 40, 40]
    repeat = [50, 60, 70, 45, 45]
    bw = [0, 0, 1, 1, 2, 2]
    original = [60, 80, 50, 60, 70, 70]
    bad = [50, 50, 20, 10, 50, 50]
    res = reliability_welch(rw, first, repeat, bw, bad, original, n_workers=3)
    ref = stats.ttest_ind([0.0, 0.0], [10.0, 30.0], equal_var=False, alternative="less")
    # hand: t = (0 - 20) / sqrt(0/2 + 200/2) = -2, df = 1
    assert math.isclose(res.statistic[0], -2.0) and math.isclose(res.df[0], 1.0)
    np.testing.assert_allclose(res.p[0], ref.pvalue, rtol=1e-12)
    assert math.isnan(res.p[1]) and math.isnan(res.p[2])
    assert res.mean_d1.tolist()[:1] == [0.0] and res.mean_d2[0] == 20.0
    mw = reliability_welch(rw, first, repeat, bw, bad, original, n_workers=3, test="mann-whitney")
    assert math.isnan(mw.p[1])  # fewer than min_pairs ask-again pairs
    np.testing.assert_allclose(mw.p[2], stats.mannwhitneyu([5.0, 5.0], [20.0, 20.0], alternative="less").pvalue)


# ------------------------------------------------------------------ Appraise


def _appraise_reference(rows, n_workers):
    """Independent dict-and-loop rendering of Appraise's per-user QC (see docstring)."""
    by_user = defaultdict(list)
    for w, key, kind, score in rows:
        by_user[w].append((key, kind, score))
    out = np.full(n_workers, np.nan)
    for w, items in by_user.items():
        scores = [s for _, _, s in items]
        mean = sum(scores) / len(scores)
        sd = math.sqrt(sum((s - mean) ** 2 for s in scores) / (len(scores) - 1)) if len(scores) > 1 else 1
        if int(sd) == 0:
            sd = 1
        tgt, bad = defaultdict(list), defaultdict(list)
        for key, kind, s in items:
            (bad if kind else tgt)[key].append((s - mean) / sd)
        keys = sorted(set(tgt) & set(bad))
        if keys:
            x = [sum(bad[k]) / len(bad[k]) for k in keys]
            y = [sum(tgt[k]) / len(tgt[k]) for k in keys]
            out[w] = stats.mannwhitneyu(x, y, alternative="less").pvalue
    return out


def test_appraise_matches_independent_reference_and_is_z_invariant():
    rng = np.random.default_rng(11)
    n_workers, n_keys = 5, 40
    rows = []
    for w in range(n_workers - 1):  # worker 4 has nothing
        care = w / 3  # worker 0 is random, worker 3 careful
        for key in rng.choice(n_keys, 14, replace=False):
            orig = float(rng.integers(30, 101))
            rows.append((w, int(key), False, orig))
            if rng.random() < 0.3:  # a repeat of the original under the same key
                rows.append((w, int(key), False, float(np.clip(orig + rng.integers(-5, 6), 0, 100))))
            if rng.random() < 0.9:
                b = orig - care * 40 + rng.integers(-20, 21)
                rows.append((w, int(key), True, float(np.clip(b, 0, 100))))
        # a BAD item whose TGT is missing must be ignored
        rows.append((w, n_keys, True, 3.0))
    worker, pair, is_bad, score = (np.array(c) for c in zip(*rows, strict=True))
    res = reliability_appraise(worker, pair, is_bad, score, n_workers, n_pairs_total=n_keys + 1)
    ref = _appraise_reference(rows, n_workers)
    np.testing.assert_allclose(res.p, ref, rtol=1e-12)
    assert np.array_equal(res.reliable, np.nan_to_num(ref, nan=1) <= 0.01)
    assert math.isnan(res.p[4]) and res.n_pairs[4] == 0
    # raw vs z-scores: a positive affine map per worker leaves the ranks alone
    z = standardise(worker, score, n_workers).z
    res_z = reliability_appraise(worker, pair, is_bad, z, n_workers, n_pairs_total=n_keys + 1)
    np.testing.assert_allclose(res_z.p, res.p, rtol=1e-12)


def test_appraise_keeps_scipys_rule():
    # 10 keys, bad means 1..10 and tgt means 11.5..20.5 shifted so that nothing ties:
    # both samples have 10 values, so R would be exact (p = 1/C(20, 10)); Appraise runs
    # scipy, whose "auto" takes the normal approximation with continuity correction
    worker = [0] * 20
    pair = list(range(10)) * 2
    is_bad = [True] * 10 + [False] * 10
    score = [float(k) for k in range(1, 11)] + [k + 10.5 for k in range(1, 11)]
    res = reliability_appraise(worker, pair, is_bad, score, 1, n_pairs_total=10)
    ref = stats.mannwhitneyu(score[:10], score[10:], alternative="less")  # scipy defaults
    np.testing.assert_allclose(res.p[0], ref.pvalue, rtol=1e-12)
    assert res.p[0] > 1 / math.comb(20, 10)


def test_appraise_threshold_is_inclusive():
    # 5 keys, every bad mean below every tgt mean: exact one-sided p = 1 / C(10, 5) = 1/252
    worker = [0] * 10
    pair = [0, 1, 2, 3, 4] * 2
    is_bad = [True] * 5 + [False] * 5
    score = [1, 2, 3, 4, 5, 60, 70, 80, 90, 100]
    res = reliability_appraise(worker, pair, is_bad, score, 1, n_pairs_total=5)
    assert math.isclose(res.p[0], 1 / 252)
    assert res.reliable[0]
    assert reliability_appraise(worker, pair, is_bad, score, 1, 5, threshold=1 / 252).reliable[0]
    assert not reliability_appraise(worker, pair, is_bad, score, 1, 5, threshold=0.003).reliable[0]


# ---------------------------------------------------------------- Assumption A


@settings(max_examples=150, deadline=None)
@given(rows=pair_rows)
def test_assumption_a_equals_scipy_two_sided_ttest_rel(rows):
    worker, first, repeat = _pairs(rows)
    res = assumption_a(worker, first, repeat, n_workers=5)
    for w in range(5):
        m = worker == w
        d = first[m] - repeat[m]
        if m.sum() < 2:
            assert math.isnan(res.p[w]) and not res.determined[w]
        elif np.all(d == 0):
            assert math.isnan(res.p[w]) and res.determined[w] and res.holds[w]
        elif np.all(d == d[0]):
            assert math.isnan(res.p[w]) and not res.determined[w] and not res.holds[w]
        else:
            # convention: two-sided paired t; holds iff p >= 0.05
            ref = _quiet(stats.ttest_rel, first[m], repeat[m])
            np.testing.assert_allclose(res.p[w], ref.pvalue, rtol=1e-9, atol=1e-300)
            assert res.determined[w]
            assert res.holds[w] == (ref.pvalue >= 0.05)


def test_assumption_a_share_hand_example():
    # workers: 0 holds, 1 violated (repeats always ~20 higher), 2 too few pairs,
    # 3 holds (identical repeats), 4 holds but is not reliable
    worker = [0, 0, 0, 1, 1, 1, 2, 3, 3, 4, 4, 4]
    first = [50, 60, 70, 10, 30, 50, 40, 80, 90, 20, 30, 40]
    repeat = [52, 57, 71, 31, 49, 71, 45, 80, 90, 21, 28, 41]
    res = assumption_a(worker, first, repeat, n_workers=5)
    assert res.holds.tolist() == [True, False, False, True, True]
    assert res.determined.tolist() == [True, True, False, True, True]
    reliable = np.array([True, True, True, True, False])
    share = assumption_a_share(res, reliable)
    # reliable: 0-3; determined among them: 0, 1, 3; holds: 0, 3 -> 2/3
    assert share == {"n_reliable": 4, "n_determined": 3, "n_holds": 2, "share": 2 / 3}
    assert math.isnan(assumption_a_share(res, np.zeros(5, bool))["share"])
