"""Maximum-likelihood Bradley–Terry with ties (docs/methods.md §8.8), as LLM-evaluation arenas publish it.

Battles are plain arrays: `a` and `b` (system indices) and `outcome` (0 = a wins, 1 = b wins, 2 = tie,
3 = tie with both bad, which counts as a tie). They are aggregated into one row per system pair (a's wins,
b's wins, ties) before fitting, so a fit costs O(pairs), not O(battles). Ties follow Davidson (1970,
default) or Rao & Kupper (1967); with no ties in the data both reduce to plain Bradley–Terry (the tie
parameter is left out). Identifiability: log-strengths β sum to zero over the systems that played.
Score = 400/ln 10 · β + 1000 (LMSYS's scale; anchor: the mean system scores 1000).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from . import trueskill as ts

#: Outcome codes, and the names arena files and the platform use for them.
A_WINS, B_WINS, TIE, TIE_BOTHBAD = 0, 1, 2, 3
OUTCOME_CODES = {"a": A_WINS, "model_a": A_WINS, "b": B_WINS, "model_b": B_WINS, "tie": TIE,
                 "tie (bothbad)": TIE_BOTHBAD, "tie-bothbad": TIE_BOTHBAD}
TIE_MODELS = ("davidson", "rao-kupper")
#: Elo-like scale: a difference of 400 points is odds of 10 to 1 (LMSYS's `compute_mle_elo`).
SCALE, ANCHOR = 400.0 / math.log(10.0), 1000.0
#: Log-strengths are bounded so that a system that never lost stays finite (then `exists` is False).
BOUND = 30.0


def encode_outcomes(names) -> np.ndarray:
    """Outcome names ("a", "b", "tie", "tie (bothbad)", or arena's "model_a"/"model_b") as codes."""
    try:
        return np.array([OUTCOME_CODES[str(n).strip().lower()] for n in names], dtype=np.int64)
    except KeyError as e:
        raise ValueError(f"unknown outcome {e.args[0]!r}; expected one of {sorted(OUTCOME_CODES)}") from None


@dataclass(frozen=True)
class PairCounts:
    """One row per system pair i < j that met: i's wins, j's wins, ties."""

    i: np.ndarray
    j: np.ndarray
    wins_i: np.ndarray
    wins_j: np.ndarray
    ties: np.ndarray
    n_systems: int


def pair_counts(a, b, outcome, n_systems: int, weights=None) -> PairCounts:
    """Aggregate battles into per-pair counts (a battle of a system with itself is dropped)."""
    a, b, outcome = (np.asarray(x, dtype=np.int64) for x in (a, b, outcome))
    if not (a.shape == b.shape == outcome.shape):
        raise ValueError("a, b and outcome must have the same length")
    if a.size and (min(a.min(), b.min()) < 0 or max(a.max(), b.max()) >= n_systems):
        raise ValueError("a system index is out of range")
    if outcome.size and (outcome.min() < 0 or outcome.max() > TIE_BOTHBAD):
        raise ValueError("outcome codes are 0 (a), 1 (b), 2 (tie), 3 (tie, both bad)")
    w = np.ones(a.size) if weights is None else np.asarray(weights, dtype=np.float64)
    keep = a != b
    a, b, outcome, w = a[keep], b[keep], outcome[keep], w[keep]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    lo_wins = ((outcome == A_WINS) & (a == lo)) | ((outcome == B_WINS) & (b == lo))
    cell = (lo * n_systems + hi) * 3 + np.where(outcome >= TIE, 2, np.where(lo_wins, 0, 1))
    counts = np.bincount(cell, weights=w, minlength=n_systems * n_systems * 3).reshape(-1, 3)
    met = np.flatnonzero(counts.sum(axis=1))
    return PairCounts(i=met // n_systems, j=met % n_systems, wins_i=counts[met, 0], wins_j=counts[met, 1],
                      ties=counts[met, 2], n_systems=n_systems)


def _loglik(x, pc: PairCounts, model: str, with_ties: bool):
    """Negative log-likelihood per battle and its gradient; x = β (all systems), then the tie parameter."""
    n = pc.n_systems
    beta = x[:n]
    bi, bj = beta[pc.i], beta[pc.j]
    wi, wj, t = pc.wins_i, pc.wins_j, pc.ties
    total = wi + wj + t
    if not with_ties:
        log_d = np.logaddexp(bi, bj)
        ll = wi * (bi - log_d) + wj * (bj - log_d)
        p_i = np.exp(bi - log_d)
        gi = wi - total * p_i
        grad_extra = None
    elif model == "davidson":
        theta = x[n]
        tie_term = theta + (bi + bj) / 2
        log_d = np.logaddexp(np.logaddexp(bi, bj), tie_term)
        ll = wi * (bi - log_d) + wj * (bj - log_d) + t * (tie_term - log_d)
        p_i, p_j, p_t = np.exp(bi - log_d), np.exp(bj - log_d), np.exp(tie_term - log_d)
        gi = wi + t / 2 - total * (p_i + p_t / 2)
        gj_own = wj + t / 2 - total * (p_j + p_t / 2)
        grad_extra = np.sum(t - total * p_t)
    else:  # rao-kupper: x[n] = log κ, θ = e^κ ≥ 1
        kappa = math.exp(x[n])
        log_a, log_b = np.logaddexp(bi, kappa + bj), np.logaddexp(bj, kappa + bi)
        log_tie = 2 * kappa + math.log(-math.expm1(-2 * kappa))
        ll = wi * (bi - log_a) + wj * (bj - log_b) + t * (log_tie + bi + bj - log_a - log_b)
        q, r = np.exp(bi - log_a), np.exp(bj - log_b)
        gi = wi * (1 - q) - wj * (1 - r) + t * (r - q)
        gj_own = -gi
        d_tie = 2.0 / -math.expm1(-2 * kappa)
        grad_extra = np.sum(-wi * (1 - q) - wj * (1 - r) + t * (d_tie - (1 - q) - (1 - r))) * kappa
    if not with_ties:
        gj_own = -gi
    grad = np.bincount(pc.i, weights=gi, minlength=n) + np.bincount(pc.j, weights=gj_own, minlength=n)
    scale = max(total.sum(), 1.0)
    if grad_extra is not None:
        grad = np.append(grad, grad_extra)
    return -ll.sum() / scale, -grad / scale


def _hessian(x, pc: PairCounts, model: str, with_ties: bool, grad) -> np.ndarray:
    """Hessian of `_loglik`'s scaled negative log-likelihood: per pair a 3×3 block over (β_i, β_j, tie
    parameter), scattered into the full matrix."""
    n = pc.n_systems
    size = n + (1 if with_ties else 0)
    bi, bj = x[pc.i], x[pc.j]
    total = pc.wins_i + pc.wins_j + pc.ties
    if model == "davidson" or not with_ties:
        theta = x[n] if with_ties else -np.inf
        log_d = np.logaddexp(np.logaddexp(bi, bj), theta + (bi + bj) / 2)
        p_i, p_j = np.exp(bi - log_d), np.exp(bj - log_d)
        p_t = np.exp(theta + (bi + bj) / 2 - log_d) if with_ties else np.zeros_like(p_i)
        m_i, m_j = p_i + p_t / 2, p_j + p_t / 2
        blocks = {(0, 0): p_i + p_t / 4 - m_i * m_i, (1, 1): p_j + p_t / 4 - m_j * m_j, (0, 1): p_t / 4 - m_i * m_j,
                  (0, 2): p_t / 2 - m_i * p_t, (1, 2): p_t / 2 - m_j * p_t, (2, 2): p_t - p_t * p_t}
        blocks = {k: total * v for k, v in blocks.items()}
    else:
        kappa = math.exp(x[n])
        q = np.exp(bi - np.logaddexp(bi, kappa + bj))
        r = np.exp(bj - np.logaddexp(bj, kappa + bi))
        ca, cb = (pc.wins_i + pc.ties) * q * (1 - q), (pc.wins_j + pc.ties) * r * (1 - r)
        e = math.exp(-2 * kappa)
        tie_curv = pc.ties * 4 * e / (1 - e) ** 2
        # v = (1, −1, −1) for log_a, w = (−1, 1, −1) for log_b, in (β_i, β_j, κ); then κ = e^u
        blocks = {(0, 0): ca + cb, (1, 1): ca + cb, (0, 1): -ca - cb, (0, 2): (-ca + cb) * kappa,
                  (1, 2): (ca - cb) * kappa, (2, 2): (ca + cb + tie_curv) * kappa ** 2}
    index = (pc.i, pc.j, np.full(pc.i.size, n))
    flat, weights = [], []
    for (r_, c_), v in blocks.items():
        if not with_ties and 2 in (r_, c_):
            continue
        flat.append(index[r_] * size + index[c_])
        weights.append(v)
        if r_ != c_:
            flat.append(index[c_] * size + index[r_])
            weights.append(v)
    h = np.bincount(np.concatenate(flat), weights=np.concatenate(weights), minlength=size * size)
    h = h.reshape(size, size) / max(total.sum(), 1.0)
    if with_ties and model == "rao-kupper":
        h[n, n] += grad[n]  # chain rule through κ = e^u: d²/du² = κ² d²/dκ² + κ d/dκ
    return h


def _newton(x0, pc: PairCounts, model: str, with_ties: bool, played: np.ndarray):
    """Newton's method with step halving on the free parameters (the played systems but the last, whose β is
    held at 0, and the tie parameter); None when it does not converge inside the bounds."""
    n = pc.n_systems
    free = np.append(played, True) if with_ties else played.copy()
    free[np.flatnonzero(played)[-1]] = False
    x = x0.copy()
    x[np.flatnonzero(played)[-1]] = 0.0
    x[:n][played] -= x0[np.flatnonzero(played)[-1]]
    f, g = _loglik(x, pc, model, with_ties)
    for _ in range(100):
        h = _hessian(x, pc, model, with_ties, g)[np.ix_(free, free)]
        try:
            step = np.linalg.solve(h, -g[free])
        except np.linalg.LinAlgError:
            return None
        t = 1.0
        while t > 1e-10:
            trial = x.copy()
            trial[free] += t * step
            f_new, g_new = _loglik(trial, pc, model, with_ties)
            if np.isfinite(f_new) and f_new <= f + 1e-4 * t * (g[free] @ step):
                break
            t /= 2
        else:
            return None
        x, f, g = trial, f_new, g_new
        if np.abs(trial[:n]).max() > BOUND or not np.isfinite(x).all():
            return None
        if np.abs(g[free]).max() < 1e-12 or np.abs(t * step).max() < 1e-11:
            return optimize.OptimizeResult(x=x, fun=f, jac=g, success=True)
    return None


@dataclass(frozen=True)
class BTFit:
    """β (log-strengths, sum zero over the systems that played; NaN for the others), the tie parameter
    (Davidson's ν or Rao–Kupper's θ; None without ties), the log-likelihood, and whether the MLE exists
    (the comparison graph is strongly connected, ties counting both ways; Ford 1957)."""

    beta: np.ndarray
    tie_param: float | None
    model: str
    loglik: float
    exists: bool
    converged: bool

    @property
    def score(self) -> np.ndarray:
        return elo_scale(self.beta)


def elo_scale(beta) -> np.ndarray:
    return SCALE * np.asarray(beta) + ANCHOR


def fit(pc: PairCounts, model: str = "davidson", start: BTFit | None = None, check_exists: bool = True) -> BTFit:
    """Maximum likelihood by L-BFGS-B on the analytic gradient, over the aggregated pair counts; `start` (an
    earlier fit, e.g. on all the data for a bootstrap resample) only sets the starting point."""
    if model not in TIE_MODELS:
        raise ValueError(f"tie model must be one of {TIE_MODELS}")
    n = pc.n_systems
    played = np.zeros(n, dtype=bool)
    played[pc.i] = played[pc.j] = True
    with_ties = bool(pc.ties.sum() > 0)
    x0 = np.zeros(n + (1 if with_ties else 0))
    if start is not None:
        x0[:n] = np.nan_to_num(start.beta)
    if with_ties and start is not None and start.tie_param is not None:
        x0[n] = math.log(start.tie_param) if model == "davidson" else math.log(math.log(start.tie_param))
    elif with_ties:
        share = pc.ties.sum() / max((pc.wins_i + pc.wins_j + pc.ties).sum(), 1.0)
        x0[n] = math.log(max(2 * share / (1 - share + 1e-12), 1e-6)) if model == "davidson" else math.log(share + 0.1)
    bounds = [(-BOUND, BOUND) if p else (0.0, 0.0) for p in played]
    if with_ties:
        bounds.append((-BOUND, math.log(BOUND)) if model == "rao-kupper" else (-BOUND, BOUND))
    res = _newton(x0, pc, model, with_ties, played)
    if res is None:  # no finite optimum (a system never lost) or Newton failed: bounded quasi-Newton instead
        res = optimize.minimize(_loglik, x0, args=(pc, model, with_ties), jac=True, method="L-BFGS-B",
                                bounds=bounds, options={"maxiter": 2000, "ftol": 1e-15, "gtol": 1e-11})
    beta = res.x[:n].copy()
    if played.any():
        beta[played] -= beta[played].mean()
    beta[~played] = np.nan
    tie_param = None
    if with_ties:
        tie_param = math.exp(res.x[n]) if model == "davidson" else math.exp(math.exp(res.x[n]))
    total = (pc.wins_i + pc.wins_j + pc.ties).sum()
    return BTFit(beta=beta, tie_param=tie_param, model=model, loglik=float(-res.fun * max(total, 1.0)),
                 exists=_mle_exists(pc, played) if check_exists else start is not None and start.exists,
                 converged=bool(res.success or np.abs(res.jac).max() < 1e-6))


def _mle_exists(pc: PairCounts, played: np.ndarray) -> bool:
    """The MLE is finite when every system that played beats (or ties) its way to every other (Ford 1957)."""
    idx = np.flatnonzero(played)
    if idx.size < 2:
        return False
    src = np.concatenate([pc.i[pc.wins_i + pc.ties > 0], pc.j[pc.wins_j + pc.ties > 0]])
    dst = np.concatenate([pc.j[pc.wins_i + pc.ties > 0], pc.i[pc.wins_j + pc.ties > 0]])
    graph = coo_matrix((np.ones(src.size), (src, dst)), shape=(pc.n_systems,) * 2).tocsr()[idx][:, idx]
    return connected_components(graph, directed=True, connection="strong")[0] == 1


def probabilities(beta, tie_param: float | None, model: str = "davidson") -> tuple[np.ndarray, np.ndarray]:
    """Predicted P(i beats j) and P(i ties j) for every pair, from the fitted parameters."""
    pi = np.exp(np.asarray(beta, dtype=np.float64))
    pi_i, pi_j = pi[:, None], pi[None, :]
    if tie_param is None:
        win = pi_i / (pi_i + pi_j)
        return win, np.zeros_like(win)
    if model == "davidson":
        tie = tie_param * np.sqrt(pi_i * pi_j)
        d = pi_i + pi_j + tie
        return pi_i / d, tie / d
    theta = tie_param
    win = pi_i / (pi_i + theta * pi_j)
    return win, 1.0 - win - pi_j / (pi_j + theta * pi_i)


def win_rates(pc: PairCounts, fitted: BTFit) -> tuple[np.ndarray, np.ndarray]:
    """Empirical and predicted win rate of row over column, a tie counting one half (NaN where they never met
    for the empirical one; the diagonal is NaN)."""
    n = pc.n_systems
    emp = np.full((n, n), np.nan)
    total = pc.wins_i + pc.wins_j + pc.ties
    emp[pc.i, pc.j] = (pc.wins_i + pc.ties / 2) / total
    emp[pc.j, pc.i] = (pc.wins_j + pc.ties / 2) / total
    win, tie = probabilities(fitted.beta, fitted.tie_param, fitted.model)
    predicted = win + tie / 2
    np.fill_diagonal(predicted, np.nan)
    return emp, predicted


def bootstrap_betas(pc: PairCounts, runs, seed: int, model: str = "davidson", start: BTFit | None = None
                    ) -> np.ndarray:
    """β per bootstrap run (rows) for each run index in `runs`. Resampling N battles with replacement is
    drawing multinomial counts over the (pair, outcome) cells with the cells' shares, which this does, so a
    run costs O(pairs); run r is seeded by (seed, r), so splitting runs across tasks changes nothing."""
    cells = np.concatenate([pc.wins_i, pc.wins_j, pc.ties])
    total = int(round(cells.sum()))
    shares = cells / cells.sum()
    m = pc.wins_i.size
    out = np.empty((len(runs), pc.n_systems))
    for k, run in enumerate(runs):
        counts = np.random.default_rng([seed, int(run)]).multinomial(total, shares).astype(np.float64)
        sample = PairCounts(i=pc.i, j=pc.j, wins_i=counts[:m], wins_j=counts[m:2 * m], ties=counts[2 * m:],
                            n_systems=pc.n_systems)
        out[k] = fit(sample, model, start=start, check_exists=False).beta
    return out


@dataclass(frozen=True)
class Leaderboard:
    """Scores on all the data, the bootstrap's percentile interval of the score, and rank ranges two ways:
    WMT14's from the runs' ranks (`rank_low`/`rank_high`, `stats.trueskill.rank_ranges`) and LMSYS's from
    the intervals (`rank_ci`: 1 + the systems whose lower bound is above this one's upper bound)."""

    score: np.ndarray
    low: np.ndarray
    high: np.ndarray
    rank: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    rank_ci: np.ndarray
    runs: int


def leaderboard(fitted: BTFit, beta_runs: np.ndarray | None, confidence: float = 0.95) -> Leaderboard:
    """Rank by the score on all the data; intervals and rank ranges from the bootstrap runs when there are any."""
    score = fitted.score
    n = score.size
    order = np.lexsort((np.arange(n), -np.nan_to_num(score, nan=-np.inf)))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(1, n + 1)
    if beta_runs is None or len(beta_runs) == 0:
        nan = np.full(n, np.nan)
        return Leaderboard(score, nan, nan, rank, rank, rank, rank, 0)
    runs = elo_scale(beta_runs)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(runs, [tail, 100 - tail], axis=0)
    ranges = ts.rank_ranges(np.where(np.isfinite(runs), runs, -np.inf), confidence)
    with np.errstate(invalid="ignore"):
        rank_ci = 1 + (low[None, :] > high[:, None]).sum(axis=1)
    return Leaderboard(score, low, high, rank, ranges.rank_low, ranges.rank_high, rank_ci, int(runs.shape[0]))


__all__ = ["A_WINS", "B_WINS", "TIE", "TIE_BOTHBAD", "BTFit", "Leaderboard", "PairCounts", "bootstrap_betas",
           "elo_scale", "encode_outcomes", "fit", "leaderboard", "pair_counts", "probabilities", "win_rates"]
