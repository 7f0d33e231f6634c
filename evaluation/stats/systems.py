"""System scores, pairwise significance and clusters (docs/methods.md §5)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from . import _grouping as g
from ._ranktests import RankSample, mwu

__all__ = [
    "SystemScores",
    "Significance",
    "Clusters",
    "system_scores",
    "significance",
    "stars",
    "clusters",
]


@dataclass(frozen=True)
class SystemScores:
    """Result of :func:`system_scores`.

    Per system code (length ``n_systems``): ``n_segments`` (distinct segments
    = translations judged; WMT's N), ``n_judgments`` (all judgments incl.
    repeats; WMT's N.ALL), ``n_segments_z`` (translations with a finite
    z-score), ``mean_raw``, ``mean_z``, and the 95 % (``confidence``)
    intervals ``raw_ci_low/high``, ``z_ci_low/high``.  NaN where not
    computable (no translations; interval with fewer than 2).

    Per translation (system x segment; sorted by system, then segment):
    ``translation_system``, ``translation_segment``, ``translation_n``
    (judgments), ``translation_raw`` (mean raw score), ``translation_z``
    (mean of the finite z-scores; NaN if none).
    """

    n_segments: np.ndarray
    n_judgments: np.ndarray
    n_segments_z: np.ndarray
    mean_raw: np.ndarray
    mean_z: np.ndarray
    raw_ci_low: np.ndarray
    raw_ci_high: np.ndarray
    z_ci_low: np.ndarray
    z_ci_high: np.ndarray
    confidence: float
    translation_system: np.ndarray
    translation_segment: np.ndarray
    translation_n: np.ndarray
    translation_raw: np.ndarray
    translation_z: np.ndarray

    def __post_init__(self):
        g.freeze(self)


@dataclass(frozen=True)
class Significance:
    """Result of :func:`significance`.

    ``p[i, j]``: one-sided Mann-Whitney p-value that system i is better than
    system j (NaN on the diagonal and for systems without translations).
    ``stars[i, j]``: '*', '**', '***' or '' for that p.  ``n``: translations
    per system that entered the tests.
    """

    p: np.ndarray
    stars: np.ndarray
    n: np.ndarray

    def __post_init__(self):
        g.freeze(self)


@dataclass(frozen=True)
class Clusters:
    """Result of :func:`clusters`.

    ``order``: system codes best first (systems with a NaN mean left out).
    Per system code: ``rank`` (1-based position in ``order``) and
    ``cluster`` (1-based, 1 = top); both -1 for systems with a NaN mean.
    """

    order: np.ndarray
    rank: np.ndarray
    cluster: np.ndarray
    alpha: float

    def __post_init__(self):
        g.freeze(self)


def _interval(n, mean, sd, confidence):
    """mean -/+ t_{(1+c)/2, n-1} * sd / sqrt(n); NaN where n < 2."""
    low = np.full(mean.shape, np.nan)
    high = np.full(mean.shape, np.nan)
    ok = n >= 2
    if ok.any():
        half = stats.t.ppf((1.0 + confidence) / 2.0, n[ok] - 1) * sd[ok] / np.sqrt(n[ok])
        low[ok] = mean[ok] - half
        high[ok] = mean[ok] + half
    return low, high


def system_scores(system, segment, raw, z, n_systems: int, confidence: float = 0.95) -> SystemScores:
    """Per-system mean raw and z-scores, averaged per segment first (docs/methods.md §5).

    Pass only system-output judgments (first judgments and exact repeats
    alike; no bad references; references only as a pseudo-system if wanted)
    -- the caller filters, and decides whether unreliable workers are
    dropped.  One row per judgment: ``system`` code, ``segment`` code
    (non-negative int, shared across systems for the same source segment),
    ``raw`` score and its ``z`` score (NaN allowed: constant workers).

    1. Translation = (system, segment): ``translation_raw`` = mean raw over
       its judgments (repeats and several workers), ``translation_z`` = mean
       of its *finite* z-scores -- NaN z's are skipped, not propagated; a
       translation whose z's are all NaN gets NaN and is left out of z
       statistics.
    2. System: mean over its translations (a macro average over segments),
       as the WMT scripts and Appraise compute it.  ``n_segments`` = WMT's N,
       ``n_judgments`` = N.ALL.

    Interval: t-interval over the per-translation means, ``mean -/+
    t_{0.975, n-1} * sd / sqrt(n)`` with the sample sd (ddof=1) of the n
    translation means (``scipy.stats.t.interval(0.95, n - 1, loc=mean,
    scale=sem)``): the segment is the sampling unit.  NaN with fewer than 2
    translations.  Deterministic (no bootstrap).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    system = g.as_codes(system, n_systems, "system")
    seg = np.asarray(segment)
    n_seg = int(seg.max()) + 1 if seg.size else 0
    segment = g.as_codes(seg, n_seg, "segment")
    raw = g.as_scores(raw, "raw")
    z = g.as_scores(z, "z", allow_nan=True)
    g.check_same_length(system=system, segment=segment, raw=raw, z=z)

    key = system * n_seg + segment
    uniq, inv = g.factorize(key, n_systems * n_seg)
    n_t = uniq.size
    t_system = uniq // max(n_seg, 1)
    t_segment = uniq % max(n_seg, 1)
    t_n = g.group_count(inv, n_t)
    t_raw = g.group_mean(inv, raw, n_t)
    finite = np.isfinite(z)
    t_z = g.group_mean(inv[finite], z[finite], n_t)

    n_judgments = g.group_count(system, n_systems)
    n_segments, mean_raw, sd_raw = g.group_mean_sd(t_system, t_raw, n_systems)
    tz_ok = np.isfinite(t_z)
    n_segments_z, mean_z, sd_z = g.group_mean_sd(t_system[tz_ok], t_z[tz_ok], n_systems)
    raw_low, raw_high = _interval(n_segments, mean_raw, sd_raw, confidence)
    z_low, z_high = _interval(n_segments_z, mean_z, sd_z, confidence)

    return SystemScores(
        n_segments=n_segments,
        n_judgments=n_judgments,
        n_segments_z=n_segments_z,
        mean_raw=mean_raw,
        mean_z=mean_z,
        raw_ci_low=raw_low,
        raw_ci_high=raw_high,
        z_ci_low=z_low,
        z_ci_high=z_high,
        confidence=float(confidence),
        translation_system=t_system,
        translation_segment=t_segment,
        translation_n=t_n,
        translation_raw=t_raw,
        translation_z=t_z,
    )


#: Significance marks, strictest first: (p below, mark), as the papers print them.
SIGNIFICANCE_LEVELS = ((0.001, "***"), (0.01, "**"), (0.05, "*"))


def stars(p) -> np.ndarray:
    """Significance marks as in the papers (docs/methods.md §5).

    '***' for p < 0.001, '**' for p < 0.01, '*' for p < 0.05, '' otherwise
    (including NaN and None).  Strict inequalities.  Works elementwise on any shape.
    """
    p = np.asarray(np.nan if p is None else p, dtype=np.float64)
    out = np.full(p.shape, "", dtype="<U3")
    with np.errstate(invalid="ignore"):
        for level, mark in reversed(SIGNIFICANCE_LEVELS):
            out[p < level] = mark
    return out


def significance(translation_system, translation_z, n_systems: int) -> Significance:
    """Pairwise one-sided Wilcoxon rank-sum tests between systems (docs/methods.md §5).

    Inputs are the per-translation arrays of :func:`system_scores`
    (``translation_system``, ``translation_z``; raw means work the same way).
    For every ordered pair (i, j), i != j: ``p[i, j]`` =
    ``scipy.stats.mannwhitneyu(x_i, x_j, alternative="greater").pvalue`` --
    unpaired, one-sided, H1: system i's translations score higher -- with
    scipy's defaults (continuity correction; exact null when a system has
    <= 8 translations and nothing ties, else the tie-corrected normal
    approximation).  Each unordered pair is ranked once and gives both
    directions.  NaN z's are dropped first; a system without translations
    gets NaN rows and columns; a system with a single translation is tested
    normally (p can't get small).  Diagonal NaN.  ``stars`` as :func:`stars`.
    """
    ts = g.as_codes(translation_system, n_systems, "translation_system")
    tz = g.as_scores(translation_z, "translation_z", allow_nan=True)
    g.check_same_length(translation_system=ts, translation_z=tz)
    ok = np.isfinite(tz)
    samples = [RankSample(x) for x in g.group_split(ts[ok], tz[ok], n_systems)]
    p = np.full((n_systems, n_systems), np.nan)
    for i in range(n_systems):
        for j in range(i + 1, n_systems):
            _, p_ij, p_ji = mwu(samples[i], samples[j])
            p[i, j] = p_ij
            p[j, i] = p_ji
    n = np.array([s.n for s in samples], dtype=np.int64)
    return Significance(p=p, stars=stars(p), n=n)


def clusters(mean_z, p_matrix, alpha: float = 0.05) -> Clusters:
    """Rank systems by mean z and split them into significance clusters (docs/methods.md §5).

    Order: mean z descending; equal means are ordered by system code
    (ascending), so the result is deterministic.  Systems with a NaN mean
    are not ranked (rank and cluster -1).

    Clusters, walking down the order: the first system opens cluster 1.
    "The cluster above" a system s is the cluster that is open when s is
    reached -- the one holding the system ranked directly above s, with all
    members that joined it so far.  s opens a new cluster when it is
    significantly worse than **every** member of that cluster
    (``p_matrix[m, s] < alpha`` for all members m, strict), and otherwise
    joins it.  A NaN p counts as not significant.  Only the cluster directly
    above is consulted (the docs/methods.md rule), not earlier clusters.
    """
    mean_z = np.asarray(mean_z, dtype=np.float64)
    p = np.asarray(p_matrix, dtype=np.float64)
    s = mean_z.size
    if mean_z.ndim != 1 or p.shape != (s, s):
        raise ValueError("mean_z must be 1-D and p_matrix square of the same size")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    codes = np.arange(s)
    ranked = codes[np.isfinite(mean_z)]
    order = ranked[np.lexsort((ranked, -mean_z[ranked]))]
    rank = np.full(s, -1, dtype=np.int64)
    cluster = np.full(s, -1, dtype=np.int64)
    rank[order] = np.arange(1, order.size + 1)
    current: list[int] = []
    number = 0
    with np.errstate(invalid="ignore"):
        for sys_code in order:
            if not current or bool(np.all(p[current, sys_code] < alpha)):
                number += 1
                current = []
            current.append(int(sys_code))
            cluster[sys_code] = number
    return Clusters(order=order.astype(np.int64), rank=rank, cluster=cluster, alpha=float(alpha))
