"""Benchmark of the Bradley–Terry core (evaluation/stats/bradley_terry.py, docs/methods.md §8.8).

1. Speed: 1,000,000 arena-style battles among 50 systems (true log-strengths N(0, 1), Davidson ties with
   ν = 0.5, a share of them "tie (bothbad)"), on one core: aggregation + fit time, and bootstrap time per
   resample. Target: the fit in under 5 s.
2. Coverage: `--coverage-reps` simulated data sets (10 systems, `--coverage-battles` battles each); for each,
   the 95 % percentile interval of β from `--runs` bootstrap resamples; the share of (data set, system) whose
   interval holds the true β (centred, sum zero). Nominal: 0.95.

    .venv/bin/python benchmarks/bradley_terry.py [--battles 1000000] [--systems 50] [--runs 20]
        [--coverage-reps 200] [--coverage-battles 2000] [--model davidson|rao-kupper]
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))
from evaluation.stats import bradley_terry as bt  # noqa: E402


def simulate(rng, beta: np.ndarray, n_battles: int, nu: float = 0.5) -> tuple[np.ndarray, ...]:
    """Battles between random distinct pairs, outcomes drawn from Davidson's model with tie parameter ν."""
    n = beta.size
    a = rng.integers(0, n, n_battles)
    b = (a + rng.integers(1, n, n_battles)) % n
    pa, pb = np.exp(beta[a]), np.exp(beta[b])
    tie = nu * np.sqrt(pa * pb)
    d = pa + pb + tie
    u = rng.random(n_battles) * d
    outcome = np.where(u < pa, bt.A_WINS, np.where(u < pa + pb, bt.B_WINS, bt.TIE))
    bothbad = (outcome == bt.TIE) & (rng.random(n_battles) < 0.3)
    return a, b, np.where(bothbad, bt.TIE_BOTHBAD, outcome)


def speed(args) -> None:
    rng = np.random.default_rng(args.seed)
    beta = rng.normal(0, 1, args.systems)
    a, b, outcome = simulate(rng, beta, args.battles)
    started = time.perf_counter()
    pc = bt.pair_counts(a, b, outcome, args.systems)
    aggregated = time.perf_counter()
    fitted = bt.fit(pc, args.model)
    done = time.perf_counter()
    runs = bt.bootstrap_betas(pc, range(args.runs), args.seed, args.model, start=fitted)
    boot = time.perf_counter()
    error = np.abs(fitted.beta - (beta - beta.mean())).max()
    print(f"{args.battles:,} battles, {args.systems} systems, {args.model}, {pc.i.size} pairs")
    print(f"  aggregate {aggregated - started:.3f} s, fit {done - aggregated:.3f} s, "
          f"total {done - started:.3f} s (target < 5 s); converged={fitted.converged}")
    print(f"  bootstrap {(boot - done) / args.runs * 1000:.1f} ms per resample ({args.runs} resamples; "
          f"1,000 would take {(boot - done) / args.runs * 1000:.1f} s on one core)")
    print(f"  max |β̂ − β| = {error:.4f}; tie parameter {fitted.tie_param:.4f} (true 0.5); "
          f"β sd over resamples (mean) {runs.std(axis=0).mean():.4f}")


def coverage(args) -> None:
    rng = np.random.default_rng(args.seed + 1)
    hits, total, width = 0, 0, []
    started = time.perf_counter()
    for rep in range(args.coverage_reps):
        beta = rng.normal(0, 0.7, 10)
        beta -= beta.mean()
        a, b, outcome = simulate(rng, beta, args.coverage_battles)
        pc = bt.pair_counts(a, b, outcome, 10)
        fitted = bt.fit(pc, args.model)
        runs = bt.bootstrap_betas(pc, range(args.runs), args.seed + rep, args.model, start=fitted)
        low, high = np.percentile(runs, [2.5, 97.5], axis=0)
        hits += int(((low <= beta) & (beta <= high)).sum())
        total += beta.size
        width.append(float((high - low).mean()))
    print(f"coverage: {args.coverage_reps} data sets × 10 systems, {args.coverage_battles} battles, "
          f"{args.runs} resamples: {hits / total:.3f} of true β inside the 95 % interval "
          f"(± {1.96 * np.sqrt(0.95 * 0.05 / total):.3f}); mean width {np.mean(width) * bt.SCALE:.0f} points; "
          f"{time.perf_counter() - started:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--battles", type=int, default=1_000_000)
    parser.add_argument("--systems", type=int, default=50)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--model", choices=bt.TIE_MODELS, default="davidson")
    parser.add_argument("--coverage-reps", type=int, default=200)
    parser.add_argument("--coverage-battles", type=int, default=2000)
    parser.add_argument("--coverage-runs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    speed(args)
    if args.coverage_reps:
        coverage(argparse.Namespace(**{**vars(args), "runs": args.coverage_runs}))


if __name__ == "__main__":
    main()
