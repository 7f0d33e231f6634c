"""Agreement statistics (docs/methods.md §6; 001 §6, Tables 1-3)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.stats import bin_equal_width, bin_percentile, cohen_kappa, score_differences


def test_score_differences_hand_computed():
    # |10-20|, |50-50|, |90-60| = 10, 0, 30: mean 40/3
    # deviations -10/3, -40/3, 50/3 -> squares (100 + 1600 + 2500)/9 = 4200/9, / (n-1=2) -> 700/3
    res = score_differences([10, 50, 90], [20, 50, 60])
    assert res.n == 3
    assert math.isclose(res.mean, 40 / 3)
    assert math.isclose(res.sd, math.sqrt(700 / 3))


def test_score_differences_too_few_pairs():
    empty = score_differences([], [])
    assert empty.n == 0 and math.isnan(empty.mean) and math.isnan(empty.sd)
    one = score_differences([10], [25])
    assert one.mean == 15 and math.isnan(one.sd)
    with pytest.raises(ValueError):
        score_differences([1, 2], [1])


def test_cohen_kappa_hand_computed_2x2():
    # Contingency table (rows: first rating, cols: second rating):
    #            yes  no
    #   yes       20   5
    #   no        10  15        n = 50
    # Pr(a) = (20 + 15)/50 = 0.7
    # marginals: first yes 25/50 = 0.5, second yes 30/50 = 0.6
    # Pr(e) = 0.5 * 0.6 + 0.5 * 0.4 = 0.5;  kappa = (0.7 - 0.5) / (1 - 0.5) = 0.4
    a = [0] * 20 + [0] * 5 + [1] * 10 + [1] * 15
    b = [0] * 20 + [1] * 5 + [0] * 10 + [1] * 15
    k = cohen_kappa(a, b)
    assert k.n == 50 and k.n_categories == 2
    assert math.isclose(k.p_observed, 0.7)
    assert math.isclose(k.p_expected, 0.5)
    assert math.isclose(k.kappa, 0.4)
    assert k.table.tolist() == [[20, 5], [10, 15]]


def test_cohen_kappa_hand_computed_3x3():
    # pairs: (0,0) x4, (1,1) x3, (2,2) x1, (0,1) x1, (2,0) x1     n = 10
    # Pr(a) = 8/10; first marginal (5, 3, 2)/10, second (5, 4, 1)/10
    # Pr(e) = (25 + 12 + 2)/100 = 0.39; kappa = (0.8 - 0.39)/0.61 = 0.41/0.61
    a = [0, 0, 0, 0, 1, 1, 1, 2, 0, 2]
    b = [0, 0, 0, 0, 1, 1, 1, 2, 1, 0]
    k = cohen_kappa(a, b)
    assert math.isclose(k.p_expected, 0.39)
    assert math.isclose(k.kappa, 0.41 / 0.61)


def test_cohen_kappa_edge_cases():
    assert cohen_kappa([0, 1, 2, 1], [0, 1, 2, 1]).kappa == 1.0
    # both raters always use category 3: Pr(e) = 1 -> kappa undefined
    same = cohen_kappa([3, 3, 3], [3, 3, 3])
    assert same.p_observed == 1.0 and math.isnan(same.kappa)
    empty = cohen_kappa([], [], n_categories=5)
    assert empty.n == 0 and math.isnan(empty.kappa) and empty.table.shape == (5, 5)
    with pytest.raises(ValueError):
        cohen_kappa([0, 5], [0, 1], n_categories=5)
    with pytest.raises(TypeError):
        cohen_kappa([0.5, 1.0], [0, 1])


@settings(max_examples=100, deadline=None)
@given(pairs=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3)), min_size=1, max_size=40))
def test_cohen_kappa_equals_formula_from_loops(pairs):
    a = [x for x, _ in pairs]
    b = [y for _, y in pairs]
    n = len(pairs)
    po = sum(x == y for x, y in pairs) / n
    pe = sum((a.count(c) / n) * (b.count(c) / n) for c in range(4))
    k = cohen_kappa(a, b, n_categories=4)
    assert math.isclose(k.p_observed, po) and math.isclose(k.p_expected, pe, abs_tol=1e-12)
    if pe < 1:
        assert math.isclose(k.kappa, (po - pe) / (1 - pe), abs_tol=1e-12)


def test_bin_equal_width_edges():
    s = [0, 19.99, 20, 39.9, 40, 60, 79.99, 80, 99.99, 100]
    assert bin_equal_width(s, 5).tolist() == [0, 0, 1, 1, 2, 3, 3, 4, 4, 4]
    # k = 4: quarter marks 25, 50, 75 start the next bin; 100 goes in the top bin
    assert bin_equal_width([0, 24.9, 25, 50, 74.9, 75, 100], 4).tolist() == [0, 0, 1, 2, 2, 3, 3]
    assert bin_equal_width([49.9, 50, 100], 2).tolist() == [0, 1, 1]
    # integer scores exactly on an edge: 60 * 5 / 100 = 3 exactly
    assert bin_equal_width(np.arange(0, 101, 20), 5).tolist() == [0, 1, 2, 3, 4, 4]
    with pytest.raises(ValueError):
        bin_equal_width([101], 5)
    with pytest.raises(ValueError):
        bin_equal_width([np.nan], 5)


def test_bin_percentile_hand_computed():
    # z = 0..9: linear-interpolated 20/40/60/80th percentiles = 1.8, 3.6, 5.4, 7.2
    z = np.arange(10.0)
    assert bin_percentile(z, 5).tolist() == [0, 0, 1, 1, 2, 2, 3, 3, 4, 4]
    # a value exactly on an edge goes up: the 50th percentile of 0..4 is 2
    assert bin_percentile([1.9, 2.0, 2.1], 2, reference=np.arange(5.0)).tolist() == [0, 1, 1]
    # edges from the reference (all z-scores), applied to a subset
    assert bin_percentile([-5.0, 100.0], 5, reference=z).tolist() == [0, 4]
    with pytest.raises(ValueError):
        bin_percentile([np.nan], 5)


def test_kappa_on_binned_repeat_scores():
    first = np.array([10, 30, 55, 70, 95, 20])
    repeat = np.array([15, 45, 58, 65, 100, 19])
    # 5 bins: (0,0), (1,2), (2,2), (3,3), (4,4), (1,0) -> 4 agreements of 6
    k = cohen_kappa(bin_equal_width(first, 5), bin_equal_width(repeat, 5), n_categories=5)
    assert math.isclose(k.p_observed, 4 / 6)
    # first marginal: bins 0,1,1,2,3,4 -> (1,2,1,1,1)/6; repeat bins 0,2,2,3,4,0 -> (2,0,2,1,1)/6
    pe = (1 * 2 + 2 * 0 + 1 * 2 + 1 * 1 + 1 * 1) / 36
    assert math.isclose(k.p_expected, pe)
    assert math.isclose(k.kappa, (4 / 6 - pe) / (1 - pe))
