"""Worker reliability from quality-control pairs (docs/methods.md §4).

Four per-worker tests, each returning one p-value per worker code
``0..n_workers-1`` (NaN = "not computable", and such a worker is never
reliable):

* :func:`reliability` -- the default: one-sided *paired* test that a
  worker's bad-reference scores are lower than the scores they gave the
  originals (paired Student t, or the Wilcoxon signed-rank test);
* :func:`reliability_welch` -- Graham et al. 2013 §5 / Fig. 3: one-sided *unpaired* test
  that ask-again differences ``d1 = |first - repeat|`` are smaller than
  bad-reference differences ``d2 = original - bad`` (Welch t, or
  Mann-Whitney U);
* :func:`reliability_appraise` -- what Appraise runs (unpaired Mann-Whitney
  of bad vs original, ``p <= 0.01``);
* :func:`assumption_a` / :func:`assumption_a_share` -- Graham et al. 2014 §3 Table 1:
  first vs repeat scores should not differ (two-sided paired t).

The callers pair the items (same worker, HIT, system and segment); these
functions only see aligned score arrays plus the worker code of each pair.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from . import _grouping as g
from ._ranktests import METHODS as RANK_METHODS
from ._ranktests import RankSample, mwu, wilcoxon_less

__all__ = [
    "ReliabilityResult",
    "WelchReliabilityResult",
    "AssumptionAResult",
    "reliability",
    "reliability_welch",
    "reliability_appraise",
    "assumption_a",
    "assumption_a_share",
    "DEFAULT_MIN_PAIRS",
]

#: Default minimum number of pairs per worker (see :func:`reliability`).
DEFAULT_MIN_PAIRS = 2


@dataclass(frozen=True)
class ReliabilityResult:
    """Per-worker reliability (arrays indexed by worker code).

    ``p``: one-sided p-value, NaN when not computable.  ``statistic``: t
    (paired-t), the signed-rank sum R+ of positive ``bad - original``
    differences (wilcoxon) or U of the bad scores (appraise); NaN when not
    computable.  ``n_pairs``: pairs seen per worker.  ``mean_diff``: mean of
    ``bad - original`` (raw points; NaN without pairs).  ``reliable``:
    ``p < threshold`` (``p <= threshold`` for the Appraise variant), False
    where ``p`` is NaN.
    """

    p: np.ndarray
    statistic: np.ndarray
    n_pairs: np.ndarray
    mean_diff: np.ndarray
    reliable: np.ndarray
    threshold: float
    test: str

    def __post_init__(self):
        g.freeze(self)


@dataclass(frozen=True)
class WelchReliabilityResult:
    """Per-worker ask-again vs bad-reference reliability (Graham et al. 2013 §5).

    ``p``: one-sided p that d1 (ask-again) is smaller than d2 (bad
    reference); NaN when not computable.  ``statistic``: Welch t or the U
    statistic of d1.  ``df``: Welch-Satterthwaite degrees of freedom (NaN for
    Mann-Whitney).  ``n_repeat_pairs`` / ``n_bad_pairs``: sample sizes.
    ``mean_d1`` / ``mean_d2``: the two mean differences.  ``reliable``:
    ``p < threshold``.
    """

    p: np.ndarray
    statistic: np.ndarray
    df: np.ndarray
    n_repeat_pairs: np.ndarray
    n_bad_pairs: np.ndarray
    mean_d1: np.ndarray
    mean_d2: np.ndarray
    reliable: np.ndarray
    threshold: float
    test: str

    def __post_init__(self):
        g.freeze(self)


@dataclass(frozen=True)
class AssumptionAResult:
    """Per-worker check of Assumption A (Graham et al. 2014 §3).

    ``p``: two-sided paired-t p-value of first vs repeat scores (NaN when not
    computable).  ``t``: the t statistic.  ``n_pairs``: repeat pairs.
    ``mean_diff``: mean of ``first - repeat``.  ``determined``: whether the
    outcome is known.  ``holds``: True where the assumption holds
    (``p >= alpha``, or all differences exactly zero), False where it is
    violated *or undetermined* -- read it together with ``determined``.
    """

    p: np.ndarray
    t: np.ndarray
    n_pairs: np.ndarray
    mean_diff: np.ndarray
    determined: np.ndarray
    holds: np.ndarray
    alpha: float

    def __post_init__(self):
        g.freeze(self)


# --------------------------------------------------------------------------
# vectorised t-tests


def _paired_t(worker, d, n_workers, min_pairs):
    """Vectorised one-sample t on per-worker differences ``d``.

    Returns ``(n, mean, t, df, computable, all_zero)``.  Not computable when
    fewer than ``max(min_pairs, 2)`` pairs or when all differences are
    exactly equal (sd = 0: t is 0/0 or +-inf; R's ``t.test`` stops with
    "data are essentially constant").
    """
    n, mean, sd = g.group_mean_sd(worker, d, n_workers, ddof=1)
    constant = g.group_all_equal(worker, d, n_workers)
    # sd > 0 also guards against squared deviations underflowing to zero
    computable = (n >= max(min_pairs, 2)) & ~constant & (sd > 0)
    t = np.full(n_workers, np.nan)
    ok = computable
    t[ok] = mean[ok] / (sd[ok] / np.sqrt(n[ok]))
    df = np.where(n >= 1, n - 1, 0).astype(np.float64)
    all_zero = constant & (mean == 0)
    return n, mean, t, df, computable, all_zero


def _check_method(method: str) -> str:
    if method not in RANK_METHODS:
        raise ValueError(f"method must be one of {RANK_METHODS}, got {method!r}")
    return method


def _check_threshold(threshold: float) -> float:
    threshold = float(threshold)
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    return threshold


def reliability(
    worker,
    bad,
    original,
    n_workers: int,
    test: str = "paired-t",
    min_pairs: int = DEFAULT_MIN_PAIRS,
    threshold: float = 0.05,
    method: str = "r",
) -> ReliabilityResult:
    """Per-worker reliability p-value from bad-reference pairs (docs/methods.md §4, Graham et al. 2014 §3).

    One row per bad-reference pair: ``worker`` code, the ``bad`` reference's
    raw score and the raw score the same worker gave its ``original`` system
    output (same HIT, system and segment).

    * ``test="paired-t"`` (default): one-sided **paired** Student t-test that
      bad references score lower, ``H1: mean(bad - original) < 0`` --
      ``scipy.stats.ttest_rel(bad, original, alternative="less")``, R
      ``t.test(bad, original, alternative="less", paired=TRUE)``.  Computed
      for all workers at once: mean and sample sd (ddof=1) of the
      differences via bincount, ``p = t.cdf(t, n - 1)``.
    * ``test="wilcoxon"``: one-sided Wilcoxon signed-rank test on the same
      pairs, H1: the differences ``d = bad - original`` tend to be
      negative; the statistic is R+ (R's ``V``), the rank sum of the
      positive differences.  A loop over workers (``_ranktests.wilcoxon_less``).
      Zero differences are dropped first (Wilcoxon's rule, R's and
      ``zero_method="wilcox"``): a pair scored the same carries no evidence
      about direction.  ``method="r"`` (default): R's
      ``wilcox.test(bad, original, paired=TRUE, alternative="less")`` --
      with m non-zero differences, the exact null distribution when
      m < 50 and there are neither ties nor zeros, otherwise the normal
      approximation with tie correction and continuity correction 0.5
      (integer slider scores tie often, so the approximation is common even
      for one HIT's 10 pairs); = ``scipy.stats.wilcoxon(d,
      zero_method="wilcox", correction=True, alternative="less",
      method="exact" | "asymptotic")`` respectively.  ``method="scipy"``:
      scipy 1.17's ``wilcoxon(..., zero_method="wilcox", correction=False,
      method="auto")`` (exact sign-flip distribution with ties or zeros up
      to n = 13, no continuity correction), the behaviour before R's rule.
      ``method`` is ignored by the t-test.

    Too few data -> ``p = NaN`` (not reliable): fewer than ``min_pairs``
    pairs; for the t-test also all differences exactly equal (sd = 0, t
    undefined -- scipy would return +-inf or NaN, R stops with "data are
    essentially constant"); for Wilcoxon, no non-zero difference.

    ``min_pairs`` defaults to 2, the mathematical minimum of the t-test
    (df = n - 1 >= 1) and the floor R's ``t.test`` itself imposes ("not
    enough observations"), so it gives p-values for the same workers as the
    R call docs/methods.md quotes.  A higher floor is not needed
    for protection against false "reliable" verdicts: with df = 1 the
    one-sided 5 % critical value is t < -6.31, so a handful of pairs can only
    pass with overwhelming, consistent evidence, and the Wilcoxon test cannot
    reach p < 0.05 below 5 non-zero pairs (smallest p = 2^-n).  Raise it if
    campaign policy wants, e.g., one complete HIT (10 pairs) first.

    ``reliable = p < threshold`` (strict; default 0.05).  Returns a
    :class:`ReliabilityResult` with arrays of length ``n_workers``.
    """
    threshold = _check_threshold(threshold)
    method = _check_method(method)
    worker = g.as_codes(worker, n_workers, "worker")
    bad = g.as_scores(bad, "bad")
    original = g.as_scores(original, "original")
    g.check_same_length(worker=worker, bad=bad, original=original)
    if min_pairs < 1:
        raise ValueError("min_pairs must be >= 1")
    d = bad - original

    if test == "paired-t":
        n, mean, t, df, computable, _ = _paired_t(worker, d, n_workers, min_pairs)
        p = np.full(n_workers, np.nan)
        p[computable] = stats.t.cdf(t[computable], df[computable])
        statistic = t
    elif test == "wilcoxon":
        n, mean, _ = g.group_mean_sd(worker, d, n_workers, ddof=1)
        nonzero = g.group_count(worker[d != 0], n_workers)
        p = np.full(n_workers, np.nan)
        statistic = np.full(n_workers, np.nan)
        todo = np.flatnonzero((n >= min_pairs) & (nonzero > 0))
        if todo.size:
            per_worker = g.group_split(worker, d, n_workers)
            for w in todo:
                statistic[w], p[w] = wilcoxon_less(per_worker[w], method=method)
    else:
        raise ValueError(f"test must be 'paired-t' or 'wilcoxon', got {test!r}")

    return ReliabilityResult(
        p=p,
        statistic=statistic,
        n_pairs=n,
        mean_diff=mean,
        reliable=np.nan_to_num(p, nan=np.inf) < threshold,
        threshold=threshold,
        test=test,
    )


def reliability_welch(
    repeat_worker,
    first,
    repeat,
    bad_worker,
    bad,
    original,
    n_workers: int,
    test: str = "welch",
    min_pairs: int = DEFAULT_MIN_PAIRS,
    threshold: float = 0.05,
    method: str = "r",
) -> WelchReliabilityResult:
    """Ask-again vs bad-reference reliability per worker (docs/methods.md §4; Graham et al. 2013 §5, Fig. 3).

    ``d1 = |first - repeat|`` over the worker's ask-again (exact repeat)
    pairs, ``d2 = original - bad`` over their bad-reference pairs (raw
    scores).  A conscientious worker gives repeats similar scores and
    degraded items clearly lower ones, so ``H1: d1 < d2``; Graham et al. 2013 §5: "the null
    hypothesis ... is that the score difference for ask again pairs is not
    less than the score difference for bad reference pairs".  Both tests are
    **one-sided and unpaired** (the two kinds of pairs are different items):

    * ``test="welch"``: Welch's unequal-variance t-test,
      ``scipy.stats.ttest_ind(d1, d2, equal_var=False, alternative="less")``;
      vectorised (bincount means and sample variances, Welch-Satterthwaite
      df, ``p = t.cdf(t, df)``).
    * ``test="mann-whitney"``: one-sided rank-sum test of d1 against d2,
      H1: d1 tends to be smaller; per-worker loop.  ``method="r"``
      (default): R's ``wilcox.test(d1, d2, alternative="less")`` -- exact
      null distribution when both samples have fewer than 50 values and
      nothing ties in the pooled sample, otherwise the normal approximation
      with tie correction and continuity correction 0.5 (=
      ``scipy.stats.mannwhitneyu(d1, d2, alternative="less",
      method="exact" | "asymptotic")``).  ``method="scipy"``: scipy's
      ``method="auto"`` (exact only when a sample has <= 8 values), the
      behaviour before R's rule.  ``method`` is ignored by Welch's test.

    Too few data -> ``p = NaN``: fewer than ``min_pairs`` pairs of either
    kind (default 2: a sample variance needs two values); for Welch also when
    both d1 and d2 are constant (zero standard error, t undefined).  For
    Mann-Whitney every value identical is *not* NaN: scipy's p (1.0) is kept.
    ``reliable = p < threshold`` (strict).
    """
    threshold = _check_threshold(threshold)
    method = _check_method(method)
    repeat_worker = g.as_codes(repeat_worker, n_workers, "repeat_worker")
    first = g.as_scores(first, "first")
    repeat = g.as_scores(repeat, "repeat")
    g.check_same_length(repeat_worker=repeat_worker, first=first, repeat=repeat)
    bad_worker = g.as_codes(bad_worker, n_workers, "bad_worker")
    bad = g.as_scores(bad, "bad")
    original = g.as_scores(original, "original")
    g.check_same_length(bad_worker=bad_worker, bad=bad, original=original)
    if min_pairs < 1:
        raise ValueError("min_pairs must be >= 1")

    d1 = np.abs(first - repeat)
    d2 = original - bad
    n1, m1, s1 = g.group_mean_sd(repeat_worker, d1, n_workers, ddof=1)
    n2, m2, s2 = g.group_mean_sd(bad_worker, d2, n_workers, ddof=1)
    p = np.full(n_workers, np.nan)
    statistic = np.full(n_workers, np.nan)
    df = np.full(n_workers, np.nan)

    if test == "welch":
        const1 = g.group_all_equal(repeat_worker, d1, n_workers)
        const2 = g.group_all_equal(bad_worker, d2, n_workers)
        k = max(min_pairs, 2)
        ok = (n1 >= k) & (n2 >= k) & ~(const1 & const2)
        a = np.where(ok, s1**2 / np.maximum(n1, 1), np.nan)
        b = np.where(ok, s2**2 / np.maximum(n2, 1), np.nan)
        # exactly-constant samples have variance 0 (not a rounding residue)
        a = np.where(const1, 0.0, a)
        b = np.where(const2, 0.0, b)
        ok &= (a + b) > 0  # also catches variances that underflow to zero
        with np.errstate(divide="ignore", invalid="ignore"):
            statistic[ok] = (m1[ok] - m2[ok]) / np.sqrt(a[ok] + b[ok])
            df[ok] = (a[ok] + b[ok]) ** 2 / (a[ok] ** 2 / (n1[ok] - 1) + b[ok] ** 2 / (n2[ok] - 1))
        p[ok] = stats.t.cdf(statistic[ok], df[ok])
    elif test == "mann-whitney":
        ok = (n1 >= min_pairs) & (n2 >= min_pairs)
        todo = np.flatnonzero(ok)
        if todo.size:
            s_d1 = g.group_split(repeat_worker, d1, n_workers)
            s_d2 = g.group_split(bad_worker, d2, n_workers)
            for w in todo:
                u1, _, p_less = mwu(RankSample(s_d1[w]), RankSample(s_d2[w]), method=method)
                statistic[w] = u1
                p[w] = p_less
    else:
        raise ValueError(f"test must be 'welch' or 'mann-whitney', got {test!r}")

    return WelchReliabilityResult(
        p=p,
        statistic=statistic,
        df=df,
        n_repeat_pairs=n1,
        n_bad_pairs=n2,
        mean_d1=m1,
        mean_d2=m2,
        reliable=np.nan_to_num(p, nan=np.inf) < threshold,
        threshold=threshold,
        test=test,
    )


def reliability_appraise(
    worker,
    pair,
    is_bad,
    score,
    n_workers: int,
    n_pairs_total: int,
    threshold: float = 0.01,
    min_pairs: int = 1,
) -> ReliabilityResult:
    """Appraise's annotator quality control (docs/methods.md §4, third option).

    What Appraise does (``Dashboard/utils.py:run_quality_control`` and
    ``Campaign/views.py:stat_reliable_testing`` in AppraiseDev/Appraise; an
    older ``ComputeAnnotatorMetrics`` command ran a two-sided signed-rank test
    on bad - tgt deltas instead): for one user it takes every completed judgment of item type
    ``TGT`` (system output) or ``BAD`` (bad reference), turns each score into
    a z-score with that user's mean and sample sd (n - 1; an sd below 1 is
    replaced by 1), keys each judgment by ``(itemID, targetID)`` -- shared by
    a bad reference and its original -- averages the z-scores per key and
    type, keeps the keys that have both a BAD and a TGT mean, and runs
    ``scipy.stats.mannwhitneyu(bad_means, tgt_means, alternative="less")``:
    an **unpaired, one-sided** rank-sum test with scipy's defaults (keys are
    matched only to choose which items enter, the pairing is then dropped).
    Because Appraise runs scipy, this test keeps scipy's ``method="auto"``
    (exact null only when a sample has <= 8 values and nothing ties), not
    R's rule.
    A user passes when ``p <= 0.010`` (``MAX_WILCOXON_PVALUE``; Appraise also
    requires >= 10 minutes of annotation time, which is not a statistic and
    is left to the caller).

    Here, one row per TGT or BAD judgment: ``worker`` code, ``pair`` code in
    ``[0, n_pairs_total)`` (the same code for a bad reference and its
    original, i.e. Appraise's ``(itemID, targetID)`` key), ``is_bad``
    (True for BAD, False for TGT) and ``score``.  ``score`` may be raw or
    z-scores: a per-worker z-transform is a positive affine map, which
    changes neither the per-key means' order nor the ranks, so the p-value
    is identical either way (a test checks this) -- Appraise's sd tweak is
    irrelevant for the same reason.

    Too few data -> ``p = NaN``: no key (fewer than ``min_pairs``, default 1
    as in Appraise) with both a BAD and a TGT judgment.  Appraise shows such a
    user as "n/a" and (in ``run_quality_control``) lets them *pass*; here
    they are not reliable -- the caller decides.  All values identical gives
    scipy's p (1.0; old scipy raised instead).  ``reliable = p <= threshold``
    (inclusive, as Appraise).  ``n_pairs`` counts matched keys, ``mean_diff``
    is the mean of ``bad_mean - tgt_mean`` per key in the units of ``score``,
    ``statistic`` is U of the bad means.
    """
    threshold = _check_threshold(threshold)
    worker = g.as_codes(worker, n_workers, "worker")
    pair = g.as_codes(pair, n_pairs_total, "pair")
    is_bad = np.asarray(is_bad, dtype=bool)
    score = g.as_scores(score, "score")
    g.check_same_length(worker=worker, pair=pair, is_bad=is_bad, score=score)

    # mean score per (worker, pair, kind) cell
    key = (worker * n_pairs_total + pair) * 2 + is_bad
    cells, inverse = g.factorize(key, n_workers * n_pairs_total * 2)
    cell_mean = g.group_mean(inverse, score, cells.size)
    cell_wp = cells // 2
    cell_bad = (cells % 2).astype(bool)
    # cells are sorted by (worker, pair, kind): a matched key is a TGT cell
    # (kind 0) immediately followed by a BAD cell (kind 1) of the same key
    matched = np.flatnonzero((cell_wp[1:] == cell_wp[:-1]) & cell_bad[1:] & ~cell_bad[:-1])
    m_worker = cell_wp[matched] // n_pairs_total
    tgt_mean = cell_mean[matched]
    bad_mean = cell_mean[matched + 1]

    n = g.group_count(m_worker, n_workers)
    mean_diff = g.group_mean(m_worker, bad_mean - tgt_mean, n_workers)
    p = np.full(n_workers, np.nan)
    statistic = np.full(n_workers, np.nan)
    todo = np.flatnonzero(n >= max(min_pairs, 1))
    if todo.size:
        bads = g.group_split(m_worker, bad_mean, n_workers)
        tgts = g.group_split(m_worker, tgt_mean, n_workers)
        for w in todo:
            # Appraise runs scipy: keep scipy's "auto" choice of null distribution
            u1, _, p_less = mwu(RankSample(bads[w]), RankSample(tgts[w]), method="scipy")
            statistic[w] = u1
            p[w] = p_less

    return ReliabilityResult(
        p=p,
        statistic=statistic,
        n_pairs=n,
        mean_diff=mean_diff,
        reliable=np.nan_to_num(p, nan=np.inf) <= threshold,
        threshold=threshold,
        test="appraise",
    )


def assumption_a(
    worker,
    first,
    repeat,
    n_workers: int,
    alpha: float = 0.05,
    min_pairs: int = DEFAULT_MIN_PAIRS,
) -> AssumptionAResult:
    """Assumption A per worker: repeat scores don't differ from first scores (Graham et al. 2014 §3, Table 1).

    One row per ask-again pair: ``worker``, the ``first`` score and the
    ``repeat`` score of the same translation.  Two-sided **paired** Student
    t-test, ``scipy.stats.ttest_rel(first, repeat)`` (``alternative=
    "two-sided"``), vectorised; the assumption holds when ``p >= alpha``
    (no significant difference; default 0.05).

    Too few data: fewer than ``min_pairs`` (default 2, the t-test minimum)
    pairs, or all differences equal but not zero (t undefined), give
    ``p = NaN`` and ``determined = False`` (``holds`` False -- report it as
    unknown, not as a violation).  All differences exactly zero also has an
    undefined t (``p = NaN``), but the two means are then identical, so the
    assumption trivially holds: ``determined = holds = True``.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    worker = g.as_codes(worker, n_workers, "worker")
    first = g.as_scores(first, "first")
    repeat = g.as_scores(repeat, "repeat")
    g.check_same_length(worker=worker, first=first, repeat=repeat)
    if min_pairs < 1:
        raise ValueError("min_pairs must be >= 1")
    d = first - repeat
    n, mean, t, df, computable, all_zero = _paired_t(worker, d, n_workers, min_pairs)
    p = np.full(n_workers, np.nan)
    p[computable] = 2.0 * stats.t.sf(np.abs(t[computable]), df[computable])
    enough = n >= max(min_pairs, 2)
    zero_ok = enough & all_zero
    determined = computable | zero_ok
    holds = (computable & (np.nan_to_num(p, nan=-1.0) >= alpha)) | zero_ok
    return AssumptionAResult(
        p=p,
        t=t,
        n_pairs=n,
        mean_diff=mean,
        determined=determined,
        holds=holds,
        alpha=float(alpha),
    )


def assumption_a_share(result: AssumptionAResult, reliable) -> dict:
    """Share of reliable workers for whom Assumption A holds (docs/methods.md §4; Graham et al. 2014 Table 1).

    ``reliable``: boolean array per worker (e.g. ``ReliabilityResult.reliable``).
    Returns a dict with ``n_reliable``, ``n_determined`` (reliable workers
    whose outcome is known), ``n_holds`` and ``share = n_holds /
    n_determined`` -- NaN when no reliable worker has a determined outcome
    (a share of nothing is not 0 %).
    """
    reliable = np.asarray(reliable, dtype=bool)
    if reliable.shape != result.holds.shape:
        raise ValueError("reliable must have one entry per worker")
    n_reliable = int(reliable.sum())
    n_determined = int((reliable & result.determined).sum())
    n_holds = int((reliable & result.determined & result.holds).sum())
    share = n_holds / n_determined if n_determined else math.nan
    return {
        "n_reliable": n_reliable,
        "n_determined": n_determined,
        "n_holds": n_holds,
        "share": share,
    }
