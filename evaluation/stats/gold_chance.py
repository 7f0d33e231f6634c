"""Whether a ranking worker gets gold units right more often than chance (docs/methods.md §12.1, the ranking gate).

Chance is a judge who ranks a screen's N outputs in a uniformly random order, without ties, without reading
them: the gold unit's and the known-bad output's ranks are then two distinct ranks drawn at random. The number of
gold screens ranked right is a sum of independent Bernoulli variables with each screen's chance (a
Poisson-binomial; a binomial when every screen has the same N), and the test is its exact upper tail.
Numpy and scipy only.
"""
from __future__ import annotations

import numpy as np
from scipy import stats as st


def chance_right(n_candidates, best_worst) -> np.ndarray:
    """Per gold screen, the probability that a random order ranks it right (protocol `ranking`, docs/methods.md §8.1):
    best, the gold ranked 1: 1/N; best-worst, the gold in the top half (rank ≤ h = ⌊N/2⌋) and the known-bad output
    in the bottom half (rank > N − h): h/N · h/(N − 1)."""
    n = np.asarray(n_candidates, dtype=np.float64)
    half = np.floor(n / 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        both = half / n * half / np.maximum(n - 1, 1)
    return np.where(np.asarray(best_worst, dtype=bool), both, 1.0 / n)


def above_chance(correct, chance) -> float:
    """One-sided exact p-value that the screens were ranked right more often than chance: P(X ≥ k) where k is the
    number of `correct` screens and X the number right by chance (screen i right with probability `chance[i]`,
    independently). 1.0 without screens. Screens sharing a chance are summed as one binomial, so the work grows with
    the number of distinct chances (distinct N), not of screens."""
    correct = np.asarray(correct, dtype=bool)
    chance = np.asarray(chance, dtype=np.float64)
    if correct.size == 0:
        return 1.0
    values, counts = np.unique(chance, return_counts=True)
    pmf = np.ones(1)
    for value, count in zip(values, counts, strict=True):  # a few distinct N
        pmf = np.convolve(pmf, st.binom.pmf(np.arange(count + 1), count, value))
    k = int(correct.sum())
    return float(min(1.0, pmf[k:].sum()))
