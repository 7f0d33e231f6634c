"""How often the live reliability gate (docs/methods.md §12.1) stops a careful worker, and how soon it stops a
random clicker: a Monte Carlo over many simulated workers of each family, with the gate's own tests.

Workers are the test suite's simulated ones (tests/simulation.py, tests/gate_simulation.py): a diligent worker
scores a translation 50 + bias + scale · (quality − 50) + noise (bias ~ U(−12, 12), scale ~ U(0.6, 1.2), noise sd
~ U(4, 12), clipped to 0–100, two decimals), a bad reference or perturbed copy 35 points below its original; a
diligent ranker orders a screen by quality plus their noise (gold 92, a known-bad output its original's quality
less 35, systems 78/70/62/54/46, N = 5, best-worst gold). A random clicker scores uniformly on 0–100, or ranks in
a random order. The gate runs after every HIT on all pairs so far, as in the campaign:

- Direct Assessment: 10 bad-reference pairs per HIT, the one-sided paired t-test (the WMT21 DA preset), m = 5;
- error spans (ESA): 10 perturbed copies per HIT, the one-sided Wilcoxon signed-rank (R's rule; the WMT24 ESA
  preset), m = 5;
- ranking: 8 gold screens per HIT, the one-sided exact binomial test against a random order (chance 0.2), m = 8;
  and, for comparison, 5 gold screens per HIT with m = 5.

Each is reported as the share of workers stopped by the end of HIT 1, 2, 3 and 4 (rule `test`, threshold 0.05).

    .venv/bin/python benchmarks/gate_rates.py [--workers 20000] [--seed 1]
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from evaluation import stats  # noqa: E402
from evaluation.stats.gold_chance import above_chance, chance_right  # noqa: E402
from evaluation.stats.ranking import gold_correct  # noqa: E402

HITS = 4
PENALTY = 35.0
SCORE_QUALITY = np.array([78.0, 70.0, 62.0])
RANK_QUALITY = np.array([78.0, 70.0, 62.0, 54.0, 46.0])
GOLD = 92.0


def score_pairs(rng, n_workers: int, pairs: int, diligent: bool) -> tuple[np.ndarray, np.ndarray]:
    """(bad, original) scores, shape (workers, pairs)."""
    if not diligent:
        return rng.uniform(0, 100, (n_workers, pairs)).round(2), rng.uniform(0, 100, (n_workers, pairs)).round(2)
    bias = rng.uniform(-12, 12, (n_workers, 1))
    scale = rng.uniform(0.6, 1.2, (n_workers, 1))
    noise = rng.uniform(4, 12, (n_workers, 1))
    quality = rng.choice(SCORE_QUALITY, (n_workers, pairs))

    def score(q):
        return np.clip(50 + bias + scale * (q - 50) + rng.normal(0, 1, q.shape) * noise, 0, 100).round(2)
    return score(quality - PENALTY), score(quality)


def stopped_by_scores(bad, original, test: str, per_hit: int, minimum: int = 5) -> np.ndarray:
    """Per HIT, the share of workers stopped by then (the test run on each worker's pairs so far)."""
    n_workers = bad.shape[0]
    stopped = np.zeros(n_workers, dtype=bool)
    shares = []
    for hit in range(1, HITS + 1):
        n = hit * per_hit
        if n >= minimum:
            worker = np.repeat(np.arange(n_workers), n)
            result = stats.reliability(worker, bad[:, :n].ravel(), original[:, :n].ravel(), n_workers, test=test)
            stopped |= ~(np.asarray(result.p) < 0.05)
        shares.append(stopped.mean())
    return np.array(shares)


def stopped_rankers(rng, n_workers: int, per_hit: int, diligent: bool, minimum: int) -> np.ndarray:
    """Per HIT, the share of rankers stopped by then (best-worst gold, N = 5)."""
    screens = HITS * per_hit
    values = np.broadcast_to(RANK_QUALITY, (n_workers, screens, 5)).copy()
    slots = np.argsort(rng.random((n_workers, screens, 5)), axis=2)[:, :, :2]  # gold and bad slots
    bad_of = rng.integers(0, 5, (n_workers, screens))
    w, s = np.indices((n_workers, screens))
    values[w, s, slots[:, :, 0]] = GOLD
    values[w, s, slots[:, :, 1]] = RANK_QUALITY[bad_of] - PENALTY
    if diligent:
        values = values + rng.normal(0, 1, values.shape) * rng.uniform(4, 12, (n_workers, 1, 1))
    else:
        values = rng.random(values.shape)
    ranks = np.argsort(np.argsort(-values, axis=2), axis=2) + 1
    correct = gold_correct(ranks[w, s, slots[:, :, 0]].ravel(), ranks[w, s, slots[:, :, 1]].ravel(),
                           np.full(n_workers * screens, 5)).reshape(n_workers, screens)
    chance = chance_right(np.full(screens, 5), np.ones(screens, bool))
    stopped = np.zeros(n_workers, dtype=bool)
    shares = []
    for hit in range(1, HITS + 1):
        n = hit * per_hit
        if n >= minimum:
            p = np.array([above_chance(correct[i, :n], chance[:n]) for i in range(n_workers)])
            stopped |= p >= 0.05
        shares.append(stopped.mean())
    return np.array(shares)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=20000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    rows = []
    for family, test in (("Direct Assessment (paired-t, m = 5)", "paired-t"), ("ESA (Wilcoxon, m = 5)", "wilcoxon")):
        for diligent in (True, False):
            bad, original = score_pairs(rng, args.workers, HITS * 10, diligent)
            rows.append((family, diligent, stopped_by_scores(bad, original, test, per_hit=10)))
    for per_hit in (8, 5):
        for diligent in (True, False):
            rows.append((f"ranking ({per_hit} gold screens per HIT, m = {per_hit})", diligent,
                         stopped_rankers(rng, args.workers, per_hit, diligent, minimum=per_hit)))
    print(f"{args.workers} simulated workers of each kind, seed {args.seed}: share stopped by the end of HIT 1..{HITS}")
    for family, diligent, shares in rows:
        kind = "diligent" if diligent else "random  "
        print(f"  {family:<44} {kind} " + "  ".join(f"{100 * s:7.3f} %" for s in shares))
    print(f"({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    main()
