"""Instruction following (docs/methods.md#instruction-following): per system, the shares of yes, partly and no
answers to "Did the translation follow the instructions?" with 95 % Wilson score intervals, and between each two
systems a paired two-sided exact sign test on the items both were judged on.

Pure numpy/scipy, vectorised over systems and pairs. Answers are scored yes=2, partly=1, no=0.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from .comprehension import wilson_interval

ANSWERS = ("yes", "partly", "no")
SCORES = np.array([2.0, 1.0, 0.0])


@dataclass
class Shares:
    """Per system (rows) and answer (columns yes, partly, no): counts, shares and the Wilson interval's ends."""

    counts: np.ndarray
    n: np.ndarray
    share: np.ndarray
    low: np.ndarray
    high: np.ndarray


def answer_shares(system: np.ndarray, answer: np.ndarray, n_systems: int, confidence: float = 0.95) -> Shares:
    """`system` (index per judgment) and `answer` (0 yes, 1 partly, 2 no) into per-system shares with Wilson
    intervals (Wilson 1927; as statsmodels' `proportion_confint(method="wilson")`)."""
    system, answer = np.asarray(system, dtype=np.int64), np.asarray(answer, dtype=np.int64)
    counts = np.zeros((n_systems, len(ANSWERS)), dtype=np.int64)
    np.add.at(counts, (system, answer), 1)
    n = counts.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(n[:, None] > 0, counts / np.maximum(n, 1)[:, None], np.nan)
    low, high = wilson_interval(counts, np.broadcast_to(n[:, None], counts.shape), confidence)
    return Shares(counts=counts, n=n, share=share, low=low, high=high)


@dataclass
class SignTests:
    """Between systems i and j (matrices): items where i scored higher (`wins[i, j]`), lower (`wins[j, i]`), the
    same (`ties`), and the two-sided exact sign test's p-value (NaN where no item differs)."""

    wins: np.ndarray
    ties: np.ndarray
    p_value: np.ndarray


def item_means(system: np.ndarray, item: np.ndarray, answer: np.ndarray, n_systems: int, n_items: int
               ) -> np.ndarray:
    """The mean score (yes=2, partly=1, no=0) of each system (rows) on each item (columns); NaN where unjudged."""
    system, item = np.asarray(system, dtype=np.int64), np.asarray(item, dtype=np.int64)
    total = np.zeros((n_systems, n_items))
    count = np.zeros((n_systems, n_items))
    np.add.at(total, (system, item), SCORES[np.asarray(answer, dtype=np.int64)])
    np.add.at(count, (system, item), 1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1.0), np.nan)


def sign_tests(means: np.ndarray) -> SignTests:
    """The paired sign test between every two systems on the items both have (a row of `item_means` per system):
    per item the system with the higher mean score wins; equal means are ties and dropped (Dixon & Mood 1946);
    p = min(1, 2 P(X ≤ min(wins, losses))) with X ~ Binomial(wins + losses, 1/2), exact (scipy's `binomtest`,
    two-sided, gives the same)."""
    a, b = means[:, None, :], means[None, :, :]
    shared = ~np.isnan(a) & ~np.isnan(b)
    wins = np.sum(shared & (a > b), axis=2)
    ties = np.sum(shared & (a == b), axis=2)
    n = wins + wins.T
    smaller = np.minimum(wins, wins.T)
    p = np.where(n > 0, np.minimum(1.0, 2.0 * stats.binom.cdf(smaller, np.maximum(n, 1), 0.5)), np.nan)
    np.fill_diagonal(p, np.nan)
    return SignTests(wins=wins, ties=ties, p_value=p)
