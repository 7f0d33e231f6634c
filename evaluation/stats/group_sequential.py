"""Group-sequential boundaries by Lan-DeMets alpha spending (docs/methods.md §12.2).

A statistic looked at K times as data accumulate (z_1, ..., z_K) has, under
H0 and for normal data or large samples, the *canonical joint
distribution*: each z_k standard normal, ``corr(z_i, z_j) = sqrt(I_i / I_j)``
for ``i < j``, ``I`` the information (inverse variance of the estimate).
Testing each look at the fixed design's critical value would inflate the
error rate; Lan & DeMets (1983) spend it instead: by information fraction
``t`` at most ``alpha(t)`` may have been spent, ``alpha(1) = alpha``.  The
critical values follow one look at a time from the joint distribution, by
recursive numerical integration (Armitage, McPherson & Rowe 1969; Jennison
& Turnbull 2000 ch. 19): the sub-density of z on the region not yet
rejected is carried from look to look on a Simpson grid.  Two-sided,
symmetric boundaries throughout.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

__all__ = ["RULES", "spent_alpha", "boundaries", "crossing_probabilities"]

RULES = ("obrien-fleming", "pocock")

# |z| beyond this carries less than 1.3e-15 of the standard normal: the grid ends there
_Z_MAX = 8.0
# the grid step never exceeds this (z units) and never falls below _STEP_MIN
_STEP_MAX = 0.05
_STEP_MIN = 0.004
# information growing by less than this share between two looks counts as no new look
_MIN_GROWTH = 1e-4
_SQRT_2PI = math.sqrt(2.0 * math.pi)


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
    """Cumulative two-sided alpha spent by information fractions ``t`` (Lan & DeMets 1983; docs/methods.md §12.2).

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


def _solve_bound(weight: np.ndarray, mean: np.ndarray, sd: float, target: float) -> float:
    """The c with ``sum(weight * P(|N(mean, sd^2)| >= c)) = target``: Newton's method on the logarithm, in a bracket.

    The crossing probability falls with c; the bracket starts at ``[0, c_marginal]``, ``c_marginal``
    solving ``P(|N(0, 1)| >= c) = target`` (z's marginal is standard normal, so crossing first can be
    no likelier), widened if rounding says otherwise.  On the log scale the far tail is nearly
    quadratic, so Newton converges in a few steps even for tiny targets; a step leaving the bracket
    bisects instead.
    """
    lo, hi = 0.0, float(-special.ndtri(target / 2.0))
    while float(weight @ _two_tails(hi, mean, sd)) > target:
        lo, hi = hi, hi + 0.5
    c, log_target = hi, math.log(target)
    for _ in range(200):
        p = float(weight @ _two_tails(c, mean, sd))
        if p <= 0.0:  # underflow: far beyond the root
            hi, step = c, 0.5 * (lo + c)
        else:
            f = math.log(p) - log_target
            if abs(f) < 1e-12:
                return c
            if f > 0:
                lo = c
            else:
                hi = c
            density = float(weight @ (np.exp(-0.5 * ((c - mean) / sd) ** 2) + np.exp(-0.5 * ((c + mean) / sd) ** 2)))
            slope = -density / (sd * _SQRT_2PI * p)
            step = c - f / slope if slope < 0 else 0.5 * (lo + hi)
            if not lo < step < hi:
                step = 0.5 * (lo + hi)
        if abs(step - c) < 1e-11:
            return step
        c = step
    return c


def _sequential(information: np.ndarray, spend=None, bounds=None):
    """The recursion behind :func:`boundaries` and :func:`crossing_probabilities`.

    Walks the looks in order, carrying the sub-density of ``z`` on the
    continuation region ``|z| < c`` as masses on a Simpson grid.  With
    ``spend`` (cumulative alpha per look) it solves each look's critical
    value so that the probability of crossing by then is ``spend[k]``;
    with ``bounds`` it only evaluates the crossing probabilities.  Returns
    ``(bounds, crossing)``, ``crossing[k]`` the probability of crossing
    first at look k.

    A look whose information grew by less than ``_MIN_GROWTH`` since the
    previous one sees the same z again: it is merged with that look into
    one test of that z at the lower of the two bounds, the bound solved
    for the alpha spent by the later fraction.  (Rejecting that z at
    either look is rejecting it at the lower bound, so the error rate is
    still the alpha spent; and a pair of systems that got no judgments
    since a look can still be tested, with the alpha spent meanwhile, when
    it becomes adjacent.)
    """
    k_looks = information.size
    solve = bounds is None
    out_bounds = np.full(k_looks, np.inf) if solve else np.asarray(bounds, dtype=np.float64).copy()
    crossing = np.zeros(k_looks)
    # the current analysis: the mixture its z is drawn from (before truncation), its information,
    # the alpha spent before it, what it has spent itself, and its bound (the lowest of its looks)
    mean, sd, weight = np.zeros(1), 1.0, np.ones(1)
    info, spent_before, spent_here, bound = None, 0.0, 0.0, math.inf
    for k in range(k_looks):
        if info is not None and information[k] > info * (1.0 + _MIN_GROWTH):
            r = info / information[k]
            z, masses = _continuation(mean, sd, weight, bound, r)
            mean, sd, weight = math.sqrt(r) * z, math.sqrt(1.0 - r), masses
            spent_before, spent_here, bound = spent_before + spent_here, 0.0, math.inf
        info = information[k] if info is None else max(info, information[k])

        if solve:
            target = spend[k] - spent_before
            if target <= 0.0:
                c = math.inf
            elif float(np.sum(weight)) <= target:
                c = 0.0
            else:
                c = _solve_bound(weight, mean, sd, target)
            out_bounds[k] = c
        bound = min(bound, out_bounds[k])
        now = float(weight @ _two_tails(bound, mean, sd)) if math.isfinite(bound) else 0.0
        crossing[k] = max(now - spent_here, 0.0)
        spent_here = max(now, spent_here)
    return out_bounds, crossing


def _continuation(mean, sd, weight, bound, r_next):
    """Masses on a Simpson grid of z's sub-density on ``|z| < bound``, fine enough for the next look's kernel."""
    step = min(_STEP_MAX, math.sqrt((1.0 - r_next) / r_next) / 4.0, sd / 4.0)
    grid, simpson = _simpson_grid(min(bound, _Z_MAX), max(step, _STEP_MIN))
    scaled = (grid[None, :] - mean[:, None]) / sd
    density = weight @ np.exp(-0.5 * scaled * scaled) / (sd * _SQRT_2PI)
    return grid, simpson * density


def boundaries(
    fractions, alpha: float = 0.05, rule: str = "obrien-fleming", information=None
) -> np.ndarray:
    """Two-sided critical ``|z|`` at each look (Lan-DeMets spending; docs/methods.md §12.2).

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
    look at which nothing is left to spend gets ``inf`` (no rejection
    there; its alpha passes to the next look).  A look whose information
    did not grow (by at least 0.01 %) tests the same z as the look before:
    the two are one test, at the bound for the alpha spent by the later
    fraction.  Accuracy: about 1e-5 in ``z``.
    """
    spend = spent_alpha(fractions, alpha, rule)
    info = spend_info = np.minimum(np.asarray(fractions, dtype=np.float64), 1.0)
    if information is not None:
        info = _check_increasing(information, "information")
        if info.size != spend_info.size:
            raise ValueError("information must have one value per look")
    return _sequential(info, spend=spend)[0]


def crossing_probabilities(bounds, information) -> np.ndarray:
    """Probability under H0 of crossing first at each look (canonical joint distribution; docs/methods.md §12.2).

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
