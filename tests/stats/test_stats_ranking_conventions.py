"""Issue 25's ranking conventions (docs/methods.md §8): |S| of expected wins and the P(=) of the data-based
kappa, each on the smallest case of the issue, computed by hand."""
import numpy as np
import pytest

from evaluation.stats import ranking as rk

A, B, REF = range(3)


def test_expected_wins_counts_only_systems_with_an_outcome():
    """Rows `A 1, B 2, _ref 1` with the reference left out: the caller drops the _ref slot, A beats B once.
    |S| = {A, B}, so A = 1/(2 - 1) = 1.0 and B = 0.0 (with _ref in |S|, A was 1/2)."""
    out = rk.expand([0, 0], [A, B], [1, 2], n_systems=3)
    scores = rk.ranking_scores(out, n_systems=3)
    assert scores.expected_wins_others[A] == 1.0
    assert scores.expected_wins_others[B] == 0.0
    assert np.isnan(scores.expected_wins_others[REF])
    assert scores.expected_wins_compared[A] == 1.0


def test_a_system_only_ever_ranked_alone_is_not_in_s():
    """A row holding one system gives no outcome: that system stays out of |S|."""
    out = rk.expand([0, 0, 1], [A, B, REF], [1, 2, 1], n_systems=3)
    assert out.size == 1
    assert rk.ranking_scores(out, n_systems=3).expected_wins_others.tolist()[:2] == [1.0, 0.0]


def test_expected_wins_others_divides_by_the_systems_present():
    """Three systems compared, a fourth never: A beats B, B beats C, C ties A. A: (1 + 0)/2, B: (0 + 1)/2,
    C: (0 + 0)/2 over |S| - 1 = 2 opponents."""
    out = rk.expand([0, 0, 1, 1, 2, 2], [A, B, B, REF, REF, A], [1, 2, 1, 2, 1, 1], n_systems=4)
    np.testing.assert_allclose(rk.ranking_scores(out, 4).expected_wins_others[:3], [0.5, 0.5, 0.0])


@pytest.mark.parametrize("pairing", rk.AGREEMENT_PAIRINGS)
def test_kappa_takes_p_tie_over_all_outcomes_of_the_task(pairing):
    """j1 ranks A<B and j2 A>B on item 1, j1 ties A=B on item 2. One inter comparison, which disagrees:
    P(A) = 0. P(=) = 1/3 over the task's three outcomes, P(E) = 1/9 + 2 (1/3)^2 = 1/3,
    kappa = (0 - 1/3) / (1 - 1/3) = -0.5 (over the two compared outcomes P(=) = 0 and kappa = -1)."""
    out = rk.expand([0, 0, 1, 1, 2, 2], [A, B, A, B, A, B], [2, 1, 1, 2, 1, 1], n_systems=2)
    item = np.array([0, 0, 1])
    judge = np.array([0, 1, 0])
    inter, intra = rk.ranking_agreement(out, item, judge, pairing)
    assert (inter.n_comparisons, inter.n_agree) == (1, 0)
    assert inter.p_tie == pytest.approx(1 / 3)
    assert inter.p_expected_ties == pytest.approx(1 / 3)
    assert inter.kappa_ties == pytest.approx(-0.5)
    assert intra.p_tie == pytest.approx(1 / 3) and intra.n_comparisons == 0
