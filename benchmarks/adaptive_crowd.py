"""The simulated crowd and campaign of benchmarks/adaptive.py (its docstring says what they are): eight systems of
known quality, careful and careless workers, HITs of 70 outputs and 30 quality-control items, judged in batches."""
from __future__ import annotations

import math
import pathlib
import sys
from dataclasses import dataclass, field

import numpy as np
from scipy import special

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluation.stats import reliability, standardise  # noqa: E402

SYSTEM_MEANS = np.array([78.0, 76.0, 73.0, 73.0, 63.0, 60.0, 48.0, 34.0])
N_SYSTEMS = SYSTEM_MEANS.size
N_SEGMENTS = 2000
SEGMENT_SD, TRANSLATION_SD = 10.0, 12.0
CARELESS_SHARE = 0.2
MEAN_HITS_PER_WORKER = 4
BAD_REFERENCE_DROP = 30.0
REFERENCE_QUALITY = 85.0
OUTPUTS, QC = 70, 10  # per HIT: 70 system outputs; 10 each of bad references, repeats, references
GATE_MIN_PAIRS, GATE_THRESHOLD, RELIABLE_P = 5, 0.05, 0.05
ALPHA = 0.05
N_BATCHES = 10
FIXED_SCALES = (0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.5, 3.0)  # fixed budgets, as multiples of the adaptive budget

LEVELS = np.unique(SYSTEM_MEANS)[::-1]
LEVEL_OF = np.searchsorted(-LEVELS, -SYSTEM_MEANS)  # level index per system, 0 = best
EQUAL_PAIR = tuple(np.flatnonzero(SYSTEM_MEANS == 73.0))



# --------------------------------------------------------------------------
# the crowd


@dataclass
class Crowd:
    """One repetition's world: translation qualities and a stream of workers (their own random numbers)."""

    seed: int
    segment_sd: float = SEGMENT_SD
    quality: np.ndarray = field(init=False)
    difficulty: np.ndarray = field(init=False)
    segment_order: np.ndarray = field(init=False)

    def __post_init__(self):
        rng = np.random.default_rng([self.seed, 0])
        self.difficulty = rng.normal(0, self.segment_sd, N_SEGMENTS)
        effect = rng.normal(0, TRANSLATION_SD, (N_SYSTEMS, N_SEGMENTS))
        self.quality = SYSTEM_MEANS[:, None] + self.difficulty[None, :] + effect
        self.segment_order = np.argsort(rng.random((N_SYSTEMS, N_SEGMENTS)), axis=1)

    def workers(self):
        """Endless stream of (careless, bias, scale, noise, planned HITs); the same for every design."""
        rng = np.random.default_rng([self.seed, 1])
        while True:
            yield (
                bool(rng.random() < CARELESS_SHARE),
                rng.normal(0, 10),
                rng.uniform(0.6, 1.3),
                rng.uniform(6, 16),
                int(rng.geometric(1 / MEAN_HITS_PER_WORKER)),
            )


def allocate(weights: np.ndarray, credit: np.ndarray, n: int) -> np.ndarray:
    """Outputs per system for one HIT of ``n``: largest remainders of credit + n w; the remainders carry over."""
    credit[weights <= 0] = 0.0
    target = credit + n * weights
    take = np.maximum(np.floor(target), 0).astype(np.int64)
    short = n - int(take.sum())
    if short > 0:
        gap = np.where(weights > 0, take - target, np.inf)
        take[np.argsort(gap, kind="stable")[:short]] += 1
    elif short < 0:
        take[np.argsort(target - take, kind="stable")[:-short]] -= 1
    credit[:] = target - take
    return take


class Campaign:
    """The judgments of one design's run, HIT by HIT, with the live gate."""

    def __init__(self, crowd: Crowd, max_hits: int, gate: bool, seed: int):
        self.crowd, self.gate = crowd, gate
        self.rng = np.random.default_rng([crowd.seed, 2, seed])  # score noise
        self.stream = crowd.workers()
        self.next_segment = np.zeros(N_SYSTEMS, dtype=np.int64)
        self.credit = np.zeros(N_SYSTEMS)
        h = max_hits
        self.hit_worker = np.zeros(h, dtype=np.int64)
        self.hit_batch = np.zeros(h, dtype=np.int64)
        self.batch = 0
        self.system = np.zeros((h, OUTPUTS), dtype=np.int64)
        self.segment = np.zeros((h, OUTPUTS), dtype=np.int64)
        self.output = np.zeros((h, OUTPUTS))
        self.bad = np.zeros((h, QC))
        self.repeat = np.zeros((h, QC))
        self.reference = np.zeros((h, QC))
        self.hits = 0
        self.careless: list[bool] = []
        self.gated_at: list[int] = []  # per worker: HIT index after which the gate stopped (or would stop) them
        self.worker_hits: list[int] = []
        self._new_worker()

    def _new_worker(self):
        careless, bias, scale, noise, planned = next(self.stream)
        self.careless.append(careless)
        self.params = (careless, bias, scale, noise)
        self.remaining = planned
        self.gated_at.append(-1)
        self.worker_hits.append(0)
        self.pairs_n, self.pairs_sum, self.pairs_sq = 0, 0.0, 0.0

    def _score(self, quality: np.ndarray, noise_scale: float = 1.0) -> np.ndarray:
        careless, bias, scale, noise = self.params
        if careless:
            return self.rng.integers(0, 101, quality.shape).astype(np.float64)
        raw = 50 + bias + scale * (quality - 50) + self.rng.normal(0, noise * noise_scale, quality.shape)
        return np.clip(np.rint(raw), 0, 100)

    def run_hit(self, weights: np.ndarray) -> None:
        h = self.hits
        counts = allocate(weights, self.credit, OUTPUTS)
        systems = self.rng.permutation(np.repeat(np.arange(N_SYSTEMS), counts))
        # each system's next segments in its own order (a segment twice only after all once)
        rank = np.zeros(OUTPUTS, dtype=np.int64)
        for s in np.flatnonzero(counts):
            rank[systems == s] = self.next_segment[s] + np.arange(counts[s])
        self.next_segment += counts
        segments = self.crowd.segment_order[systems, rank % N_SEGMENTS]
        quality = self.crowd.quality[systems, segments]
        self.hit_worker[h] = len(self.careless) - 1
        self.hit_batch[h] = self.batch
        self.system[h], self.segment[h] = systems, segments
        self.output[h] = self._score(quality)
        self.bad[h] = self._score(quality[:QC] - BAD_REFERENCE_DROP)
        self.repeat[h] = self._score(quality[QC:2 * QC])
        self.reference[h] = self._score(REFERENCE_QUALITY + self.crowd.difficulty[segments[:QC]])
        self.hits += 1
        self.worker_hits[-1] += 1
        self.remaining -= 1
        if self._gate_fails(self.bad[h] - self.output[h, :QC]) and self.gated_at[-1] < 0:
            self.gated_at[-1] = h
            if self.gate:
                self.remaining = 0
        if self.remaining <= 0:
            self._new_worker()

    def _gate_fails(self, d: np.ndarray) -> bool:
        """The live gate's paired t-test on all of the worker's bad-reference pairs so far (docs/methods.md §12.1)."""
        self.pairs_n += d.size
        self.pairs_sum += float(d.sum())
        self.pairs_sq += float(d @ d)
        n = self.pairs_n
        if n < GATE_MIN_PAIRS:
            return False
        mean = self.pairs_sum / n
        var = (self.pairs_sq - n * mean * mean) / (n - 1)
        if var <= 1e-12:
            return True  # the test cannot pass them at all
        t = mean / math.sqrt(var / n)
        return special.stdtr(n - 1, t) >= GATE_THRESHOLD

    def counted(self, hits: int):
        """z-scores, systems, segments and batches of the reliable workers' outputs and repeats in the first ``hits``
        HITs."""
        worker = self.hit_worker[:hits]
        codes, worker = np.unique(worker, return_inverse=True)
        n_workers = codes.size
        per_item = np.concatenate(
            [self.output[:hits], self.bad[:hits], self.repeat[:hits], self.reference[:hits]], axis=1
        )
        item_worker = np.repeat(worker, per_item.shape[1])
        z = standardise(item_worker, per_item.ravel(), n_workers).z.reshape(hits, -1)
        pair_worker = np.repeat(worker, QC)
        rel = reliability(pair_worker, self.bad[:hits].ravel(), self.output[:hits, :QC].ravel(), n_workers)
        keep = rel.reliable[worker]
        z_out, z_rep = z[keep, :OUTPUTS], z[keep, OUTPUTS + QC:OUTPUTS + 2 * QC]
        scores = np.concatenate([z_out.ravel(), z_rep.ravel()])
        systems = np.concatenate([self.system[:hits][keep].ravel(), self.system[:hits][keep, QC:2 * QC].ravel()])
        segments = np.concatenate([self.segment[:hits][keep].ravel(), self.segment[:hits][keep, QC:2 * QC].ravel()])
        batch = self.hit_batch[:hits][keep]
        batches = np.concatenate([np.repeat(batch, OUTPUTS), np.repeat(batch, QC)])
        finite = np.isfinite(scores)
        return scores[finite], systems[finite], segments[finite], batches[finite]
