"""Consistency and agreement of continuous scores (docs/methods.md §6; Graham et al. 2013 §6, Tables 1-3)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _grouping as g

__all__ = [
    "DiffStats",
    "Kappa",
    "score_differences",
    "cohen_kappa",
    "bin_equal_width",
    "bin_percentile",
]


@dataclass(frozen=True)
class DiffStats:
    """Mean and sample sd of absolute score differences over ``n`` pairs (NaN when not computable)."""

    n: int
    mean: float
    sd: float


@dataclass(frozen=True)
class Kappa:
    """Cohen's kappa over ``n`` aligned pairs.

    ``p_observed`` = Pr(a), ``p_expected`` = Pr(e), ``kappa`` = (Pr(a) -
    Pr(e)) / (1 - Pr(e)); NaN when not computable.  ``table`` is the
    ``n_categories x n_categories`` contingency table (rows: first rater).
    """

    n: int
    n_categories: int
    p_observed: float
    p_expected: float
    kappa: float
    table: np.ndarray

    def __post_init__(self):
        g.freeze(self)


def score_differences(a, b) -> DiffStats:
    """Mean and sd of ``|a - b|`` over aligned pairs (docs/methods.md §6; Graham et al. 2013 Table 1).

    Ask-again pairs: same judge (``a`` = first score, ``b`` = the same
    worker's repeat) or distinct judges (two workers' scores of the same
    translation) -- the caller builds the pairs, this just summarises them.
    ``sd`` is the sample sd (ddof=1).  No pairs -> mean and sd NaN; one pair
    -> sd NaN (a sample sd needs two values).
    """
    a = g.as_scores(a, "a")
    b = g.as_scores(b, "b")
    n = g.check_same_length(a=a, b=b)
    d = np.abs(a - b)
    mean = float(d.mean()) if n else math.nan
    sd = float(d.std(ddof=1)) if n >= 2 else math.nan
    return DiffStats(n=int(n), mean=mean, sd=sd)


def cohen_kappa(a, b, n_categories: int | None = None) -> Kappa:
    """Cohen's kappa of two aligned label arrays (docs/methods.md §6; Graham et al. 2013 §6 Tables 2-3).

    ``a``, ``b``: integer category codes ``0..k-1`` for the same items from
    the first and second rating (intra-annotator: a worker's first score and
    repeat; inter-annotator: two workers).  ``kappa = (Pr(a) - Pr(e)) /
    (1 - Pr(e))`` with Pr(a) the share of identical labels and Pr(e) =
    sum_k p_a(k) * p_b(k) from each rating's *own* marginal distribution
    (Cohen 1960).  ``n_categories`` defaults to ``max label + 1``.

    Not computable -> NaN: no pairs; Pr(e) = 1 (both ratings use one and the
    same single category, so chance agreement is already perfect).
    """
    a = np.asarray(a)
    b = np.asarray(b)
    g.check_same_length(a=a, b=b)
    n = int(a.size)
    if n_categories is None:
        n_categories = int(max(a.max(initial=-1), b.max(initial=-1))) + 1
    k = int(n_categories)
    a = g.as_codes(a, k, "a")
    b = g.as_codes(b, k, "b")
    table = np.bincount(a * k + b, minlength=k * k).reshape(k, k)
    if n == 0:
        return Kappa(n=0, n_categories=k, p_observed=math.nan, p_expected=math.nan,
                     kappa=math.nan, table=table)
    p_obs = float(np.trace(table)) / n
    p_exp = float(np.dot(table.sum(axis=1) / n, table.sum(axis=0) / n))
    kappa = (p_obs - p_exp) / (1.0 - p_exp) if p_exp < 1.0 else math.nan
    return Kappa(n=n, n_categories=k, p_observed=p_obs, p_expected=p_exp, kappa=kappa, table=table)


def bin_equal_width(scores, k: int, low: float = 0.0, high: float = 100.0) -> np.ndarray:
    """Map continuous scores to ``k`` equal-width categories 0..k-1 (Graham et al. 2013 §6: k = 5, 4, 2).

    Bins are left-closed ``[low + i*w, low + (i+1)*w)`` with ``w = (high -
    low) / k``, except the top bin, which also takes ``high``: for k = 5 on
    0-100, 0-19.99.. -> 0, 20-39.99.. -> 1, ..., 80-100 -> 4.  Computed as
    ``floor((score - low) * k / (high - low))`` (multiplying first keeps
    integer scores exact at the edges).  Scores outside ``[low, high]`` or
    NaN raise ValueError (out-of-scale data is an upstream error).
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    if not high > low:
        raise ValueError("high must be greater than low")
    s = g.as_scores(scores, "scores")
    if s.size and (s.min() < low or s.max() > high):
        raise ValueError(f"scores must lie in [{low}, {high}]")
    cat = np.floor((s - low) * k / (high - low)).astype(np.int64)
    return np.minimum(cat, k - 1)


def bin_percentile(z, k: int, reference=None) -> np.ndarray:
    """Map z-scores to ``k`` categories by percentiles of all z-scores (Graham et al. 2013 §6).

    Edges are the 100/k, 2*100/k, ... percentiles (20th, 40th, 60th, 80th
    for k = 5) of ``reference`` -- "the combined set of all scores", i.e.
    pass every finite z-score of the campaign; defaults to ``z`` itself.
    Percentiles use numpy's default linear interpolation (R's type 7).
    Category i holds ``edge[i-1] <= z < edge[i]``: below the 20th percentile
    -> 0 ("strongly disagree"), ..., at or above the 80th -> 4.  NaN in
    ``z`` or ``reference`` raises ValueError (drop constant workers' NaN
    z-scores first); an empty reference with non-empty ``z`` too.
    """
    if k < 1:
        raise ValueError("k must be >= 1")
    z = g.as_scores(z, "z")
    ref = z if reference is None else g.as_scores(reference, "reference")
    if ref.size == 0:
        if z.size:
            raise ValueError("reference must not be empty")
        return np.zeros(0, dtype=np.int64)
    edges = np.percentile(ref, 100.0 * np.arange(1, k) / k)
    return np.searchsorted(edges, z, side="right").astype(np.int64)
