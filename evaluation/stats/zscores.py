"""Per-worker standardisation of raw scores (docs/methods.md §5; Graham et al. 2014 §4; Graham et al. 2013 §6)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _grouping as g

__all__ = ["ZScores", "standardise", "worker_means"]


@dataclass(frozen=True)
class ZScores:
    """Result of :func:`standardise`.

    ``z``: one z-score per input row (NaN for rows of constant workers or of
    workers without fitted scores).  Per worker code: ``mean`` (mu_w),
    ``sd`` (sample sd sigma_w, ddof=1; NaN with fewer than 2 scores),
    ``n`` (scores the statistics were fitted on) and ``constant`` (True for
    a worker with at least one fitted score who can't be standardised:
    a single score, or all scores equal).
    """

    z: np.ndarray
    mean: np.ndarray
    sd: np.ndarray
    n: np.ndarray
    constant: np.ndarray

    def __post_init__(self):
        g.freeze(self)


def standardise(worker, scores, n_workers: int, fit=None) -> ZScores:
    """Per-worker z-scores ``z = (score - mu_w) / sigma_w`` (docs/methods.md §5; Graham et al. 2014 §4).

    ``mu_w`` and ``sigma_w`` are the mean and the **sample** standard
    deviation (n - 1 denominator: R's ``sd()``, ``numpy.std(ddof=1)``) of
    *all* of worker w's raw scores passed in -- every item type (system
    outputs, repeats, bad references, references), before any reliability
    filtering, as the WMT scripts do.  Pass the whole campaign's judgments.

    ``fit`` (optional boolean mask, default all rows): rows used to estimate
    mu_w and sigma_w; z is still computed for every row.  Use it to exclude
    reference translations from the standardisation on request (Graham et al. 2014
    footnote 4) while still giving them z-scores.

    A worker with a single fitted score, or whose fitted scores are all
    exactly equal (sigma_w = 0), can't be standardised: their z is NaN and
    ``constant`` is True ("exclude and flag" -- downstream averages skip
    NaN).  Workers without any fitted score get NaN statistics and are not
    flagged.  Computed with bincount, no loop over judgments.
    """
    worker = g.as_codes(worker, n_workers, "worker")
    scores = g.as_scores(scores, "scores")
    g.check_same_length(worker=worker, scores=scores)
    if fit is None:
        fw, fs = worker, scores
    else:
        fit = np.asarray(fit, dtype=bool)
        g.check_same_length(worker=worker, fit=fit)
        fw, fs = worker[fit], scores[fit]
    n, mean, sd = g.group_mean_sd(fw, fs, n_workers, ddof=1)
    # all equal, or spread so tiny that the squared deviations underflow to sd = 0
    constant = (n >= 1) & ((n < 2) | g.group_all_equal(fw, fs, n_workers) | ~(sd > 0))
    sd = np.where(constant & (n >= 2), 0.0, sd)  # exact 0, not a rounding residue
    usable = (n >= 2) & ~constant
    sd_ok = np.where(usable, sd, np.nan)
    z = (scores - mean[worker]) / sd_ok[worker]
    return ZScores(z=z, mean=mean, sd=sd, n=n, constant=constant)


def worker_means(worker, values, n_workers: int) -> np.ndarray:
    """Mean of ``values`` per worker code, NaN for workers without rows (docs/methods.md §4).

    For example mean seconds per judgment per worker (Graham et al. 2013 Fig. 4 plots the
    reliability p-value against it).  Plain arithmetic mean over the rows
    passed in.
    """
    worker = g.as_codes(worker, n_workers, "worker")
    values = g.as_scores(values, "values")
    g.check_same_length(worker=worker, values=values)
    return g.group_mean(worker, values, n_workers)
