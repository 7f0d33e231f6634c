"""ESA^AI scores (evaluation/stats/esa_ai.py, docs/methods.md#esa-ai): the post-stratified Hájek mean against a
direct computation by hand, its delta-method standard errors against a bootstrap of the same estimator, and the
budget and ranking figures."""
import math

import numpy as np
import pytest
from scipy import stats as sps

from evaluation.stats.esa_ai import bootstrap_scores, budget_saved, ipw_scores, kendall_tau

NAN = math.nan


def test_the_corrected_mean_imputes_unsent_clean_items_with_the_judged_clean_mean():
    # system 0: flagged 60, 70 (judged); clean 90 (judged), 100 (judged), two unsent -> imputed 95 each
    # system 1: flagged 50; clean 80 judged, four unsent -> 80 each
    score = np.array([[60, 50], [70, NAN], [90, 80], [100, NAN], [NAN, NAN], [NAN, NAN]], dtype=float)
    clean = np.array([[0, 0], [0, 1], [1, 1], [1, 1], [1, 1], [1, 1]], dtype=bool)
    result = ipw_scores(score, clean)
    assert result.score == pytest.approx([(60 + 70 + 95 * 4) / 6, (50 + 80 * 5) / 6], abs=1e-12)
    # the same as the inverse-probability weights 1 (flagged) and N_clean / n_clean (clean), normalised
    w0 = np.array([1, 1, 2, 2])
    assert result.score[0] == pytest.approx(np.sum(w0 * [60, 70, 90, 100]) / w0.sum())
    assert result.naive == pytest.approx([80.0, 65.0])
    assert list(result.clean) == [4, 5] and list(result.judged_clean) == [2, 1]
    assert list(result.flagged) == [2, 1] and list(result.judged_flagged) == [2, 1]


def test_with_every_item_judged_it_is_the_plain_mean_and_its_standard_error():
    rng = np.random.default_rng(1)
    score = rng.normal(80, 10, size=(50, 3))
    clean = rng.random((50, 3)) < 0.4
    result = ipw_scores(score, clean)
    assert result.score == pytest.approx(score.mean(axis=0), abs=1e-10)
    assert result.se == pytest.approx(score.std(axis=0) / math.sqrt(50), rel=1e-10)
    d = score[:, 0] - score[:, 1]  # the paired z-test on the difference, by hand
    expected = 2 * sps.norm.sf(abs(d.mean()) / (d.std() / math.sqrt(50)))
    assert result.p[0, 1] == pytest.approx(expected, rel=1e-9)


def test_macro_average_over_groups_by_hand():
    # group 0 (2 segments): flagged 40 judged, clean 90 judged; group 1 (3 segments): clean 100 judged, two clean
    # unsent -> the group's mean is 100; macro: (65 + 100) / 2; micro: (40 + 90 + 300) / 5
    score = np.array([[40], [90], [100], [NAN], [NAN]], dtype=float)
    clean = np.array([[0], [1], [1], [1], [1]], dtype=bool)
    group = np.array([0, 0, 1, 1, 1])
    assert ipw_scores(score, clean, group=group, macro=True).score[0] == pytest.approx(82.5)
    assert ipw_scores(score, clean, group=group).score[0] == pytest.approx(86.0)


def test_a_clean_stratum_without_judged_items_is_left_out_and_said():
    score = np.array([[60], [NAN], [NAN]], dtype=float)
    clean = np.array([[0], [1], [1]], dtype=bool)
    result = ipw_scores(score, clean)
    assert result.score[0] == 60 and bool(result.no_clean_judged[0])
    present = np.array([[True], [False], [False]])
    assert not ipw_scores(score, clean, present=present).no_clean_judged[0]


def test_standard_errors_match_a_bootstrap_of_the_same_estimator():
    """400 segments, 3 systems, half the outputs AI-clean, those sent at rate 0.25, 2,000 resamples of the
    segments: the analytic standard errors of the scores and of a paired difference are within 8 % of the
    bootstrap's (the bootstrap's own Monte Carlo error is about 1.6 %; the plug-in variance is a little smaller)."""
    rng = np.random.default_rng(7)
    n = 400
    segment = rng.normal(0, 8, size=(n, 1))
    clean = rng.random((n, 3)) < 0.5
    true = np.where(clean, 93, 70) + segment + rng.normal(0, 10, size=(n, 3)) + np.array([0, 2, 4])
    sent = ~clean | (rng.random((n, 3)) < 0.25)
    score = np.where(sent, true, NAN)
    group = rng.integers(0, 2, size=n)
    for macro in (False, True):
        result = ipw_scores(score, clean, group=group, macro=macro)
        boot = bootstrap_scores(score, clean, group=group, macro=macro, n_boot=2000, seed=3)
        assert result.se == pytest.approx(boot.std(axis=0, ddof=1), rel=0.08)
        diff = boot[:, 0] - boot[:, 2]
        analytic = math.sqrt(result.covariance[0, 0] + result.covariance[2, 2] - 2 * result.covariance[0, 2])
        assert analytic == pytest.approx(diff.std(ddof=1), rel=0.08)
        assert abs(boot.mean(axis=0) - result.score).max() < 0.2 * result.se.min()
    # the skipping costs precision: the interval is wider than judging everything would give
    assert (ipw_scores(score, clean).se > ipw_scores(true, clean).se).all()


def test_budget_and_ranking_figures():
    clean = np.array([[1, 0], [1, 1], [0, 0]], dtype=bool)
    sent = np.array([[0, 1], [1, 0], [1, 1]], dtype=bool)
    assert budget_saved(clean, sent) == {"not_sent": 2, "would_send": 6, "saved": pytest.approx(1 / 3)}
    assert kendall_tau([1, 2, 3], [1, 2, 3]) == pytest.approx(1.0)
    assert kendall_tau([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert math.isnan(kendall_tau([1, NAN], [1, 2]))
