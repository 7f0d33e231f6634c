"""WMT24's and WMT25's ESA significance, clusters and rank ranges (docs/methods.md §11), each checked against a
transcription, written here, of the organisers' functions run on a small table with ties, and on the smallest
cases of issue 25 computed by hand."""
import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps

from evaluation import stats
from evaluation.stats import error_spans as es
from evaluation.stats import esa_ranking as esa

ALPHA = 0.05  # ALPHA_THRESHOLD of WMT24's tools.py, the 0.05 of WMT25's get_significance


# ----------------------------------------------------------------------------------------------- WMT24
# Transcription of wmt-conference/wmt24-news-systems, humeval/tools.py at commit 0e7dc08 (the file METHODS
# §11 names): weighted_wilcoxon_signed_rank_test (lines 233-257), get_pvalues (260-283), get_ranks (286-310),
# get_clusters (312-331); the macro average of humeval/calculate_clusters.py (per-domain means, then their
# mean). Plain loops over dicts, as the scripts run.

def wmt24_pvalues(table):
    """table[system][item] = (domain, score). For each pair, the items both have (the outer join and dropna);
    per domain (in order of appearance) scipy's two-sided wilcoxon on x - y; Stouffer on those p-values."""
    systems = list(table)
    pvalues = {}
    for first, second in itertools.combinations(systems, 2):
        shared = [item for item in table[first] if item in table[second]]
        for x, y in ((first, second), (second, first)):
            domains = list(dict.fromkeys(table[first][item][0] for item in shared))
            ps = []
            for domain in domains:
                differences = [table[x][item][1] - table[y][item][1] for item in shared
                               if table[first][item][0] == domain]
                ps.append(sps.wilcoxon(differences, alternative="two-sided").pvalue)
            z_scores = [sps.norm.ppf(1 - p) for p in ps]
            combined = np.sum(z_scores) / np.sqrt(len(ps))
            pvalues[(x, y)] = 1 - sps.norm.cdf(combined)
    return pvalues


def wmt24_macro(table):
    """calculate_clusters.py: the mean per (system, domain), then the mean of those per system."""
    out = {}
    for system, items in table.items():
        by_domain = {}
        for domain, score in items.values():
            by_domain.setdefault(domain, []).append(score)
        out[system] = float(np.mean([np.mean(v) for v in by_domain.values()]))
    return out


def wmt24_ranks(pvalues, overall):
    ranks = {}
    for s1 in overall:
        wins = losses = 0
        for s2 in overall:
            if s1 == s2:
                continue
            if pvalues[(s1, s2)] < ALPHA:
                if overall[s1] > overall[s2]:
                    wins += 1
                else:
                    losses += 1
        ranks[s1] = (losses + 1, len(overall) - wins)
    return ranks


def wmt24_get_clusters(pvalues, ordered):
    clusters = {}
    same_until = -1
    last_cluster = 1
    for i, s1 in enumerate(ordered):
        if same_until <= i:
            same_until = -1
        for k in range(i + 1, len(ordered)):
            if pvalues[(s1, ordered[k])] > ALPHA:
                same_until = max(k, same_until)
        clusters[s1] = last_cluster
        if same_until == -1:
            last_cluster += 1
    return clusters


def esa_table(seed=7, n_systems=6, n_domains=3, per_domain=20):
    """6 systems × 3 domains × 20 items, scores in steps of 5 (ties and zero differences), each system with a
    quality and its own strength per domain (so that preferences change direction between domains)."""
    rng = np.random.default_rng(seed)
    quality = np.array([72, 70, 64, 63, 55, 54])[:n_systems]
    lean = rng.normal(0, 4, (n_systems, n_domains))
    items = [(d, i) for d in range(n_domains) for i in range(per_domain)]
    base = {item: rng.normal(0, 10) for item in items}
    return {s: {item: (item[0], float(np.clip(5 * np.round((quality[s] + lean[s, item[0]] + base[item]
                                                            + rng.normal(0, 8)) / 5), 0, 100)))
                for item in items} for s in range(n_systems)}


def core_arrays(table):
    rows = [(s, item, domain, score) for s, items in table.items() for item, (domain, score) in items.items()]
    keys = {item: k for k, item in enumerate(sorted({r[1] for r in rows}))}
    system = np.array([r[0] for r in rows])
    key = np.array([keys[r[1]] for r in rows])
    domain = np.array([r[2] for r in rows])
    score = np.array([r[3] for r in rows])
    return system, key, domain, score


def test_wmt24_significance_clusters_and_ranks_equal_the_transcription():
    table = esa_table()
    system, key, domain, score = core_arrays(table)
    n = len(table)
    sig = es.paired_significance(system, key, score, n, item_domain=domain, method="wmt24")
    macro = es.system_means(system, score, n, domain, 3, macro=True)
    expected_p = wmt24_pvalues(table)
    for (i, j), p in expected_p.items():
        assert sig.p[i, j] == pytest.approx(p, rel=1e-12, abs=1e-300), (i, j)
    overall = wmt24_macro(table)
    np.testing.assert_allclose(macro, [overall[s] for s in range(n)], rtol=1e-14)
    ordered = sorted(overall, key=lambda s: -overall[s])
    clusters = stats.clusters(macro, sig.p, ALPHA, rule="wmt24")
    expected_clusters = wmt24_get_clusters(expected_p, ordered)
    expected_ranks = wmt24_ranks(expected_p, overall)
    assert clusters.order.tolist() == ordered
    assert {s: int(clusters.cluster[s]) for s in range(n)} == expected_clusters
    assert {s: (int(clusters.rank_low[s]), int(clusters.rank_high[s])) for s in range(n)} == expected_ranks
    assert 1 < max(expected_clusters.values()) < n  # the table separates some systems and not others


def test_wmt24_p_is_two_sided_and_symmetric_on_the_smallest_case():
    """A 60 / B 50 on 10 items of one domain, A 50 / B 60 on 10 of another: each domain's two-sided p is
    2/1024, z = 2 Φ⁻¹(1 − 2/1024) / √2, p = 1 − Φ(z) = 2.2e-5 both ways. The directional variant gives 1.0."""
    system = np.repeat([0, 1], 20)
    key = np.tile(np.arange(20), 2)
    domain = np.tile(np.repeat([0, 1], 10), 2)
    score = np.r_[np.repeat([60.0, 50.0], 10), np.repeat([50.0, 60.0], 10)]
    sig = es.paired_significance(system, key, score, 2, item_domain=domain, method="wmt24")
    by_hand = 1 - sps.norm.cdf(2 * sps.norm.ppf(1 - 2 / 1024) / math.sqrt(2))
    assert by_hand == pytest.approx(2.24e-5, rel=2e-3)
    assert sig.p[0, 1] == sig.p[1, 0] == pytest.approx(by_hand, rel=1e-12)
    directional = es.paired_significance(system, key, score, 2, item_domain=domain, method="stouffer")
    assert directional.p[0, 1] == directional.p[1, 0] == 1.0


def test_wmt24_clusters_need_every_system_above_to_differ_from_every_system_below():
    """A > B > C by score; B beats C, A differs from neither: WMT21's rule puts a boundary below B (B beats every
    system below), get_clusters none (A and C are not shown different)."""
    mean = np.array([3.0, 2.0, 1.0])
    p = np.array([[np.nan, 0.3, 0.2], [0.3, np.nan, 0.01], [0.2, 0.01, np.nan]])
    assert stats.clusters(mean, p, rule="wmt").cluster.tolist() == [1, 1, 2]
    assert stats.clusters(mean, p, rule="wmt24").cluster.tolist() == [1, 1, 1]
    p[0, 2] = p[2, 0] = 0.05  # p ≤ α differs in get_clusters (its test is p > α)
    assert stats.clusters(mean, p, rule="wmt24").cluster.tolist() == [1, 1, 2]


# ----------------------------------------------------------------------------------------------- WMT25
# Transcription of wmt-conference/wmt25-general-mt, humeval/05-compute_clusters.py at commit 97e2941 (the file
# METHODS §11 names): get_significance (lines 32-40), the (item, wave) vectors (68-84), the order (86-90), the
# neighbour clusters of clusters.txt (103-116), does_cluster_end_here (128-131), the table's rank ranges
# (220-238) and its \cmidrule (263-264).

def wmt25_significance(a, b):
    return sps.wilcoxon([x - y for x, y in zip(a, b, strict=True) if not (np.isnan(x) or np.isnan(y))],
                        alternative="greater").pvalue < 0.05


def wmt25_tables(data, systems):
    """data: list of {"scores": {system: {"human1": x, "human2": y}}}. Returns the order, the clusters, the
    rank ranges and where the table draws its rules."""
    vectors = {s: [v["scores"].get(s, {}).get(f"human{w}", np.nan) for v in data for w in (1, 2)]
               for s in systems}
    ordered = sorted(vectors.items(), key=lambda x: np.mean([a for a in x[1] if not np.isnan(a)]), reverse=True)
    clusters, current, previous = {}, 1, None
    for name, values in ordered:
        if previous is not None and wmt25_significance(previous, values):
            current += 1
        clusters[name] = current
        previous = values
    ranges = []
    for i, (_, values) in enumerate(ordered):
        start = i + 1
        for _, above in ordered[:i][::-1]:
            if wmt25_significance(above, values):
                break
            start -= 1
        end = i + 1
        for _, below in ordered[i + 1:]:
            if wmt25_significance(values, below):
                break
            end += 1
        ranges.append((start, end))

    def ends_here(i):
        return all(b <= i for _, b in ranges[:i]) and all(a > i for a, _ in ranges[i:])

    rules = [k + 1 != len(ranges) and ends_here(k + 1) for k in range(len(ranges))]
    return [name for name, _ in ordered], clusters, ranges, rules


def two_wave_data(seed=5, n_items=60):
    """6 systems × 60 items in steps of 5, wave 1 for every item, wave 2 for two items in three; some systems
    miss some items; systems close, so that neighbours are not always separated."""
    rng = np.random.default_rng(seed)
    quality = [70, 68, 66, 63, 61, 58]
    data = []
    for _ in range(n_items):
        base = rng.normal(0, 9)
        waves = (1, 2) if rng.random() < 2 / 3 else (1,)
        scores = {}
        for s, q in enumerate(quality):
            if rng.random() < 0.1:
                continue
            scores[s] = {f"human{w}": float(np.clip(5 * np.round((q + base + rng.normal(0, 7)) / 5), 0, 100))
                         for w in waves}
        data.append({"scores": scores})
    return data


def test_wmt25_clusters_rank_ranges_and_rules_equal_the_transcription():
    data = two_wave_data()
    n = 6
    ordered, clusters, ranges, rules = wmt25_tables(data, range(n))
    rows = [(s, item, int(w[-1]), score) for item, v in enumerate(data) for s, waves in v["scores"].items()
            for w, score in waves.items()]
    system, key, wave, score = (np.array(c) for c in zip(*rows, strict=True))
    sig = es.paired_significance(system, key, score, n, method="wmt25", item_wave=wave)
    mean = es.system_means(system, score, n)
    result = stats.clusters(mean, sig.p, ALPHA, rule="adjacent")
    assert result.order.tolist() == ordered
    assert {s: int(result.cluster[s]) for s in range(n)} == clusters
    order = result.order
    assert list(zip(result.rank_low[order].tolist(), result.rank_high[order].tolist(), strict=True)) == ranges
    assert esa.wmt25_table_rules(result.rank_low[order], result.rank_high[order]).tolist() == rules
    # the slots matter: a second wave is a second observation, not averaged into the item
    averaged = es.paired_significance(system, key, score, n, method="wmt25")
    assert not np.allclose(averaged.p, sig.p, equal_nan=True)
    assert sig.n[0, 1] > averaged.n[0, 1]
    # on this table walking differs from counting every win (the rule used before)
    win = stats.wins(mean, sig.p)
    counted = [(1 + int(win[:, s].sum()), n - int(win[s, :].sum())) for s in order]
    assert counted != ranges and any(a != b for a, b in ranges)


def test_wmt25_rank_ranges_walk_to_the_first_significant_neighbour():
    """Order A B C D. D is beaten by B but not by C, nor by A (whose test is weaker): walking up from D stops at
    B, so D's best rank is 3; counting every system that beats D would give 2."""
    mean = np.array([4.0, 3.0, 2.0, 1.0])
    p = np.full((4, 4), 0.5)
    p[1, 3] = 0.01
    np.fill_diagonal(p, np.nan)
    result = stats.clusters(mean, p, rule="adjacent")
    assert result.rank_low.tolist() == [1, 1, 1, 3]
    assert result.rank_high.tolist() == [4, 3, 4, 4]  # B walks down to D, the first it beats: worst rank 3
    assert result.cluster.tolist() == [1, 1, 1, 1]  # no neighbour is separated
    assert esa.wmt25_table_rules(result.rank_low, result.rank_high).tolist() == [False, False, False, False]


def test_the_later_row_of_a_slot_wins():
    matrix = esa.slot_matrix([0, 0, 1], [5, 5, 5], [10.0, 20.0, 30.0], 2, wave=[1, 1, 1])
    assert matrix.tolist() == [[20.0, 30.0]]
    assert esa.slot_matrix([0, 0], [5, 5], [10.0, 20.0], 1, wave=[1, 2]).tolist() == [[10.0], [20.0]]
