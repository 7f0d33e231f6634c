"""Bradley–Terry with ties (evaluation/stats/bradley_terry.py, docs/methods.md §8.8) against references: choix
and a logistic regression written here for plain BT, a direct scipy.optimize of each tie model's likelihood
written independently here, hand-checked small cases, and a small coverage simulation."""
from __future__ import annotations

import math

import choix
import numpy as np
import pytest
from scipy import optimize
from scipy.special import expit

from evaluation.stats import bradley_terry as bt

N = 5


@pytest.fixture(scope="module")
def battles():
    """A fixed data set: 2,000 battles among 5 systems, about 20 % ties (a third of them 'both bad')."""
    rng = np.random.default_rng(2024)
    true = np.array([0.8, 0.3, 0.0, -0.4, -0.7])
    a = rng.integers(0, N, 2000)
    b = (a + rng.integers(1, N, 2000)) % N
    p = expit(true[a] - true[b])
    u = rng.random(2000)
    outcome = np.where(u < 0.2, np.where(u < 0.07, bt.TIE_BOTHBAD, bt.TIE), np.where(rng.random(2000) < p, 0, 1))
    return a, b, outcome


def no_ties(battles):
    a, b, outcome = battles
    keep = outcome < bt.TIE
    return a[keep], b[keep], outcome[keep]


def test_plain_bt_equals_choix(battles):
    a, b, outcome = no_ties(battles)
    fitted = bt.fit(bt.pair_counts(a, b, outcome, N))
    data = [(x, y) if o == bt.A_WINS else (y, x) for x, y, o in zip(a, b, outcome, strict=True)]
    for reference in (choix.opt_pairwise(N, data, alpha=0.0, tol=1e-12),
                      choix.ilsr_pairwise(N, data, alpha=0.0, tol=1e-14)):
        assert np.abs(fitted.beta - (reference - reference.mean())).max() < 1e-6
    assert fitted.tie_param is None and fitted.exists and fitted.converged


def test_plain_bt_equals_logistic_regression(battles):
    """The same design as LMSYS's: a row per battle, +1 for a, −1 for b, label 'a won'; no intercept."""
    a, b, outcome = no_ties(battles)
    x = np.zeros((a.size, N))
    x[np.arange(a.size), a] = 1.0
    x[np.arange(a.size), b] = -1.0
    y = (outcome == bt.A_WINS).astype(float)

    def nll(w):
        z = x @ np.append(w, 0.0)
        return np.sum(np.logaddexp(0, z) - y * z), x[:, :-1].T @ (expit(z) - y)

    w = optimize.minimize(nll, np.zeros(N - 1), jac=True, method="BFGS", options={"gtol": 1e-10}).x
    reference = np.append(w, 0.0)
    fitted = bt.fit(bt.pair_counts(a, b, outcome, N))
    assert np.abs(fitted.beta - (reference - reference.mean())).max() < 1e-6


def independent_nll(params, a, b, outcome, model):
    """Each battle's own probability, written from the papers: Davidson (1970) eq. 2, Rao & Kupper (1967) eq. 2.1."""
    beta = np.append(params[: N - 1], 0.0)
    pa, pb = np.exp(beta[a]), np.exp(beta[b])
    if model == "davidson":
        nu = np.exp(params[-1])
        d = pa + pb + nu * np.sqrt(pa * pb)
        p_a, p_b, p_t = pa / d, pb / d, nu * np.sqrt(pa * pb) / d
    else:
        theta = 1.0 + np.exp(params[-1])
        p_a, p_b = pa / (pa + theta * pb), pb / (pb + theta * pa)
        p_t = (theta ** 2 - 1) * pa * pb / ((pa + theta * pb) * (pb + theta * pa))
    tie = outcome >= bt.TIE
    return -np.sum(np.log(np.where(tie, p_t, np.where(outcome == bt.A_WINS, p_a, p_b))))


@pytest.mark.parametrize("model", bt.TIE_MODELS)
def test_tie_models_equal_direct_optimisation(battles, model):
    a, b, outcome = battles
    res = optimize.minimize(independent_nll, np.zeros(N), args=(a, b, outcome, model), method="BFGS",
                            jac="3-point", options={"gtol": 1e-8})
    reference = np.append(res.x[: N - 1], 0.0)
    tie_param = math.exp(res.x[-1]) if model == "davidson" else 1.0 + math.exp(res.x[-1])
    fitted = bt.fit(bt.pair_counts(a, b, outcome, N), model)
    assert np.abs(fitted.beta - (reference - reference.mean())).max() < 1e-6
    assert fitted.tie_param == pytest.approx(tie_param, abs=1e-6)
    assert fitted.loglik == pytest.approx(-res.fun, abs=1e-6)


def test_hand_checked_cases():
    # Two systems, A beats B 3 times out of 4: β_A − β_B = ln 3, score gap 400·log10(3) ≈ 190.8.
    fitted = bt.fit(bt.pair_counts([0, 0, 0, 0], [1, 1, 1, 1], [0, 0, 0, 1], 2))
    assert fitted.beta == pytest.approx([math.log(3) / 2, -math.log(3) / 2], abs=1e-9)
    assert fitted.score[0] - fitted.score[1] == pytest.approx(400 * math.log10(3), abs=1e-6)
    assert fitted.score.mean() == pytest.approx(1000.0)
    # Davidson, 2 wins each and 2 ties: equal strengths, ν = P(tie)/√(P(a)P(b)) = (2/6)/(2/6) = 1.
    davidson = bt.fit(bt.pair_counts([0] * 6, [1] * 6, [0, 0, 1, 1, 2, 3], 2))
    assert davidson.beta == pytest.approx([0, 0], abs=1e-8) and davidson.tie_param == pytest.approx(1.0, abs=1e-7)
    # Rao–Kupper on the same: P(a) = 1/(1+θ) = 1/3, so θ = 2.
    rao = bt.fit(bt.pair_counts([0] * 6, [1] * 6, [0, 0, 1, 1, 2, 3], 2), "rao-kupper")
    assert rao.tie_param == pytest.approx(2.0, abs=1e-7)
    win, tie = bt.probabilities(rao.beta, rao.tie_param, "rao-kupper")
    assert win[0, 1] == pytest.approx(1 / 3) and tie[0, 1] == pytest.approx(1 / 3)


def test_orientation_and_outcome_names():
    """A battle counts the same written either way round; 'tie (bothbad)' is a tie; a system that never played is
    NaN and leaves the others' sum-to-zero alone."""
    forward = bt.pair_counts([0, 0, 1], [1, 2, 2], bt.encode_outcomes(["model_a", "tie (bothbad)", "b"]), 4)
    backward = bt.pair_counts([1, 2, 2], [0, 0, 1], bt.encode_outcomes(["model_b", "tie", "model_a"]), 4)
    for field in ("i", "j", "wins_i", "wins_j", "ties"):
        assert np.array_equal(getattr(forward, field), getattr(backward, field))
    fitted = bt.fit(forward)
    assert np.isnan(fitted.beta[3]) and np.nansum(fitted.beta) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="unknown outcome"):
        bt.encode_outcomes(["a", "draw"])
    with pytest.raises(ValueError, match="out of range"):
        bt.pair_counts([0], [5], [0], 3)


def test_mle_existence_flag():
    """A system that never lost or tied has no finite MLE (Ford 1957): stated, and the fit stays finite."""
    fitted = bt.fit(bt.pair_counts([0, 0, 1, 2], [1, 2, 2, 1], [0, 0, 0, 0], 3))
    assert not fitted.exists and np.isfinite(fitted.beta).all()
    assert bt.fit(bt.pair_counts([0, 1, 2], [1, 2, 0], [0, 0, 0], 3)).exists


def test_win_rates_and_leaderboard(battles):
    a, b, outcome = battles
    pc = bt.pair_counts(a, b, outcome, N)
    fitted = bt.fit(pc)
    empirical, predicted = bt.win_rates(pc, fitted)
    off = ~np.eye(N, dtype=bool)
    assert np.allclose((empirical + empirical.T)[off], 1.0) and np.allclose((predicted + predicted.T)[off], 1.0)
    assert np.abs(empirical - predicted)[off].max() < 0.06
    runs = bt.bootstrap_betas(pc, range(40), seed=3, start=fitted)
    assert np.array_equal(runs[10:20], bt.bootstrap_betas(pc, range(10, 20), seed=3, start=fitted))
    board = bt.leaderboard(fitted, runs)
    assert (board.low <= board.score).all() and (board.score <= board.high).all()
    assert board.rank.tolist() == [1, 2, 3, 4, 5]
    assert (board.rank_low <= board.rank).all() and (board.rank <= board.rank_high).all()
    assert (board.rank_ci <= board.rank).all()


def test_bootstrap_coverage_small():
    """20 data sets × 6 systems: the 95 % percentile intervals hold the true β at about the nominal rate (the
    full simulation is benchmarks/bradley_terry.py)."""
    rng = np.random.default_rng(11)
    hits = total = 0
    for rep in range(20):
        beta = rng.normal(0, 0.7, 6)
        beta -= beta.mean()
        a = rng.integers(0, 6, 600)
        b = (a + rng.integers(1, 6, 600)) % 6
        p_a, p_b = np.exp(beta[a]), np.exp(beta[b])
        d = p_a + p_b + 0.5 * np.sqrt(p_a * p_b)
        u = rng.random(600) * d
        outcome = np.where(u < p_a, 0, np.where(u < p_a + p_b, 1, 2))
        pc = bt.pair_counts(a, b, outcome, 6)
        runs = bt.bootstrap_betas(pc, range(60), seed=rep, start=bt.fit(pc))
        low, high = np.percentile(runs, [2.5, 97.5], axis=0)
        hits += int(((low <= beta) & (beta <= high)).sum())
        total += 6
    assert 0.85 <= hits / total <= 1.0
