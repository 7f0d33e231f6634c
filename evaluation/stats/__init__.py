"""Pure statistics core for Direct Assessment (docs/methods.md §4-§6).

Plain functions over numpy arrays; numpy and scipy only (no Django, no other
project modules), vectorised over judgments (bincount / sorting), with at
most a loop over workers or systems where a scipy test has to run per group.

Conventions
-----------
* Inputs are 1-D arrays, one row per judgment (or per pair of judgments).
  Groups are **integer codes**: workers ``0..n_workers-1``, systems
  ``0..n_systems-1``, segments / pair keys non-negative; the caller maps
  database ids to codes (e.g. ``np.unique(ids, return_inverse=True)``).
  Scores are floats (raw 0-100 or z).
* Outputs are small frozen dataclasses whose numpy arrays are read-only and
  indexed by the same codes -- one row per worker / system, ready to store.
* **NaN means "not computable"** (too few data, undefined statistic); a
  worker with p = NaN is never reliable.  Integer outputs use -1 for "not
  ranked".
* Standard deviations are sample sds (ddof=1, R's ``sd()``) throughout.
* Rank tests follow **R's** ``wilcox.test`` by default (``method="r"``):
  rank sum exact when both samples have < 50 values and nothing ties,
  signed rank exact when < 50 non-zero differences remain without ties or
  zeros; otherwise the normal approximation with tie correction and
  continuity correction.  ``method="scipy"`` keeps scipy's ``"auto"``
  choice (Appraise's test and test-set calibration always use it).
* Per-translation means are summed in ascending order and rounded to 15 significant digits (WMT's), so that
  means equal up to summation order are bit-identical and tie.

API
---
reliability and reliability_unpaired (§4; Graham et al. 2014 §3, Graham et al. 2013 §5)
    ``reliability(worker, bad, original, n_workers, test="paired-t"|"wilcoxon",
    min_pairs=2, threshold=0.05, method="r"|"scipy") -> ReliabilityResult(p,
    statistic, n_pairs, mean_diff, reliable, ...)`` -- one-sided paired test
    bad < original.
    ``reliability_welch(repeat_worker, first, repeat, bad_worker, bad,
    original, n_workers, test="welch"|"mann-whitney", ..., method="r"|"scipy")
    -> WelchReliabilityResult`` -- one-sided unpaired |first-repeat| <
    original-bad.
    ``reliability_appraise(worker, pair, is_bad, score, n_workers,
    n_pairs_total, threshold=0.01) -> ReliabilityResult`` -- Appraise's
    unpaired Mann-Whitney (scipy's rule), p <= 0.01.
    ``assumption_a(worker, first, repeat, n_workers, alpha=0.05) ->
    AssumptionAResult(p, t, n_pairs, mean_diff, determined, holds)``;
    ``assumption_a_share(result, reliable) -> dict``.
zscores (§5)
    ``standardise(worker, scores, n_workers, fit=None) -> ZScores(z, mean,
    sd, n, constant)``; ``worker_means(worker, values, n_workers) -> array``.
systems (§5)
    ``system_scores(system, segment, raw, z, n_systems, confidence=0.95, digits=15) ->
    SystemScores`` (per system: n_segments, n_judgments, mean_raw, mean_z,
    t-intervals; per translation: system, segment, n, raw, z -- the
    translation means rounded to `digits`=15 significant digits).
    ``significance(translation_system, translation_z, n_systems,
    method="r"|"scipy") -> Significance(p, stars, n, method)`` -- p[i, j]
    one-sided rank-sum "i better than j".  ``stars(p) -> str array``.
    ``wins(mean, p, alpha=0.05) -> bool array`` -- p[i, j] < alpha and i
    ranked above j.
    ``clusters(mean_z, p_matrix, alpha=0.05, rule="wmt"|"above"|"adjacent"|"wmt24") ->
    Clusters(order, rank, cluster, alpha, rank_low, rank_high, rule)``;
    "adjacent" and "wmt24" are WMT25's and WMT24's ESA rules (``esa_ranking``).
esa_ranking (§11; WMT24 tools.py, WMT25 05-compute_clusters.py)
    ``stouffer_two_sided``, ``slot_matrix`` ((item, wave) slots), ``wmt24_clusters``,
    ``wmt24_rank_ranges``, ``wmt25_clusters``, ``wmt25_rank_ranges``, ``wmt25_table_rules``.
esa_ai (§11.6; Zouhar et al. 2024) -- (segment, system) matrices
    ``ipw_scores(score, clean, present=None, group=None, macro=False) -> AiSkipScores`` (post-stratified
    Hájek scores, delta-method covariance, paired z-test p); ``bootstrap_scores``, ``budget_saved``,
    ``kendall_tau``.
rounding (§5.2)
    ``round_significant(x, digits=12) -> array`` -- equal numbers compare
    equal (NaN-, inf- and zero-safe).
agreement (§6; Graham et al. 2013 §6)
    ``score_differences(a, b) -> DiffStats(n, mean, sd)``;
    ``cohen_kappa(a, b, n_categories=None) -> Kappa``;
    ``bin_equal_width(scores, k, low=0, high=100) -> int array``;
    ``bin_percentile(z, k, reference=None) -> int array``.
calibration (§5; Graham et al. 2014 §4)
    ``calibrate(curr_old, curr_new, best_old, best_new) -> Calibration``.
pairwise and pairwise_agreement (§3, §6, §7; Läubli et al. 2018 §2.2 and Appendix; Paul & Sumita 2011 §3) --
``choice`` codes ``CHOICE_A = 0``, ``CHOICE_B = 1``, ``CHOICE_TIE = 2``
    ``preference_counts(condition, rater, choice, n_conditions, n_raters,
    exclude=None) -> PreferenceCounts(a, b, t, n, n_excluded, rater_a,
    rater_b, rater_t, rater_n)``.
    ``sign_test(a, b, t=0, ties="exclude"|"emerson-simon",
    half="conservative"|"average") -> SignTest(x, n, share, p)`` --
    two-sided exact binomial, vectorised over count arrays.
    ``spam_misses(rater, chose_spam, chose_tie, n_raters) ->
    SpamMisses(seen, missed, missed_spam, missed_ties, miss_rate)``;
    ``excluded_raters(miss_rate, max_rate, exclude_unassessed=False) ->
    bool array``.
    ``majority_vote(item, choice, n_items, condition=None,
    n_conditions=None, rule="net"|"plurality") -> MajorityVote(label,
    votes_a/b/t, item_condition, a, b, t, n)``.
    ``pairwise_agreement(item, rater, choice, n_raters=None,
    chance="wmt"|"pooled") -> PairwiseAgreement(n_pairs, n_agree, p_agree,
    label_share, p_tie, p_expected, kappa, table, rater_pairs,
    rater_tables)``.
    ``fleiss_kappa(item, choice, n_categories=3) -> FleissKappa(n_items,
    n_ratings, equal_raters, category_share, p_observed, p_expected,
    kappa)``; ``landis_koch(kappa) -> str``.

Typical pipeline: ``standardise`` all judgments of a campaign -> ``reliability``
on bad-reference pairs -> keep reliable workers' system-output judgments ->
``system_scores`` -> ``significance`` on the translation arrays ->
``wins(scores.mean_z, sig.p)`` and ``clusters(scores.mean_z, sig.p)``.
"""

from .agreement import (
    DiffStats,
    Kappa,
    bin_equal_width,
    bin_percentile,
    cohen_kappa,
    score_differences,
)
from .calibration import Calibration, calibrate
from .pairwise import (
    CHOICE_A,
    CHOICE_B,
    CHOICE_TIE,
    PreferenceCounts,
    SignTest,
    SpamMisses,
    excluded_raters,
    preference_counts,
    sign_test,
    spam_misses,
)
from .pairwise_agreement import (
    FleissKappa,
    MajorityVote,
    PairwiseAgreement,
    fleiss_kappa,
    landis_koch,
    majority_vote,
    pairwise_agreement,
)
from .reliability import (
    DEFAULT_MIN_PAIRS,
    AssumptionAResult,
    ReliabilityResult,
    assumption_a,
    assumption_a_share,
    reliability,
)
from .reliability_unpaired import WelchReliabilityResult, reliability_appraise, reliability_welch
from .rounding import round_significant
from .systems import (
    CLUSTER_RULES,
    TRANSLATION_DIGITS,
    Clusters,
    Significance,
    SystemScores,
    clusters,
    significance,
    stars,
    system_scores,
    wins,
)
from .zscores import ZScores, standardise, worker_means

__all__ = [
    "CHOICE_A",
    "CHOICE_B",
    "CHOICE_TIE",
    "CLUSTER_RULES",
    "DEFAULT_MIN_PAIRS",
    "AssumptionAResult",
    "Calibration",
    "Clusters",
    "DiffStats",
    "FleissKappa",
    "Kappa",
    "MajorityVote",
    "PairwiseAgreement",
    "PreferenceCounts",
    "ReliabilityResult",
    "SignTest",
    "Significance",
    "SpamMisses",
    "SystemScores",
    "TRANSLATION_DIGITS",
    "WelchReliabilityResult",
    "ZScores",
    "assumption_a",
    "assumption_a_share",
    "bin_equal_width",
    "bin_percentile",
    "calibrate",
    "clusters",
    "cohen_kappa",
    "excluded_raters",
    "fleiss_kappa",
    "landis_koch",
    "majority_vote",
    "pairwise_agreement",
    "preference_counts",
    "reliability",
    "reliability_appraise",
    "reliability_welch",
    "round_significant",
    "score_differences",
    "sign_test",
    "significance",
    "spam_misses",
    "stars",
    "standardise",
    "system_scores",
    "wins",
    "worker_means",
]
