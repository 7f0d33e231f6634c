"""The test of two systems at an interim look: units, the stratified rank-sum z, information (docs/methods.md §12.2).

An adaptive campaign changes the mix of system outputs from batch to batch, and with it the scale of
each worker's z-scores (a worker who sees mostly good translations has a higher mean, so each of their
scores gets a lower z).  Two systems judged in different proportions in different batches would then
be compared on different scales.  Within one batch every worker sees the same mix, so a comparison
*within* a batch is fair; the test therefore treats batches as strata (van Elteren's stratified
rank-sum test) and the ranking adjusts each batch's level (:func:`adjusted_means`).  Without strata
both reduce to the plain Wilcoxon rank-sum z and the plain means.
"""

from __future__ import annotations

import math

import numpy as np

from . import _grouping as g
from .rounding import round_significant

__all__ = ["Units", "units", "stratified_rank_sum_z", "pair_information", "adjusted_means"]


class Units:
    """The values tested, one per unit: a judgment, or a translation's mean within a stratum."""

    __slots__ = ("value", "system", "stratum", "n_systems", "n_strata")

    def __init__(self, value, system, stratum, n_systems: int, n_strata: int):
        self.value, self.system, self.stratum = value, system, stratum
        self.n_systems, self.n_strata = n_systems, n_strata

    def counts(self) -> np.ndarray:
        """Units per system."""
        return g.group_count(self.system, self.n_systems)

    def counts_by_stratum(self) -> np.ndarray:
        """Units per stratum and system, shape ``(n_strata, n_systems)``."""
        cell = self.stratum * self.n_systems + self.system
        return g.group_count(cell, self.n_strata * self.n_systems).reshape(self.n_strata, self.n_systems)


def _codes(values, like: np.ndarray, name: str) -> np.ndarray:
    a = np.asarray(values)
    if a.shape != like.shape or (a.size and not np.issubdtype(a.dtype, np.integer)):
        raise ValueError(f"{name} must be one integer code per score")
    if a.size and a.min() < 0:
        raise ValueError(f"{name} must be non-negative codes")
    return a.astype(np.int64, copy=False)


def units(scores: np.ndarray, systems: np.ndarray, n_systems: int, segments=None, strata=None) -> Units:
    """The units of the test (docs/methods.md §12.2).

    Without ``segments`` each judgment is a unit; with them, each translation (system, segment) within
    a stratum is one unit valued at the mean of its judgments there, rounded to 12 significant digits
    (as docs/methods.md §5.2 and §5.3 do).  ``strata`` (e.g. the batch of each judgment's HIT) are
    re-coded densely in order; without them everything is one stratum.
    """
    strata = np.zeros(scores.size, np.int64) if strata is None else _codes(strata, scores, "strata")
    stratum_codes, strata = np.unique(strata, return_inverse=True)
    n_strata = max(int(stratum_codes.size), 1)
    strata = strata.reshape(-1).astype(np.int64)
    if segments is None:
        return Units(scores, systems, strata, n_systems, n_strata)
    segments = _codes(segments, scores, "segments")
    n_segments = int(segments.max()) + 1 if segments.size else 1
    key = (strata * n_systems + systems) * n_segments + segments
    keys, inverse = g.factorize(key, n_strata * n_systems * n_segments)
    value = round_significant(g.group_mean(inverse, scores, keys.size))
    cell = keys // n_segments
    return Units(value, cell % n_systems, cell // n_systems, n_systems, n_strata)


def stratified_rank_sum_z(x, y, x_strata=None, y_strata=None) -> float:
    """van Elteren's stratified Wilcoxon rank-sum z of ``x`` against ``y`` (docs/methods.md §12.2).

    In each stratum b: the Mann-Whitney U of x (mid-ranks for ties), its null mean ``n_x n_y / 2`` and
    tie-corrected variance ``n_x n_y / 12 (N + 1 - sum(t^3 - t) / (N (N - 1)))``; then
    ``z = sum_b w_b (U_b - E_b) / sqrt(sum_b w_b^2 Var_b)`` with van Elteren's weights
    ``w_b = 1 / (N_b + 1)``.  Strata holding only one of the samples add nothing.  No continuity
    correction: the boundaries are for the canonical normal statistic.  With one stratum this is the
    plain rank-sum z (``scipy.stats.mannwhitneyu(x, y, method="asymptotic", use_continuity=False)``
    gives the same p).  Positive when ``x`` tends to be larger; NaN when no stratum holds both or
    everything ties.  Vectorised: one sort of the pooled values by (stratum, value).
    """
    x = g.as_scores(x, "x")
    y = g.as_scores(y, "y")
    xs = np.zeros(x.size, np.int64) if x_strata is None else _codes(x_strata, x, "x_strata")
    ys = np.zeros(y.size, np.int64) if y_strata is None else _codes(y_strata, y, "y_strata")
    if x.size == 0 or y.size == 0:
        return math.nan
    value = np.concatenate([x, y])
    stratum = np.concatenate([xs, ys])
    from_x = np.concatenate([np.ones(x.size), np.zeros(y.size)])
    order = np.lexsort((value, stratum))
    value, stratum, from_x = value[order], stratum[order], from_x[order]
    new_stratum = np.r_[True, stratum[1:] != stratum[:-1]]
    stratum_id = np.cumsum(new_stratum) - 1
    n_strata = int(stratum_id[-1]) + 1
    position = np.arange(value.size) - np.flatnonzero(new_stratum)[stratum_id]
    new_tie = new_stratum | np.r_[True, value[1:] != value[:-1]]
    tie_id = np.cumsum(new_tie) - 1
    tie_size = np.bincount(tie_id).astype(np.float64)
    mid_rank = position[new_tie][tie_id] + (tie_size[tie_id] + 1.0) / 2.0
    n = np.bincount(stratum_id, minlength=n_strata).astype(np.float64)
    n_x = np.bincount(stratum_id, weights=from_x, minlength=n_strata)
    n_y = n - n_x
    u = np.bincount(stratum_id, weights=mid_rank * from_x, minlength=n_strata) - n_x * (n_x + 1.0) / 2.0
    ties = np.bincount(stratum_id[new_tie], weights=tie_size**3 - tie_size, minlength=n_strata)
    both = (n_x > 0) & (n_y > 0)
    variance = np.zeros(n_strata)
    variance[both] = n_x[both] * n_y[both] / 12.0 * ((n[both] + 1.0) - ties[both] / (n[both] * (n[both] - 1.0)))
    weight = 1.0 / (n + 1.0)
    total_variance = float(np.sum(weight[both] ** 2 * variance[both]))
    if total_variance <= 0.0:
        return math.nan
    return float(np.sum(weight[both] * (u[both] - n_x[both] * n_y[both] / 2.0))) / math.sqrt(total_variance)


def pair_information(counts_by_stratum: np.ndarray) -> np.ndarray:
    """Information of every pair of systems, ``sum_b n_a,b n_c,b / (n_a,b + n_c,b)`` over strata
    (docs/methods.md §12.2).

    Proportional to the inverse variance of the pair's (stratified) rank-sum statistic; a stratum
    holding only one of the two adds nothing.  Shape ``(n_systems, n_systems)``, symmetric, zero
    diagonal.
    """
    c = np.asarray(counts_by_stratum, dtype=np.float64)
    product = c[:, :, None] * c[:, None, :]
    total = c[:, :, None] + c[:, None, :]
    info = np.zeros(product.shape)
    np.divide(product, total, out=info, where=total > 0)
    info = info.sum(axis=0)
    np.fill_diagonal(info, 0.0)
    return info


def adjusted_means(u: Units, sweeps: int = 200) -> np.ndarray:
    """Per system, the mean unit value after removing each stratum's level (docs/methods.md §12.2).

    Least squares of the additive model ``value = stratum level + system effect``, fitted by
    alternating means (backfitting) until nothing moves by more than 1e-12; the levels are centred on
    the units, so with a single stratum the result is the plain mean per system.  NaN for systems
    without units.  (Strata linked by no common system cannot be put on one scale; the batches of an
    adaptive campaign always share the systems of open pairs.)
    """
    counts = u.counts()
    effect = g.group_mean(u.system, u.value, u.n_systems)
    if u.n_strata == 1 or u.value.size == 0:
        return effect
    level = np.zeros(u.n_strata)
    fill = np.nan_to_num(effect)
    for _ in range(sweeps):
        level = g.group_mean(u.stratum, u.value - fill[u.system], u.n_strata)
        level = np.nan_to_num(level - np.mean(level[u.stratum]))
        new = g.group_mean(u.system, u.value - level[u.stratum], u.n_systems)
        moved = np.nanmax(np.abs(new - effect)) if np.isfinite(new).any() else 0.0
        effect, fill = new, np.nan_to_num(new)
        if moved < 1e-12:
            break
    return np.where(counts > 0, effect, np.nan)
