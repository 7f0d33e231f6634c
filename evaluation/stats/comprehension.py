"""Reading comprehension (docs/methods.md §9; Callison-Burch 2009 §5.3): the share of questions a system's
translations let judges answer correctly, with its Wilson score interval, and a two-proportion test between
systems for rank ranges and clusters. numpy and scipy only.

API
---
``majority(yes, cast) -> bool array`` -- strictly more than half of the cast votes yes (a tie is not).
``wilson_interval(k, n, confidence=0.95) -> (low, high)`` -- the Wilson score interval of k successes in n
trials (Wilson 1927), without continuity correction; NaN where n = 0. Equal to
``scipy.stats.binomtest(k, n).proportion_ci(confidence, method="wilson")``.
``two_proportion_p(k, n) -> p`` -- p[i, j] the one-sided p-value of the pooled two-proportion z-test that
system i's share is higher than system j's (NaN on the diagonal and where a share is undefined; 1 where both
shares are 0 or both 1).
"""
from __future__ import annotations

import numpy as np
from scipy import stats


def majority(yes, cast) -> np.ndarray:
    yes, cast = np.asarray(yes, dtype=np.int64), np.asarray(cast, dtype=np.int64)
    return 2 * yes > cast


def wilson_interval(k, n, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    k, n = np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64)
    if np.any(k < 0) or np.any(k > n):
        raise ValueError("need 0 <= k <= n")
    z = stats.norm.ppf(0.5 + confidence / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        low, high = np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)
    low = np.where(k == 0, 0.0, low)  # exact at the ends (no rounding below 0 or above 1)
    high = np.where(k == n, 1.0, high)
    bad = n <= 0
    return np.where(bad, np.nan, low), np.where(bad, np.nan, high)


def two_proportion_p(k, n) -> np.ndarray:
    k, n = np.asarray(k, dtype=np.float64), np.asarray(n, dtype=np.float64)
    s = k.size
    with np.errstate(invalid="ignore", divide="ignore"):
        share = k / n
        ki, kj, ni, nj = k[:, None], k[None, :], n[:, None], n[None, :]
        pooled = (ki + kj) / (ni + nj)
        se = np.sqrt(pooled * (1 - pooled) * (1 / ni + 1 / nj))
        z = (share[:, None] - share[None, :]) / se
        p = stats.norm.sf(z)
    p = np.where(se == 0, 1.0, p)  # both shares 0 or both 1: no evidence either way
    p = np.where((n[:, None] > 0) & (n[None, :] > 0), p, np.nan)
    p[np.arange(s), np.arange(s)] = np.nan
    return p


__all__ = ["majority", "two_proportion_p", "wilson_interval"]
