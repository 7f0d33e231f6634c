"""Ranking stability's core (evaluation/stats/stability.py, docs/methods.md §12.4): the weighted scores by hand, the
vectorised bootstrap against a slow reference that builds each resampled dataset literally, the stable-ranking
probability on known patterns, rank intervals against numpy's quantiles, and seeding / chunk invariance."""
import itertools
from collections import Counter, defaultdict

import numpy as np
import pytest
from scipy import stats as scipy_stats

from evaluation.stats import stability as st
from evaluation.stats import system_scores


def small_data(seed=3, workers=6, segments=8, systems=("gamma", "alpha", "beta")):
    """Judgment rows (worker, segment, system, score): each worker judges most translations, some twice, some
    not at all; one system ("beta") appears in two segments only, so resamples often miss it."""
    rng = np.random.default_rng(seed)
    rows = []
    for w in range(workers):
        for g in range(segments):
            for s in range(len(systems)):
                if systems[s] == "beta" and g > 1:
                    continue
                if rng.random() < 0.25:
                    continue
                for _ in range(2 if rng.random() < 0.15 else 1):
                    rows.append((w, g, s, round(float(rng.normal(0.4 * s, 1.0)), 3)))
    a = np.array(rows, dtype=object)
    return (a[:, 0].astype(np.int64), a[:, 1].astype(np.int64), a[:, 2].astype(np.int64),
            a[:, 3].astype(np.float64), list(systems))


# A slow reference: the resampled dataset built row by row ---------------------------------------------------

def reference_statistics(rows, worker_counts, segment_counts, n_systems):
    """Copy each judgment once per copy of its worker and of its segment, then compute the ranking's statistic
    plainly: translation = (system, segment copy), its mean over its judgments (worker copies included); a
    system's mean and sample variance over its translations; None where undefined."""
    translations = defaultdict(list)
    for w, g, s, x in rows:
        for _ in range(int(worker_counts[w])):
            for copy in range(int(segment_counts[g])):
                translations[(s, g, copy)].append(x)
    per_system = defaultdict(list)
    for (s, _, _), values in translations.items():
        per_system[s].append(sum(values) / len(values))
    out = []
    for s in range(n_systems):
        means = per_system.get(s, [])
        mean = sum(means) / len(means) if means else None
        var = sum((m - mean) ** 2 for m in means) / (len(means) - 1) if len(means) > 1 else None
        out.append((mean, var, len(means)))
    return out


def reference_relation(a, b) -> str:
    (mean_a, var_a, n_a), (mean_b, var_b, n_b) = a, b
    if mean_a is None or mean_b is None or var_a is None or var_b is None:
        return "0"
    se = (var_a / n_a + var_b / n_b) ** 0.5
    diff = mean_a - mean_b
    if se == 0:
        return "0" if diff == 0 else ("+" if diff > 0 else "-")
    z = diff / se
    return "+" if z > st.Z_CRITICAL else ("-" if z < -st.Z_CRITICAL else "0")


def reference_order(statistics, tiebreak):
    """Codes best first: by mean (missing last), ties by the tiebreak position."""
    return sorted(range(len(statistics)), key=lambda s: (statistics[s][0] is None, -(statistics[s][0] or 0.0),
                                                         tiebreak[s]))


def reference_bootstrap(worker, segment, system, score, names, seed, resamples):
    rows = list(zip(worker.tolist(), segment.tolist(), system.tolist(), score.tolist(), strict=True))
    n_w, n_g, n_s = int(worker.max()) + 1, int(segment.max()) + 1, len(names)
    observed = reference_statistics(rows, [1] * n_w, [1] * n_g, n_s)
    by_name = sorted(range(n_s), key=lambda s: names[s])
    observed_order = reference_order(observed, [by_name.index(s) for s in range(n_s)])
    tiebreak = [observed_order.index(s) for s in range(n_s)]
    pairs = list(itertools.combinations(range(n_s), 2))
    rank_counts = np.zeros((n_s, n_s), np.int64)
    patterns, same_order = Counter(), 0
    for r in range(resamples):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(r,)))
        a = np.bincount(rng.integers(0, n_w, n_w), minlength=n_w)
        b = np.bincount(rng.integers(0, n_g, n_g), minlength=n_g)
        statistics = reference_statistics(rows, a, b, n_s)
        order = reference_order(statistics, tiebreak)
        for rank, s in enumerate(order):
            rank_counts[s, rank] += 1
        same_order += order == observed_order
        patterns["".join(reference_relation(statistics[i], statistics[j]) for i, j in pairs)] += 1
    return observed, observed_order, rank_counts, patterns, same_order


def test_the_bootstrap_equals_a_literal_resampling_reference():
    worker, segment, system, score, names = small_data()
    data = st.prepare(worker, segment, system, score, names)
    counts = st.resample_counts(data, seed=11, start=0, stop=60)
    observed, observed_order, rank_counts, patterns, same_order = reference_bootstrap(
        worker, segment, system, score, names, seed=11, resamples=60)
    assert counts.observed_mean == pytest.approx([m for m, _, _ in observed])
    assert counts.observed_order.tolist() == observed_order
    assert counts.rank_counts.tolist() == rank_counts.tolist()
    assert counts.patterns == dict(patterns)
    assert counts.same_order == same_order
    assert rank_counts[names.index("beta")].tolist()[-1] > 0  # a resample without beta ranks it last


def test_the_observed_scores_are_the_families_macro_average():
    """Every count 1: the mean of the translation means, as stats.system_scores computes it (docs/methods.md §5.2)."""
    worker, segment, system, score, names = small_data(seed=5)
    data = st.prepare(worker, segment, system, score, names)
    means, variances, n = st.weighted_scores(data, np.ones((1, data.n_workers)), np.ones((1, data.n_segments)))
    reference = system_scores(system, segment, score, score, len(names))
    assert means[0] == pytest.approx(reference.mean_z)
    assert n[0].tolist() == reference.n_segments.tolist()
    sd = np.array([np.std(reference.translation_z[reference.translation_system == s], ddof=1) for s in range(3)])
    assert np.sqrt(variances[0]) == pytest.approx(sd)


# By hand ---------------------------------------------------------------------------------------------------

# Rows (worker, segment, system, score): systems A (code 0) and B (1), two workers, two segments; worker 1
# judged B's translation of segment 1 twice.
HAND = [(0, 0, 0, 1.0), (1, 0, 0, 3.0), (0, 1, 0, 2.0), (0, 0, 1, 0.0), (1, 1, 1, 4.0), (1, 1, 1, 2.0)]


def hand_data():
    a = np.array(HAND)
    return st.prepare(a[:, 0].astype(int), a[:, 1].astype(int), a[:, 2].astype(int), a[:, 3], ["A", "B"])


def test_weighted_scores_by_hand():
    data = hand_data()
    workers = np.array([[1, 1], [2, 1], [0, 1]], dtype=float)
    segments = np.array([[1, 1], [0, 2], [1, 1]], dtype=float)
    means, variances, n = st.weighted_scores(data, workers, segments)
    # All once: A's translations (1+3)/2 = 2 and 2 -> mean 2, variance 0; B's 0 and (4+2)/2 = 3 -> mean 1.5,
    # variance (1.5² + 1.5²) / 1 = 4.5.
    assert means[0].tolist() == [2.0, 1.5] and variances[0].tolist() == [0.0, 4.5] and n[0].tolist() == [2, 2]
    # Worker 0 twice, segment 0 left out, segment 1 twice: A has two copies of 2.0, B two copies of 3.0.
    assert means[1].tolist() == [2.0, 3.0] and variances[1].tolist() == [0.0, 0.0] and n[1].tolist() == [2, 2]
    # Worker 0 left out: A keeps its segment-0 translation (3.0), B its segment-1 one (3.0); one each.
    assert means[2].tolist() == [3.0, 3.0] and n[2].tolist() == [1, 1] and np.isnan(variances[2]).all()


def test_relations_and_ties_by_hand():
    """Observed: z = 0.5 / √(0 / 2 + 4.5 / 2) = 1/3, not separated. A resample where A and B tie at 3.0 orders
    them by the observed score (A, 2.0 over B, 1.5)."""
    data = hand_data()
    means, variances, n = st.weighted_scores(data, np.array([[1.0, 1.0], [2.0, 1.0], [0.0, 1.0]]),
                                             np.array([[1.0, 1.0], [0.0, 2.0], [1.0, 1.0]]))
    first, second = np.triu_indices(2, 1)
    assert st._relations(means, variances, n, first, second)[:, 0].tolist() == [0, -1, 0]
    tiebreak = np.array([0, 1])
    assert st._orders(means, tiebreak).tolist() == [[0, 1], [1, 0], [0, 1]]
    assert st._orders(means, np.array([1, 0]))[2].tolist() == [1, 0]


def test_the_critical_value_is_the_normal_quantile():
    assert st.Z_CRITICAL == pytest.approx(scipy_stats.norm.ppf(1 - st.ALPHA / 2), abs=1e-12)


def test_the_observed_relations_are_a_z_test_on_the_translation_means():
    """Each pair of the observed pattern, against the z test computed from stats.system_scores' translation means
    with numpy's sample variance, and its p-value from scipy."""
    worker, segment, system, score, names = small_data(seed=8, workers=10, segments=12)
    score = score + 0.5 * system  # spread the systems so that some pairs separate
    counts = st.resample_counts(st.prepare(worker, segment, system, score, names), 0, 0, 0)
    reference = system_scores(system, segment, score, score, len(names))
    groups = [reference.translation_z[reference.translation_system == s] for s in range(len(names))]
    expected = ""
    for i, j in itertools.combinations(range(len(names)), 2):
        z = (groups[i].mean() - groups[j].mean()) / np.sqrt(np.var(groups[i], ddof=1) / groups[i].size
                                                              + np.var(groups[j], ddof=1) / groups[j].size)
        p = 2 * scipy_stats.norm.sf(abs(z))
        expected += "0" if p >= 0.05 else ("+" if z > 0 else "-")
    assert counts.observed_pattern == expected and set(expected) != {"0"}


# The stable-ranking probability ------------------------------------------------------------------------------

@pytest.mark.parametrize("counts, expected", [([3, 1], 0.5), ([1, 1, 1, 1], 0.0), ([5], 1.0), ([2, 2], 1 / 3),
                                              ([10, 0], 1.0)])
def test_srp_on_known_patterns(counts, expected):
    assert st.stable_ranking_probability(counts) == pytest.approx(expected)


def test_srp_is_the_share_of_agreeing_pairs_of_resamples():
    rng = np.random.default_rng(1)
    patterns = [rng.choice(["+0-", "++-", "000", "+--"], p=[0.6, 0.2, 0.15, 0.05]) for _ in range(57)]
    agreeing = sum(a == b for a, b in itertools.permutations(patterns, 2))
    srp = st.stable_ranking_probability(Counter(patterns).values())
    assert srp == pytest.approx(agreeing / (57 * 56))


def test_srp_needs_two_resamples():
    assert np.isnan(st.stable_ranking_probability([1])) and np.isnan(st.stable_ranking_probability([]))


# Rank intervals ------------------------------------------------------------------------------------------------

def test_rank_interval_is_numpys_inverted_cdf_quantile():
    rng = np.random.default_rng(4)
    counts = rng.integers(0, 40, size=(6, 6))
    counts[2] = [0, 0, 1000, 0, 0, 0]
    counts[3] = [25, 0, 0, 0, 0, 975]  # exactly 2.5 % at rank 1
    low, high = st.rank_interval(counts)
    for s in range(6):
        ranks = np.repeat(np.arange(1, 7), counts[s])
        assert low[s] == np.quantile(ranks, 0.025, method="inverted_cdf")
        assert high[s] == np.quantile(ranks, 0.975, method="inverted_cdf")
    assert (low[2], high[2]) == (3, 3) and (low[3], high[3]) == (1, 6)


# Seeding and chunks ----------------------------------------------------------------------------------------------

def test_any_split_into_shares_gives_the_one_process_answer():
    data = st.prepare(*small_data(seed=2))
    whole = st.resample_counts(data, seed=5, start=0, stop=200)
    shares = [st.resample_counts(data, 5, a, b, limit=limit)
              for (a, b), limit in zip([(0, 37), (37, 100), (100, 101), (101, 200)], [10, 1, 500, 10**7], strict=True)]
    merged = st.merge(shares[::-1])
    assert merged.resamples == 200
    assert merged.rank_counts.tolist() == whole.rank_counts.tolist()
    assert merged.patterns == whole.patterns and merged.same_order == whole.same_order
    assert merged.same_pattern == whole.same_pattern
    again = st.StabilityCounts.from_json(merged.as_json())  # through the broker and back
    assert again.rank_counts.tolist() == whole.rank_counts.tolist() and again.patterns == whole.patterns
    assert st.summarise(again).stable_ranking_probability == st.summarise(whole).stable_ranking_probability


def test_the_seed_decides():
    data = st.prepare(*small_data(seed=2))
    first, same, other = (st.bootstrap(data, 200, seed) for seed in (1, 1, 2))
    assert first.rank_probability.tolist() == same.rank_probability.tolist()
    assert first.rank_probability.tolist() != other.rank_probability.tolist()


def test_draws_are_uniform_with_replacement():
    """Two workers and two segments: the 16 equally likely draw sequences, enumerated, against 4,000 resamples."""
    data = hand_data()
    exact = np.zeros((2, 2))
    for w in itertools.product(range(2), repeat=2):
        for g in itertools.product(range(2), repeat=2):
            statistics = reference_statistics(HAND, np.bincount(w, minlength=2), np.bincount(g, minlength=2), 2)
            order = reference_order(statistics, [0, 1])
            for rank, s in enumerate(order):
                exact[s, rank] += 1 / 16
    result = st.bootstrap(data, 4000, seed=9)
    sd = np.sqrt(exact * (1 - exact) / 4000)
    assert np.all(np.abs(result.rank_probability - exact) <= 4 * sd + 1e-12)
    assert 0 < exact[0, 0] < 1  # the case is not degenerate


# Summaries and input checks ----------------------------------------------------------------------------------------

def test_summary_figures():
    data = st.prepare(*small_data(seed=6))
    result = st.bootstrap(data, 300, seed=0)
    assert result.rank_probability.sum(axis=1) == pytest.approx(np.ones(3))
    assert result.rank_probability.sum(axis=0) == pytest.approx(np.ones(3))
    assert result.mean_rank == pytest.approx(result.rank_probability @ np.arange(1, 4))
    assert 0 <= result.stable_ranking_probability <= 1 and 0 <= result.same_order <= 1
    assert sorted(result.observed_rank.tolist()) == [1, 2, 3]
    assert np.all(result.better + result.better.T <= 1 + 1e-12) and np.all(np.diag(result.better) == 0)
    with pytest.raises(ValueError):
        result.rank_probability[0, 0] = 1.0  # results are read-only


def test_bad_input_is_refused():
    worker, segment, system, score, names = small_data()
    with pytest.raises(ValueError):
        st.prepare(worker, segment, system, np.where(score > 0, score, np.nan), names)
    with pytest.raises(ValueError):
        st.prepare(worker[:-1], segment, system, score, names)
    with pytest.raises(ValueError):
        st.prepare(worker, segment, system + 5, score, names)
    data = st.prepare(worker, segment, system, score, names)
    for seed in (-1, 1.5, True, 2 ** 64):
        with pytest.raises(ValueError):
            st.resample_counts(data, seed, 0, 10)


def test_systems_without_judgments_are_left_out():
    data = st.prepare([0, 1, 0, 1], [0, 0, 1, 1], [0, 0, 2, 2], [1.0, 2.0, 3.0, 4.0], ["a", "b", "c"])
    assert data.systems == ("a", "c")
    result = st.bootstrap(data, 100, 0)
    assert result.rank_probability.shape == (2, 2) and result.observed_rank.tolist() == [2, 1]


def test_rank_interval_of_no_systems_and_of_a_system_without_counts():
    """No systems (a worker filter nobody passes yet): empty intervals, not numpy's "argmax of an empty sequence";
    a system without rank counts gets the empty interval (0, 0)."""
    low, high = st.rank_interval(np.zeros((0, 0), np.int64))
    assert low.shape == high.shape == (0,)
    low, high = st.rank_interval(np.array([[3, 1], [0, 0]]))
    assert (low.tolist(), high.tolist()) == ([1, 0], [2, 0])


def test_a_bootstrap_with_no_system_to_rank_summarises_to_nothing():
    """A partly judged campaign whose filter keeps no judgment: the bootstrap and its merged shares summarise to no
    systems (the service stores status "empty"), instead of raising."""
    data = st.prepare([], [], [], [], ["a", "b"])
    assert data.n_systems == 0
    result = st.summarise(st.merge([st.resample_counts(data, 0, 0, 50), st.resample_counts(data, 0, 50, 100)]))
    assert result.systems == () and result.resamples == 100
    assert result.rank_low.shape == result.mean_rank.shape == (0,) and result.rank_probability.shape == (0, 0)
    assert result.better.shape == (0, 0) and st.bootstrap(data, 100).systems == ()
