"""Test-set difficulty calibration (000 §4, Table 3)."""

import math

import numpy as np
import pytest
from scipy import stats

from evaluation.stats import calibrate


def _around(mean, n=30, spread=10.0):
    """n scores with exactly the given mean (symmetric offsets)."""
    off = np.linspace(-spread, spread, n)
    return mean + off


def test_table3_fluency_arithmetic():
    # 000 Table 3, fluency: CURR07 64.1, CURR12 58.2 -> delta 5.9;
    # BEST07 53.5, BEST12 58.0 -> +4.5; 5-year gain = 4.5 + 5.9 = 10.4
    res = calibrate(_around(64.1), _around(58.2), _around(53.5), _around(58.0))
    assert math.isclose(res.delta, 5.9, abs_tol=1e-9)
    assert math.isclose(res.difference, 4.5, abs_tol=1e-9)
    assert math.isclose(res.gain, 10.4, abs_tol=1e-9)
    # adequacy: (56.0 - 54.0) + (65.0 - 56.7) = 2.0 + 8.3 = 10.3
    res = calibrate(_around(65.0), _around(56.7), _around(54.0), _around(56.0))
    assert math.isclose(res.gain, 10.3, abs_tol=1e-9)


def test_p_values_are_one_sided_rank_sum_in_both_directions():
    rng = np.random.default_rng(4)
    co, cn = rng.integers(30, 101, 200), rng.integers(20, 95, 300)
    bo, bn = rng.integers(20, 90, 250), rng.integers(25, 100, 280)
    res = calibrate(co, cn, bo, bn)
    # convention: unpaired Wilcoxon rank-sum, one-sided each way, R's rule; with samples this large (and ties)
    # that is the normal approximation with tie and continuity correction, scipy's default here too
    assert math.isclose(res.p_curr_old_better, stats.mannwhitneyu(co, cn, alternative="greater").pvalue,
                        rel_tol=1e-12)
    assert math.isclose(res.p_curr_new_better, stats.mannwhitneyu(cn, co, alternative="greater").pvalue,
                        rel_tol=1e-12)
    assert math.isclose(res.p_best_new_better, stats.mannwhitneyu(bn, bo, alternative="greater").pvalue,
                        rel_tol=1e-12)
    assert math.isclose(res.p_best_old_better, stats.mannwhitneyu(bo, bn, alternative="greater").pvalue,
                        rel_tol=1e-12)
    assert (res.n_curr_old, res.n_curr_new, res.n_best_old, res.n_best_new) == (200, 300, 250, 280)
    assert math.isclose(res.gain, (bn.mean() - bo.mean()) + (co.mean() - cn.mean()))


def test_small_samples_without_ties_are_exact_as_in_r():
    rng = np.random.default_rng(7)
    values = rng.permutation(np.arange(40, 130) / 1.5)  # distinct: no ties anywhere
    co, cn, bo, bn = values[:20], values[20:45], values[45:70], values[70:90]
    res = calibrate(co, cn, bo, bn)
    exact = stats.mannwhitneyu(co, cn, alternative="greater", method="exact").pvalue  # R: both samples < 50
    assert res.p_curr_old_better == pytest.approx(exact, rel=1e-12)
    assert res.p_best_new_better == pytest.approx(stats.mannwhitneyu(bn, bo, alternative="greater",
                                                                     method="exact").pvalue, rel=1e-12)


def test_empty_inputs_give_nan():
    res = calibrate([], [50.0], [40.0], [])
    assert math.isnan(res.delta) and math.isnan(res.gain)
    assert math.isnan(res.p_curr_old_better) and math.isnan(res.p_best_new_better)
    assert res.curr_new == 50.0 and res.best_old == 40.0
