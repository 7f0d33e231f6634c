"""ESA^AI: system scores when items the automatic system finds error-free are judged only at a rate r
(docs/methods.md#esa-ai; Zouhar et al. 2024, "AI-Assisted Human Evaluation of Machine Translation").

Inputs are (segment × system) matrices: `score` (an item's human score, NaN where nobody judged it: not sent,
or not yet judged), `clean` (the automatic system marked no error on that output) and `present` (the output
counts: it exists and is not a tutorial). Each system's items fall in two strata, AI-flagged (always sent)
and AI-clean (sent with probability r, a Bernoulli draw per item).

Estimator: the Hájek estimator post-stratified on the AI verdict. Within a stratum every judged item has the
same inclusion probability, so its inverse-probability weights (1/r for AI-clean, 1 for AI-flagged) are
equal and the Hájek mean is the plain mean of the judged items; the strata are then weighted by their known
sizes N_h (every output's AI verdict is known). The result is the same as imputing every unsent AI-clean
item with the mean of the judged AI-clean items of the same system:

    score_s = (N_flagged ȳ_flagged + N_clean ȳ_clean) / (N_flagged + N_clean).

Why not Horvitz–Thompson (Σ y/π over N): it is unbiased, but its variance carries the binomial noise of how
many AI-clean items were drawn times the level of the scores (ESA scores sit near 100), and it can leave the
0–100 range; the Hájek form uses the realised number, is location-invariant and stays in range, at an O(1/n)
bias that is negligible at campaign sizes.

Variance: the linearisation (delta-method) variance over items, superpopulation view (items a sample of the
test set's distribution, as the unweighted analysis treats them). Each item's influence value is
ψ = (N_h/n_h)(y − ȳ_h) + (ȳ_h − score) if judged, and (ȳ_h − score) if not; Cov(score_s, score_t) =
Σ_segments ψ_s ψ_t / (N_s N_t). With every item judged this is the plain mean's Σ(y − ȳ)²/N². Two systems
are compared by a paired two-sided z-test on their difference, paired by segment (the covariance term).
`bootstrap_scores` resamples segments, each carrying its sent/unsent status, so that the sampling step is
resampled too; the tests check the analytic standard errors against it. With a `group` per segment (a
domain) the strata are (group × verdict) and `macro` averages the groups with equal weight (WMT24's macro
average), each group's ψ centred on its own score.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

FLAGGED, CLEAN = 0, 1


@dataclass(frozen=True)
class AiSkipScores:
    """Per system: the corrected `score`, its standard error `se` and interval [`low`, `high`]; `naive`, the plain
    mean of the judged items; counts of outputs and judged items per stratum (`flagged`, `clean`,
    `judged_flagged`, `judged_clean`); `no_clean_judged`, systems with AI-clean items none of which was judged
    (that stratum cannot be imputed and is left out). `covariance` between systems' scores, and `p[i, j]` the
    two-sided paired z-test of score_i = score_j (NaN where not computable). `group_score[g, s]`: the Hájek mean
    within group g (a domain), (Σ_h N_h ȳ_h) / Σ_h N_h over its strata with a judged item (NaN where none)."""

    score: np.ndarray
    se: np.ndarray
    low: np.ndarray
    high: np.ndarray
    naive: np.ndarray
    flagged: np.ndarray
    clean: np.ndarray
    judged_flagged: np.ndarray
    judged_clean: np.ndarray
    no_clean_judged: np.ndarray
    covariance: np.ndarray
    p: np.ndarray
    group_score: np.ndarray


def _matrices(score, clean, present, group):
    y = np.asarray(score, dtype=np.float64)
    if y.ndim != 2:
        raise ValueError("score must be a (segment, system) matrix")
    c = np.asarray(clean, dtype=bool)
    here = np.ones_like(c) if present is None else np.asarray(present, dtype=bool)
    if c.shape != y.shape or here.shape != y.shape:
        raise ValueError("score, clean and present must have the same shape")
    g = np.zeros(y.shape[0], np.int64) if group is None else np.asarray(group, dtype=np.int64)
    if g.shape != (y.shape[0],) or (g.size and g.min() < 0):
        raise ValueError("group must give each segment a non-negative code")
    judged = here & np.isfinite(y)
    stratum = (g[:, None] * 2 + c) * y.shape[1] + np.arange(y.shape[1])[None, :]
    return np.where(judged, y, 0.0), c, here, judged, g, stratum


def _combine(n_out, n_judged, total, macro: bool):
    """Stratum means, group means and the system score from (stratum, system) counts and sums, shaped
    (..., groups, 2, systems): returns (stratum mean, usable, group size, group mean, group weight, score)."""
    usable = n_judged > 0
    mean_k = np.where(usable, total / np.maximum(n_judged, 1), 0.0)
    size_k = np.where(usable, n_out, 0.0)
    size_g = size_k.sum(axis=-2)
    mean_g = np.where(size_g > 0, (size_k * mean_k).sum(axis=-2) / np.maximum(size_g, 1), 0.0)
    if macro:
        weight_g = (size_g > 0) / np.maximum((size_g > 0).sum(axis=-2, keepdims=True), 1)
    else:
        weight_g = size_g / np.maximum(size_g.sum(axis=-2, keepdims=True), 1)
    score = np.where(size_g.sum(axis=-2) > 0, (weight_g * mean_g).sum(axis=-2), np.nan)
    return mean_k, usable, size_g, mean_g, weight_g, score


def ipw_scores(score, clean, present=None, group=None, macro: bool = False, confidence: float = 0.95
               ) -> AiSkipScores:
    """The post-stratified Hájek scores, their delta-method covariance and paired z-tests (module docstring).
    `group` (a code per segment, e.g. its domain) makes the strata (group × AI verdict); `macro` averages the
    groups' scores with equal weight (WMT24's macro-average over domains), else by their sizes."""
    y, c, here, judged, g, stratum = _matrices(score, clean, present, group)
    n_seg, n_sys = y.shape
    n_groups = int(g.max(initial=0)) + 1
    length = n_groups * 2 * n_sys
    shape = (n_groups, 2, n_sys)
    n_out = np.bincount(stratum[here], minlength=length).reshape(shape).astype(float)
    n_judged = np.bincount(stratum[judged], minlength=length).reshape(shape).astype(float)
    total = np.bincount(stratum[judged], weights=y[judged], minlength=length).reshape(shape)
    mean_k, usable, size_g, mean_g, weight_g, est = _combine(n_out, n_judged, total, macro)
    naive = total.sum(axis=(0, 1)) / np.maximum(n_judged.sum(axis=(0, 1)), 1)
    naive = np.where(n_judged.sum(axis=(0, 1)) > 0, naive, np.nan)
    # influence values per (segment, system) times the item's coefficient; zero outside the counted strata
    cols = np.broadcast_to(np.arange(n_sys), (n_seg, n_sys))
    rows = np.broadcast_to(g[:, None], (n_seg, n_sys))
    verdict = c.astype(np.int64)
    counted = here & usable[rows, verdict, cols]
    expand = n_out[rows, verdict, cols] / np.maximum(n_judged[rows, verdict, cols], 1)
    psi = np.where(judged, (y - mean_k[rows, verdict, cols]) * expand, 0.0) \
        + mean_k[rows, verdict, cols] - mean_g[rows, cols]
    coefficient = weight_g[rows, cols] / np.maximum(size_g[rows, cols], 1)
    scaled = np.where(counted, psi * coefficient, 0.0)
    covariance = scaled.T @ scaled
    missing = ~np.isfinite(est)
    covariance[:, missing] = np.nan
    covariance[missing, :] = np.nan
    se = np.sqrt(np.diag(covariance))
    z = sps.norm.ppf(0.5 + confidence / 2)
    var_diff = np.diag(covariance)[:, None] + np.diag(covariance)[None, :] - 2 * covariance
    with np.errstate(invalid="ignore", divide="ignore"):
        zstat = (est[:, None] - est[None, :]) / np.sqrt(var_diff)
        p = np.where(var_diff > 0, 2 * sps.norm.sf(np.abs(zstat)), np.nan)
    np.fill_diagonal(p, np.nan)
    flagged, clean_n = n_out[:, 0].sum(axis=0), n_out[:, 1].sum(axis=0)
    judged_clean = n_judged[:, 1].sum(axis=0)
    no_clean = ((n_out[:, 1] > 0) & ~usable[:, 1]).any(axis=0)
    return AiSkipScores(score=est, se=se, low=est - z * se, high=est + z * se, naive=naive,
                        flagged=flagged.astype(np.int64), clean=clean_n.astype(np.int64),
                        judged_flagged=n_judged[:, 0].sum(axis=0).astype(np.int64),
                        judged_clean=judged_clean.astype(np.int64), no_clean_judged=no_clean,
                        covariance=covariance, p=p, group_score=np.where(size_g > 0, mean_g, np.nan))


def bootstrap_scores(score, clean, present=None, group=None, macro: bool = False, n_boot: int = 2000,
                     seed: int = 0) -> np.ndarray:
    """The same estimator on `n_boot` resamples of the segments (with replacement), each segment carrying its
    outputs' AI verdicts, sent/unsent status and scores, so that the number of judged AI-clean items varies as
    the sampling step makes it vary: an array (n_boot, n_systems). Vectorised: a resample is a row of
    multiplicities, and every stratum total is one matrix product."""
    y, c, here, judged, g, stratum = _matrices(score, clean, present, group)
    n_seg, n_sys = y.shape
    n_groups = int(g.max(initial=0)) + 1
    length = n_groups * 2 * n_sys
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_seg, size=(n_boot, n_seg))
    counts = np.zeros((n_boot, n_seg))
    np.add.at(counts, (np.repeat(np.arange(n_boot), n_seg), draws.ravel()), 1.0)

    def per_stratum(mask, values):
        onehot = np.zeros((n_seg, length))
        seg = np.broadcast_to(np.arange(n_seg)[:, None], y.shape)
        np.add.at(onehot, (seg[mask], stratum[mask]), values[mask])
        return (counts @ onehot).reshape(n_boot, n_groups, 2, n_sys)

    ones = np.ones_like(y)
    *_, est = _combine(per_stratum(here, ones), per_stratum(judged, ones), per_stratum(judged, y), macro)
    return est


def kendall_tau(a, b) -> float:
    """Kendall's τ-b between two score vectors over the systems where both are finite (NaN if < 2 such)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 2:
        return float("nan")
    return float(sps.kendalltau(a[ok], b[ok]).statistic)


def budget_saved(clean, sent, present=None) -> dict:
    """How much of the judging the rule saved: `not_sent` AI-clean outputs out of `would_send` (every counted
    output), and their ratio `saved`."""
    c = np.asarray(clean, dtype=bool)
    here = np.ones_like(c) if present is None else np.asarray(present, dtype=bool)
    would = int(here.sum())
    skipped = int((here & c & ~np.asarray(sent, dtype=bool)).sum())
    return {"not_sent": skipped, "would_send": would, "saved": skipped / would if would else float("nan")}
