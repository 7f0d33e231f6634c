"""Worker reliability from quality-control pairs (docs/methods.md §4): the paired tests.

Per-worker tests, each returning one p-value per worker code
``0..n_workers-1`` (NaN = "not computable", and such a worker is never
reliable):

* :func:`reliability` -- the default: one-sided *paired* test that a
  worker's bad-reference scores are lower than the scores they gave the
  originals (paired Student t, or the Wilcoxon signed-rank test);
* :func:`assumption_a` / :func:`assumption_a_share` -- Graham et al. 2014 §3 Table 1:
  first vs repeat scores should not differ (two-sided paired t).

The unpaired variants -- Graham et al. 2013's ask-again vs bad-reference test
(:func:`reliability_welch`) and Appraise's (:func:`reliability_appraise`) -- are in
``reliability_unpaired.py``.

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
from ._ranktests import wilcoxon_less

__all__ = [
    "ReliabilityResult",
    "AssumptionAResult",
    "reliability",
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


def check_method(method: str) -> str:
    if method not in RANK_METHODS:
        raise ValueError(f"method must be one of {RANK_METHODS}, got {method!r}")
    return method


def check_threshold(threshold: float) -> float:
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
    threshold = check_threshold(threshold)
    method = check_method(method)
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
