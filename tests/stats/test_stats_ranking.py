"""The ranking statistics core against hand-computed cases, the `trueskill` package, a published Schulze
example and scipy (docs/methods.md §8)."""
import math

import numpy as np
import pytest
import trueskill
from scipy import stats as sps

from evaluation.stats import ranking as rk
from evaluation.stats import schulze
from evaluation.stats import trueskill as ts

A, B, C, D, E = range(5)


def toy() -> rk.Outcomes:
    """Three judges, four systems (a fifth, E, never shown):
    J1 ranks A1 B2 C3 D4; J2 ranks A2 B1 C3 D3; J3 ranks A1 C1 D2."""
    ranking = [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2]
    system = [A, B, C, D, A, B, C, D, A, C, D]
    rank = [1, 2, 3, 4, 2, 1, 3, 3, 1, 1, 2]
    return rk.expand(ranking, system, rank, 5)


def test_expansion_by_hand():
    out = toy()
    assert out.size == 6 + 6 + 3
    triples = sorted(zip(out.first.tolist(), out.second.tolist(), out.result.tolist(), strict=True))
    assert triples == sorted([(A, B, 1), (A, C, 1), (A, D, 1), (B, C, 1), (B, D, 1), (C, D, 1),
                              (A, B, -1), (A, C, 1), (A, D, 1), (B, C, 1), (B, D, 1), (C, D, 0),
                              (A, C, 0), (A, D, 1), (C, D, 1)])


def test_scores_by_hand():
    s = rk.ranking_scores(toy(), 5)
    # A: 6 wins, 1 loss, 1 tie; B: 5, 1, 0; C: 2, 4, 2; D: 0, 7, 1.
    assert s.n_wins.tolist() == [6, 5, 2, 0, 0]
    assert s.n_losses.tolist() == [1, 1, 4, 7, 0]
    assert s.n_ties.tolist() == [1, 0, 2, 1, 0]
    np.testing.assert_allclose(s.geq_others[:4], [7 / 8, 5 / 6, 4 / 8, 1 / 8])
    np.testing.assert_allclose(s.gt_others[:4], [6 / 7, 5 / 6, 2 / 6, 0])
    # Expected wins: A vs B 1/2, vs C 2/2, vs D 3/3; B vs A 1/2, C 1, D 1; C vs D 2/2; D none.
    # |S| = 4: E, never shown, has no outcome and is not one of the |S| - 1 opponents.
    np.testing.assert_allclose(s.expected_wins_others[:4], [2.5 / 3, 2.5 / 3, 1 / 3, 0])
    np.testing.assert_allclose(s.expected_wins_compared[:4], [2.5 / 3, 2.5 / 3, 1 / 3, 0])
    assert all(math.isnan(x) for x in (s.geq_others[E], s.gt_others[E], s.expected_wins_others[E],
                                       s.expected_wins_compared[E]))
    assert s.wins[A, D] == 3 and s.ties[C, D] == s.ties[D, C] == 1


def test_ranks_above_n_only_matter_by_order_and_a_system_against_itself_gives_nothing():
    same = rk.expand([0, 0, 0], [A, B, C], [1, 7, 9], 3)
    assert same.result.tolist() == [1, 1, 1]
    assert rk.expand([0, 0], [A, A], [1, 2], 3).size == 0


@pytest.mark.parametrize("env", [
    ts.TrueSkillSettings(mu=25.0, sigma=25 / 3, beta=25 / 6, tau=25 / 300, draw_probability=0.10),
    ts.TrueSkillSettings(),  # WMT's environment
])
def test_trueskill_pass_equals_the_package(env):
    rng = np.random.default_rng(3)
    n, n_systems = 2000, 7
    first = rng.integers(0, n_systems, n)
    second = (first + rng.integers(1, n_systems, n)) % n_systems
    result = rng.choice([-1, 0, 1], n, p=[0.4, 0.2, 0.4])
    winner, loser, drawn = ts.winner_loser(first, second, result)
    mine = ts.trueskill_pass(winner, loser, drawn, n_systems, env)
    package = trueskill.TrueSkill(mu=env.mu, sigma=env.sigma, beta=mine.beta, tau=env.tau,
                                  draw_probability=env.draw_probability)
    ratings = [package.create_rating() for _ in range(n_systems)]
    for w, lo, d in zip(winner.tolist(), loser.tolist(), drawn.tolist(), strict=True):
        ratings[w], ratings[lo] = trueskill.rate_1vs1(ratings[w], ratings[lo], drawn=d, env=package)
    np.testing.assert_allclose(mine.mu, [r.mu for r in ratings], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(mine.sigma, [r.sigma for r in ratings], rtol=1e-12, atol=1e-12)


def test_wmt_beta_and_draw_margin():
    env = ts.TrueSkillSettings()
    assert env.beta_for(399) == pytest.approx(0.5 * 400 / 40)
    assert env.draw_margin(1.0) == pytest.approx(trueskill.calc_draw_margin(
        0.25, 2, trueskill.TrueSkill(beta=1.0)), rel=1e-15)


def test_bootstrap_runs_do_not_depend_on_how_they_are_split():
    rng = np.random.default_rng(0)
    winner, loser = rng.integers(0, 4, 300), rng.integers(0, 4, 300)
    keep = winner != loser
    winner, loser, drawn = winner[keep], loser[keep], rng.random(keep.sum()) < 0.2
    whole = ts.trueskill_bootstrap(winner, loser, drawn, 4, range(6), seed=5)
    parts = np.vstack([ts.trueskill_bootstrap(winner, loser, drawn, 4, [0, 1, 2], seed=5),
                       ts.trueskill_bootstrap(winner, loser, drawn, 4, [3, 4, 5], seed=5)])
    np.testing.assert_array_equal(whole, parts)


def test_rank_ranges_and_clusters_by_hand():
    # 40 runs of 4 systems: 0 always first; 1 and 2 swap places half the time; 3 always last.
    runs = np.tile([4.0, 3.0, 2.0, 1.0], (40, 1))
    runs[::2, 1], runs[::2, 2] = 2.0, 3.0
    r = ts.rank_ranges(runs, 0.95)
    assert r.rank_low.tolist() == [1, 2, 2, 4] and r.rank_high.tolist() == [1, 3, 3, 4]
    assert r.cluster.tolist() == [1, 2, 2, 3]


def test_schulze_on_the_worked_example():
    """Schulze (2011), the example with 45 voters and five candidates, also on the English Wikipedia page
    "Schulze method" (its d[*,*] and p[*,*] tables): 5 ACBED, 5 ADECB, 8 BEDAC, 3 CABED, 7 CAEBD, 2 CBADE,
    7 DCEBA, 8 EBADC; the winner is E and the order E > A > C > B > D."""
    ballots = [(5, "ACBED"), (5, "ADECB"), (8, "BEDAC"), (3, "CABED"), (7, "CAEBD"), (2, "CBADE"), (7, "DCEBA"),
               (8, "EBADC")]
    ranks = np.array([[[b.index(c) + 1 for c in "ABCDE"] for _, b in ballots]])
    weights = np.array([[n for n, _ in ballots]])
    d = schulze.preferences(ranks, weights)[0]
    assert d.tolist() == [[0, 20, 26, 30, 22], [25, 0, 16, 33, 18], [19, 29, 0, 17, 24], [15, 12, 28, 0, 14],
                          [23, 27, 21, 31, 0]]
    p = schulze.strongest_paths(d[None])[0]
    assert p.tolist() == [[0, 28, 28, 30, 24], [25, 0, 28, 33, 24], [25, 29, 0, 29, 24], [25, 28, 28, 0, 24],
                          [25, 28, 28, 31, 0]]
    assert schulze.schulze_ranks(ranks, weights)[0].tolist() == [2, 4, 3, 5, 1]
    # The same ballots one voter per row give the same ranking.
    expanded = np.repeat(ranks[0], weights[0], axis=0)[None]
    assert schulze.schulze_ranks(expanded)[0].tolist() == [2, 4, 3, 5, 1]


def test_schulze_ties_when_judges_cancel_out():
    ranks = np.array([[[1, 2], [2, 1]]])
    assert schulze.schulze_ranks(ranks)[0].tolist() == [1, 1]
    assert schulze.schulze_ranks(ranks, np.array([[2.0, 1.0]]))[0].tolist() == [1, 2]


def agreement_toy():
    """One segment, systems A B C in that screen order: J1 ranks A1 B2 C3, J2 A1 B3 C2, J1 again A1 B2 C2."""
    out = rk.expand([0, 0, 0, 1, 1, 1, 2, 2, 2], [A, B, C] * 3, [1, 2, 3, 1, 3, 2, 1, 2, 2], 3)
    return out, np.zeros(3, dtype=int), np.array([0, 1, 0])


def test_agreement_wmt08_by_hand():
    out, item, judge = agreement_toy()
    inter, intra = rk.ranking_agreement(out, item, judge, "wmt08")
    # AB and AC: all three agree; BC: >, <, = all disagree. Inter: 6 comparisons, 4 agree; intra: 3, 2.
    assert (inter.n_comparisons, inter.n_agree, intra.n_comparisons, intra.n_agree) == (6, 4, 3, 2)
    assert inter.kappa_uniform == pytest.approx(0.5) and intra.kappa_uniform == pytest.approx(0.5)
    # P(=) = 1/9 over the outcomes in inter comparisons: P(E) = 1/81 + 2 (4/9)^2 = 33/81, kappa = 21/48.
    assert inter.p_expected_ties == pytest.approx(33 / 81)
    assert inter.kappa_ties == pytest.approx(21 / 48)


def test_agreement_wmt13_by_hand():
    out, item, judge = agreement_toy()
    inter, intra = rk.ranking_agreement(out, item, judge, "wmt13")
    assert (inter.n_comparisons, inter.n_agree) == (9, 6)  # the same judge's pairs count too
    assert inter.kappa_ties == pytest.approx(21 / 48)
    # Intra: J1's own pairs, 3 comparisons, 2 agree; P(=) over all 9 outcomes of the task = 1/9, as for inter.
    assert (intra.n_comparisons, intra.n_agree) == (3, 2)
    assert intra.p_expected_ties == pytest.approx(33 / 81)
    assert intra.kappa_ties == pytest.approx(21 / 48)


def test_wmt13_takes_the_pair_in_screen_order():
    # The same two systems shown in opposite orders are different items for wmt13, the same for wmt08.
    out = rk.expand([0, 0, 1, 1], [A, B, B, A], [1, 2, 2, 1], 2)
    judge = np.array([0, 1])
    assert rk.ranking_agreement(out, np.zeros(2, int), judge, "wmt08")[0].n_comparisons == 1
    assert rk.ranking_agreement(out, np.zeros(2, int), judge, "wmt13")[0].n_comparisons == 0


def test_gold_correct_rules():
    assert rk.gold_correct([1, 2], [-1, -1], [5, 5]).tolist() == [True, False]
    # best-worst, N = 4: gold 1-2, bad 3-4; N = 5: gold 1-2, bad 4-5 (the middle in neither half).
    assert rk.gold_correct([2, 3, 1, 2, 2], [3, 4, 2, 4, 3], [4, 4, 4, 5, 5]).tolist() == [True, False, False,
                                                                                         True, False]
    acc = rk.gold_accuracy([0, 0, 0, 0, 1, 1, 1, 1, 1], [1, 1, 1, 0, 1, 1, 1, 0, 0], 3, min_gold=4,
                           min_accuracy=0.7)
    assert acc.trusted.tolist() == [True, False, False]
    np.testing.assert_allclose(acc.accuracy[:2], [0.75, 0.6])
    assert math.isnan(acc.accuracy[2])


def test_spearman_equals_scipy():
    scores = [0.61, 0.55, 0.55, 0.40, 0.32]
    metric = [30.1, 28.0, 29.5, 20.0, 21.0]
    expected = sps.spearmanr(scores, metric)
    got = rk.spearman(scores, metric)
    assert got.rho == pytest.approx(expected.statistic) and got.p_value == pytest.approx(expected.pvalue)
    ranks = [1, 2, 3, 4, 5]
    assert rk.spearman(scores, ranks, reference_is_rank=True).rho == pytest.approx(
        sps.spearmanr(scores, [-r for r in ranks]).statistic)
