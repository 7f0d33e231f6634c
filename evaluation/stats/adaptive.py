"""Adaptive allocation with a stopping rule: interim looks (docs/methods.md §12).

A campaign in adaptive mode collects judgments in batches.  After each
batch it *looks* (:func:`interim_look`): it ranks the systems by mean score,
tests every adjacent pair of that ranking, declares a pair separated when
its statistic crosses a group-sequential boundary, optionally gives up pairs
with no prospect of separating, and steers the next batch towards the
systems of the pairs still open.  It stops when every adjacent pair is
decided (``Look.done``) or when the budget is spent (the caller's business:
the information fraction reaches 1).

Error control: Lan-DeMets alpha spending over the information fraction
``t_k = judgments spent / budget``, with critical values exact for the
canonical joint distribution of each pair's z statistics
(:mod:`.group_sequential`; :func:`spent_alpha` and :func:`boundaries` are
re-exported here).  alpha is **per adjacent pair**: for a pair of equal
systems the probability of ever declaring them separated is at most alpha.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from . import _grouping as g
from .group_sequential import (
    RULES,
    _check_alpha,
    _check_increasing,
    _check_rule,
    boundaries,
    crossing_probabilities,
    spent_alpha,
)
from .rounding import round_significant

__all__ = [
    "RULES",
    "Look",
    "spent_alpha",
    "boundaries",
    "crossing_probabilities",
    "rank_sum_z",
    "predictive_power",
    "interim_look",
]

# --------------------------------------------------------------------------
# the test of one pair


def rank_sum_z(x, y) -> float:
    """Standardised Wilcoxon rank-sum (Mann-Whitney) statistic of ``x`` against ``y`` (docs/methods.md §12).

    ``z = (U - n_x n_y / 2) / sqrt(n_x n_y / 12 * (N + 1 - sum(t^3 - t) / (N (N - 1))))``
    with ``U`` the Mann-Whitney U of ``x`` (mid-ranks for ties), ``N = n_x +
    n_y`` and ``t`` the sizes of the tie groups of the pooled sample: the
    normal approximation with tie-corrected variance and **no** continuity
    correction (a group-sequential boundary is a boundary on this z, which
    must be the canonical standard-normal statistic).  Positive when ``x``
    tends to be larger.  ``scipy.stats.mannwhitneyu(x, y,
    method="asymptotic", use_continuity=False)`` gives the same p-values.
    NaN when a sample is empty or every value ties.
    """
    x = g.as_scores(x, "x")
    y = g.as_scores(y, "y")
    n_x, n_y = x.size, y.size
    if n_x == 0 or n_y == 0:
        return math.nan
    n = n_x + n_y
    y_sorted = np.sort(y)
    below = np.searchsorted(y_sorted, x, side="left")
    tied = np.searchsorted(y_sorted, x, side="right") - below
    u = float(below.sum() + 0.5 * tied.sum())
    _, ties = np.unique(np.concatenate([x, y]), return_counts=True)
    ties = ties.astype(np.float64)
    variance = n_x * n_y / 12.0 * ((n + 1) - float(np.sum(ties**3 - ties)) / (n * (n - 1)))
    if variance <= 0.0:
        return math.nan
    return (u - n_x * n_y / 2.0) / math.sqrt(variance)


# --------------------------------------------------------------------------
# one interim look


@dataclass(frozen=True)
class Look:
    """What one interim look decided (docs/methods.md §12); arrays read-only.

    ``order``: system codes, best first (by mean score; equal means by code;
    systems without scores last, by code).  ``pairs``: the adjacent pairs of
    that order, shape ``(n_systems - 1, 2)``, ``(better, worse)``.  ``z``:
    each pair's rank-sum z (:func:`rank_sum_z`, positive when the better
    one ranks higher; NaN when not computable).  ``boundary``: the critical
    ``|z|`` at this look for information proportional to the fractions.
    ``pair_boundaries``: the critical value each pair was held to (its own
    information history when ``earlier_counts`` was given, else
    ``boundary``).  ``separated``: per pair, separated at this look or at an
    earlier one.  ``weights``: per system code, its share of the next batch
    (sums to 1).  ``done``: every adjacent pair is separated: stop.
    ``means`` / ``counts``: per system code, the mean score (NaN without
    scores) and the number of units tested (judgments, or translations with
    ``segments``); keep ``counts`` and pass the earlier looks' as
    ``earlier_counts``.  ``information``: per pair, ``n_a n_b / (n_a + n_b)``.
    ``predictive_power``: per pair, the chance of separating it by the end
    of the budget (:func:`predictive_power`; NaN at the last look or
    without a z).  ``futile``: per pair, given up at this look or an earlier
    one (only with ``futility`` > 0; a futile pair is never separated, gets
    no batch share of its own, and counts as decided for ``done``).
    """

    order: np.ndarray
    pairs: np.ndarray
    z: np.ndarray
    boundary: float
    separated: np.ndarray
    weights: np.ndarray
    done: bool
    pair_boundaries: np.ndarray
    means: np.ndarray
    counts: np.ndarray
    information: np.ndarray
    predictive_power: np.ndarray
    futile: np.ndarray

    def __post_init__(self):
        g.freeze(self)


def _units(scores, systems, n_systems, segments):
    """Per system: the values tested (judgments, or per-translation means) as arrays."""
    if segments is None:
        return g.group_split(systems, scores, n_systems)
    segments = np.asarray(segments)
    if segments.shape != systems.shape or not np.issubdtype(segments.dtype, np.integer):
        raise ValueError("segments must be one integer code per score")
    if segments.size and segments.min() < 0:
        raise ValueError("segments must be non-negative codes")
    n_segments = int(segments.max()) + 1 if segments.size else 1
    key = systems * n_segments + segments.astype(np.int64)
    uniques, inverse = g.factorize(key, n_systems * n_segments)
    means = round_significant(g.group_mean(inverse, scores, uniques.size))
    return g.group_split(uniques // n_segments, means, n_systems)


def _pair_information(n_a, n_b):
    n_a = np.asarray(n_a, dtype=np.float64)
    n_b = np.asarray(n_b, dtype=np.float64)
    total = n_a + n_b
    out = np.zeros(np.broadcast(n_a, n_b).shape)
    np.divide(n_a * n_b, total, out=out, where=total > 0)
    return out


def _batch_weights(open_pairs: np.ndarray, n_systems: int, floor: float) -> np.ndarray:
    """Share of the next batch per system: ``floor`` spread evenly, the rest by open pairs joined."""
    membership = np.bincount(open_pairs.ravel(), minlength=n_systems).astype(np.float64)
    if membership.sum() == 0:
        return np.full(n_systems, 1.0 / n_systems)
    return floor / n_systems + (1.0 - floor) * membership / membership.sum()


def predictive_power(z, fraction: float, final_boundary: float):
    """Chance that a pair now at ``z`` (information fraction ``t``) ends above ``final_boundary`` (docs/methods.md §12).

    The Bayesian predictive power under a flat prior on the drift (Spiegelhalter,
    Freedman & Blackburn 1986; Jennison & Turnbull 2000 §10.3):
    ``Phi((z - c sqrt(t)) / sqrt(1 - t))`` with ``c`` the critical value of one
    final look at ``t = 1``.  It averages conditional power over what the data
    say about the effect, so it is less rash than conditional power at the
    current estimate early on.  One-sided: a pair whose ranks disagree with its
    order (``z < 0``) has little.  NaN for NaN ``z`` and at ``t >= 1``.
    """
    z = np.asarray(z, dtype=np.float64)
    if fraction >= 1.0:
        return np.full(z.shape, np.nan)
    return special.ndtr((z - final_boundary * math.sqrt(fraction)) / math.sqrt(1.0 - fraction))


def interim_look(
    scores,
    systems,
    n_systems: int,
    fractions,
    alpha: float = 0.05,
    rule: str = "obrien-fleming",
    separated_before=frozenset(),
    *,
    segments=None,
    earlier_counts=None,
    floor: float = 0.0,
    futility: float = 0.0,
    futility_from: float = 0.5,
    futile_before=frozenset(),
) -> Look:
    """One interim look of an adaptive campaign (docs/methods.md §12).

    ``scores``: the judgments that count (e.g. reliable workers' z-scores);
    ``systems``: their system codes ``0..n_systems-1``; ``fractions``: the
    information fractions of every look so far **including this one**
    (judgments spent / budget), non-decreasing; ``separated_before``:
    ``(better, worse)`` code pairs separated at earlier looks -- they stay
    separated, whichever way the means now order them.

    1. Rank the systems by mean score and take the adjacent pairs.
    2. Test each pair with the two-sided rank-sum z (:func:`rank_sum_z`) on
       its two systems' values: the judgments, or with ``segments`` (a
       segment code per score) the per-translation means rounded to 12
       digits, as the final ranking tests them (docs/methods.md §5.3).  A
       pair is separated when ``z >= `` its boundary (the better system by
       mean must also rank higher: the win rule of §5.3) or when it was
       separated before.
    3. Boundaries: Lan-DeMets spending by the fractions (:func:`boundaries`).
       The correlation of a pair's z across looks follows its *own*
       information ``n_a n_b / (n_a + n_b)``, which grows faster than the
       fractions once the batches favour it; with ``earlier_counts`` (the
       ``counts`` of every earlier look, in order) each pair gets the
       boundary for its information history, which keeps its error rate at
       alpha.  Without them every pair gets ``boundary`` (exact only for
       information proportional to the fractions).
    4. Futility (off unless ``futility`` > 0): from the fraction
       ``futility_from`` on (predictive power is too erratic on little data),
       an open pair whose :func:`predictive_power` is below ``futility`` is
       given up for good
       (``futile_before`` carries earlier verdicts, matched unordered): it is
       never separated afterwards, so giving up can only lower the error
       rate (a binding futility stop for that pair).
    5. Weights for the next batch: ``floor`` of it spread evenly over all
       systems, the rest in proportion to the number of open adjacent pairs
       (neither separated nor futile) each system belongs to (0, 1 or 2).
       Uniform when nothing is open.

    ``done`` when every adjacent pair is separated or futile (with one
    system, at once); the caller also stops when the fractions reach 1.
    """
    alpha = _check_alpha(alpha)
    _check_rule(rule)
    if n_systems < 1:
        raise ValueError("n_systems must be at least 1")
    floor, futility = float(floor), float(futility)
    if not 0.0 <= floor <= 1.0:
        raise ValueError(f"floor must be in [0, 1], got {floor}")
    if not 0.0 <= futility < 1.0:
        raise ValueError(f"futility must be in [0, 1), got {futility}")
    systems = g.as_codes(systems, n_systems, "systems")
    scores = g.as_scores(scores, "scores")
    g.check_same_length(scores=scores, systems=systems)
    fractions = _check_increasing(fractions, "fractions")

    units = _units(scores, systems, n_systems, segments)
    counts = np.array([u.size for u in units], dtype=np.int64)
    means = np.array([u.mean() if u.size else np.nan for u in units])
    order = _ranking(means)
    pairs = np.stack([order[:-1], order[1:]], axis=1)
    z = np.array([rank_sum_z(units[a], units[b]) for a, b in pairs])
    information = _pair_information(counts[pairs[:, 0]], counts[pairs[:, 1]])

    boundary = float(boundaries(fractions, alpha, rule)[-1])
    pair_bounds = np.full(len(pairs), boundary)
    if earlier_counts is not None:
        pair_bounds = _own_boundaries(pairs, counts, earlier_counts, fractions, alpha, rule)

    was_separated = _among(pairs, separated_before)
    was_futile = _among(pairs, futile_before) & ~was_separated
    crossed = np.nan_to_num(z, nan=-np.inf) >= pair_bounds
    separated = was_separated | (crossed & ~was_futile)
    t = float(min(fractions[-1], 1.0))
    final = float(boundaries([*fractions, 1.0], alpha, rule)[-1]) if t < 1.0 else math.inf
    power = predictive_power(z, t, final)
    give_up = (np.nan_to_num(power, nan=1.0) < futility) if t >= futility_from else np.zeros(len(pairs), bool)
    futile = was_futile | (~separated & give_up)
    decided = separated | futile
    return Look(
        order=order,
        pairs=pairs,
        z=z,
        boundary=boundary,
        separated=separated,
        weights=_batch_weights(pairs[~decided], n_systems, floor),
        done=bool(decided.all()),
        pair_boundaries=pair_bounds,
        means=means,
        counts=counts,
        information=information,
        predictive_power=power,
        futile=futile,
    )


def _ranking(means: np.ndarray) -> np.ndarray:
    """System codes best first: by mean, equal means by code, systems without a mean last."""
    codes = np.arange(means.size)
    has = ~np.isnan(means)
    return np.concatenate([codes[has][np.lexsort((codes[has], -means[has]))], codes[~has]])


def _among(pairs: np.ndarray, known) -> np.ndarray:
    """Per adjacent pair: whether it is in ``known`` (pairs of codes, either way round)."""
    known = {frozenset((int(a), int(b))) for a, b in known}
    return np.array([frozenset((int(a), int(b))) in known for a, b in pairs], dtype=bool)


def _own_boundaries(pairs, counts, earlier_counts, fractions, alpha, rule) -> np.ndarray:
    """Each pair's boundary at this look for its own information history (docs/methods.md §12).

    Information per look ``n_a n_b / (n_a + n_b)`` from the counts of every
    look; made non-decreasing (a count can shrink when a worker turns out
    unreliable: the earlier look's information is then an overstatement,
    which only raises the boundary).  Looks before the pair had any
    information are skipped: the alpha they could have spent is carried to
    its first look with information (the spending is cumulative).
    """
    n_systems = counts.size
    history = np.asarray(earlier_counts, dtype=np.float64).reshape(-1, n_systems)
    if history.shape[0] != fractions.size - 1:
        raise ValueError("earlier_counts must hold one count array (one count per system) per earlier look")
    history = np.vstack([history, counts])
    out = np.full(len(pairs), math.inf)
    for p, (a, b) in enumerate(pairs):
        info = np.maximum.accumulate(_pair_information(history[:, a], history[:, b]))
        seen = info > 0
        if seen[-1]:
            first = int(np.argmax(seen))
            out[p] = boundaries(fractions[first:], alpha, rule, information=info[first:])[-1]
    return out
