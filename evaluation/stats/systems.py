"""System scores, pairwise significance, wins and clusters (docs/methods.md §5)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from . import _grouping as g
from . import esa_ranking as esa
from ._ranktests import RankSample, mwu
from .rounding import round_significant

__all__ = [
    "SystemScores",
    "Significance",
    "Clusters",
    "CLUSTER_RULES",
    "TRANSLATION_DIGITS",
    "system_scores",
    "significance",
    "stars",
    "wins",
    "clusters",
]

#: Significant digits kept in the per-translation means (docs/methods.md §5): WMT prints them with 15 and
#: ranks what it reads back. A preset may choose another number (`system_scores(digits=...)`).
TRANSLATION_DIGITS = 15

#: Cluster rules of :func:`clusters`: WMT's (default), the older "cluster above" rule, WMT25's and WMT24's.
CLUSTER_RULES = ("wmt", "above", "adjacent", "wmt24")


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
    (mean of the finite z-scores; NaN if none); both means summed in
    ascending order and rounded to ``digits`` (15) significant digits
    (:func:`~evaluation.stats.round_significant`).
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
    ``stars[i, j]``: '*', '**', '***' or '' for that p, in both directions
    (whether a significant p counts as a win is :func:`wins`' business).
    ``n``: translations per system that entered the tests.  ``method``: the
    null-distribution convention used ("r" or "scipy").
    """

    p: np.ndarray
    stars: np.ndarray
    n: np.ndarray
    method: str = "r"

    def __post_init__(self):
        g.freeze(self)


@dataclass(frozen=True)
class Clusters:
    """Result of :func:`clusters`.

    ``order``: system codes best first (systems with a NaN mean left out).
    Per system code: ``rank`` (1-based position in ``order``), ``cluster``
    (1-based, 1 = top), and the rank range ``rank_low`` (best possible
    rank: 1 + the number of systems that win against it) to ``rank_high``
    (worst possible rank: the number of ranked systems - the number of
    systems it wins against); all -1 for systems with a NaN mean.
    ``alpha`` and ``rule`` ("wmt" or "above") as passed.
    """

    order: np.ndarray
    rank: np.ndarray
    cluster: np.ndarray
    alpha: float
    rank_low: np.ndarray
    rank_high: np.ndarray
    rule: str

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


def system_scores(system, segment, raw, z, n_systems: int, confidence: float = 0.95,
                  digits: int = TRANSLATION_DIGITS) -> SystemScores:
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
       statistics.  **Each translation's scores are summed in ascending
       order** (the same multiset always gives the same bits, whatever
       order the database returns the rows in) **and both means are rounded
       to ``digits`` significant digits** (default 15, WMT's: its pipeline
       prints the means with 15 digits and ranks what it reads back;
       :func:`~evaluation.stats.round_significant`) before anything else
       uses them -- the system means and intervals here, and the rank tests
       the caller runs on them (:func:`significance`).  Means that are
       mathematically equal but summed from other numbers (one translation
       scored 50 and 90, another 70 and 70) then usually become
       bit-identical and tie in the rank tests.  Fewer digits merge means
       that WMT keeps apart (12 digits: about 100 of 3,600 per-translation
       means of one WMT21 pair).
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
    finite = np.isfinite(z)
    # equal numbers compare equal: a canonical summation order, then WMT's precision
    t_raw = round_significant(g.group_mean_canonical(inv, raw, n_t), digits)
    t_z = round_significant(g.group_mean_canonical(inv[finite], z[finite], n_t), digits)

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


def significance(translation_system, translation_z, n_systems: int, method: str = "r") -> Significance:
    """Pairwise one-sided Wilcoxon rank-sum tests between systems (docs/methods.md §5.3).

    Inputs are the per-translation arrays of :func:`system_scores`
    (``translation_system``, ``translation_z``; raw means work the same way),
    whose means are already rounded (15 significant digits by default) so
    that equal means tie.  For every ordered pair (i, j), i != j: ``p[i, j]`` is the
    p-value of an unpaired, one-sided rank-sum test, H1: system i's
    translations score higher -- R's ``wilcox.test(x_i, x_j,
    alternative="greater")``.  Each unordered pair is ranked once and gives
    both directions; ties get mid-ranks.

    ``method="r"`` (default; WMT's scripts run R): the exact null
    distribution when both systems have fewer than 50 translations and no
    value ties across the two samples (=
    ``scipy.stats.mannwhitneyu(x_i, x_j, alternative="greater",
    method="exact")``); otherwise the normal approximation with
    tie-corrected variance and continuity correction 0.5 (=
    ``method="asymptotic", use_continuity=True``).  ``method="scipy"``:
    scipy's ``method="auto"`` (exact only when a system has <= 8
    translations and nothing ties), the behaviour before R's rule.  Exact
    distributions are computed once per pair of sample sizes and cached.

    NaN z's are dropped first; a system without translations gets NaN rows
    and columns; a system with a single translation is tested normally (p
    can't get small).  Diagonal NaN.  ``stars`` as :func:`stars`.  A
    significant p of the lower-ranked system of a pair is reported here but
    never counts as a win (:func:`wins`).
    """
    ts = g.as_codes(translation_system, n_systems, "translation_system")
    tz = g.as_scores(translation_z, "translation_z", allow_nan=True)
    g.check_same_length(translation_system=ts, translation_z=tz)
    if method not in ("r", "scipy"):
        raise ValueError(f"method must be 'r' or 'scipy', got {method!r}")
    ok = np.isfinite(tz)
    samples = [RankSample(x) for x in g.group_split(ts[ok], tz[ok], n_systems)]
    p = np.full((n_systems, n_systems), np.nan)
    for i in range(n_systems):
        for j in range(i + 1, n_systems):
            _, p_ij, p_ji = mwu(samples[i], samples[j], method=method)
            p[i, j] = p_ij
            p[j, i] = p_ji
    n = np.array([s.n for s in samples], dtype=np.int64)
    return Significance(p=p, stars=stars(p), n=n, method=method)


def _check_mean_p(mean, p_matrix, alpha):
    mean = np.asarray(mean, dtype=np.float64)
    p = np.asarray(p_matrix, dtype=np.float64)
    s = mean.size
    if mean.ndim != 1 or p.shape != (s, s):
        raise ValueError("mean must be 1-D and p_matrix square of the same size")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return mean, p


def wins(mean, p, alpha: float = 0.05) -> np.ndarray:
    """Which system wins against which (docs/methods.md §5.3; WMT since 2021).

    ``win[i, j]`` is True iff ``p[i, j] < alpha`` (strict; NaN p never
    wins) **and** system i is ranked above j, i.e. has the higher mean
    (``mean[i] > mean[j]``).  Equal means never win, in either direction,
    and a system with a NaN mean neither wins nor loses.  A significant p
    of the lower-ranked system (``p[i, j] < alpha`` with ``mean[i] <
    mean[j]``: the rank test and the means disagree, possible with skewed
    scores) is still reported by :func:`significance` but never counts.
    ``mean`` is the ranking score (mean z), ``p`` the matrix of
    :func:`significance`.  Returns an (n, n) bool array, False on the
    diagonal.
    """
    mean, p = _check_mean_p(mean, p, alpha)
    with np.errstate(invalid="ignore"):
        return (p < alpha) & (mean[:, None] > mean[None, :])


def clusters(mean_z, p_matrix, alpha: float = 0.05, rule: str = "wmt") -> Clusters:
    """Rank systems by mean z, split them into clusters, give rank ranges (docs/methods.md §5.3).

    Order: mean z descending; equal means are ordered by system code
    (ascending), so the result is deterministic.  Systems with a NaN mean
    are not ranked (rank, cluster and rank range -1).  Wins as
    :func:`wins` (``p_matrix[i, j] < alpha`` and a higher mean; NaN p is
    not significant).

    ``rule="wmt"`` (default; WMT's findings since 2021, Akhbardeh et al.
    2021): a cluster boundary falls directly below rank k when the system
    at rank k wins against **every** system ranked below it.  Clusters are
    numbered 1, 2, ... from the top.

    ``rule="above"`` (the rule used before): walking down the order, the
    first system opens cluster 1; "the cluster above" a system s is the one
    that is open when s is reached, with all members that joined it so far.
    s opens a new cluster when it is significantly worse than every member
    of that cluster (``p_matrix[m, s] < alpha`` for all members m), and
    otherwise joins it.  Only the cluster directly above is consulted.

    ``rule="adjacent"`` (WMT25's ESA findings): a boundary falls between two
    neighbours in the order where the upper one's p against the lower one
    is below alpha (e.g. a one-sided paired Wilcoxon); no other pair is
    consulted. Rank ranges walk from the system to the first significant
    system above and below (:func:`~evaluation.stats.esa_ranking.wmt25_rank_ranges`).

    ``rule="wmt24"`` (WMT24's ``get_clusters``): a boundary only where every
    system above differs (p ≤ alpha) from every system below; rank ranges
    (losses + 1, N − wins) (:mod:`~evaluation.stats.esa_ranking`).

    Rank ranges of the other rules: ``rank_low`` (best possible rank) = 1 +
    the number of systems that win against the system; ``rank_high``
    (worst possible rank) = the number of ranked systems - the number of
    systems it wins against.
    """
    if rule not in CLUSTER_RULES:
        raise ValueError(f"rule must be one of {CLUSTER_RULES}, got {rule!r}")
    mean_z, p = _check_mean_p(mean_z, p_matrix, alpha)
    s = mean_z.size
    codes = np.arange(s)
    ranked = codes[np.isfinite(mean_z)]
    order = ranked[np.lexsort((ranked, -mean_z[ranked]))].astype(np.int64)
    rank = np.full(s, -1, dtype=np.int64)
    cluster = np.full(s, -1, dtype=np.int64)
    rank_low = np.full(s, -1, dtype=np.int64)
    rank_high = np.full(s, -1, dtype=np.int64)
    rank[order] = np.arange(1, order.size + 1)
    win = wins(mean_z, p, alpha)

    if order.size:
        if rule == "wmt":
            w = win[np.ix_(order, order)]
            below = np.triu(np.ones(w.shape, dtype=bool), k=1)
            beats_all_below = np.all(w | ~below, axis=1)
            # a boundary below position k opens a new cluster at position k + 1
            cluster[order] = 1 + np.r_[0, np.cumsum(beats_all_below[:-1])]
        elif rule == "adjacent":
            cluster[order] = esa.wmt25_clusters(order, p, alpha)
        elif rule == "wmt24":
            cluster[order] = esa.wmt24_clusters(order, p, alpha)
        else:
            current: list[int] = []
            number = 0
            with np.errstate(invalid="ignore"):
                for sys_code in order:
                    if not current or bool(np.all(p[current, sys_code] < alpha)):
                        number += 1
                        current = []
                    current.append(int(sys_code))
                    cluster[sys_code] = number
        if rule == "adjacent":
            rank_low[order], rank_high[order] = esa.wmt25_rank_ranges(order, p, alpha)
        elif rule == "wmt24":
            rank_low[order], rank_high[order] = esa.wmt24_rank_ranges(order, mean_z, p, alpha)
        else:
            rank_low[order] = 1 + win[:, order].sum(axis=0)
            rank_high[order] = order.size - win[order, :].sum(axis=1)

    return Clusters(
        order=order,
        rank=rank,
        cluster=cluster,
        alpha=float(alpha),
        rank_low=rank_low,
        rank_high=rank_high,
        rule=rule,
    )
