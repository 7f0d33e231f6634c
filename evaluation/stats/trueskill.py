"""TrueSkill over pairwise outcomes, and rank ranges and clusters from bootstrap runs
(docs/methods.md §8; Sakaguchi, Post & Van Durme 2014, WMT14-16).

The `trueskill` package (Lee's implementation of Herbrich et al. 2006) takes about 100 µs per
two-player update here, as it builds a factor graph for every match. For two players the graph
has one truncation factor and its message passing reaches the closed form in one step, so this
module applies the same update equations directly: for winner w and loser l (or a draw),

    σ² ← σ² + τ²,   c² = 2β² + σw² + σl²,   t = (μw − μl)/c,   ε = draw margin / c
    μw ← μw + σw²/c · v(t, ε),   μl ← μl − σl²/c · v(t, ε)
    σ² ← σ² · (1 − σ²/c² · w(t, ε))   (for both)

with v, w the package's `v_win`/`w_win` (or `v_draw`/`w_draw`) and the draw margin
Φ⁻¹((p + 1)/2) · √2 · β. ``backend="trueskill"`` (the default) uses the package's own
approximations of Φ and Φ⁻¹ (Numerical Recipes' erfc), so the results equal the package's default
environment, the one WMT ran, to rounding; ``backend="exact"`` uses ``math.erfc``.

TrueSkill is sequential: each update depends on the one before, so a pass is one loop over the
outcomes in the given order, kept lean (plain floats, no objects). Bootstrap runs are independent
and run in parallel (Celery subtasks, see evaluation/tasks.py).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _grouping as g

BACKENDS = ("trueskill", "exact")
_SQRT2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def _erfc_nr(x: float) -> float:
    """Numerical Recipes' erfc (relative error < 1.2e-7), as the trueskill package computes it."""
    z = abs(x)
    t = 1.0 / (1.0 + z / 2.0)
    r = t * math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (
        -0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (
            -0.82215223 + t * 0.17087277)))))))))
    return 2.0 - r if x < 0 else r


def _erfcinv(y: float, erfc) -> float:
    """The trueskill package's inverse of erfc: a rational first guess and two Newton steps."""
    if y >= 2:
        return -100.0
    if y <= 0:
        return 100.0
    zero_point = y < 1
    if not zero_point:
        y = 2 - y
    t = math.sqrt(-2 * math.log(y / 2.0))
    x = -0.70711 * ((2.30753 + t * 0.27061) / (1.0 + t * (0.99229 + t * 0.04481)) - t)
    for _ in range(2):
        err = erfc(x) - y
        x += err / (1.12837916709551257 * math.exp(-(x**2)) - x * err)
    return x if zero_point else -x


@dataclass(frozen=True)
class TrueSkillSettings:
    """The environment. Defaults are WMT's (the wmt-trueskill scripts of Sakaguchi et al. 2014):
    μ0 = 0, σ0 = 0.5, τ = 0, draw probability 0.25 and β = σ0 · (n + 1) / 40 for n outcomes
    (``beta=None``); the package's own defaults are μ0 = 25, σ0 = 25/3, β = σ0/2, τ = σ0/100, 0.10."""

    mu: float = 0.0
    sigma: float = 0.5
    beta: float | None = None
    tau: float = 0.0
    draw_probability: float = 0.25
    backend: str = "trueskill"

    def beta_for(self, n_outcomes: int) -> float:
        return self.sigma * (n_outcomes + 1) / 40.0 if self.beta is None else self.beta

    def draw_margin(self, beta: float) -> float:
        erfc = _erfc_nr if self.backend == "trueskill" else math.erfc
        if self.backend == "trueskill":
            ppf = -_SQRT2 * _erfcinv(2 * ((self.draw_probability + 1) / 2.0), erfc)
        else:
            from scipy.special import ndtri
            ppf = float(ndtri((self.draw_probability + 1) / 2.0))
        return ppf * _SQRT2 * beta

    def __post_init__(self):
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}")
        if not 0 <= self.draw_probability < 1 or self.sigma <= 0 or self.tau < 0:
            raise ValueError("need 0 <= draw_probability < 1, sigma > 0 and tau >= 0")


@dataclass(frozen=True)
class TrueSkillResult:
    mu: np.ndarray
    sigma: np.ndarray
    beta: float
    n_updates: int

    def __post_init__(self):
        g.freeze(self)


def winner_loser(first, second, result) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Outcomes as (winner, loser, drawn); for a draw the pair keeps its screen order."""
    first, second, result = (np.asarray(x) for x in (first, second, result))
    swap = result < 0
    return np.where(swap, second, first), np.where(swap, first, second), result == 0


def trueskill_pass(winner, loser, drawn, n_systems: int, settings: TrueSkillSettings = TrueSkillSettings(),
                   n_outcomes: int | None = None) -> TrueSkillResult:
    """One TrueSkill pass over the outcomes in the order given (shuffle them first for WMT's random order).

    ``n_outcomes`` sets WMT's β when ``settings.beta`` is None (default: the number of outcomes given).
    Where the package would raise a FloatingPointError (w leaves (0, 1) in extreme mismatches), w is
    clamped to [0, 1)."""
    winner = g.as_codes(winner, n_systems, "winner")
    loser = g.as_codes(loser, n_systems, "loser")
    drawn = np.asarray(drawn, dtype=bool)
    g.check_same_length(winner=winner, loser=loser, drawn=drawn)
    beta = settings.beta_for(winner.size if n_outcomes is None else n_outcomes)
    mu, var = _run(winner.tolist(), loser.tolist(), drawn.tolist(), n_systems, settings, beta)
    return TrueSkillResult(mu=np.array(mu), sigma=np.sqrt(np.array(var)), beta=beta, n_updates=int(winner.size))


def _run(winners: list, losers: list, draws: list, n_systems: int, settings: TrueSkillSettings, beta: float):
    """The update loop over plain Python floats (see the module docstring for the equations)."""
    erfc = _erfc_nr if settings.backend == "trueskill" else math.erfc
    exp, sqrt = math.exp, math.sqrt
    mu = [float(settings.mu)] * n_systems
    var = [float(settings.sigma) ** 2] * n_systems
    tau2, two_beta2 = settings.tau**2, 2.0 * beta * beta
    margin = settings.draw_margin(beta)
    for w, lo, d in zip(winners, losers, draws, strict=True):
        vw = var[w] + tau2
        vl = var[lo] + tau2
        c2 = two_beta2 + vw + vl
        c = sqrt(c2)
        t = (mu[w] - mu[lo]) / c
        e = margin / c
        if d:
            at = abs(t)
            a, b = e - at, -e - at
            denom = 0.5 * erfc(-a / _SQRT2) - 0.5 * erfc(-b / _SQRT2)
            pa, pb = _INV_SQRT_2PI * exp(-a * a / 2), _INV_SQRT_2PI * exp(-b * b / 2)
            v_abs = (pb - pa) / denom if denom else a
            v = -v_abs if t < 0 else v_abs
            ww = v_abs * v_abs + (a * pa - b * pb) / denom if denom else 1.0
        else:
            x = t - e
            denom = 0.5 * erfc(-x / _SQRT2)
            v = _INV_SQRT_2PI * exp(-x * x / 2) / denom if denom else -x
            ww = v * (v + x)
        if not 0.0 <= ww < 1.0:
            ww = 0.0 if ww < 0.0 else 1.0 - 1e-12
        mu[w] += vw / c * v
        mu[lo] -= vl / c * v
        var[w] = vw * (1.0 - vw / c2 * ww)
        var[lo] = vl * (1.0 - vl / c2 * ww)
    return mu, var


def bootstrap_sample(n: int, seed: int, run: int) -> np.ndarray:
    """Run ``run``'s resample: n outcome indices drawn with replacement, in the order drawn (a random order).
    Seeded by (seed, run), so a run gives the same sample whichever worker runs it."""
    return np.random.default_rng([seed, run]).integers(0, n, size=n)


def trueskill_bootstrap(winner, loser, drawn, n_systems: int, runs, seed: int,
                        settings: TrueSkillSettings = TrueSkillSettings()) -> np.ndarray:
    """μ per system for each of ``runs`` (run numbers): one pass over each run's bootstrap resample.
    Returns an array (len(runs), n_systems)."""
    winner, loser, drawn = np.asarray(winner), np.asarray(loser), np.asarray(drawn, dtype=bool)
    out = np.empty((len(runs), n_systems))
    for row, run in enumerate(runs):
        sample = bootstrap_sample(winner.size, seed, run)
        out[row] = trueskill_pass(winner[sample], loser[sample], drawn[sample], n_systems, settings).mu
    return out


@dataclass(frozen=True)
class RankRanges:
    """From bootstrap runs (WMT14-16, the wmt-trueskill ``cluster.py`` by rank): per system the mean μ over
    runs, the rank range (the ranks left after dropping ⌈(R − R·confidence)/2⌉ runs at each end), the
    order by mean μ, the rank in that order and the cluster."""

    mean_mu: np.ndarray
    sd_mu: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    order: np.ndarray
    rank: np.ndarray
    cluster: np.ndarray
    runs: int
    confidence: float

    def __post_init__(self):
        g.freeze(self)


def run_ranks(mu_runs: np.ndarray) -> np.ndarray:
    """Each run's rank of each system, 1 = highest μ; equal μ by system code (a stable order)."""
    mu_runs = np.asarray(mu_runs, dtype=np.float64)
    order = np.argsort(-mu_runs, axis=1, kind="stable")
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.arange(1, mu_runs.shape[1] + 1)[None, :].repeat(mu_runs.shape[0], 0), 1)
    return ranks


def clusters_from_ranges(order: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Cluster numbers (1 = top) per system, with systems in `order` (best first) and their rank ranges [low,
    high]: a cluster ends after a system whose worst rank is better than the best rank of every system below
    it (the wmt-trueskill `cluster.py` rule, WMT14)."""
    low_in_order, high_in_order = np.asarray(low)[order], np.asarray(high)[order]
    best_below = np.minimum.accumulate(low_in_order[::-1])[::-1]
    boundary = np.r_[high_in_order[:-1] < best_below[1:], False]
    cluster = np.empty(len(order), dtype=np.int64)
    cluster[order] = np.r_[0, np.cumsum(boundary[:-1])] + 1
    return cluster


def rank_ranges(mu_runs, confidence: float = 0.95) -> RankRanges:
    """Rank ranges and clusters (WMT14 §3.3): a cluster ends after a system whose worst rank is better than
    the best rank of every system below it. With fewer runs than needed to drop one at each end, the range
    is the full range of ranks seen. ``sd_mu`` is the population sd of μ over runs (numpy's, as WMT's)."""
    mu_runs = np.asarray(mu_runs, dtype=np.float64)
    n_runs, n_systems = mu_runs.shape
    ranks = np.sort(run_ranks(mu_runs), axis=0)
    drop = math.ceil((n_runs - n_runs * confidence) / 2.0)
    if n_runs - 2 * drop < 1:
        drop = 0
    low, high = ranks[drop], ranks[n_runs - drop - 1]
    mean_mu = mu_runs.mean(axis=0)
    order = np.lexsort((np.arange(n_systems), -mean_mu))
    rank = np.empty(n_systems, dtype=np.int64)
    rank[order] = np.arange(1, n_systems + 1)
    cluster = clusters_from_ranges(order, low, high)
    return RankRanges(mean_mu=mean_mu, sd_mu=mu_runs.std(axis=0), rank_low=low.astype(np.int64),
                      rank_high=high.astype(np.int64), order=order, rank=rank, cluster=cluster, runs=n_runs,
                      confidence=confidence)
