"""Instruction-following statistics (evaluation/stats/instructions.py, docs/methods.md#instruction-following):
Wilson intervals against statsmodels' `proportion_confint(method="wilson")` and a hand-computed case; the paired
sign test against scipy's `binomtest` on the same numbers and by hand."""
import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from evaluation.stats.instructions import answer_shares, item_means, sign_tests


def test_wilson_intervals_match_statsmodels():
    rng = np.random.default_rng(26)
    system = rng.integers(0, 5, 400)
    answer = rng.choice(3, 400, p=[0.6, 0.25, 0.15])
    shares = answer_shares(system, answer, 6)  # system 5 has no answers
    for i in range(5):
        for k in range(3):
            low, high = proportion_confint(shares.counts[i, k], shares.n[i], alpha=0.05, method="wilson")
            assert shares.low[i, k] == pytest.approx(low, abs=1e-12)
            assert shares.high[i, k] == pytest.approx(high, abs=1e-12)
            assert shares.share[i, k] == shares.counts[i, k] / shares.n[i]
    assert shares.n[5] == 0 and np.isnan(shares.share[5]).all() and np.isnan(shares.low[5]).all()


def test_wilson_by_hand():
    """8 yes of 10: centre (8 + z²/2) / (10 + z²) = 0.71674, half-width z √(10·0.8·0.2 + z²/4) / (10 + z²) = 0.22658
    with z = 1.95996: [0.4902, 0.9433]; 0 of 10 gives [0, 0.2775]."""
    shares = answer_shares(np.zeros(10, int), np.array([0] * 8 + [2] * 2), 1)
    assert list(shares.counts[0]) == [8, 0, 2]
    assert shares.low[0, 0] == pytest.approx(0.4902, abs=1e-4) and shares.high[0, 0] == pytest.approx(0.9433, abs=1e-4)
    assert shares.low[0, 1] == 0.0 and shares.high[0, 1] == pytest.approx(0.2775, abs=1e-4)


def test_sign_test_matches_scipy_binomtest():
    rng = np.random.default_rng(3)
    n_systems, n_items = 4, 60
    system = np.repeat(np.arange(n_systems), n_items)
    item = np.tile(np.arange(n_items), n_systems)
    answer = np.concatenate([rng.choice(3, n_items, p=p) for p in ([.7, .2, .1], [.5, .3, .2], [.5, .3, .2],
                                                                    [.2, .3, .5])])
    keep = rng.random(system.size) > 0.15  # not every system judged on every item
    means = item_means(system[keep], item[keep], answer[keep], n_systems, n_items)
    tests = sign_tests(means)
    for i in range(n_systems):
        for j in range(n_systems):
            if i == j:
                assert np.isnan(tests.p_value[i, j])
                continue
            shared = ~np.isnan(means[i]) & ~np.isnan(means[j])
            wins, losses = int(np.sum(means[i, shared] > means[j, shared])), int(np.sum(means[i, shared] <
                                                                                     means[j, shared]))
            assert (tests.wins[i, j], tests.wins[j, i]) == (wins, losses)
            assert tests.ties[i, j] == int(np.sum(means[i, shared] == means[j, shared]))
            assert tests.p_value[i, j] == pytest.approx(stats.binomtest(wins, wins + losses).pvalue, rel=1e-12)


def test_sign_test_by_hand():
    """Six items won, one lost, one tie: p = 2 (1 + 7) / 2⁷ = 0.125; mean scores per item (yes=2, partly=1)."""
    # system 0: yes on items 0-5, no on 6, partly on 7; system 1: partly on 0-5, yes on 6, and partly twice on 7
    system = [0] * 8 + [1] * 9
    item = list(range(8)) + list(range(8)) + [7]
    answer = [0] * 6 + [2, 1] + [1] * 6 + [0, 1, 1]
    means = item_means(system, item, answer, 2, 8)
    assert means[1, 7] == 1.0 and means[0, 6] == 0.0
    tests = sign_tests(means)
    assert (tests.wins[0, 1], tests.wins[1, 0], tests.ties[0, 1]) == (6, 1, 1)
    assert tests.p_value[0, 1] == pytest.approx(0.125) and tests.p_value[1, 0] == pytest.approx(0.125)


def test_group_means_match_scipy_t_intervals():
    from evaluation.stats.media_split import group_means

    rng = np.random.default_rng(5)
    group = rng.integers(0, 3, 90)
    value = rng.normal(60, 15, 90)
    value[::17] = np.nan  # a translation without a 0–100 score
    means = group_means(group, value, 4)
    for g in range(3):
        x = value[(group == g) & np.isfinite(value)]
        low, high = stats.t.interval(0.95, x.size - 1, loc=x.mean(), scale=stats.sem(x))
        assert means.n[g] == x.size and means.mean[g] == pytest.approx(x.mean())
        assert (means.low[g], means.high[g]) == (pytest.approx(low), pytest.approx(high))
    assert means.n[3] == 0 and np.isnan(means.mean[3]) and np.isnan(means.low[3])
