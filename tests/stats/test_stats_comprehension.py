"""Reading comprehension's statistics (docs/methods.md §9): the Wilson score interval against Newcombe's (1998)
published examples, a hand computation and scipy's binomtest; the majority of graders; the two-proportion test."""
import math

import numpy as np
import pytest
from scipy import stats

from evaluation.stats import comprehension as rc


@pytest.mark.parametrize(("k", "n", "low", "high"), [
    # Newcombe (1998), Statistics in Medicine 17:857-872, Table I, method 3 (score interval without correction)
    (81, 263, 0.2553, 0.3662), (15, 148, 0.0624, 0.1605), (0, 20, 0.0, 0.1611), (1, 29, 0.0061, 0.1718),
])
def test_wilson_interval_matches_newcombes_examples(k, n, low, high):
    got = rc.wilson_interval(k, n)
    assert float(got[0]) == pytest.approx(low, abs=6e-5) and float(got[1]) == pytest.approx(high, abs=6e-5)


def test_wilson_interval_by_hand_and_as_scipy_computes_it():
    z = 1.959963984540054
    p, n = 0.8, 10
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low, high = rc.wilson_interval([8], [10])
    assert (low[0], high[0]) == pytest.approx((centre - half, centre + half))
    assert (low[0], high[0]) == pytest.approx((0.4902, 0.9433), abs=1e-4)
    k = np.array([0, 1, 5, 17, 30, 30])
    n = np.array([30, 30, 30, 30, 30, 40])
    for confidence in (0.9, 0.95, 0.99):
        lows, highs = rc.wilson_interval(k, n, confidence)
        for i in range(k.size):
            ci = stats.binomtest(int(k[i]), int(n[i])).proportion_ci(confidence, method="wilson")
            assert (lows[i], highs[i]) == pytest.approx((ci.low, ci.high), abs=1e-12)


def test_wilson_interval_without_trials_is_nan_and_bad_counts_are_refused():
    low, high = rc.wilson_interval([0, 3], [0, 3])
    assert math.isnan(low[0]) and math.isnan(high[0]) and high[1] == 1.0
    with pytest.raises(ValueError):
        rc.wilson_interval([4], [3])


def test_majority_is_strict():
    assert rc.majority([2, 1, 3, 1, 0], [3, 2, 3, 3, 0]).tolist() == [True, False, True, False, False]


def test_two_proportion_p_is_the_pooled_z_test_one_sided():
    k, n = np.array([45, 30, 30, 0]), np.array([50, 50, 50, 0])
    p = rc.two_proportion_p(k, n)
    pooled = 75 / 100
    z = (0.9 - 0.6) / math.sqrt(pooled * (1 - pooled) * (2 / 50))
    assert p[0, 1] == pytest.approx(stats.norm.sf(z)) and p[1, 0] == pytest.approx(stats.norm.cdf(z))
    assert p[1, 2] == pytest.approx(0.5)
    assert np.isnan(p[0, 3]) and np.isnan(p[3, 0]) and np.isnan(np.diag(p)).all()
    same = rc.two_proportion_p([10, 10], [10, 10])
    assert same[0, 1] == 1.0 and same[1, 0] == 1.0
