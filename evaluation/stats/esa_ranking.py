"""WMT24's and WMT25's ESA conventions after the significance tests: how the per-domain p-values combine,
which systems share a cluster and each system's rank range (docs/methods.md §11).

Each rule is the organisers' script's, on arrays: ``order`` lists the ranked system codes best first,
``p[i, j]`` is the p-value of the test of system i against system j. Nothing here imports Django.

* WMT24 (``humeval/tools.py`` of wmt-conference/wmt24-news-systems): per-domain two-sided Wilcoxon
  p-values combined with Stouffer's z, which drops the direction (:func:`stouffer_two_sided`); a cluster
  boundary only where every system above differs (p ≤ α) from every system below
  (:func:`wmt24_clusters`, ``get_clusters``); rank range (losses + 1, N − wins) (:func:`wmt24_rank_ranges`,
  ``get_ranks``).
* WMT25 (``humeval/05-compute_clusters.py`` of wmt-conference/wmt25-general-mt): one-sided paired Wilcoxon
  between neighbours, a boundary where the upper one is significantly better (:func:`wmt25_clusters`);
  rank ranges walking from a system to the first significant system above and below
  (:func:`wmt25_rank_ranges`); the table's rules (:func:`wmt25_table_rules`); pairing by (item, wave)
  slots (:func:`slot_matrix`).
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats as sps

__all__ = ["stouffer_two_sided", "slot_matrix", "wmt24_clusters", "wmt24_rank_ranges", "wmt25_clusters",
           "wmt25_rank_ranges", "wmt25_table_rules"]


def stouffer_two_sided(p_domains) -> float:
    """WMT24's combination of per-domain two-sided p-values: z_d = Φ⁻¹(1 − p_d), Z = Σ z_d / √k,
    p = 1 − Φ(Z), computed with the same floating-point steps as the script.

    The p-values are two-sided, so the combined p is the same for (A, B) and (B, A): A better in one
    domain and B in another adds up to significance. A NaN p_d makes the result NaN (as in the script);
    no p-values give NaN."""
    p = np.asarray(p_domains, dtype=np.float64)
    if p.size == 0:
        return math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.array([sps.norm.ppf(1 - v) for v in p.tolist()])
        combined = np.sum(z) / np.sqrt(p.size)
    return float(1 - sps.norm.cdf(combined))


def slot_matrix(system, key, score, n_systems: int, wave=None) -> np.ndarray:
    """A (slots × systems) matrix of scores, NaN where a system has no score in that slot. A slot is an
    item (``key``), or with ``wave`` an (item, wave) pair: WMT25 counts two annotation waves of one item as
    two observations. One score per (slot, system): a later row overwrites an earlier one (WMT25's export
    rule). Slots are in ascending (key, wave) order."""
    system = np.asarray(system, dtype=np.int64)
    score = np.asarray(score, dtype=np.float64)
    key = np.asarray(key)
    columns = [key] if wave is None else [key, np.asarray(wave)]
    if system.size == 0:
        return np.full((0, n_systems), np.nan)
    slots, slot = np.unique(np.stack(columns), axis=1, return_inverse=True)
    slot = np.asarray(slot).ravel()
    cell = slot * n_systems + system
    # the last row of each cell: the first of the reversed rows
    _, last_reversed = np.unique(cell[::-1], return_index=True)
    last = cell.size - 1 - last_reversed
    matrix = np.full((slots.shape[1], n_systems), np.nan)
    matrix[slot[last], system[last]] = score[last]
    return matrix


def _positions(order, n: int) -> np.ndarray:
    """Codes of ``order``; every code must be a system in 0..n-1."""
    order = np.asarray(order, dtype=np.int64)
    if order.size and (order.min() < 0 or order.max() >= n):
        raise ValueError("order must hold system codes of p")
    return order


def wmt24_clusters(order, p, alpha: float = 0.05) -> np.ndarray:
    """WMT24's ``get_clusters``: walking down ``order``, a boundary falls below position k only when no
    system at or above k has ``p > alpha`` against a system below k; a NaN p does not hold systems together
    (the script's ``p > α`` is false for NaN). Returns the 1-based cluster of each position of ``order``."""
    p = np.asarray(p, dtype=np.float64)
    order = _positions(order, p.shape[0])
    m = order.size
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    with np.errstate(invalid="ignore"):
        same = np.triu(p[np.ix_(order, order)] > alpha, k=1)
    # a pair (j, k), j < k, not separated keeps positions j..k-1 from ending a cluster
    upper, lower = np.nonzero(same)
    held = np.zeros(m + 1, dtype=np.int64)
    np.add.at(held, upper, 1)
    np.add.at(held, lower, -1)
    boundary = np.cumsum(held)[:m] == 0  # True: a boundary below this position
    return 1 + np.r_[0, np.cumsum(boundary[:-1])].astype(np.int64)


def wmt24_rank_ranges(order, score, p, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """WMT24's ``get_ranks``, per position of ``order``: against every other ranked system, ``p < alpha``
    is a win when the system's score is higher and a loss otherwise (equal scores: a loss for both);
    the range is (losses + 1, N − wins), N the number of ranked systems."""
    p = np.asarray(p, dtype=np.float64)
    score = np.asarray(score, dtype=np.float64)
    order = _positions(order, p.shape[0])
    sub = p[np.ix_(order, order)]
    with np.errstate(invalid="ignore"):
        significant = sub < alpha
    np.fill_diagonal(significant, False)
    higher = score[order][:, None] > score[order][None, :]
    wins = (significant & higher).sum(axis=1)
    losses = (significant & ~higher).sum(axis=1)
    return (losses + 1).astype(np.int64), (order.size - wins).astype(np.int64)


def wmt25_clusters(order, p, alpha: float = 0.05) -> np.ndarray:
    """WMT25's ``clusters.txt``: a boundary between two neighbours of ``order`` where the upper one's
    one-sided p against the lower one is below ``alpha``; no other pair is consulted."""
    p = np.asarray(p, dtype=np.float64)
    order = _positions(order, p.shape[0])
    if order.size == 0:
        return np.zeros(0, dtype=np.int64)
    with np.errstate(invalid="ignore"):
        boundary = p[order[:-1], order[1:]] < alpha
    return 1 + np.r_[0, np.cumsum(boundary)].astype(np.int64)


def wmt25_rank_ranges(order, p, alpha: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """WMT25's table: from a system's position walk upwards until the first system that beats it
    (``p[upper, system] < alpha``) and downwards until the first system it beats (``p[system, lower] <
    alpha``); the range runs from just below the first to just above the second (1 and N when there is
    none). Only the systems passed on the way are consulted, unlike a count of every win."""
    p = np.asarray(p, dtype=np.float64)
    order = _positions(order, p.shape[0])
    m = order.size
    with np.errstate(invalid="ignore"):
        beats = p[np.ix_(order, order)] < alpha  # beats[a, b]: position a significantly above position b
    low = np.ones(m, dtype=np.int64)
    high = np.full(m, m, dtype=np.int64)
    for i in range(m):
        above = np.flatnonzero(beats[:i, i])
        if above.size:
            low[i] = above[-1] + 2  # the nearest significant system above sits at rank above[-1] + 1
        below = np.flatnonzero(beats[i, i + 1:])
        if below.size:
            high[i] = i + 1 + below[0]  # just above the first significant system below
    return low, high


def wmt25_table_rules(rank_low, rank_high) -> np.ndarray:
    """Where WMT25's table draws a rule (``\\cmidrule``), per position of the order: True below position k
    (1-based k, the last position never) when every range of the first k systems ends at or above k and
    every range of the rest starts below k (``does_cluster_end_here``)."""
    low = np.asarray(rank_low, dtype=np.int64)
    high = np.asarray(rank_high, dtype=np.int64)
    m = low.size
    rules = np.zeros(m, dtype=bool)
    for k in range(1, m):
        rules[k - 1] = bool(np.all(high[:k] <= k) and np.all(low[k:] > k))
    return rules
