"""Scores split by media (docs/methods.md#instruction-following): per group (a system's translations of items with an
image, a video, an audio clip, none, with any or without), the mean 0–100 score with a 95 % Student t interval and
the share of "yes" instruction answers. Pure numpy/scipy, vectorised over groups."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass
class GroupMeans:
    n: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray


def group_means(group: np.ndarray, value: np.ndarray, n_groups: int, confidence: float = 0.95) -> GroupMeans:
    """Per group, the count of finite values, their mean and the t interval mean ± t(n−1) · sd / √n (sd with
    denominator n − 1; NaN with fewer than two values, the mean NaN with none)."""
    group, value = np.asarray(group, dtype=np.int64), np.asarray(value, dtype=np.float64)
    keep = np.isfinite(value)
    group, value = group[keep], value[keep]
    n = np.bincount(group, minlength=n_groups).astype(np.float64)
    total = np.bincount(group, weights=value, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(n > 0, total / n, np.nan)
        squares = np.bincount(group, weights=(value - mean[group]) ** 2, minlength=n_groups)
        sd = np.sqrt(squares / (n - 1))
        half = stats.t.ppf(0.5 + confidence / 2, n - 1) * sd / np.sqrt(n)
    half = np.where(n >= 2, half, np.nan)
    return GroupMeans(n=n.astype(np.int64), mean=mean, low=mean - half, high=mean + half)
