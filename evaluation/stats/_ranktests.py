"""Mann-Whitney U and Wilcoxon signed-rank tests, with R's and scipy's conventions (internal).

``scipy.stats.mannwhitneyu`` re-ranks the concatenation of both samples on
every call.  For a 20-system significance matrix (380 ordered pairs of
~3,000 translations) or a per-worker loop that overhead dominates, so this
module sorts each sample once (:class:`RankSample`) and counts, with
``np.searchsorted``, how many values of the other sample lie below / tie
with each distinct value.  That gives the same U statistic and the same tie
term as ranking.

Two conventions for choosing the null distribution (``method``):

* ``"r"`` -- R's ``wilcox.test`` defaults (docs/methods.md §4.2, §5.3).
  Rank sum (unpaired): the exact null distribution when **both** samples
  have fewer than 50 values and nothing ties in the pooled sample,
  otherwise the normal approximation with tie correction and continuity
  correction (0.5 towards the mean).  Signed rank (paired): zeros dropped
  first; exact when fewer than 50 non-zero differences remain and there
  are neither ties nor zeros, otherwise the normal approximation with tie
  and continuity correction.
* ``"scipy"`` -- scipy 1.17's defaults, ``method="auto"``.  Rank sum:
  exact when one sample has at most 8 values and nothing ties, otherwise
  the same normal approximation.  Signed rank (``wilcoxon(...,
  zero_method="wilcox", correction=False)``): exact when n <= 50 (n
  counting zeros) without ties or zeros, an exhaustive sign-flip
  distribution when there are ties or zeros and n <= 13, otherwise the
  normal approximation **without** continuity correction.

Exact null distributions are computed once per sample size and kept in a
module-level cache: the rank-sum distribution of U for (n1, n2) as the
coefficients of the Gaussian binomial [n1+n2 choose n1]_q in exact integer
arithmetic (each tail probability is then one correctly rounded division),
the signed-rank distribution of R+ for n by an integer convolution.  A
p-value is then a table look-up, so a significance matrix costs no more on
the exact path than on the normal one.

scipy runs a 2^n sign-flip ``permutation_test`` for the scipy convention's
small samples with ties or zeros (~0.3 s per call, minutes for a campaign);
the same null distribution is an exact convolution over the (doubled, hence
integer) ranks that takes microseconds (:func:`_signed_rank_cdf`).

:func:`rank_sum_greater` runs the rank-sum test with R's rule row by row over many simulated samples at
once (the power simulation's, docs/methods.md §12.3).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special, stats

__all__ = ["RankSample", "mwu", "wilcoxon_less", "rank_sum_greater", "METHODS", "EXACT_BELOW"]

#: Conventions for choosing the null distribution (see the module docstring).
METHODS = ("r", "scipy")

#: R's ``wilcox.test``: exact only when every sample has fewer values than this.
EXACT_BELOW = 50

#: scipy's ``mannwhitneyu(method="auto")``: exact when a sample has at most this many values.
SCIPY_EXACT_MAX = 8

# caches of exact null distributions: (n1, n2) -> P(U <= k), n -> P(R+ <= k)
_U_CDF: dict[tuple[int, int], np.ndarray] = {}
_SIGNED_RANK_CDF: dict[int, np.ndarray] = {}
_CACHE_LIMIT = 4096


def _check_method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return method


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


def _u_cdf(n1: int, n2: int) -> np.ndarray:
    """``cdf[k] = P(U <= k)``, k = 0..n1*n2, U the Mann-Whitney statistic under H0 without ties.

    The number of rank splits giving U = k is the coefficient of q^k in the
    Gaussian binomial ``prod_{i=1..n1} (1 - q^(n2+i)) / (1 - q^i)``;
    multiplied out factor by factor in exact integers (the partial products
    are themselves Gaussian binomials, hence polynomials, so every division
    is exact), summed, and divided by C(n1+n2, n1) with correct rounding.
    Cached per (min, max) of the sizes (the distribution is symmetric in
    them).
    """
    key = (min(n1, n2), max(n1, n2))
    cdf = _U_CDF.get(key)
    if cdf is not None:
        return cdf
    a_n, b_n = key
    size = a_n * b_n + 1
    coef = np.zeros(size, dtype=object)
    coef[:] = 0
    coef[0] = 1
    for i in range(1, a_n + 1):
        m = b_n + i
        if m < size:  # times (1 - q^m)
            nxt = coef.copy()
            nxt[m:] = coef[m:] - coef[: size - m]
            coef = nxt
        # divided by (1 - q^i): a running sum with stride i
        pad = np.zeros((-size) % i, dtype=object)
        pad[:] = 0
        coef = np.cumsum(np.concatenate([coef, pad]).reshape(-1, i), axis=0).reshape(-1)[:size]
    cum = np.cumsum(coef)
    cdf = (cum / cum[-1]).astype(np.float64)  # Python int / int: correctly rounded
    cdf.flags.writeable = False
    if len(_U_CDF) >= _CACHE_LIMIT:
        _U_CDF.clear()
    _U_CDF[key] = cdf
    return cdf


def _exact_mwu(u1: float, n1: int, n2: int) -> tuple[float, float]:
    """Exact one-sided p-values (greater, less) for an integer U1 without ties."""
    cdf = _u_cdf(n1, n2)
    k = int(round(u1))
    # P(U1 >= k) = P(U1 <= n1*n2 - k) by symmetry: both tails are sums of small terms
    return float(cdf[n1 * n2 - k]), float(cdf[k])


def mwu(x: RankSample, y: RankSample, method: str = "scipy") -> tuple[float, float, float]:
    """Mann-Whitney U of ``x`` against ``y`` in both one-sided directions (docs/methods.md §5.3).

    Returns ``(U1, p_greater, p_less)`` where ``U1`` is the U statistic of
    ``x`` (``scipy.stats.mannwhitneyu(x, y).statistic``; R's ``W``),
    ``p_greater`` is the one-sided p-value that ``x`` tends to be larger
    than ``y`` (``alternative="greater"``) and ``p_less`` that it tends to
    be smaller (``alternative="less"``).  NaN when either sample is empty.

    ``method="r"``: R's ``wilcox.test(x, y, alternative=...)`` -- exact null
    distribution when n1 < 50 and n2 < 50 and no value ties in the pooled
    sample (= ``scipy.stats.mannwhitneyu(..., method="exact")``), otherwise
    the normal approximation with tie-corrected variance and continuity
    correction 0.5 (= ``method="asymptotic", use_continuity=True``).
    ``method="scipy"`` (the default, for callers written against scipy):
    scipy's ``method="auto"`` -- exact when n1 <= 8 or n2 <= 8 and nothing
    ties, otherwise the same normal approximation.
    """
    _check_method(method)
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

    if method == "r":
        exact = n1 < EXACT_BELOW and n2 < EXACT_BELOW and not ties
    else:
        exact = (n1 <= SCIPY_EXACT_MAX or n2 <= SCIPY_EXACT_MAX) and not ties
    if exact:
        p_greater, p_less = _exact_mwu(u1, n1, n2)
        return u1, p_greater, p_less

    # Same expression as scipy.stats._mannwhitneyu._get_mwu_z and R's wilcox.test:
    # z = (U - n1 n2 / 2 - 0.5) / sigma, sigma tie-corrected.
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


def _signed_rank_exact_cdf(n: int) -> np.ndarray:
    """``cdf[k] = P(R+ <= k)`` for ranks 1..n without ties (R's ``psignrank``), cached per n.

    Counts are integers below 2^n <= 2^49, exact in float64; the division by
    2^n is exact too.
    """
    cdf = _SIGNED_RANK_CDF.get(n)
    if cdf is not None:
        return cdf
    top_total = n * (n + 1) // 2
    counts = np.zeros(top_total + 1)
    counts[0] = 1.0
    top = 0
    for r in range(1, n + 1):
        counts[r : top + r + 1] += counts[: top + 1].copy()
        top += r
    cdf = np.cumsum(counts) / 2.0**n
    cdf.flags.writeable = False
    _SIGNED_RANK_CDF[n] = cdf
    return cdf


def wilcoxon_less(d: np.ndarray, method: str = "r") -> tuple[float, float]:
    """One-sided Wilcoxon signed-rank test that ``d`` tends to be negative (docs/methods.md §4.2).

    Zeros are dropped (``zero_method="wilcox"``; Wilcoxon's rule and R's),
    ``|d|`` of the rest get average ranks, R+ (R's ``V``) is the rank sum of
    the positive differences, ``p = P(R+ <= observed)``.

    ``method="r"`` (default): R's ``wilcox.test(bad, original, paired=TRUE,
    alternative="less")``.  With m non-zero differences: exact (``psignrank``)
    when m < 50 and there are neither ties nor zeros
    (= ``scipy.stats.wilcoxon(d, zero_method="wilcox",
    alternative="less", method="exact")``); otherwise the normal
    approximation with tie correction and continuity correction,
    ``z = (R+ - m(m+1)/4 + 0.5) / sqrt(m(m+1)(2m+1)/24 - sum(t^3 - t)/48)``,
    ``p = Phi(z)`` (= ``scipy.stats.wilcoxon(d, zero_method="wilcox",
    correction=True, alternative="less", method="asymptotic")``).

    ``method="scipy"``: scipy 1.17's ``wilcoxon(d, zero_method="wilcox",
    correction=False, alternative="less", method="auto")``, with n the sample
    size *including* zeros: exact when n <= 50 without ties or zeros; the
    exact sign-flip distribution of the mid-ranks (what scipy's exhaustive
    permutation test enumerates) when there are ties or zeros and n <= 13;
    otherwise the normal approximation with tie correction and no
    continuity correction.

    Returns ``(R+, p)``; NaN when no difference is non-zero.
    """
    _check_method(method)
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
    if method == "r":
        if m < EXACT_BELOW and not (has_ties or has_zeros):
            return r_plus, float(_signed_rank_exact_cdf(m)[int(round(r_plus))])
        correction = 0.5
    else:
        if n <= 50 and (n <= 13 or not (has_ties or has_zeros)):
            return r_plus, _signed_rank_cdf(ranks, r_plus)
        correction = 0.0
    _, t = np.unique(np.abs(nz), return_counts=True)
    t = t.astype(np.float64)
    mn = m * (m + 1.0) * 0.25
    se = m * (m + 1.0) * (2.0 * m + 1.0)
    se = math.sqrt((se - np.sum(t**3 - t) / 2) / 24)
    z = (r_plus - mn + correction) / se
    return r_plus, float(special.ndtr(z))


def rank_sum_greater(x, y) -> np.ndarray:
    """Row-wise one-sided Wilcoxon rank-sum (Mann-Whitney U) p-values, H1: row i of ``x`` tends to be larger
    than row i of ``y`` (docs/methods.md §5.3) — the test of the DA ranking, vectorised over rows.

    ``x`` (R × n1) and ``y`` (R × n2) are unpaired samples. Mid-ranks for ties. R's rule, as
    ``evaluation.stats.significance(method="r")``: the exact null distribution when n1 < 50, n2 < 50 and the
    row has no tie (= ``scipy.stats.mannwhitneyu(x, y, alternative="greater", method="exact")``); otherwise
    the normal approximation with tie-corrected variance and continuity correction 0.5
    (= ``method="asymptotic", use_continuity=True``). One sort per row, no loop over rows.
    """
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    y = np.atleast_2d(np.asarray(y, dtype=np.float64))
    rows, n1 = x.shape
    n2 = y.shape[1]
    if y.shape[0] != rows:
        raise ValueError(f"x and y need the same number of rows, got {rows} and {y.shape[0]}")
    if n1 == 0 or n2 == 0:
        return np.full(rows, np.nan)
    n = n1 + n2
    pooled = np.concatenate([x, y], axis=1)
    order = np.argsort(pooled, axis=1)  # tied values share their mid-rank, so their order does not matter
    ordered = np.take_along_axis(pooled, order, axis=1)
    starts = np.ones((rows, n), bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    position = np.arange(n)
    if starts.all():  # no ties anywhere (simulated scores, mostly): ranks are positions
        tie_term = np.zeros(rows)
        rank_sum = np.sum(np.where(order < n1, position + 1.0, 0.0), axis=1)
    else:
        ends = np.ones((rows, n), bool)
        ends[:, :-1] = starts[:, 1:]
        low = np.maximum.accumulate(np.where(starts, position, 0), axis=1)
        high = np.minimum.accumulate(np.where(ends, position, n - 1)[:, ::-1], axis=1)[:, ::-1]
        ties = high - low + 1
        tie_term = np.sum(ties.astype(np.float64) ** 2 - 1, axis=1)  # Σ over tie groups of t³ − t
        rank_sum = np.sum(np.where(order < n1, (low + high) / 2 + 1, 0.0), axis=1)  # of x's values
    u1 = rank_sum - n1 * (n1 + 1) / 2

    sigma = np.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1))))
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.clip(special.ndtr(-((u1 - n1 * n2 / 2) - 0.5) / sigma), 0.0, 1.0)
    if n1 < EXACT_BELOW and n2 < EXACT_BELOW:
        exact = tie_term == 0
        if exact.any():
            cdf = _u_cdf(n1, n2)
            p[exact] = cdf[n1 * n2 - np.rint(u1[exact]).astype(np.int64)]
    return p
