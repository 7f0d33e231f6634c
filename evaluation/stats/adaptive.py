"""Adaptive allocation with a stopping rule: alpha spending and interim looks (docs/methods.md §12).

A campaign in adaptive mode collects judgments in batches.  After each
batch it *looks*: it ranks the systems by mean score, tests every adjacent
pair of that ranking, declares a pair separated when its statistic crosses
a group-sequential boundary, and steers the next batch towards the systems
of the pairs still open.  It stops when every adjacent pair is separated
(``Look.done``) or when the budget is spent (the caller's business: the
information fraction reaches 1).

Error control (docs/methods.md §12): Lan-DeMets alpha spending.  The
information fraction of look k is ``t_k = judgments spent / budget``; by
then at most ``alpha(t_k)`` of the two-sided error rate may have been spent,
and at ``t = 1`` all of it.  The critical values are exact for the
canonical joint distribution of the z statistics (``z_k`` standard normal,
``corr(z_i, z_j) = sqrt(I_i / I_j)``, ``I`` the information), computed by
recursive numerical integration (Armitage, McPherson & Rowe's recursion
with Simpson's rule on a grid).  alpha is **per adjacent pair**: for a pair
of equal systems the probability of ever declaring them separated is at
most alpha (docs/methods.md §12 states the convention).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

from . import _grouping as g
from .rounding import round_significant

__all__ = [
    "RULES",
    "Look",
    "spent_alpha",
    "boundaries",
    "crossing_probabilities",
    "rank_sum_z",
    "interim_look",
]

#: Spending functions understood by :func:`spent_alpha` and :func:`boundaries`.
RULES = ("obrien-fleming", "pocock")

# |z| beyond this carries less than 1.3e-15 of the standard normal: the grid ends there
_Z_MAX = 8.0
# the grid step never exceeds this (z units) and never falls below _STEP_MIN
_STEP_MAX = 0.05
_STEP_MIN = 0.004
# information growing by less than this share between two looks counts as no new look
_MIN_GROWTH = 1e-4


# --------------------------------------------------------------------------
# spending functions and boundaries


def _check_alpha(alpha: float) -> float:
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return alpha


def _check_rule(rule: str) -> str:
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    return rule


def _check_increasing(values, name: str) -> np.ndarray:
    a = np.asarray(values, dtype=np.float64)
    if a.ndim != 1 or a.size == 0:
        raise ValueError(f"{name} must be a non-empty one-dimensional sequence")
    if not np.isfinite(a).all() or (a <= 0).any():
        raise ValueError(f"{name} must be finite and positive")
    if (np.diff(a) < 0).any():
        raise ValueError(f"{name} must not decrease from one look to the next")
    return a


def spent_alpha(fractions, alpha: float = 0.05, rule: str = "obrien-fleming") -> np.ndarray:
    """Cumulative two-sided alpha spent by information fractions ``t`` (Lan & DeMets 1983; docs/methods.md §12).

    * ``"obrien-fleming"``: ``alpha(t) = 2 - 2 Phi(z_{1-alpha/2} / sqrt(t))``
      -- spends almost nothing early, so the final test is nearly the fixed
      design's (boundaries like O'Brien & Fleming's).
    * ``"pocock"``: ``alpha(t) = alpha ln(1 + (e - 1) t)`` -- spends evenly,
      boundaries nearly constant (like Pocock's).

    ``fractions`` must be positive and non-decreasing; a fraction above 1
    (the last batch overshot the budget) counts as 1: ``alpha(1) = alpha``.
    """
    alpha = _check_alpha(alpha)
    t = np.minimum(_check_increasing(fractions, "fractions"), 1.0)
    if _check_rule(rule) == "obrien-fleming":
        return 2.0 * special.ndtr(-special.ndtri(1.0 - alpha / 2.0) / np.sqrt(t))
    return alpha * np.log1p((math.e - 1.0) * t)


def _simpson_grid(half_width: float, step: float) -> tuple[np.ndarray, np.ndarray]:
    """Points and Simpson weights on ``[-half_width, half_width]`` (odd count, step <= ``step``)."""
    n_intervals = max(2, 2 * math.ceil(half_width / step))
    z = np.linspace(-half_width, half_width, n_intervals + 1)
    h = z[1] - z[0]
    w = np.full(z.size, 2.0)
    w[1::2] = 4.0
    w[0] = w[-1] = 1.0
    return z, w * h / 3.0


def _two_tails(c: float, mean: np.ndarray, sd: float) -> np.ndarray:
    """P(|X| >= c) for X ~ N(mean, sd^2), elementwise."""
    return special.ndtr((-c - mean) / sd) + special.ndtr((mean - c) / sd)


def _sequential(information: np.ndarray, spend=None, bounds=None):
    """The recursion behind :func:`boundaries` and :func:`crossing_probabilities`.

    Walks the looks in order, carrying the sub-density of ``z`` on the
    continuation region ``|z| < c`` as masses on a Simpson grid.  With
    ``spend`` (cumulative alpha per look) it solves each look's critical
    value so that the probability of crossing *first* there is
    ``spend[k]`` minus what earlier looks actually spent; with ``bounds``
    it only evaluates the crossing probabilities.  Returns ``(bounds,
    crossing)``.  A look whose information grew by less than
    ``_MIN_GROWTH`` from the previous one adds nothing: its bound is
    infinite and its alpha is carried to the next look.
    """
    k_looks = information.size
    solve = bounds is None
    out_bounds = np.full(k_looks, np.inf) if solve else np.asarray(bounds, dtype=np.float64)
    crossing = np.zeros(k_looks)
    spent = 0.0
    z = masses = None  # sub-density of the previous look's z on its continuation region
    last_info = None
    for k in range(k_looks):
        if last_info is not None and information[k] <= last_info * (1.0 + _MIN_GROWTH):
            out_bounds[k] = np.inf
            continue
        if z is None:
            mean, sd = np.zeros(1), 1.0
            weight = np.ones(1)
        else:
            r = last_info / information[k]
            mean, sd, weight = math.sqrt(r) * z, math.sqrt(1.0 - r), masses

        def cross(c, mean=mean, sd=sd, weight=weight):
            return float(weight @ _two_tails(c, mean, sd))

        if solve:
            target = spend[k] - spent
            if target <= 0.0:
                c = np.inf
            elif cross(0.0) <= target:
                c = 0.0
            else:
                c = optimize.brentq(lambda x, t=target: cross(x) - t, 0.0, 40.0, xtol=1e-10)
            out_bounds[k] = c
        c = out_bounds[k]
        crossing[k] = cross(c) if np.isfinite(c) else 0.0
        spent += crossing[k]
        # the next look's kernel has sd sqrt(1 - r') / sqrt(r') in this look's z
        step = _STEP_MAX
        if k + 1 < k_looks and information[k + 1] > information[k] * (1.0 + _MIN_GROWTH):
            r_next = information[k] / information[k + 1]
            step = min(step, math.sqrt((1.0 - r_next) / r_next) / 4.0)
        step = max(min(step, sd / 4.0), _STEP_MIN)
        grid, simpson = _simpson_grid(min(c, _Z_MAX), step)
        density = weight @ (stats.norm.pdf((grid[None, :] - mean[:, None]) / sd) / sd)
        z, masses = grid, simpson * density
        last_info = information[k]
    return out_bounds, crossing


def boundaries(
    fractions, alpha: float = 0.05, rule: str = "obrien-fleming", information=None
) -> np.ndarray:
    """Two-sided critical ``|z|`` at each look (Lan-DeMets spending; docs/methods.md §12).

    ``fractions``: the information fractions of the looks so far, positive
    and non-decreasing (the last may be below 1 while the campaign runs;
    at ``t = 1`` the whole alpha is spent).  Look k's critical value
    ``c_k`` solves

        P(|z_1| < c_1, ..., |z_{k-1}| < c_{k-1}, |z_k| >= c_k) = alpha(t_k) - alpha(t_{k-1})

    under H0 for the canonical joint distribution of the z statistics:
    standard normal, ``corr(z_i, z_j) = sqrt(I_i / I_j)`` for ``i < j``.
    ``information`` (optional, any positive non-decreasing scale): the
    statistic's information at each look when it is not proportional to
    the fractions (e.g. a pair of systems that got more than its share of
    a batch); the default is the fractions themselves.  Alpha is spent by
    the fractions either way.

    Earlier looks' values do not depend on later looks, so calling again
    with one more fraction appended returns the same values plus one.  A
    look at which nothing is left to spend (or whose information did not
    grow by at least 0.01 %) gets ``inf``: no rejection is possible there
    and its alpha passes to the next look.  Accuracy: about 1e-4 in ``z``.
    """
    spend = spent_alpha(fractions, alpha, rule)
    info = spend_info = np.minimum(np.asarray(fractions, dtype=np.float64), 1.0)
    if information is not None:
        info = _check_increasing(information, "information")
        if info.size != spend_info.size:
            raise ValueError("information must have one value per look")
    return _sequential(info, spend=spend)[0]


def crossing_probabilities(bounds, information) -> np.ndarray:
    """Probability under H0 of crossing first at each look (canonical joint distribution; docs/methods.md §12).

    ``bounds``: critical ``|z|`` per look (``inf`` = no test at that look);
    ``information``: positive, non-decreasing information per look.  The
    sum is the overall two-sided error rate of the design, and equals the
    spent alpha when the bounds come from :func:`boundaries` with the same
    information.
    """
    info = _check_increasing(information, "information")
    b = np.asarray(bounds, dtype=np.float64)
    if b.shape != info.shape or np.isnan(b).any() or (b < 0).any():
        raise ValueError("bounds must be one non-negative value (or inf) per look")
    return _sequential(info, bounds=b)[1]


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
    4. Weights for the next batch: ``floor`` of it spread evenly over all
       systems, the rest in proportion to the number of open adjacent pairs
       each system belongs to (0, 1 or 2).  Uniform when nothing is open.

    ``done`` when every adjacent pair is separated (with one system, at
    once); the caller also stops when the fractions reach 1.
    """
    alpha = _check_alpha(alpha)
    _check_rule(rule)
    if n_systems < 1:
        raise ValueError("n_systems must be at least 1")
    floor = float(floor)
    if not 0.0 <= floor <= 1.0:
        raise ValueError(f"floor must be in [0, 1], got {floor}")
    systems = g.as_codes(systems, n_systems, "systems")
    scores = g.as_scores(scores, "scores")
    g.check_same_length(scores=scores, systems=systems)
    fractions = _check_increasing(fractions, "fractions")

    units = _units(scores, systems, n_systems, segments)
    counts = np.array([u.size for u in units], dtype=np.int64)
    means = np.array([u.mean() if u.size else np.nan for u in units])
    has = counts > 0
    codes = np.arange(n_systems)
    order = np.concatenate([
        codes[has][np.lexsort((codes[has], -means[has]))],
        codes[~has],
    ])
    pairs = np.stack([order[:-1], order[1:]], axis=1) if n_systems > 1 else np.zeros((0, 2), np.int64)
    z = np.array([rank_sum_z(units[a], units[b]) for a, b in pairs])
    information = _pair_information(counts[pairs[:, 0]], counts[pairs[:, 1]])

    boundary = float(boundaries(fractions, alpha, rule)[-1])
    pair_bounds = np.full(len(pairs), boundary)
    if earlier_counts is not None:
        history = np.asarray(earlier_counts, dtype=np.float64).reshape(-1, n_systems)
        if history.shape[0] != fractions.size - 1:
            raise ValueError("earlier_counts must hold one count array per earlier look")
        history = np.vstack([history, counts])
        for p, (a, b) in enumerate(pairs):
            info = np.maximum.accumulate(_pair_information(history[:, a], history[:, b]))
            pair_bounds[p] = _pair_boundary(fractions, info, alpha, rule)

    before = {frozenset((int(a), int(b))) for a, b in separated_before}
    was_separated = np.array([frozenset((int(a), int(b))) in before for a, b in pairs], dtype=bool)
    crossed = np.nan_to_num(z, nan=-np.inf) >= pair_bounds
    separated = was_separated | crossed
    weights = _batch_weights(pairs[~separated], n_systems, floor)
    return Look(
        order=order,
        pairs=pairs,
        z=z,
        boundary=boundary,
        separated=separated,
        weights=weights,
        done=bool(separated.all()),
        pair_boundaries=pair_bounds,
        means=means,
        counts=counts,
        information=information,
    )


def _pair_boundary(fractions, information, alpha, rule) -> float:
    """This look's boundary for one pair's information history (looks before it had any: skipped, alpha carried)."""
    spend = spent_alpha(fractions, alpha, rule)
    seen = information > 0
    if not seen[-1]:
        return math.inf
    first = int(np.argmax(seen))
    # alpha the unseen looks could have spent is carried to the first look with information
    return float(_sequential(information[first:], spend=spend[first:])[0][-1])
