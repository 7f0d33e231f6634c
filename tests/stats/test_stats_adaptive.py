"""Alpha spending, group-sequential boundaries and interim looks (docs/methods.md §12.2)."""

import math

import numpy as np
import pytest
from scipy import stats

from evaluation.stats.adaptive import (
    RULES,
    boundaries,
    crossing_probabilities,
    interim_look,
    predictive_power,
    rank_sum_z,
    spent_alpha,
    stratified_rank_sum_z,
)
from evaluation.stats.sequential_pairs import Units, adjusted_means, pair_information

FIVE = np.arange(1, 6) / 5


def two_sided_tail(x):
    return math.erfc(x / math.sqrt(2.0))  # P(|N(0,1)| >= x)


def test_spending_functions_by_hand():
    # O'Brien-Fleming type at t = 0.25: 2 - 2 Phi(1.959964 / 0.5) = P(|Z| >= 3.919928)
    np.testing.assert_allclose(
        spent_alpha([0.25], 0.05, "obrien-fleming"), [two_sided_tail(1.959963984540054 / 0.5)], rtol=1e-12
    )
    # Pocock type at t = 0.25: 0.05 ln(1 + (e - 1) / 4)
    np.testing.assert_allclose(spent_alpha([0.25], 0.05, "pocock"), [0.05 * math.log(1 + (math.e - 1) / 4)])
    for rule in RULES:
        spent = spent_alpha([0.1, 0.5, 1.0, 1.2], 0.05, rule)
        assert np.all(np.diff(spent) >= 0) and spent[-1] == pytest.approx(0.05) and spent[-2] == pytest.approx(0.05)


@pytest.mark.parametrize("bad", [[], [0.0, 1.0], [0.5, 0.4], [np.nan]])
def test_bad_fractions_are_refused(bad):
    with pytest.raises(ValueError):
        boundaries(bad)


def test_bad_rule_and_alpha_are_refused():
    with pytest.raises(ValueError):
        spent_alpha([1.0], rule="haybittle")
    with pytest.raises(ValueError):
        boundaries([1.0], alpha=1.5)


def test_one_look_is_the_fixed_test():
    assert boundaries([1.0])[0] == pytest.approx(1.959963984540054, abs=1e-9)
    assert boundaries([1.0], 0.01, "pocock")[0] == pytest.approx(stats.norm.isf(0.005), abs=1e-9)


def test_tiny_early_spending_still_gives_the_exact_first_bound():
    # O'Brien-Fleming at t = 0.01 spends 2 - 2 Phi(19.6) ~ 1.6e-85: the first bound is 1.96 / 0.1
    bounds = boundaries([0.01, 0.02, 0.5, 1.0])
    assert bounds[0] == pytest.approx(19.59963984540054, abs=1e-6)
    assert np.all(np.diff(bounds) < 0) and 1.96 < bounds[-1] < 2.0


def test_two_looks_against_the_bivariate_normal():
    # P(|Z1| < c1, |Z2| < c2) = 1 - alpha, corr(Z1, Z2) = sqrt(0.4), by scipy's bivariate normal
    for rule in RULES:
        c1, c2 = boundaries([0.4, 1.0], 0.05, rule)
        assert two_sided_tail(c1) == pytest.approx(spent_alpha([0.4], 0.05, rule)[0], rel=1e-9)
        rho = math.sqrt(0.4)
        mvn = stats.multivariate_normal(mean=[0, 0], cov=[[1, rho], [rho, 1]])
        inside = mvn.cdf([c1, c2], lower_limit=[-c1, -c2])
        assert 1 - inside == pytest.approx(0.05, abs=2e-5)


def test_published_five_look_boundaries():
    # ldbounds / gsDesign, five equally spaced looks, two-sided symmetric with 0.025 per side
    # spent on each side by the O'Brien-Fleming-type function 2 - 2 Phi(z_{1-0.0125} / sqrt(t)):
    # 4.8769, 3.3569, 2.6803, 2.2898, 2.0310.  Crossing these bounds must spend exactly that.
    published = [4.8769, 3.3569, 2.6803, 2.2898, 2.0310]
    per_side = 2 * (2 - 2 * stats.norm.cdf(stats.norm.isf(0.0125) / np.sqrt(FIVE)))
    np.testing.assert_allclose(np.cumsum(crossing_probabilities(published, FIVE)), per_side, atol=3e-5)
    # Pocock type (the two conventions coincide for it): 2.438, 2.427, 2.410, 2.397, 2.386
    np.testing.assert_allclose(boundaries(FIVE, 0.05, "pocock"), [2.438, 2.427, 2.410, 2.397, 2.386], atol=6e-4)
    # the interface's two-sided O'Brien-Fleming type spends 2 - 2 Phi(1.96 / sqrt(t)) in total:
    # look 1 is z_{1-alpha(0.2)/2} = 1.96 / sqrt(0.2), later looks smaller than the per-side ones
    obf = boundaries(FIVE, 0.05, "obrien-fleming")
    assert obf[0] == pytest.approx(1.959963984540054 / math.sqrt(0.2), abs=1e-9)
    np.testing.assert_allclose(obf, [4.3826, 3.0997, 2.5534, 2.2538, 2.0635], atol=2e-4)


@pytest.mark.parametrize("rule", RULES)
def test_null_crossing_probability_by_monte_carlo(rule):
    # Brownian motion observed at the looks: z_k = S(t_k) / sqrt(t_k); crossing any bound has probability alpha
    t = np.array([0.15, 0.3, 0.5, 0.8, 1.0])
    bounds = boundaries(t, 0.05, rule)
    rng = np.random.default_rng(20221207)
    n = 200_000
    steps = rng.standard_normal((n, t.size)) * np.sqrt(np.diff(np.r_[0, t]))
    z = np.cumsum(steps, axis=1) / np.sqrt(t)
    crossed = (np.abs(z) >= bounds).any(axis=1).mean()
    assert crossed == pytest.approx(0.05, abs=3.5 * math.sqrt(0.05 * 0.95 / n))
    first = np.argmax(np.abs(z) >= bounds, axis=1)[(np.abs(z) >= bounds).any(axis=1)]
    np.testing.assert_allclose(
        np.bincount(first, minlength=t.size) / n, np.diff(np.r_[0, spent_alpha(t, 0.05, rule)]), atol=1.5e-3
    )


def test_exact_crossing_equals_spent_alpha_for_uneven_information():
    rng = np.random.default_rng(7)
    for _ in range(5):
        t = np.sort(rng.uniform(0.05, 1, size=rng.integers(2, 9)))
        t[-1] = 1.0
        info = np.cumsum(rng.uniform(0.2, 3, size=t.size))
        for rule in RULES:
            bounds = boundaries(t, 0.05, rule, information=info)
            spent = np.cumsum(crossing_probabilities(bounds, info))
            np.testing.assert_allclose(spent, spent_alpha(t, 0.05, rule), atol=1e-7)


def test_information_growing_faster_than_the_fractions_needs_its_own_boundary():
    # a pair getting 1/7 of three batches, then 1/3 of the rest: using the fractions' boundary
    # would spend more than alpha (0.054); its own information's boundary spends exactly alpha
    t = np.arange(1, 11) / 10
    info = np.cumsum([1, 1, 1] + [7 / 3] * 7)
    assert crossing_probabilities(boundaries(t), info).sum() > 0.053
    assert crossing_probabilities(boundaries(t, information=info), info).sum() == pytest.approx(0.05, abs=1e-7)
    # a look at a repeated fraction is the same test again: the same bound
    assert boundaries([0.5, 0.5, 1.0])[1] == boundaries([0.5, 0.5, 1.0])[0]


def test_a_look_without_new_information_is_merged_with_the_look_before():
    # information 1, 1, 2 at fractions 0.5, 0.75, 1: look 2 tests look 1's z again, at the bound for
    # alpha(0.75); crossing it at either look is crossing the lower bound, so in all alpha is spent
    t, info = [0.5, 0.75, 1.0], [1.0, 1.0, 2.0]
    bounds = boundaries(t, information=info)
    assert bounds[0] == pytest.approx(stats.norm.isf(spent_alpha([0.5])[0] / 2))
    assert bounds[1] == pytest.approx(stats.norm.isf(spent_alpha([0.75])[0] / 2)) and bounds[1] < bounds[0]
    np.testing.assert_allclose(np.cumsum(crossing_probabilities(bounds, info)), spent_alpha(t), atol=1e-7)
    rng = np.random.default_rng(5)
    z1 = rng.standard_normal(200_000)
    z2 = (z1 + rng.standard_normal(z1.size)) / math.sqrt(2)
    crossed = (np.abs(z1) >= bounds[0]) | (np.abs(z1) >= bounds[1]) | (np.abs(z2) >= bounds[2])
    assert crossed.mean() == pytest.approx(0.05, abs=3.5 * math.sqrt(0.05 * 0.95 / z1.size))
    # a pair that got nothing since look 2 can still be tested at the end with all of alpha
    late = boundaries([0.25, 0.5, 1.0], information=[1.0, 2.0, 2.0])
    assert late[2] < late[1] and crossing_probabilities(late, [1.0, 2.0, 2.0]).sum() == pytest.approx(0.05, abs=1e-7)


def test_rank_sum_z_matches_scipy_with_ties():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 12, 35).astype(float)
    y = rng.integers(1, 13, 48).astype(float)
    z = rank_sum_z(x, y)
    for alternative, p in (("greater", stats.norm.sf(z)), ("less", stats.norm.cdf(z))):
        ref = stats.mannwhitneyu(x, y, method="asymptotic", use_continuity=False, alternative=alternative)
        assert p == pytest.approx(ref.pvalue, rel=1e-10)
    assert z < 0 and rank_sum_z(y, x) == pytest.approx(-z)
    # hand: x = [3, 4], y = [1, 2]: U = 4, mean 2, var = 2*2*5/12 -> z = 2 / sqrt(5/3)
    assert rank_sum_z([3, 4], [1, 2]) == pytest.approx(2 / math.sqrt(5 / 3))
    assert math.isnan(rank_sum_z([], [1.0])) and math.isnan(rank_sum_z([2.0, 2.0], [2.0]))


def test_stratified_rank_sum_z_is_van_elteren():
    rng = np.random.default_rng(11)
    x0, y0 = rng.integers(0, 9, 12).astype(float), rng.integers(0, 9, 15).astype(float)
    x1, y1 = rng.integers(3, 12, 20).astype(float), rng.integers(2, 11, 9).astype(float)
    num = var = 0.0
    for x, y in ((x0, y0), (x1, y1)):
        n_x, n_y, n = x.size, y.size, x.size + y.size
        u = stats.mannwhitneyu(x, y).statistic
        _, t = np.unique(np.r_[x, y], return_counts=True)
        v = n_x * n_y / 12 * (n + 1 - np.sum(t**3 - t) / (n * (n - 1)))
        num += (u - n_x * n_y / 2) / (n + 1)
        var += v / (n + 1) ** 2
    z = stratified_rank_sum_z(np.r_[x0, x1], np.r_[y0, y1], [0] * 12 + [5] * 20, [0] * 15 + [5] * 9)
    assert z == pytest.approx(num / math.sqrt(var), rel=1e-12)
    # one stratum: the plain rank-sum z; a stratum holding only x adds nothing
    assert stratified_rank_sum_z(x0, y0) == pytest.approx(rank_sum_z(x0, y0))
    alone = stratified_rank_sum_z(np.r_[x0, x1], y0, [0] * 12 + [1] * 20, [0] * 15)
    assert alone == pytest.approx(rank_sum_z(x0, y0))
    assert math.isnan(stratified_rank_sum_z(x0, y0, [0] * 12, [1] * 15))


def test_pair_information_by_hand():
    # stratum 0: systems 0 and 1 twice each; stratum 1: systems 1 and 2 four times each
    info = pair_information([[2, 2, 0], [0, 4, 4]])
    np.testing.assert_allclose(info, [[0, 1, 0], [1, 0, 2], [0, 2, 0]])


def test_adjusted_means_remove_a_stratum_level():
    # stratum 1 sits 0.5 lower for everyone; system 1 was only judged in stratum 0
    value = np.array([0.0, 0.0, 1.0, 1.0, -0.5, -0.5, 2.5])
    system = np.array([0, 0, 1, 1, 0, 0, 2])
    stratum = np.array([0, 0, 0, 0, 1, 1, 1])
    means = adjusted_means(Units(value, system, stratum, n_systems=4, n_strata=2))
    assert means[1] - means[0] == pytest.approx(1.0, abs=1e-9)  # plain means: 1 - (-0.25) = 1.25
    assert means[2] - means[0] == pytest.approx(3.0, abs=1e-9)
    assert np.isnan(means[3])
    single = adjusted_means(Units(value, system, np.zeros(7, np.int64), n_systems=4, n_strata=1))
    np.testing.assert_allclose(single[:3], [-0.25, 1.0, 2.5])


def test_interim_look_compares_systems_within_strata():
    # batch 0: systems 0 and 1 alike; batch 1 (z-scores shifted down by the new mix): only system 1.
    # Pooled, system 0 looks better; within batches the two are alike.
    base = np.linspace(-1, 1, 40)
    scores = np.r_[base, base + 0.001, base[:20] - 2.0]
    systems = np.r_[[0] * 40, [1] * 40, [1] * 20]
    strata = np.r_[[0] * 80, [1] * 20]
    pooled = interim_look(scores, systems, 2, [1.0])
    assert pooled.order.tolist() == [0, 1] and pooled.separated[0]
    look = interim_look(scores, systems, 2, [1.0], strata=strata)
    assert look.order.tolist() == [1, 0] and not look.separated[0]
    assert look.z[0] == pytest.approx(rank_sum_z(base + 0.001, base))
    assert look.pair_information[0, 1] == pytest.approx(20.0)  # only batch 0 holds both
    assert look.counts.tolist() == [40, 60]


def test_earlier_information_gives_each_pair_its_own_boundary():
    scores, systems = _scores([0.0, 0.01], 40)
    t = [0.5, 1.0]
    look = interim_look(scores, systems, 2, t, earlier_information=[[[0, 4], [4, 0]]])
    assert look.pair_boundaries[0] == pytest.approx(boundaries(t, information=[4, 20])[-1])
    with pytest.raises(ValueError):
        interim_look(scores, systems, 2, t, earlier_information=[])


def _scores(means, n):
    systems = np.repeat(np.arange(len(means)), n)
    offsets = np.tile(np.linspace(-1, 1, n), len(means))  # the same spread for every system
    return np.asarray(means, dtype=float)[systems] + offsets, systems


def test_interim_look_order_pairs_separation_and_weights():
    # systems 0..3 with means 0, 3, 3.05, 10 and identical spreads (no ties across systems)
    scores, systems = _scores([0.0, 3.0, 3.05, 10.0], 50)
    look = interim_look(scores, systems, 4, [1.0])
    assert look.order.tolist() == [3, 2, 1, 0]
    assert look.pairs.tolist() == [[3, 2], [2, 1], [1, 0]]
    assert look.boundary == pytest.approx(1.959964, abs=1e-6)
    assert look.z[0] == pytest.approx(rank_sum_z(scores[systems == 3], scores[systems == 2]))
    assert look.separated.tolist() == [True, False, True]
    # only the open pair (2, 1) gets the next batch
    assert look.weights.tolist() == [0.0, 0.5, 0.5, 0.0]
    assert not look.done
    assert look.counts.tolist() == [50] * 4
    np.testing.assert_allclose(look.means, [0.0, 3.0, 3.05, 10.0], atol=1e-12)
    np.testing.assert_allclose(look.information, [25.0, 25.0, 25.0])
    # a floor spreads part of the batch over every system
    floored = interim_look(scores, systems, 4, [1.0], floor=0.2)
    np.testing.assert_allclose(floored.weights, [0.05, 0.45, 0.45, 0.05])


def test_interim_look_early_boundary_and_separated_before():
    scores, systems = _scores([0.0, 3.0, 3.05, 10.0], 50)
    early = interim_look(scores, systems, 4, [0.1])  # O'Brien-Fleming: |z| >= 6.2 at t = 0.1
    assert early.boundary == pytest.approx(1.959963984540054 / math.sqrt(0.1))
    z = early.z
    assert early.separated.tolist() == (z >= early.boundary).tolist()
    # pairs separated before stay separated, whichever way they are now ordered: (1, 2) given as (1, 2)
    kept = interim_look(scores, systems, 4, [0.1], separated_before={(3, 2), (1, 2), (1, 0)})
    assert kept.separated.all() and kept.done
    np.testing.assert_allclose(kept.weights, np.full(4, 0.25))


def test_interim_look_middle_system_of_two_open_pairs_gets_twice_the_share():
    scores, systems = _scores([0.0, 0.01, 0.02], 30)
    look = interim_look(scores, systems, 3, [0.5])
    assert not look.separated.any()
    np.testing.assert_allclose(look.weights, [0.25, 0.5, 0.25])


def test_interim_look_systems_without_scores_come_last_and_stay_open():
    look = interim_look([1.0, 2.0, 3.0, 5.0, 6.0, 7.0], [2, 2, 2, 0, 0, 0], 4, [0.5])
    assert look.order.tolist() == [0, 2, 1, 3]
    assert math.isnan(look.means[1]) and math.isnan(look.z[1]) and math.isnan(look.z[2])
    assert look.separated[1:].tolist() == [False, False]
    assert look.weights[1] > 0 and look.weights[3] > 0


def test_interim_look_with_segments_tests_translation_means():
    # system 0: segment 0 judged 3 times, segment 1 once; system 1: segments 0 and 1 once
    scores = [10.0, 20.0, 30.0, 40.0, 1.0, 2.0]
    systems = [0, 0, 0, 0, 1, 1]
    segments = [0, 0, 0, 1, 0, 1]
    look = interim_look(scores, systems, 2, [1.0], segments=segments)
    assert look.counts.tolist() == [2, 2]
    np.testing.assert_allclose(look.means, [30.0, 1.5])  # (20 + 40) / 2 and (1 + 2) / 2
    assert look.z[0] == pytest.approx(rank_sum_z([20.0, 40.0], [1.0, 2.0]))


def test_interim_look_one_system_is_done():
    look = interim_look([1.0, 2.0], [0, 0], 1, [0.3])
    assert look.done and look.pairs.shape == (0, 2) and look.weights.tolist() == [1.0]


def test_earlier_counts_give_each_pair_its_own_boundary():
    scores, systems = _scores([0.0, 0.01, 5.0], 60)
    t = [0.25, 0.5, 0.75, 1.0]
    # system counts at the earlier looks: systems 0 and 1 got their proportional share,
    # system 2 got most of the judgments early (its pair's information is front-loaded)
    earlier = [[15, 15, 40], [30, 30, 50], [45, 45, 55]]
    look = interim_look(scores, systems, 3, t, earlier_counts=earlier)
    assert look.pairs.tolist() == [[2, 1], [1, 0]]
    assert look.pair_boundaries[1] == pytest.approx(look.boundary, abs=1e-6)  # proportional
    n2, n1 = np.array([40, 50, 55, 60]), np.array([15, 30, 45, 60])
    own = boundaries(t, information=n2 * n1 / (n2 + n1))[-1]
    assert look.pair_boundaries[0] == pytest.approx(own) and own != pytest.approx(look.boundary, abs=1e-3)
    with pytest.raises(ValueError):
        interim_look(scores, systems, 3, t, earlier_counts=earlier[:2])


def test_predictive_power_by_hand():
    # Phi((z - c sqrt(t)) / sqrt(1 - t)): z = 1, t = 0.25, c = 2 -> Phi(0 / ...) = 0.5
    assert predictive_power([1.0], 0.25, 2.0)[0] == pytest.approx(0.5)
    # z = 0.3, t = 0.5, c = 2.06: Phi((0.3 - 1.45664) / 0.70711) = Phi(-1.635736)
    assert predictive_power([0.3], 0.5, 2.06)[0] == pytest.approx(stats.norm.cdf(-1.6357359))
    assert np.isnan(predictive_power([1.0], 1.0, 2.0)).all()


def test_futility_gives_up_hopeless_pairs_and_counts_them_as_decided():
    # systems 0, 1 equal; system 2 far above: (2, x) separates, (x, y) has no prospect at t = 0.8
    scores, systems = _scores([0.0, 0.0, 10.0], 60)
    plain = interim_look(scores, systems, 3, [0.8])
    assert plain.separated.tolist() == [True, False] and not plain.futile.any() and not plain.done
    assert plain.predictive_power[1] < 0.05
    look = interim_look(scores, systems, 3, [0.8], futility=0.05)
    assert not interim_look(scores, systems, 3, [0.8], futility=0.05, futility_from=0.9).futile.any()
    assert look.futile.tolist() == [False, True] and look.done
    np.testing.assert_allclose(look.weights, np.full(3, 1 / 3))  # nothing open: uniform
    # a pair given up before stays given up and is never separated, even when it crosses now
    apart, systems = _scores([0.0, 5.0], 60)
    kept = interim_look(apart, systems, 2, [1.0], futile_before={(0, 1)})
    assert kept.futile.tolist() == [True] and kept.separated.tolist() == [False] and kept.done
    assert kept.z[0] > kept.boundary
    # separated before beats futile before
    both = interim_look(apart, systems, 2, [1.0], separated_before={(1, 0)}, futile_before={(0, 1)})
    assert both.separated.tolist() == [True] and both.futile.tolist() == [False]


def test_interim_look_refuses_bad_input():
    with pytest.raises(ValueError):
        interim_look([1.0, 2.0], [0, 5], 2, [0.5])
    with pytest.raises(ValueError):
        interim_look([1.0], [0, 1], 2, [0.5])
    with pytest.raises(ValueError):
        interim_look([1.0, 2.0], [0, 1], 2, [0.5], floor=2)
    with pytest.raises(ValueError):
        interim_look([1.0, 2.0], [0, 1], 2, [0.5], futility=1)
