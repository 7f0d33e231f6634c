"""Worker reliability from quality-control pairs (docs/methods.md §4): the unpaired tests.

* :func:`reliability_welch` -- Graham et al. 2013 §5 / Fig. 3: one-sided *unpaired* test
  that ask-again differences ``d1 = |first - repeat|`` are smaller than
  bad-reference differences ``d2 = original - bad`` (Welch t, or
  Mann-Whitney U);
* :func:`reliability_appraise` -- what Appraise runs (unpaired Mann-Whitney
  of bad vs original, ``p <= 0.01``).

The default paired test and the Assumption A check are in ``reliability.py``; the same conventions
hold (one p-value per worker code, NaN = "not computable" and never reliable).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from . import _grouping as g
from ._ranktests import RankSample, mwu
from .reliability import DEFAULT_MIN_PAIRS, ReliabilityResult, check_method, check_threshold

__all__ = ["WelchReliabilityResult", "reliability_welch", "reliability_appraise"]


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
    threshold = check_threshold(threshold)
    method = check_method(method)
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
    threshold = check_threshold(threshold)
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
