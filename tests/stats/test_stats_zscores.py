"""Per-worker standardisation (docs/methods.md §5)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.stats import standardise, worker_means


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.integers(0, 3), st.floats(0, 100, allow_nan=False, allow_subnormal=False)),
        max_size=50,
    )
)
def test_standardise_equals_per_worker_numpy_loop(rows):
    worker = np.array([w for w, _ in rows], dtype=np.int64)
    scores = np.array([s for _, s in rows], dtype=float)
    res = standardise(worker, scores, n_workers=4)
    for w in range(4):
        s = scores[worker == w]
        assert res.n[w] == s.size
        if s.size == 0:
            assert math.isnan(res.mean[w]) and not res.constant[w]
            continue
        np.testing.assert_allclose(res.mean[w], s.mean(), rtol=1e-12)
        # convention: sample sd, ddof=1 (R's sd())
        sd = s.std(ddof=1) if s.size >= 2 else math.nan
        if s.size < 2 or np.all(s == s[0]) or not sd > 0:
            # single score, all equal, or a spread that underflows: can't standardise
            assert res.constant[w]
            assert np.isnan(res.z[worker == w]).all()
            continue
        np.testing.assert_allclose(res.sd[w], sd, rtol=1e-9)
        np.testing.assert_allclose(res.z[worker == w], (s - s.mean()) / sd, rtol=1e-9, atol=1e-9)
        assert not res.constant[w]


def test_hand_computed():
    # worker 0: 10, 20, 30 -> mean 20, sample sd sqrt((100 + 0 + 100) / 2) = 10
    # worker 1: 40, 50 -> mean 45, sd sqrt((25 + 25) / 1) = sqrt(50)
    res = standardise([0, 1, 0, 0, 1], [10, 40, 20, 30, 50], n_workers=2)
    np.testing.assert_allclose(res.z, [-1, -5 / math.sqrt(50), 0, 1, 5 / math.sqrt(50)])
    np.testing.assert_allclose(res.mean, [20, 45])
    np.testing.assert_allclose(res.sd, [10, math.sqrt(50)])
    assert res.n.tolist() == [3, 2]


def test_constant_and_single_score_workers_are_flagged_with_nan_z():
    # worker 0: one score; worker 1: 70, 70, 70 (sd = 0); worker 2: normal; worker 3: none
    res = standardise([0, 1, 1, 1, 2, 2], [55, 70, 70, 70, 0, 100], n_workers=4)
    assert res.constant.tolist() == [True, True, False, False]
    assert np.isnan(res.z[:4]).all()
    np.testing.assert_allclose(res.z[4:], [-1 / math.sqrt(2), 1 / math.sqrt(2)])
    assert math.isnan(res.sd[0]) and res.sd[1] == 0.0
    assert math.isnan(res.mean[3]) and res.n[3] == 0


def test_constant_detection_is_exact_for_values_that_do_not_average_exactly():
    # 0.1 three times: floating mean need not be exactly 0.1; still constant
    res = standardise([0, 0, 0], [0.1, 0.1, 0.1], n_workers=1)
    assert res.constant[0] and np.isnan(res.z).all() and res.sd[0] == 0.0


def test_fit_mask_excludes_rows_from_mu_sigma_but_scores_them():
    # references (rows 3, 4) excluded from the fit: mu = 20, sd = 10 from 10, 20, 30
    scores = np.array([10, 20, 30, 90, 100.0])
    fit = np.array([True, True, True, False, False])
    res = standardise(np.zeros(5, dtype=int), scores, 1, fit=fit)
    np.testing.assert_allclose(res.z, [-1, 0, 1, 7, 8])
    assert res.n[0] == 3


def test_empty_and_validation():
    res = standardise([], [], n_workers=2)
    assert res.z.size == 0 and np.isnan(res.mean).all() and not res.constant.any()
    with pytest.raises(ValueError):
        standardise([0, 2], [1, 2], n_workers=2)
    with pytest.raises(ValueError):
        standardise([0, 1], [1, np.inf], n_workers=2)


def test_underflowing_spread_counts_as_constant():
    # deviations of ~1e-200 square to 0: sd = 0 although the scores differ
    res = standardise([0, 0], [1e-200, 2e-200], n_workers=1)
    assert res.constant[0] and np.isnan(res.z).all()


def test_outputs_are_read_only():
    res = standardise([0, 0], [1, 2], n_workers=1)
    with pytest.raises(ValueError):
        res.z[0] = 5.0


def test_worker_means_for_seconds_per_judgment():
    # worker 0: 12 s and 18 s -> 15; worker 1: 9 s; worker 2: none -> NaN
    m = worker_means([0, 1, 0], [12.0, 9.0, 18.0], n_workers=3)
    assert m[0] == 15.0 and m[1] == 9.0 and math.isnan(m[2])
