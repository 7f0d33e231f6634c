"""System scores, significance, wins, clusters and rank ranges (docs/methods.md §5)."""

import math
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evaluation.stats import (
    clusters,
    round_significant,
    significance,
    standardise,
    stars,
    system_scores,
    wins,
)


def test_hand_computed_system_scores():
    # system 0: segment 0 judged twice (raw 60, 80; z 0.5, 1.5), segment 1 once (raw 40, z -1)
    #   translations: raw 70, 40 -> mean 55; z 1.0, -1.0 -> mean 0
    #   interval over the translation means: sd(70, 40) = sqrt(450) = 21.21, se = 15,
    #   t_{0.975, 1} = 12.706 -> 55 -/+ 190.6 (= scipy.stats.t.interval(0.95, 1, 55, 15))
    # system 1: one translation (segment 1: raw 90, z NaN and 2.0) -> z 2.0, no interval
    # system 2: nothing
    res = system_scores(
        system=[0, 0, 0, 1, 1],
        segment=[0, 0, 1, 1, 1],
        raw=[60, 80, 40, 90, 90],
        z=[0.5, 1.5, -1.0, np.nan, 2.0],
        n_systems=3,
    )
    assert res.n_segments.tolist() == [2, 1, 0]
    assert res.n_judgments.tolist() == [3, 2, 0]
    assert res.n_segments_z.tolist() == [2, 1, 0]
    np.testing.assert_allclose(res.mean_raw[:2], [55, 90])
    np.testing.assert_allclose(res.mean_z[:2], [0.0, 2.0])
    assert math.isnan(res.mean_raw[2]) and math.isnan(res.mean_z[2])
    low, high = stats.t.interval(0.95, 1, loc=55, scale=15)
    np.testing.assert_allclose([res.raw_ci_low[0], res.raw_ci_high[0]], [low, high])
    np.testing.assert_allclose(res.raw_ci_high[0] - 55, 12.706204736 * 15, rtol=1e-9)
    low_z, high_z = stats.t.interval(0.95, 1, loc=0.0, scale=math.sqrt(2) / math.sqrt(2))
    np.testing.assert_allclose([res.z_ci_low[0], res.z_ci_high[0]], [low_z, high_z])
    assert np.isnan([res.raw_ci_low[1], res.z_ci_high[1], res.raw_ci_low[2]]).all()
    assert res.translation_system.tolist() == [0, 0, 1]
    assert res.translation_segment.tolist() == [0, 1, 1]
    assert res.translation_n.tolist() == [2, 1, 2]
    np.testing.assert_allclose(res.translation_raw, [70, 40, 90])
    np.testing.assert_allclose(res.translation_z, [1.0, -1.0, 2.0])


def test_nan_z_translation_is_left_out_not_propagated():
    # system 0: segment 0 only from a constant worker (z NaN), segment 1 z = 1.0
    res = system_scores([0, 0, 0], [0, 1, 1], [50, 60, 70], [np.nan, 0.5, 1.5], n_systems=1)
    assert math.isnan(res.translation_z[0])
    assert res.mean_z[0] == 1.0
    assert res.n_segments[0] == 2 and res.n_segments_z[0] == 1
    np.testing.assert_allclose(res.mean_raw[0], (50 + 65) / 2)


rows = st.lists(
    st.tuples(
        st.integers(0, 2),
        st.integers(0, 5),
        st.integers(0, 100),
        st.one_of(st.none(), st.floats(-3, 3, allow_nan=False, allow_subnormal=False)),
    ),
    max_size=60,
)


@settings(max_examples=150, deadline=None)
@given(rows=rows)
def test_system_scores_equal_dict_loop(rows):
    system = np.array([r[0] for r in rows], dtype=np.int64)
    segment = np.array([r[1] for r in rows], dtype=np.int64)
    raw = np.array([r[2] for r in rows], dtype=float)
    z = np.array([np.nan if r[3] is None else r[3] for r in rows], dtype=float)
    res = system_scores(system, segment, raw, z, n_systems=3)
    per_raw, per_z = defaultdict(list), defaultdict(list)
    for s, g, r, zz in zip(system, segment, raw, z, strict=True):
        per_raw[(s, g)].append(r)
        if not math.isnan(zz):
            per_z[(s, g)].append(zz)
    # translation means are rounded to 15 significant digits (relative error
    # <= 5e-15), well inside the tolerances of 1e-11 below
    for s in range(3):
        t_raw = [np.mean(v) for (ss, _), v in sorted(per_raw.items()) if ss == s]
        t_z = [np.mean(v) for (ss, _), v in sorted(per_z.items()) if ss == s]
        assert res.n_segments[s] == len(t_raw)
        assert res.n_judgments[s] == int((system == s).sum())
        assert res.n_segments_z[s] == len(t_z)
        if t_raw:
            np.testing.assert_allclose(res.translation_raw[res.translation_system == s], t_raw, rtol=1e-11)
            np.testing.assert_allclose(res.mean_raw[s], np.mean(t_raw), rtol=1e-11)
        if t_z:
            np.testing.assert_allclose(res.mean_z[s], np.mean(t_z), rtol=1e-9, atol=1e-11)
        else:
            assert math.isnan(res.mean_z[s])
        if len(t_z) >= 2:
            sem = np.std(t_z, ddof=1) / math.sqrt(len(t_z))
            if sem > 0:
                low, high = stats.t.interval(0.95, len(t_z) - 1, loc=np.mean(t_z), scale=sem)
                np.testing.assert_allclose([res.z_ci_low[s], res.z_ci_high[s]], [low, high],
                                           rtol=1e-7, atol=1e-9)
        else:
            assert math.isnan(res.z_ci_low[s])


# ------------------------------------------------- equal numbers compare equal


def test_round_significant():
    x = np.array([0.1 + 0.2, 0.3, (0.1 + 0.2) / 2, 0.3 / 2, 0.0, -0.0, np.nan, np.inf, -np.inf,
                  -123.4567890123456, 9.9999999999996, 0.09999999999999999, 1e-320])
    r = round_significant(x)
    assert (0.1 + 0.2) != 0.3 and r[0] == r[1] == 0.3  # the classic last-bit split, undone
    assert (0.1 + 0.2) / 2 != 0.3 / 2 and r[2] == r[3] == 0.15
    assert r[4] == 0.0 and r[5] == 0.0 and math.copysign(1, r[5]) == -1  # zeros stay (with sign)
    assert math.isnan(r[6]) and r[7] == np.inf and r[8] == -np.inf  # NaN / inf pass through
    assert r[9] == -123.456789012
    assert r[10] == 10.0  # rounding carries into a new digit
    assert r[11] == 0.1  # just below a power of ten
    assert r[12] == 1e-320  # subnormal
    assert round_significant(2.345, 2) == 2.3 and round_significant(-2351.0, 2) == -2400.0
    assert isinstance(round_significant(1.0), np.floating)  # scalar in, scalar out
    assert round_significant(np.zeros((2, 3))).shape == (2, 3)
    # agrees with Python's correctly rounded formatting on ordinary magnitudes
    v = np.random.default_rng(0).normal(0, 3, 2000)
    np.testing.assert_array_equal(round_significant(v), [float(f"{t:.11e}") for t in v])
    with pytest.raises(ValueError):
        round_significant(1.0, digits=16)


def test_equal_translation_means_tie_in_the_rank_test():
    # One worker; z-scores fitted on all nine scores.  Mathematically
    # z(50) + z(90) = (140 - 2 mu) / sigma = z(70) + z(70), but in floating point the
    # two sums differ in the last bit for this worker:
    scores = np.array([50.0, 90.0, 70.0, 70.0, 61.0, 98.0, 73.0, 63.0, 54.0])
    z = standardise(np.zeros(9, dtype=np.int64), scores, 1).z
    # system 0: segment 0 scored 50 and 90, segments 1, 2 scored 61, 98
    # system 1: segment 0 scored 70 and 70, segments 1, 2, 3 scored 73, 63, 54
    system = np.array([0, 0, 1, 1, 0, 0, 1, 1, 1])
    segment = np.array([0, 0, 0, 0, 1, 2, 1, 2, 3])
    unrounded = np.bincount([0, 0], weights=z[:2])[0] / 2, np.bincount([0, 0], weights=z[2:4])[0] / 2
    assert unrounded[0] != unrounded[1]  # the summation-order split

    res = system_scores(system, segment, scores, z, n_systems=2)
    tz, ts, tg = res.translation_z, res.translation_system, res.translation_segment
    first = tz[(ts == 0) & (tg == 0)][0]
    assert first == tz[(ts == 1) & (tg == 0)][0]  # (0, seg 0) and (1, seg 0): now bit-identical
    assert first == round_significant(unrounded[0], 15) == round_significant(unrounded[1], 15)
    assert np.intersect1d(tz[ts == 0], tz[ts == 1]).size == 1  # the pooled sample has one tie
    sig = significance(ts, tz, n_systems=2)

    # reference: the exactly tied data, built independently (both set to one value)
    tied = float(z[2] + z[3]) / 2
    ref0 = np.array([tied, z[4], z[5]])
    ref1 = np.array([tied, z[6], z[7], z[8]])
    # convention: R's rule -> the pooled sample has a tie, so the normal approximation
    # with tie correction and continuity correction (not the exact distribution)
    for i, j, a, b in ((0, 1, ref0, ref1), (1, 0, ref1, ref0)):
        ref = stats.mannwhitneyu(a, b, alternative="greater", method="asymptotic", use_continuity=True)
        np.testing.assert_allclose(sig.p[i, j], ref.pvalue, rtol=1e-12)

    # without the rounding the tie is missed: no ties -> R's exact distribution, another p
    raw0 = np.array([unrounded[0], z[4], z[5]])
    raw1 = np.array([unrounded[1], z[6], z[7], z[8]])
    missed = significance(np.array([0, 0, 0, 1, 1, 1, 1]), np.r_[raw0, raw1], n_systems=2)
    exact = stats.mannwhitneyu(raw0, raw1, alternative="greater", method="exact").pvalue
    np.testing.assert_allclose(missed.p[0, 1], exact, rtol=1e-12)
    assert missed.p[0, 1] != sig.p[0, 1]


def test_empty_system_scores():
    res = system_scores([], [], [], [], n_systems=2)
    assert res.n_segments.tolist() == [0, 0]
    assert np.isnan(res.mean_z).all() and res.translation_system.size == 0


# ---------------------------------------------------------------- significance


def test_significance_equals_scipy_for_every_ordered_pair():
    rng = np.random.default_rng(5)
    systems, z = [], []
    sizes = [40, 35, 1, 0, 6]  # a system with one translation and one with none
    for s, n in enumerate(sizes):
        systems += [s] * n
        z += list(np.round(rng.normal(0.3 - 0.1 * s, 1, n), 1))  # rounding makes ties
    systems += [0, 1]
    z += [np.nan, np.nan]  # NaN z's are dropped
    res = significance(np.array(systems), np.array(z), n_systems=5)
    assert res.n.tolist() == sizes and res.method == "r"
    old = significance(np.array(systems), np.array(z), n_systems=5, method="scipy")
    x = [np.array(z)[(np.array(systems) == s) & ~np.isnan(z)] for s in range(5)]
    for i in range(5):
        for j in range(5):
            if i == j or sizes[i] == 0 or sizes[j] == 0:
                assert math.isnan(res.p[i, j]) and math.isnan(old.p[i, j])
                continue
            # convention: one-sided rank-sum, H1 system i better than j, R's wilcox.test
            # rule: exact when both samples have < 50 values and nothing ties in the pooled
            # sample, else normal approximation with tie and continuity correction
            pooled = np.r_[x[i], x[j]]
            exact = np.unique(pooled).size == pooled.size  # all sizes here are < 50
            ref = stats.mannwhitneyu(x[i], x[j], alternative="greater",
                                     method="exact" if exact else "asymptotic").pvalue
            np.testing.assert_allclose(res.p[i, j], ref, rtol=1e-12)
            assert res.stars[i, j] == stars(ref)[()]
            # method="scipy": scipy's defaults (method="auto")
            ref_old = stats.mannwhitneyu(x[i], x[j], alternative="greater").pvalue
            np.testing.assert_allclose(old.p[i, j], ref_old, rtol=1e-12)


def test_significance_r_rule_is_exact_for_9_to_49_translations():
    # 12 and 30 translations, continuous scores (no ties): R's rule takes the exact
    # distribution where scipy's "auto" (a sample <= 8 values) took the normal one
    rng = np.random.default_rng(8)
    x0, x1 = rng.normal(0.5, 1, 12), rng.normal(0, 1, 30)
    ts, tz = np.r_[np.zeros(12, int), np.ones(30, int)], np.r_[x0, x1]
    res = significance(ts, tz, 2)
    for i, j, a, b in ((0, 1, x0, x1), (1, 0, x1, x0)):
        ref = stats.mannwhitneyu(a, b, alternative="greater", method="exact").pvalue
        np.testing.assert_allclose(res.p[i, j], ref, rtol=1e-12)
    old = significance(ts, tz, 2, method="scipy")
    ref_old = stats.mannwhitneyu(x0, x1, alternative="greater", method="asymptotic").pvalue
    np.testing.assert_allclose(old.p[0, 1], ref_old, rtol=1e-12)
    assert old.p[0, 1] != res.p[0, 1]
    with pytest.raises(ValueError):
        significance(ts, tz, 2, method="auto")


def test_stars_boundaries():
    p = np.array([0.05, 0.0499, 0.01, 0.0099, 0.001, 0.00099, np.nan, 0.5])
    assert stars(p).tolist() == ["", "*", "*", "**", "**", "***", "", ""]


# ------------------------------------------------------- wins and clusters


def _p(n, significant):
    """p[i, j] = 0.001 for listed (better, worse) pairs, 0.5 elsewhere, NaN diagonal."""
    p = np.full((n, n), 0.5)
    np.fill_diagonal(p, np.nan)
    for i, j in significant:
        p[i, j] = 0.001
    return p


@pytest.mark.parametrize("rule", ["wmt", "above"])
def test_clusters_new_cluster_only_when_worse_than_all_of_cluster_above(rule):
    # both rules agree on these cases (checked by hand for each rule)
    mean_z = np.array([0.5, 0.4, 0.1, 0.0])
    # above: 1 ties with 0 -> cluster 1 = {0, 1}; 2 is worse than both 0 and 1 -> opens
    #   cluster 2; 3 is worse than 0 and 1 but not than 2 -> stays in cluster 2
    # wmt: 0 does not beat 1 -> no boundary; 1 beats 2 and 3 -> boundary; 2 does not beat 3
    p = _p(4, [(0, 2), (1, 2), (0, 3), (1, 3)])
    res = clusters(mean_z, p, rule=rule)
    assert res.rule == rule
    assert res.order.tolist() == [0, 1, 2, 3]
    assert res.rank.tolist() == [1, 2, 3, 4]
    assert res.cluster.tolist() == [1, 1, 2, 2]
    # above: 2 worse than 0 but not than 1 -> joins cluster 1
    # wmt: 0 does not beat 1, 1 does not beat 2, 2 beats 3 -> one boundary, below rank 3
    res = clusters(mean_z, _p(4, [(0, 2), (0, 3), (1, 3), (2, 3)]), rule=rule)
    assert res.cluster.tolist() == [1, 1, 1, 2]


@pytest.mark.parametrize("rule", ["wmt", "above"])
def test_clusters_every_system_separate_and_alpha(rule):
    mean_z = np.array([0.0, 1.0, 2.0])  # order 2, 1, 0
    p = _p(3, [(2, 1), (2, 0), (1, 0)])
    res = clusters(mean_z, p, rule=rule)
    assert res.order.tolist() == [2, 1, 0]
    assert res.rank.tolist() == [3, 2, 1]
    assert res.cluster.tolist() == [3, 2, 1]
    assert res.rank_low.tolist() == res.rank_high.tolist() == [3, 2, 1]  # fully determined
    strict = clusters(mean_z, p, alpha=0.0005, rule=rule)
    assert strict.cluster.tolist() == [1, 1, 1]
    assert strict.rank_low.tolist() == [1, 1, 1] and strict.rank_high.tolist() == [3, 3, 3]


@pytest.mark.parametrize("rule", ["wmt", "above"])
def test_clusters_ties_nan_means_and_nan_p(rule):
    mean_z = np.array([0.2, 0.7, 0.2, np.nan])
    p = _p(4, [(1, 0), (1, 2)])
    p[0, 2] = np.nan  # not computable -> not significant
    res = clusters(mean_z, p, rule=rule)
    # equal means 0.2: lower system code first
    assert res.order.tolist() == [1, 0, 2]
    assert res.rank.tolist() == [2, 1, 3, -1]
    assert res.cluster.tolist() == [2, 1, 2, -1]
    # 1 beats 0 and 2; 0 and 2 beat nobody; 3 is not ranked
    assert res.rank_low.tolist() == [2, 1, 2, -1]
    assert res.rank_high.tolist() == [3, 1, 3, -1]


def test_wins_hand_computed():
    # means: A=0 4.0, B=1 3.0, C=2 3.0 (equal to B), D=3 NaN (not ranked)
    mean = np.array([4.0, 3.0, 3.0, np.nan])
    p = _p(4, [(0, 1), (1, 2), (2, 1), (0, 3), (3, 0)])
    p[1, 0] = 0.01  # B "beats" A in the rank test, but B has the lower mean
    p[0, 2] = 0.05  # not < alpha
    w = wins(mean, p)
    assert w.dtype == bool and w.shape == (4, 4)
    # A wins against B only; B vs C: equal means never win; C vs A: p = 0.05 is not < 0.05;
    # D (NaN mean) neither wins nor loses; B's significant p over A does not count
    assert np.argwhere(w).tolist() == [[0, 1]]
    assert wins(mean, p, alpha=0.051)[0, 2]
    with pytest.raises(ValueError):
        wins(mean, p[:3, :3])


def test_clusters_rules_differ_and_a_lower_ranked_win_does_not_count():
    # A=0, B=1, C=2, D=3 with means 4 > 3 > 2 > 1.
    # Wins: A beats B, C and D; C beats D; nothing else.  D's p over A is 0.001 too,
    # but D has the lower mean: reported, never counted.
    mean_z = np.array([4.0, 3.0, 2.0, 1.0])
    p = _p(4, [(0, 1), (0, 2), (0, 3), (2, 3), (3, 0)])
    assert wins(mean_z, p).sum() == 4
    # wmt: boundaries below A (beats all of B, C, D) and below C (beats D);
    #      B beats neither C nor D -> no boundary below B.
    wmt = clusters(mean_z, p)
    assert wmt.rule == "wmt"
    assert wmt.cluster.tolist() == [1, 2, 2, 3]
    # above: B is worse than A -> cluster 2 {B}; C is not worse than B -> joins {B, C};
    #        D is worse than C but not than B -> joins {B, C, D}.
    above = clusters(mean_z, p, rule="above")
    assert above.cluster.tolist() == [1, 2, 2, 2]
    # rank ranges (same for both rules), 4 ranked systems:
    #   A: beaten by nobody -> best 1; beats 3 -> worst 4 - 3 = 1
    #      (had D's lower-ranked p counted, A's best rank would be 2)
    #   B: beaten by A -> best 2; beats nobody -> worst 4
    #   C: beaten by A -> best 2; beats D -> worst 3
    #   D: beaten by A and C -> best 3; beats nobody -> worst 4
    for res in (wmt, above):
        assert res.rank_low.tolist() == [1, 2, 2, 3]
        assert res.rank_high.tolist() == [1, 4, 3, 4]
        assert res.rank.tolist() == [1, 2, 3, 4]


def test_clusters_wmt_rule_needs_a_win_over_every_lower_system():
    # A=0 > B=1 > C=2.  A beats B but not C (possible with unequal sample sizes);
    # B does not beat C.  wmt: A does not beat everything below -> no boundary anywhere.
    # above: B is worse than A -> new cluster {B}, C joins it.
    mean_z = np.array([1.0, 0.5, 0.4])
    p = _p(3, [(0, 1)])
    assert clusters(mean_z, p).cluster.tolist() == [1, 1, 1]
    assert clusters(mean_z, p, rule="above").cluster.tolist() == [1, 2, 2]
    res = clusters(mean_z, p)
    assert res.rank_low.tolist() == [1, 2, 1] and res.rank_high.tolist() == [2, 3, 3]


def test_clusters_equal_means_never_split():
    # equal means, p < alpha in one direction: no win, so one cluster; order by code
    mean_z = np.array([0.3, 0.3])
    p = _p(2, [(1, 0)])
    for rule in ("wmt", "above"):
        res = clusters(mean_z, p, rule=rule)
        assert res.order.tolist() == [0, 1]
        assert res.rank_low.tolist() == [1, 1] and res.rank_high.tolist() == [2, 2]
    assert clusters(mean_z, p).cluster.tolist() == [1, 1]


def test_clusters_nothing_ranked():
    res = clusters(np.array([np.nan, np.nan]), np.full((2, 2), np.nan))
    assert res.order.size == 0
    assert res.rank.tolist() == res.cluster.tolist() == res.rank_low.tolist() == res.rank_high.tolist() == [-1, -1]


def test_clusters_validation():
    with pytest.raises(ValueError):
        clusters(np.zeros(3), np.zeros((2, 2)))
    with pytest.raises(ValueError):
        clusters(np.zeros(2), np.zeros((2, 2)), rule="bojar")


def test_end_to_end_pipeline_orders_systems_by_quality():
    rng = np.random.default_rng(3)
    n, n_sys, n_workers = 6000, 4, 30
    system = rng.integers(0, n_sys, n)
    segment = rng.integers(0, 200, n)
    worker = rng.integers(0, n_workers, n)
    quality = np.array([70.0, 60.0, 59.0, 40.0])
    raw = np.clip(quality[system] + rng.normal(0, 15, n) + rng.normal(0, 10, n_workers)[worker], 0, 100)
    z = standardise(worker, raw, n_workers).z
    sc = system_scores(system, segment, raw, z, n_sys)
    sig = significance(sc.translation_system, sc.translation_z, n_sys)
    for rule in ("wmt", "above"):
        cl = clusters(sc.mean_z, sig.p, rule=rule)
        assert cl.order.tolist() == [0, 1, 2, 3]
        assert cl.cluster[0] == 1 and cl.cluster[1] == cl.cluster[2] == 2 and cl.cluster[3] == 3
        assert cl.rank_low.tolist() == [1, 2, 2, 4] and cl.rank_high.tolist() == [1, 3, 3, 4]
