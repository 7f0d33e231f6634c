"""Benchmark of ranking stability's bootstrap (evaluation.stats.stability, docs/methods.md §12.4) at WMT scale.

Synthetic Direct Assessment campaign, from arrays (no database): 15 systems of graded quality (neighbours
0.03 sd apart, as close as WMT's), 2,000 segments of varying difficulty, 300 workers with their own bias and
noise; 200,000 counted judgments (each worker rates random translations; about 6 per translation). Times the
preparation (cells, translations) and 1,000 resamples, once in one process and once as the Celery tasks split
them (10 shares of 100, run here one after another and merged), checks the two agree, and reports peak memory
(resource.getrusage high-water mark) and the figures. Target: 1,000 resamples at 200,000 judgments in < 10 s
on one core.

    .venv/bin/python benchmarks/stability.py [--judgments 200000] [--resamples 1000] [--seed 1]
"""
from __future__ import annotations

import argparse
import pathlib
import resource
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from evaluation.stats import stability as st  # noqa: E402

N_SYSTEMS, N_SEGMENTS, N_WORKERS = 15, 2_000, 300


def generate(judgments: int, seed: int):
    """Worker, segment, system and z-like score per counted judgment (vectorised)."""
    rng = np.random.default_rng(seed)
    quality = -0.03 * np.arange(N_SYSTEMS)
    difficulty = rng.normal(0, 0.5, N_SEGMENTS)
    bias, noise = rng.normal(0, 0.2, N_WORKERS), rng.uniform(0.6, 1.2, N_WORKERS)
    worker = rng.integers(0, N_WORKERS, judgments)
    segment = rng.integers(0, N_SEGMENTS, judgments)
    system = rng.integers(0, N_SYSTEMS, judgments)
    score = quality[system] + difficulty[segment] + bias[worker] + rng.normal(0, 1, judgments) * noise[worker]
    return worker, segment, system, score, [f"system-{i + 1:02d}" for i in range(N_SYSTEMS)]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judgments", type=int, default=200_000)
    parser.add_argument("--resamples", type=int, default=1_000)
    parser.add_argument("--shares", type=int, default=10, help="shares the Celery tasks would split the run into")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    rows = generate(args.judgments, args.seed)
    before = peak_mb()
    started = time.perf_counter()
    data = st.prepare(*rows)
    prepared = time.perf_counter() - started
    print(f"{args.judgments:,} judgments, {N_SYSTEMS} systems, {data.n_segments:,} segments, {data.n_workers} "
          f"workers: {data.n_cells:,} cells, {data.n_translations:,} translations; "
          f"block of {st.block_size(data)} resamples")
    print(f"prepare: {prepared:.2f} s")

    started, cpu = time.perf_counter(), time.process_time()
    whole = st.resample_counts(data, args.seed, 0, args.resamples)
    one_process, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(f"{args.resamples:,} resamples in one process: {one_process:.2f} s wall, {cpu:.2f} s CPU "
          f"({1000 * one_process / args.resamples:.1f} ms per resample)")

    size = -(-args.resamples // args.shares)
    started, cpu = time.perf_counter(), time.process_time()
    shares = [st.resample_counts(data, args.seed, a, min(a + size, args.resamples))
              for a in range(0, args.resamples, size)]
    merged = st.merge(shares)
    split, cpu = time.perf_counter() - started, time.process_time() - cpu
    same = (merged.rank_counts.tolist() == whole.rank_counts.tolist() and merged.patterns == whole.patterns
            and merged.same_order == whole.same_order)
    print(f"as {len(shares)} shares of {size} (the Celery split, run one after another): {split:.2f} s wall, "
          f"{cpu:.2f} s CPU; "
          f"equal to the one-process run: {same}")
    print(f"peak memory: {peak_mb():.0f} MB (of which the bootstrap added {peak_mb() - before:.0f} MB)")

    result = st.summarise(whole)
    print(f"stable-ranking probability {result.stable_ranking_probability:.3f}, observed order reproduced "
          f"{result.same_order:.3f}, observed relations {result.same_pattern:.3f}, "
          f"{result.distinct_patterns} distinct rankings")
    print("rank   system      mean rank  95 % ranks  P(observed rank)")
    for code in result.observed_rank.argsort():
        rank = int(result.observed_rank[code])
        print(f"{rank:>4}   {result.systems[code]}  {result.mean_rank[code]:9.2f}  "
              f"{result.rank_low[code]:>4}–{result.rank_high[code]:<4}  {result.rank_probability[code, rank - 1]:.3f}")
    if not same:
        raise SystemExit("the split run differs from the one-process run")


if __name__ == "__main__":
    main()
