"""Adaptive allocation with a stopping rule: interim looks (docs/methods.md §12.2).

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
The pair test (stratified by batch, since the batches change the mix each
worker sees) is in :mod:`.sequential_pairs`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from . import _grouping as g
from . import sequential_pairs as sp
from .group_sequential import (
    RULES,
    _check_alpha,
    _check_increasing,
    _check_rule,
    boundaries,
    crossing_probabilities,
    spent_alpha,
)

__all__ = [
    "RULES",
    "Look",
    "spent_alpha",
    "boundaries",
    "crossing_probabilities",
    "rank_sum_z",
    "stratified_rank_sum_z",
    "predictive_power",
    "interim_look",
]

# --------------------------------------------------------------------------
# the test of one pair

stratified_rank_sum_z = sp.stratified_rank_sum_z


def rank_sum_z(x, y) -> float:
    """Standardised Wilcoxon rank-sum (Mann-Whitney) statistic of ``x`` against ``y`` (docs/methods.md §12.2).

    ``z = (U - n_x n_y / 2) / sqrt(n_x n_y / 12 * (N + 1 - sum(t^3 - t) / (N (N - 1))))``
    with ``U`` the Mann-Whitney U of ``x`` (mid-ranks for ties), ``N = n_x +
    n_y`` and ``t`` the sizes of the tie groups of the pooled sample: the
    normal approximation with tie-corrected variance and **no** continuity
    correction (a group-sequential boundary is a boundary on this z, which
    must be the canonical standard-normal statistic).  Positive when ``x``
    tends to be larger.  ``scipy.stats.mannwhitneyu(x, y,
    method="asymptotic", use_continuity=False)`` gives the same p-values.
    NaN when a sample is empty or every value ties.  (The one-stratum case
    of :func:`stratified_rank_sum_z`.)
    """
    return sp.stratified_rank_sum_z(x, y)


# --------------------------------------------------------------------------
# one interim look


@dataclass(frozen=True)
class Look:
    """What one interim look decided (docs/methods.md §12.2); arrays read-only.

    ``order``: system codes, best first (by ``means``; equal means by code;
    systems without scores last, by code).  ``pairs``: the adjacent pairs of
    that order, shape ``(n_systems - 1, 2)``, ``(better, worse)``.  ``z``:
    each pair's stratified rank-sum z (:func:`stratified_rank_sum_z`,
    positive when the better one ranks higher; NaN when not computable).
    ``boundary``: the critical ``|z|`` at this look for information
    proportional to the fractions.  ``pair_boundaries``: the critical value
    each pair was held to (its own information history when earlier looks'
    information or counts were given, else ``boundary``).  ``separated``:
    per pair, separated at this look or at an earlier one.  ``weights``: per
    system code, its share of the next batch (sums to 1).  ``done``: every
    adjacent pair is decided (separated, or futile): stop.

    ``means``: per system code, the mean unit value, with strata after
    removing each stratum's level (:func:`.sequential_pairs.adjusted_means`);
    NaN without scores.  ``counts``: units per system (judgments, or
    translations per stratum with ``segments``).  ``pair_information``:
    ``(n_systems, n_systems)`` information of every pair of systems
    (:func:`.sequential_pairs.pair_information`); keep it and pass the
    earlier looks' as ``earlier_information``.  ``information``: the
    adjacent pairs' entries of it.  ``predictive_power``: per pair, the
    chance of separating it by the end of the budget
    (:func:`predictive_power`; NaN at the last look or without a z).
    ``futile``: per pair, given up at this look or an earlier one (only with
    ``futility`` > 0; a futile pair is never separated, gets no batch share
    of its own, and counts as decided for ``done``).
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
    pair_information: np.ndarray

    def __post_init__(self):
        g.freeze(self)


def _batch_weights(open_pairs: np.ndarray, n_systems: int, floor: float) -> np.ndarray:
    """Share of the next batch per system: ``floor`` spread evenly, the rest by open pairs joined."""
    membership = np.bincount(open_pairs.ravel(), minlength=n_systems).astype(np.float64)
    if membership.sum() == 0:
        return np.full(n_systems, 1.0 / n_systems)
    return floor / n_systems + (1.0 - floor) * membership / membership.sum()


def predictive_power(z, fraction: float, final_boundary: float):
    """Chance that a pair now at ``z`` (information fraction ``t``) ends above ``final_boundary``
    (docs/methods.md §12.2).

    The Bayesian predictive power under a flat prior on the drift (Spiegelhalter,
    Freedman & Blackburn 1986; Jennison & Turnbull 2000 ch. 10):
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
    strata=None,
    earlier_information=None,
    earlier_counts=None,
    floor: float = 0.0,
    futility: float = 0.0,
    futility_from: float = 0.5,
    futile_before=frozenset(),
) -> Look:
    """One interim look of an adaptive campaign (docs/methods.md §12.2).

    ``scores``: the judgments that count (e.g. reliable workers' z-scores);
    ``systems``: their system codes ``0..n_systems-1``; ``fractions``: the
    information fractions of every look so far **including this one**
    (judgments spent / budget), non-decreasing; ``separated_before``:
    ``(better, worse)`` code pairs separated at earlier looks -- they stay
    separated, whichever way the means now order them.

    1. Units: the judgments, or with ``segments`` (a segment code per score)
       each translation's mean within a stratum, rounded to 12 digits, as the
       final ranking tests translations (docs/methods.md §5.3).  ``strata``
       (an integer per score; pass the batch of each judgment's HIT): the
       batches change the mix of outputs each worker sees, and with it the
       scale of their z-scores, so systems are compared within batches.
    2. Rank the systems by ``Look.means`` and take the adjacent pairs.
    3. Test each pair with van Elteren's stratified rank-sum z
       (:func:`stratified_rank_sum_z`; without strata the plain rank-sum z).
       A pair is separated when ``z >=`` its boundary (the better system by
       mean must also rank higher: the win rule of §5.3) or when it was
       separated before.
    4. Boundaries: Lan-DeMets spending by the fractions (:func:`boundaries`).
       The correlation of a pair's z across looks follows its *own*
       information (``Look.pair_information``), which grows faster than the
       fractions once the batches favour it.  With ``earlier_information``
       (the ``pair_information`` of every earlier look, in order) each pair
       gets the boundary for its information history, which keeps its error
       rate at alpha; ``earlier_counts`` (the earlier looks' ``counts``)
       approximates that history without strata.  With neither, every pair
       gets ``boundary`` (exact only for information proportional to the
       fractions).
    5. Futility (off unless ``futility`` > 0): from the fraction
       ``futility_from`` on (predictive power is too erratic on little data),
       an open pair whose :func:`predictive_power` is below ``futility`` is
       given up for good (``futile_before`` carries earlier verdicts, matched
       unordered): it is never separated afterwards, so giving up can only
       lower that pair's error rate (a binding futility stop for that pair).
    6. Weights for the next batch: ``floor`` of it spread evenly over all
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

    u = sp.units(scores, systems, n_systems, segments, strata)
    counts = u.counts()
    means = sp.adjusted_means(u)
    order = _ranking(means)
    pairs = np.stack([order[:-1], order[1:]], axis=1)
    by_system = [np.flatnonzero(u.system == s) for s in range(n_systems)]
    z = np.array([
        sp.stratified_rank_sum_z(u.value[by_system[a]], u.value[by_system[b]],
                                 u.stratum[by_system[a]], u.stratum[by_system[b]])
        for a, b in pairs
    ])
    info = sp.pair_information(u.counts_by_stratum())

    boundary = float(boundaries(fractions, alpha, rule)[-1])
    pair_bounds = np.full(len(pairs), boundary)
    history = _information_history(info, counts, earlier_information, earlier_counts, fractions.size)
    if history is not None:
        pair_bounds = _own_boundaries(pairs, history, fractions, alpha, rule)

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
        information=info[pairs[:, 0], pairs[:, 1]],
        predictive_power=power,
        futile=futile,
        pair_information=info,
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


def _information_history(info, counts, earlier_information, earlier_counts, n_looks):
    """Every pair's information at every look so far, shape ``(n_looks, n, n)``; None without history."""
    n = counts.size
    if earlier_information is not None:
        earlier = np.asarray(earlier_information, dtype=np.float64).reshape(-1, n, n)
        what = "earlier_information must hold one (n_systems, n_systems) matrix per earlier look"
    elif earlier_counts is not None:
        c = np.asarray(earlier_counts, dtype=np.float64).reshape(-1, n)
        earlier = np.stack([sp.pair_information(row[None, :]) for row in c]) if c.size else np.zeros((0, n, n))
        what = "earlier_counts must hold one count array (one count per system) per earlier look"
    else:
        return None
    if earlier.shape[0] != n_looks - 1:
        raise ValueError(what)
    return np.concatenate([earlier, info[None]], axis=0)


def _own_boundaries(pairs, history, fractions, alpha, rule) -> np.ndarray:
    """Each pair's boundary at this look for its own information history (docs/methods.md §12.2).

    The pair's information at each look, made non-decreasing (the canonical
    joint distribution needs nested data; a count shrinks only when a
    worker's judgments stop counting).  Looks before the pair had any
    information are skipped: the alpha they could have spent is carried to
    its first look with information (the spending is cumulative).  Looks at
    which the pair was not adjacent count as looks all the same: a test that
    was not made cannot reject, so the pair's error rate can only fall
    below the alpha spent.
    """
    out = np.full(len(pairs), math.inf)
    for p, (a, b) in enumerate(pairs):
        info = np.maximum.accumulate(history[:, a, b])
        seen = info > 0
        if seen[-1]:
            first = int(np.argmax(seen))
            out[p] = boundaries(fractions[first:], alpha, rule, information=info[first:])[-1]
    return out
