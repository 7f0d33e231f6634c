"""Power and cost from a pilot (docs/methods.md §12.3): how many translations per system, and so how many
judgments and HITs, a Direct Assessment campaign needs to separate two systems δ apart, by simulation from a
pilot's judgments.

The model of one counted judgment (a system-output judgment by a worker who passed quality control) of
system s on segment g is

    y = μ_s + u_g + v_sg + w,

u_g the segment effect (shared by every system's translation of segment g: all systems translate the same
test set), v_sg the translation effect (system × segment), w the judgment's noise (worker and slider).
A translation's value in the ranking test is the mean of its counted judgments (docs/methods.md §5.2).

What is resampled: the three components, each from its own pool estimated from the pilot (a two-stage
bootstrap of segments and of residuals within them; Davison & Hinkley 1997 §3.8). Neither whole segments
nor whole workers are resampled: a pilot's segment carries one or two judgments per system, so reusing it as
it is would give both simulated systems the same noise, and the planned campaign's redundancy and pass
rate (how many judgments a translation's mean averages) differ from what the pilot happens to hold.
Resampling residuals keeps the pilot's shapes (skew, the bounded slider) while the components are
recombined at the planned design. Worker effects stay in the noise: on the z scale they are standardised
away; on the raw scale a worker judges outputs of every system in a HIT, so treating their leniency as
independent noise makes the estimate slightly conservative.

No Django: arrays in, numbers out. Seeded (`numpy.random.SeedSequence`); the same arguments give the same
answer.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from . import _grouping as g
from ._ranktests import rank_sum_greater

__all__ = ["PilotVariance", "PowerSearch", "CampaignSize", "pilot_variance", "rank_sum_greater",
           "simulate_power", "required_translations", "campaign_size"]

#: Fewest segments translated by at least two systems a pilot needs for the segment/translation split.
MIN_SHARED_SEGMENTS = 10
#: Fewest counted judgments a pilot needs.
MIN_JUDGMENTS = 30
#: Repetitions simulated at once (a fixed number, so that every n draws the same numbers: see _simulate_chunk).
_CHUNK = 50


@dataclass(frozen=True)
class PilotVariance:
    """Result of :func:`pilot_variance`: the variance components (sample-size unbiased moment estimates,
    clipped at 0) and the centred resampling pools, each scaled to its component's sd.

    ``sd_segment`` (u), ``sd_translation`` (v), ``sd_noise`` (w; 0 when no translation has two counted
    judgments: the noise then stays inside v), ``sd_judgment`` = sd of the judgments around their system's
    mean (ddof=1). Counts: ``judgments``, ``translations``, ``segments``, ``systems``, ``shared_segments``
    (segments with translations of two or more systems)."""

    segment_pool: np.ndarray
    translation_pool: np.ndarray
    noise_pool: np.ndarray
    sd_segment: float
    sd_translation: float
    sd_noise: float
    sd_judgment: float
    judgments: int
    translations: int
    segments: int
    systems: int
    shared_segments: int

    def __post_init__(self):
        g.freeze(self)


def _scaled(pool: np.ndarray, sd: float) -> np.ndarray:
    """``pool`` centred and scaled to root mean square ``sd`` (a single 0 when sd is 0 or the pool empty)."""
    pool = pool - pool.mean() if pool.size else pool
    rms = math.sqrt(float(np.mean(pool * pool))) if pool.size else 0.0
    if sd <= 0 or rms <= 0:
        return np.zeros(1)
    return pool * (sd / rms)


def pilot_variance(system, segment, score) -> PilotVariance:
    """Variance components of a pilot's counted judgments (docs/methods.md §12.3).

    One row per counted judgment (the caller keeps system outputs and repeats of workers who passed, with
    finite scores on the chosen scale): ``system`` and ``segment`` codes, ``score`` (raw or z).
    Translation t = (system, segment) with m_t judgments and mean ȳ_t; residual d_t = ȳ_t − μ_s, μ_s the
    system's mean over its translations (the ranking's macro average, §5.2); segment g has c_g translations.

    - σ_w² = Σ (y − ȳ_t)² / Σ (m_t − 1) over translations with m_t ≥ 2 (pooled within-translation variance);
    - σ_v² = (B − σ_w² Σ_t (1 − 1/c_g)/m_t) / Σ_g (c_g − 1), B = Σ_t (d_t − û_g)², û_g = mean of d over g
      (E[B] = Σ_t (1 − 1/c_g)(σ_v² + σ_w²/m_t) exactly);
    - σ_u² = (S − (1 − 1/G) Σ_g e_g) / (G − 1), S = Σ_g (û_g − mean û)², e_g = Σ_{t∈g} (σ_v² + σ_w²/m_t)/c_g²
      the sampling variance of û_g.

    Each clipped at 0. Pools: û_g; d_t − û_g · √(c_g/(c_g−1)) over shared segments; (y − ȳ_t) · √(m_t/(m_t−1))
    over translations with m_t ≥ 2 — each centred and scaled to its component's sd, so resampling reproduces
    the estimated variances while keeping the shapes. Raises ValueError when the pilot is too small
    (fewer than 2 systems, :data:`MIN_JUDGMENTS` judgments or :data:`MIN_SHARED_SEGMENTS` shared segments).
    """
    y = g.as_scores(score, "score")
    sys_codes = np.asarray(system)
    seg_codes = np.asarray(segment)
    n_sys = int(sys_codes.max()) + 1 if sys_codes.size else 0
    n_seg = int(seg_codes.max()) + 1 if seg_codes.size else 0
    sys_codes = g.as_codes(sys_codes, n_sys, "system")
    seg_codes = g.as_codes(seg_codes, n_seg, "segment")
    g.check_same_length(system=sys_codes, segment=seg_codes, score=y)

    _, translation = g.factorize(sys_codes * max(n_seg, 1) + seg_codes, max(n_sys * n_seg, 1))
    n_t = int(translation.max()) + 1 if translation.size else 0
    m_t = g.group_count(translation, n_t)
    t_mean = g.group_mean(translation, y, n_t)
    first = np.zeros(n_t, np.int64)
    first[translation] = np.arange(y.size)  # any row of each translation gives its system and segment
    t_sys, t_seg = sys_codes[first], seg_codes[first]
    systems_seen = np.unique(t_sys).size
    _, seg_dense = np.unique(t_seg, return_inverse=True)
    n_g = int(seg_dense.max()) + 1 if seg_dense.size else 0
    c_g = g.group_count(seg_dense, n_g)
    shared = int(np.sum(c_g >= 2))
    if systems_seen < 2 or y.size < MIN_JUDGMENTS or shared < MIN_SHARED_SEGMENTS:
        raise ValueError(f"a pilot needs counted judgments of at least 2 systems, {MIN_JUDGMENTS} judgments and "
                         f"{MIN_SHARED_SEGMENTS} segments judged for two or more systems; it has {systems_seen} "
                         f"systems, {y.size} judgments and {shared} such segments")

    mu = g.group_mean(t_sys, t_mean, n_sys)
    residual = y - mu[sys_codes]
    sd_judgment = float(np.std(residual, ddof=1))

    within = y - t_mean[translation]
    replicated = m_t[translation] >= 2
    df_w = int(np.sum(m_t[m_t >= 2] - 1))
    var_w = float(np.sum(within[replicated] ** 2) / df_w) if df_w else 0.0

    d = t_mean - mu[t_sys]
    u_hat = g.group_mean(seg_dense, d, n_g)
    c_t = c_g[seg_dense].astype(np.float64)
    between = d - u_hat[seg_dense]
    df_b = float(np.sum(c_g - 1))
    expected_noise = var_w * float(np.sum((1 - 1 / c_t) / m_t))
    var_v = max(0.0, (float(np.sum(between ** 2)) - expected_noise) / df_b)

    tau = var_v + var_w / m_t  # variance of each translation's residual around its segment effect
    e_g = g.group_sum(seg_dense, tau, n_g) / (c_g.astype(np.float64) ** 2)
    spread = float(np.sum((u_hat - u_hat.mean()) ** 2))
    var_u = max(0.0, (spread - (1 - 1 / n_g) * float(np.sum(e_g))) / (n_g - 1))

    in_shared = c_t >= 2
    translation_pool = between[in_shared] * np.sqrt(c_t[in_shared] / (c_t[in_shared] - 1))
    m_rows = m_t[translation][replicated].astype(np.float64)
    noise_pool = within[replicated] * np.sqrt(m_rows / (m_rows - 1))
    return PilotVariance(
        segment_pool=_scaled(u_hat, math.sqrt(var_u)),
        translation_pool=_scaled(translation_pool, math.sqrt(var_v)),
        noise_pool=_scaled(noise_pool, math.sqrt(var_w)),
        sd_segment=math.sqrt(var_u), sd_translation=math.sqrt(var_v), sd_noise=math.sqrt(var_w),
        sd_judgment=sd_judgment, judgments=int(y.size), translations=n_t, segments=n_g, systems=systems_seen,
        shared_segments=shared,
    )


def _counted_judgments_cdf(judges: int, pass_rate: float) -> np.ndarray:
    """P(m ≤ k | m ≥ 1), k = 1..judges, m ~ Binomial(judges, pass_rate): counted judgments of a translation."""
    k = np.arange(1, judges + 1)
    pmf = np.array([math.comb(judges, int(j)) for j in k]) * pass_rate ** k * (1 - pass_rate) ** (judges - k)
    return np.cumsum(pmf) / pmf.sum()


def _simulate_chunk(pilot: PilotVariance, n: int, reps: int, judges: int, m_cdf: np.ndarray, counted_share: float,
                    seed: np.random.SeedSequence) -> tuple[np.ndarray, np.ndarray]:
    """Two systems' n translation values for `reps` repetitions (reps × n each; no δ yet). The second system's
    k-th translation is of the first's k-th segment with probability `counted_share` (its translation of that
    segment has a counted judgment too), else of a segment drawn afresh. Every quantity has its own generator
    and is drawn as (n, reps): a larger n extends the same draws (common random numbers across n, so the
    simulated power curve is smooth)."""
    gens = [np.random.default_rng(s) for s in seed.spawn(9)]

    def pick(pool, gen, shape):
        return pool[(gen.random(shape) * pool.size).astype(np.int64)]

    shared = pick(pilot.segment_pool, gens[0], (n, reps))
    own = pick(pilot.segment_pool, gens[7], (n, reps))
    segments = (shared, np.where(gens[8].random((n, reps)) < counted_share, shared, own))
    values = []
    for side in (0, 1):
        translation = pick(pilot.translation_pool, gens[1 + 3 * side], (n, reps))
        m = 1 + np.searchsorted(m_cdf, gens[2 + 3 * side].random((n, reps)), side="right")
        m = np.minimum(m, judges)
        noise = pick(pilot.noise_pool, gens[3 + 3 * side], (n, reps, judges))
        noise = np.where(np.arange(judges) < m[..., None], noise, 0.0).sum(axis=2) / m
        values.append((segments[side] + translation + noise).T)
    return values[0], values[1]


def simulate_power(pilot: PilotVariance, n: int, delta: float, alpha: float = 0.05, repetitions: int = 200,
                   judges: int = 1, pass_rate: float = 1.0, seed: int = 0) -> float:
    """Simulated power to separate two systems δ apart with n counted translations each (docs/methods.md §12.3).

    In each repetition two systems translate the same n resampled segments (the same u); each translation
    gets its own v and the mean of m noise draws, m ~ Binomial(``judges``, ``pass_rate``) given m ≥ 1 (the
    planned redundancy, each judgment counting when its worker passes; a translation without a counted
    judgment is not in the test, which :func:`campaign_size` pays for). The better system gets + δ. Separated:
    the one-sided rank-sum test (:func:`rank_sum_greater`, R's rule) gives p < α and the better system has the
    higher mean (the ranking's win rule, §5.3). Power = the share of repetitions separated.
    """
    if n < 2:
        return 0.0
    m_cdf = _counted_judgments_cdf(judges, pass_rate)
    counted_share = 1 - (1 - pass_rate) ** judges
    separated = 0
    for index, start in enumerate(range(0, repetitions, _CHUNK)):
        reps = min(_CHUNK, repetitions - start)
        worse, better = _simulate_chunk(pilot, n, reps, judges, m_cdf, counted_share,
                                        np.random.SeedSequence([seed, index]))
        better = better + delta
        p = rank_sum_greater(better, worse)
        separated += int(np.sum((p < alpha) & (better.mean(axis=1) > worse.mean(axis=1))))
    return separated / repetitions


@dataclass(frozen=True)
class PowerSearch:
    """Result of :func:`required_translations`: ``n`` the counted translations per system needed for the
    target power (None when even ``n_max`` falls short), ``power`` the fitted power at n (the simulated power
    at n_max when None), ``curve`` (n, simulated power) over every n simulated, ascending, and the probit fit
    power(n) = Φ(``intercept`` + ``slope`` · √n) (NaN when it could not be fitted)."""

    n: int | None
    power: float
    curve: tuple[tuple[int, float], ...]
    intercept: float = math.nan
    slope: float = math.nan

    def fitted(self, n) -> np.ndarray:
        """The fitted power at n (an array of n)."""
        return special.ndtr(self.intercept + self.slope * np.sqrt(np.asarray(n, dtype=np.float64)))


def _probit_fit(n: np.ndarray, power: np.ndarray, repetitions: int) -> tuple[float, float]:
    """Maximum-likelihood binomial probit fit power = Φ(a + b √n) (the normal approximation's shape: the
    test statistic's mean grows with √n)."""
    x = np.sqrt(n.astype(np.float64))
    k = power * repetitions

    def minus_log_likelihood(theta):
        eta = theta[0] + theta[1] * x
        return -float(np.sum(k * special.log_ndtr(eta) + (repetitions - k) * special.log_ndtr(-eta)))

    start = np.polyfit(x, special.ndtri(np.clip(power, 0.01, 0.99)), 1)[::-1]
    fit = optimize.minimize(minus_log_likelihood, start, method="Nelder-Mead",
                            options={"xatol": 1e-8, "fatol": 1e-10, "maxiter": 2000})
    return float(fit.x[0]), float(fit.x[1])


def _first_guess(pilot: PilotVariance, delta: float, target: float, alpha: float, judges: int,
                 pass_rate: float) -> float:
    """Where the search starts: the normal approximation n = (z_{1−α} s₀ + z_power s₁)² / δ² × π/3, with s₀² = 2τ²
    the variance of a difference of two independent translations (τ² = σ_u² + σ_v² + σ_w² E[1/m]), s₁² =
    2(τ² − q σ_u²) its variance when the pair shares its segment with probability q, and π/3 the Wilcoxon
    test's efficiency loss against the t-test on normal data. Only a start: the simulation decides."""
    q = 1 - (1 - pass_rate) ** judges
    cdf = _counted_judgments_cdf(judges, pass_rate)
    inverse_m = float(np.sum(np.diff(np.r_[0.0, cdf]) / np.arange(1, judges + 1)))
    tau = pilot.sd_segment ** 2 + pilot.sd_translation ** 2 + pilot.sd_noise ** 2 * inverse_m
    s0, s1 = math.sqrt(2 * tau), math.sqrt(max(2 * (tau - q * pilot.sd_segment ** 2), 0.0))
    z_alpha, z_power = special.ndtri(1 - alpha), special.ndtri(target)
    return (z_alpha * s0 + z_power * s1) ** 2 / delta ** 2 * math.pi / 3


def required_translations(pilot: PilotVariance, delta: float, target: float = 0.8, alpha: float = 0.05,
                          repetitions: int = 200, judges: int = 1, pass_rate: float = 1.0, seed: int = 0,
                          n_max: int = 20_000) -> PowerSearch:
    """Counted translations per system for the target power (docs/methods.md §12.3).

    Search: from the normal approximation's n (:func:`_first_guess`), halving or doubling until the simulated
    power is bracketed (the first n reaching ``target`` and the last short of it; None past ``n_max``), then
    bisection to a 1/8 bracket, then the power at ½, ¾, 1¼ and 1½ times the bracket's top, and (cheap, for the
    curve) at 4, 8, 16, … below the bracket. Each n is simulated with its own seed (derived from ``seed`` and
    n). The answer is read off a probit fit Φ(a + b √n) to every simulated point from a quarter of the
    bracket's top up — pooling the ~8 nearby simulations instead of trusting the one at the crossing, whose
    Monte Carlo error at 200 repetitions is ±3 points of power — rounded up; the bracket's top when the fit
    fails (b ≤ 0 or a crossing outside the simulated range). The answer's n is simulated too, so the curve
    holds it.
    """
    memo: dict[int, float] = {}

    def power_at(n: int) -> float:
        if n not in memo:
            memo[n] = simulate_power(pilot, n, delta, alpha, repetitions, judges, pass_rate, seed=seed * 1_000_003 + n)
        return memo[n]

    guess = _first_guess(pilot, delta, target, alpha, judges, pass_rate)
    start = int(min(max(round(guess), 4), n_max)) if math.isfinite(guess) else 4
    if power_at(start) >= target:
        high, low = start, start // 2
        while low >= 2 and power_at(low) >= target:
            high, low = low, low // 2
        low = max(low, 2)
    else:
        low, high = start, min(2 * start, n_max)
        while power_at(high) < target:
            if high >= n_max:
                return PowerSearch(None, memo[high], tuple(sorted(memo.items())))
            low, high = high, min(2 * high, n_max)
    while high - low > max(1, high // 8):
        middle = (low + high) // 2
        if power_at(middle) >= target:
            high = middle
        else:
            low = middle
    for factor in (0.5, 0.75, 1.25, 1.5):
        power_at(max(2, round(factor * high)))
    ladder = 4
    while ladder < high / 2:
        power_at(ladder)
        ladder *= 2
    curve = tuple(sorted(memo.items()))
    points = np.array([(n, p) for n, p in curve if n >= high / 4])
    intercept, slope = _probit_fit(points[:, 0], points[:, 1], repetitions)
    if slope > 0:
        crossing = ((special.ndtri(target) - intercept) / slope) ** 2
        if points[0, 0] <= crossing <= points[-1, 0]:
            n = max(2, math.ceil(crossing - 1e-9))
            power_at(n)
            return PowerSearch(n, float(special.ndtr(intercept + slope * math.sqrt(n))), tuple(sorted(memo.items())),
                               intercept, slope)
    return PowerSearch(high, memo[high], curve, intercept, slope)


@dataclass(frozen=True)
class CampaignSize:
    """Result of :func:`campaign_size`: ``segments`` per system (every system translates them), ``judgments``
    of system outputs by all workers (first judgments; repeats and quality-control items come on top),
    ``counted`` the expected share of those by workers who pass, ``hits`` distinct HITs, ``assignments``
    = hits × judges (what is paid), ``items`` judged in all (assignments × HIT size, quality control included)."""

    segments: int
    judgments: int
    counted: float
    hits: int
    assignments: int
    items: int


def campaign_size(n: int, systems: int, judges: int, pass_rate: float, outputs_per_hit: int,
                  hit_size: int) -> CampaignSize:
    """The campaign that yields n counted translations per system (docs/methods.md §2, §12.2).

    A translation counts when at least one of its ``judges`` (redundancy) judgments comes from a worker who
    passed, probability q = 1 − (1 − pass_rate)^judges; so each system needs ⌈n / q⌉ segments (with one judge,
    the issue's "inflate by 1 / pass rate"). Every system translates those segments; the outputs are dealt
    ``outputs_per_hit`` to a HIT (70 in a 100-item HIT: the rest are quality control), each HIT done by
    ``judges`` workers: HITs = ⌈segments × systems / outputs_per_hit⌉, assignments = HITs × judges.
    """
    q = 1 - (1 - pass_rate) ** judges
    segments = math.ceil(n / q - 1e-9)
    outputs = segments * systems
    hits = math.ceil(outputs / outputs_per_hit)
    return CampaignSize(segments=segments, judgments=outputs * judges, counted=outputs * judges * pass_rate,
                        hits=hits, assignments=hits * judges, items=hits * judges * hit_size)
