"""Mann-Whitney U (Wilcoxon rank-sum) without re-ranking for every pair (internal).

``scipy.stats.mannwhitneyu`` re-ranks the concatenation of both samples on
every call.  For a 20-system significance matrix (380 ordered pairs of
~3,000 translations) or a per-worker loop that overhead dominates, so this
module sorts each sample once (:class:`RankSample`) and counts, with
``np.searchsorted``, how many values of the other sample lie below / tie
with each distinct value.  That gives the same U statistic and the same tie
term as ranking, and the p-value is computed with scipy's own formula:

* ``method="auto"`` as in scipy 1.17: the exact null distribution when one
  sample has at most 8 values and there are no ties in the pooled sample
  (delegated to scipy itself), otherwise the normal approximation;
* normal approximation with tie correction and continuity correction
  (``use_continuity=True``), ``p = Phi(-(U - n1*n2/2 - 0.5) / s)``.

Results equal ``scipy.stats.mannwhitneyu(x, y, alternative=...)`` called
with its defaults (checked by property tests).

:func:`wilcoxon_less` does the same for the one-sided Wilcoxon signed-rank
test: scipy 1.17 runs a 2^n sign-flip ``permutation_test`` for small samples
with ties or zeros (~0.3 s per call, minutes for a campaign), whereas the
same null distribution is an exact convolution over the (doubled, hence
integer) ranks that takes microseconds.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

__all__ = ["RankSample", "mwu", "wilcoxon_less"]


class RankSample:
    """One sample prepared for repeated rank-sum tests (sorted, distinct values, counts)."""

    __slots__ = ("raw", "sorted", "values", "counts", "n", "has_ties")

    def __init__(self, values: np.ndarray):
        raw = np.asarray(values, dtype=np.float64)
        self.raw = raw
        self.sorted = np.sort(raw)
        self.n = int(raw.size)
        if self.n:
            starts = np.flatnonzero(np.r_[True, self.sorted[1:] != self.sorted[:-1]])
            self.values = self.sorted[starts]
            self.counts = np.diff(np.r_[starts, self.n]).astype(np.float64)
        else:
            self.values = self.sorted
            self.counts = np.zeros(0)
        self.has_ties = bool(self.values.size < self.n)


def _tie_term(counts: np.ndarray) -> float:
    return float(np.sum(counts**3 - counts))


def mwu(x: RankSample, y: RankSample) -> tuple[float, float, float]:
    """Mann-Whitney U of ``x`` against ``y`` in both one-sided directions.

    Returns ``(U1, p_greater, p_less)`` where ``U1`` is the U statistic of
    ``x`` (``scipy.stats.mannwhitneyu(x, y).statistic``), ``p_greater`` is
    the one-sided p-value that ``x`` tends to be larger than ``y``
    (``alternative="greater"``) and ``p_less`` that it tends to be smaller
    (``alternative="less"``).  NaN when either sample is empty.
    """
    n1, n2 = x.n, y.n
    if n1 == 0 or n2 == 0:
        return math.nan, math.nan, math.nan
    lt = np.searchsorted(y.sorted, x.values, side="left")
    le = np.searchsorted(y.sorted, x.values, side="right")
    eq = (le - lt).astype(np.float64)
    # U1 = sum over x of (#y below x + half the #y tied with x); halves are
    # exact in binary floating point, so this equals scipy's R1 - n1(n1+1)/2.
    u1 = float(np.sum(x.counts * lt) + 0.5 * np.sum(x.counts * eq))
    u2 = n1 * n2 - u1
    pooled = x.counts + eq
    tie_term = _tie_term(pooled) + _tie_term(y.counts) - _tie_term(eq)
    ties = x.has_ties or y.has_ties or bool(np.any(eq > 0))

    if (n1 <= 8 or n2 <= 8) and not ties:
        # scipy's "auto" picks the exact null distribution here; use scipy.
        p_greater = float(stats.mannwhitneyu(x.raw, y.raw, alternative="greater").pvalue)
        p_less = float(stats.mannwhitneyu(x.raw, y.raw, alternative="less").pvalue)
        return u1, p_greater, p_less

    # Same expression as scipy.stats._mannwhitneyu._get_mwu_z.
    mu = n1 * n2 / 2
    n = n1 + n2
    s = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
    with np.errstate(divide="ignore", invalid="ignore"):
        z_greater = np.float64((u1 - mu) - 0.5) / np.float64(s)
        z_less = np.float64((u2 - mu) - 0.5) / np.float64(s)
    p_greater = float(np.clip(special.ndtr(-z_greater), 0.0, 1.0))
    p_less = float(np.clip(special.ndtr(-z_less), 0.0, 1.0))
    return u1, p_greater, p_less


def _signed_rank_cdf(ranks: np.ndarray, observed: float) -> float:
    """P(sum of a random subset of ``ranks`` <= observed), each subset equally likely.

    Ranks are average ranks, i.e. multiples of 1/2, so doubled they are
    integers and the null distribution of R+ (each rank counted with
    probability 1/2, independently) is an exact integer convolution.
    """
    r2 = np.rint(2.0 * ranks).astype(np.int64)
    total = int(r2.sum())
    counts = np.zeros(total + 1)
    counts[0] = 1.0
    top = 0
    for r in r2:
        counts[r : top + r + 1] += counts[: top + 1].copy()
        top += r
    obs2 = int(np.floor(2.0 * observed + 1e-9))
    return float(counts[: obs2 + 1].sum() / counts.sum())


def wilcoxon_less(d: np.ndarray) -> tuple[float, float]:
    """One-sided Wilcoxon signed-rank test that ``d`` tends to be negative.

    Equals ``scipy.stats.wilcoxon(d, zero_method="wilcox", correction=False,
    alternative="less", method="auto")`` (scipy 1.17): zeros are dropped,
    ``|d|`` of the rest get average ranks, R+ is the rank sum of positive
    differences.  Null distribution as scipy's "auto" chooses it, with n the
    sample size *including* zeros:

    * n <= 50 without ties or zeros: exact;
    * ties or zeros and n <= 13: exact sign-flip distribution (what scipy's
      exhaustive permutation test enumerates);
    * otherwise the normal approximation with tie correction, no continuity
      correction.

    Returns ``(R+, p)``; NaN when no difference is non-zero.
    """
    d = np.asarray(d, dtype=np.float64)
    n = d.size
    nz = d[d != 0]
    m = nz.size
    if m == 0:
        return math.nan, math.nan
    ranks = stats.rankdata(np.abs(nz))
    r_plus = float(np.sum(ranks[nz > 0]))
    has_ties = np.unique(ranks).size < m
    has_zeros = m < n
    if n <= 50 and (n <= 13 or not (has_ties or has_zeros)):
        return r_plus, _signed_rank_cdf(ranks, r_plus)
    _, t = np.unique(np.abs(nz), return_counts=True)
    t = t.astype(np.float64)
    mn = m * (m + 1.0) * 0.25
    se = m * (m + 1.0) * (2.0 * m + 1.0)
    se = math.sqrt((se - np.sum(t**3 - t) / 2) / 24)
    z = (r_plus - mn) / se
    return r_plus, float(special.ndtr(z))
