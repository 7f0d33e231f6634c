"""Combining several judges' rankings of the same screen: Schulze's method, optionally with weighted
votes (docs/methods.md §8; Callison-Burch 2009 §4, after Schulze 2011).

Screens are stacked: ``ranks`` has shape (M screens, J judges, K candidates), rank 1 = best, ties
allowed; a judge absent from a screen has weight 0 there. Everything is vectorised over screens;
the only loop is Floyd-Warshall's over the K candidates.
"""
from __future__ import annotations

import numpy as np


def preferences(ranks, weights=None) -> np.ndarray:
    """d[m, x, y]: the (weighted) number of judges of screen m who ranked x strictly better than y."""
    ranks = np.asarray(ranks, dtype=np.float64)
    if ranks.ndim != 3:
        raise ValueError("ranks must have shape (screens, judges, candidates)")
    weights = np.ones(ranks.shape[:2]) if weights is None else np.asarray(weights, dtype=np.float64)
    if weights.shape != ranks.shape[:2]:
        raise ValueError("weights must have shape (screens, judges)")
    better = ranks[:, :, :, None] < ranks[:, :, None, :]
    return np.einsum("mj,mjxy->mxy", weights, better.astype(np.float64))


def strongest_paths(d) -> np.ndarray:
    """p[m, x, y]: the strength of the strongest path from x to y (Schulze 2011 §2.2, the widest-path
    variant with link strength d[x, y] when d[x, y] > d[y, x], else no link)."""
    d = np.asarray(d, dtype=np.float64)
    p = np.where(d > np.swapaxes(d, 1, 2), d, 0.0)
    k = d.shape[-1]
    eye = np.eye(k, dtype=bool)
    for i in range(k):
        through = np.minimum(p[:, :, i, None], p[:, None, i, :])
        p = np.maximum(p, through)
        p[:, eye] = 0.0
    return p


def schulze_ranks(ranks, weights=None) -> np.ndarray:
    """The combined ranking of each screen: 1 + the number of candidates that beat x (p[y, x] > p[x, y]);
    candidates that beat each other equally share a rank."""
    p = strongest_paths(preferences(ranks, weights))
    beaten_by = (np.swapaxes(p, 1, 2) > p).sum(axis=2)
    return 1 + beaten_by


def judge_weights(agreement, floor: float = 0.0) -> np.ndarray:
    """Vote weights from each judge's agreement (with experts' gold, or with the other judges): the
    agreement share itself, NaN (never compared) and values below ``floor`` giving 0."""
    w = np.nan_to_num(np.asarray(agreement, dtype=np.float64), nan=0.0)
    return np.where(w < floor, 0.0, w)
