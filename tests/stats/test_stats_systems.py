"""System scores, significance and clusters (METHODS.md §5)."""

import math
from collections import defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from evaluation.stats import clusters, significance, stars, system_scores


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
    for s in range(3):
        t_raw = [np.mean(v) for (ss, _), v in sorted(per_raw.items()) if ss == s]
        t_z = [np.mean(v) for (ss, _), v in sorted(per_z.items()) if ss == s]
        assert res.n_segments[s] == len(t_raw)
        assert res.n_judgments[s] == int((system == s).sum())
        assert res.n_segments_z[s] == len(t_z)
        if t_raw:
            np.testing.assert_allclose(res.mean_raw[s], np.mean(t_raw), rtol=1e-12)
        if t_z:
            np.testing.assert_allclose(res.mean_z[s], np.mean(t_z), rtol=1e-9, atol=1e-12)
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
    assert res.n.tolist() == sizes
    x = [np.array(z)[(np.array(systems) == s) & ~np.isnan(z)] for s in range(5)]
    for i in range(5):
        for j in range(5):
            if i == j or sizes[i] == 0 or sizes[j] == 0:
                assert math.isnan(res.p[i, j])
                continue
            # convention: one-sided rank-sum, H1 system i better than j, scipy defaults
            ref = stats.mannwhitneyu(x[i], x[j], alternative="greater").pvalue
            np.testing.assert_allclose(res.p[i, j], ref, rtol=1e-12)
            assert res.stars[i, j] == stars(ref)[()]


def test_stars_boundaries():
    p = np.array([0.05, 0.0499, 0.01, 0.0099, 0.001, 0.00099, np.nan, 0.5])
    assert stars(p).tolist() == ["", "*", "*", "**", "**", "***", "", ""]


# -------------------------------------------------------------------- clusters


def _p(n, significant):
    """p[i, j] = 0.001 for listed (better, worse) pairs, 0.5 elsewhere, NaN diagonal."""
    p = np.full((n, n), 0.5)
    np.fill_diagonal(p, np.nan)
    for i, j in significant:
        p[i, j] = 0.001
    return p


def test_clusters_new_cluster_only_when_worse_than_all_of_cluster_above():
    mean_z = np.array([0.5, 0.4, 0.1, 0.0])
    # 1 ties with 0 -> cluster 1 = {0, 1}; 2 is worse than both 0 and 1 -> opens cluster 2;
    # 3 is worse than 0 and 1 but not than 2 -> stays in cluster 2
    p = _p(4, [(0, 2), (1, 2), (0, 3), (1, 3)])
    res = clusters(mean_z, p)
    assert res.order.tolist() == [0, 1, 2, 3]
    assert res.rank.tolist() == [1, 2, 3, 4]
    assert res.cluster.tolist() == [1, 1, 2, 2]
    # 2 worse than 0 but not than 1 -> joins cluster 1
    res = clusters(mean_z, _p(4, [(0, 2), (0, 3), (1, 3), (2, 3)]))
    assert res.cluster.tolist() == [1, 1, 1, 2]


def test_clusters_every_system_separate_and_alpha():
    mean_z = np.array([0.0, 1.0, 2.0])  # order 2, 1, 0
    p = _p(3, [(2, 1), (2, 0), (1, 0)])
    res = clusters(mean_z, p)
    assert res.order.tolist() == [2, 1, 0]
    assert res.rank.tolist() == [3, 2, 1]
    assert res.cluster.tolist() == [3, 2, 1]
    assert clusters(mean_z, p, alpha=0.0005).cluster.tolist() == [1, 1, 1]


def test_clusters_ties_nan_means_and_nan_p():
    mean_z = np.array([0.2, 0.7, 0.2, np.nan])
    p = _p(4, [(1, 0), (1, 2)])
    p[0, 2] = np.nan  # not computable -> not significant
    res = clusters(mean_z, p)
    # equal means 0.2: lower system code first
    assert res.order.tolist() == [1, 0, 2]
    assert res.rank.tolist() == [2, 1, 3, -1]
    assert res.cluster.tolist() == [2, 1, 2, -1]


def test_clusters_validation():
    with pytest.raises(ValueError):
        clusters(np.zeros(3), np.zeros((2, 2)))


def test_end_to_end_pipeline_orders_systems_by_quality():
    from evaluation.stats import standardise

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
    cl = clusters(sc.mean_z, sig.p)
    assert cl.order.tolist() == [0, 1, 2, 3]
    assert cl.cluster[0] == 1 and cl.cluster[1] == cl.cluster[2] == 2 and cl.cluster[3] == 3
