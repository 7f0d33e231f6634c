"""Ranking stability: a two-way bootstrap over workers and segments (docs/methods.md §12.4).

Each resample draws the workers with replacement and, independently, the segments with replacement, and
rebuilds the dataset those draws describe: a worker drawn k times contributes k copies of their judgments,
a segment drawn m times contributes m copies of every translation of it. On that resampled dataset the
system score is the one the ranking uses (docs/methods.md §5.2): per translation (system × segment) the
mean of its judgments, per system the mean of its translation means. In weights, for resample r with worker
counts a[w] and segment counts b[g]:

    translation mean  m_t = Σ_j a[w_j] · x_j / Σ_j a[w_j]        over the judgments j of translation t
    system score      μ_s = Σ_t b[g_t] · m_t / Σ_t b[g_t]        over the translations t of s with Σ a > 0

so a judgment's weight is a[worker] × b[segment], normalised within its translation and system. With every
count 1 this is the observed (full-data) score. Scores stay those the caller gives (z-scores fitted on the
full data, or raw scores); workers' z-scores and reliability verdicts are not refitted per resample.

Conventions
-----------
* **Rank**: the position by μ_s in the resample, best (highest) first. Ties in μ_s are broken by the
  observed score (higher first), then by system name (code point order); a system with no translation in
  the resample (all its segments or workers missed) ranks below every scored one.
* **Relations** (the ranking in Riley et al.'s sense): for each pair of systems (i, j) the resample says
  i > j, j > i or "not separated", by a **two-sided z test on the difference of the weighted means** at
  α = 0.05: z = (μ_i − μ_j) / √(v_i / n_i + v_j / n_j), with n_s = Σ_t b[g_t] the resample's number of
  translations of s (copies counted) and v_s their sample variance (ddof = 1, copies counted) — unpaired,
  normal approximation, |z| > 1.959964 (= Φ⁻¹(0.975)) separates. A zero standard error separates any
  non-zero difference; an undefined test (n_s < 2) separates nothing.
* **Stable-ranking probability** (Riley et al. 2024, adapted to the bootstrap): the probability that two
  independent resamples give the same ranking, i.e. identical relations for every pair of systems:
  Σ_p c_p (c_p − 1) / (R (R − 1)) over the distinct relation patterns p seen c_p times in R resamples (the
  unbiased estimate of Σ_p π_p²).
* **Reproduction**: the share of resamples whose full order equals the observed order (ties as above), and
  the share whose relation pattern equals the observed one.
* **Rank interval** (95 %): the 2.5 % and 97.5 % quantiles of the system's rank over the resamples, by the
  inverted empirical distribution (the smallest rank k with P(rank ≤ k) ≥ q; numpy's "inverted_cdf").
* **Seeding**: resample r draws from its own stream, ``np.random.default_rng(SeedSequence(seed,
  spawn_key=(r,)))`` (the r-th child of ``SeedSequence(seed)``), workers first, then segments. Resamples
  split into any chunks, run in any order or on any machine, therefore give the same counts, and
  :func:`merge` adds them up.

Everything is vectorised over a block of resamples. Judgments are merged into cells (one worker's judgments of
one translation), held as sparse translations × workers matrices of score sums and counts; one sparse product
with the block's worker counts (workers × resamples) gives every translation's weighted sum and weight, so a
judgment's weight a[worker] × b[segment] is never materialised per judgment. System sums are taken with
``np.add.reduceat`` over the translations, which are sorted by system. A block holds at most
``MAX_BLOCK_ELEMENTS`` translations × resamples, so memory stays bounded (a few tens of MB) whatever the size.
Judgments in resampling form and a resample's weighted system scores: ``stability_data.py`` (its names are
importable from here too).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._grouping import freeze
from .stability_data import HajekStrata, StabilityData, prepare, weighted_scores

__all__ = ["ALPHA", "Z_CRITICAL", "HajekStrata", "StabilityCounts", "StabilityData", "StabilityResult", "block_size",
           "bootstrap", "merge", "prepare", "rank_interval", "resample_counts", "stable_ranking_probability",
           "summarise", "weighted_scores"]

ALPHA = 0.05
#: Φ⁻¹(1 − α/2) for α = 0.05 (scipy.stats.norm.ppf(0.975)).
Z_CRITICAL = 1.959963984540054
#: Resamples × translations held at once (float64): bounds a block's temporary arrays.
MAX_BLOCK_ELEMENTS = 1_000_000
#: Relation codes in a pattern string: the first system of the pair better, not separated, the second better.
RELATION_CHARS = {1: "+", 0: "0", -1: "-"}


def _pairs(n_systems: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n_systems, 1)


def _relations(mean, variance, n, first, second) -> np.ndarray:
    """(resamples × pairs) int8: +1 first significantly better, −1 second better, 0 not separated."""
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (mean[:, first] - mean[:, second]) / np.sqrt(variance[:, first] / n[:, first]
                                                          + variance[:, second] / n[:, second])
    return (z > Z_CRITICAL).astype(np.int8) - (z < -Z_CRITICAL).astype(np.int8)


def _orders(mean: np.ndarray, tiebreak: np.ndarray) -> np.ndarray:
    """Per row, the system codes best first: by mean (NaN last), ties by `tiebreak` (lower first)."""
    primary = np.where(np.isfinite(mean), -mean, np.inf)
    return np.lexsort((np.broadcast_to(tiebreak, mean.shape), primary), axis=-1)


def _pattern_strings(relations: np.ndarray) -> list[str]:
    table = np.array([ord(RELATION_CHARS[-1]), ord(RELATION_CHARS[0]), ord(RELATION_CHARS[1])], dtype=np.uint8)
    codes = table[relations.astype(np.int64) + 1]
    return [row.tobytes().decode("ascii") for row in codes]


@dataclass(frozen=True)
class StabilityCounts:
    """What a share of the resamples found, in counts that add up over shares (:func:`merge`).

    ``rank_counts[s, k]``: resamples in which system s had rank k + 1; ``patterns``: relation pattern (one
    character per pair (i, j), i < j, by code: "+" i better, "-" j better, "0" not separated) → resamples.
    The observed figures (every count 1) are the same in every share.
    """

    systems: tuple[str, ...]
    observed_mean: np.ndarray
    observed_order: np.ndarray
    observed_pattern: str
    resamples: int
    rank_counts: np.ndarray
    patterns: dict[str, int]
    same_order: int
    same_pattern: int

    def __post_init__(self):
        freeze(self)

    def as_json(self) -> dict:
        return {"systems": list(self.systems), "observed_mean": [float(v) for v in self.observed_mean],
                "observed_order": [int(v) for v in self.observed_order], "observed_pattern": self.observed_pattern,
                "resamples": int(self.resamples), "rank_counts": self.rank_counts.tolist(),
                "patterns": dict(self.patterns), "same_order": int(self.same_order),
                "same_pattern": int(self.same_pattern)}

    @classmethod
    def from_json(cls, value: dict) -> StabilityCounts:
        n = len(value["systems"])
        return cls(systems=tuple(value["systems"]), observed_mean=np.array(value["observed_mean"], np.float64),
                   observed_order=np.array(value["observed_order"], np.int64),
                   observed_pattern=value["observed_pattern"], resamples=int(value["resamples"]),
                   rank_counts=np.array(value["rank_counts"], np.int64).reshape(n, n),
                   patterns={str(k): int(v) for k, v in value["patterns"].items()},
                   same_order=int(value["same_order"]), same_pattern=int(value["same_pattern"]))


def _draws(data: StabilityData, seed: int, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    """Worker and segment counts of resamples start..stop-1, each from its own seeded stream."""
    workers = np.empty((stop - start, data.n_workers))
    segments = np.empty((stop - start, data.n_segments))
    for row, r in enumerate(range(start, stop)):
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(r,)))
        workers[row] = np.bincount(rng.integers(0, data.n_workers, data.n_workers), minlength=data.n_workers)
        segments[row] = np.bincount(rng.integers(0, data.n_segments, data.n_segments), minlength=data.n_segments)
    return workers, segments


def _check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or not 0 <= int(seed) < 2 ** 63:
        raise ValueError(f"seed must be an integer in [0, 2**63), got {seed!r}")
    return int(seed)


def block_size(data: StabilityData, limit: int = MAX_BLOCK_ELEMENTS) -> int:
    """Resamples per vectorised block: as many as keep (resamples × translations) within `limit` elements (the
    block size changes nothing but memory and speed; docs/methods.md §12.4)."""
    width = max(data.n_translations, data.n_workers, data.n_segments, 1)
    return max(1, limit // width)


def resample_counts(data: StabilityData, seed: int, start: int, stop: int,
                    limit: int = MAX_BLOCK_ELEMENTS) -> StabilityCounts:
    """Run resamples start..stop-1 of the sequence seeded by `seed` and count what they found (docs/methods.md
    §12): any split of 0..R-1 into shares, merged, equals one run of 0..R-1."""
    seed = _check_seed(seed)
    if not 0 <= start <= stop:
        raise ValueError("need 0 <= start <= stop")
    s = data.n_systems
    first, second = _pairs(s)
    ones_w, ones_g = np.ones((1, data.n_workers)), np.ones((1, data.n_segments))
    if s == 0:
        return StabilityCounts((), np.zeros(0), np.zeros(0, np.int64), "", stop - start, np.zeros((0, 0), np.int64),
                               {"": stop - start} if stop > start else {}, stop - start, stop - start)
    mean, variance, n = weighted_scores(data, ones_w, ones_g)
    observed_mean = mean[0]
    observed_order = _orders(mean, data.name_position)[0]
    observed_pattern = _pattern_strings(_relations(mean, variance, n, first, second))[0]
    tiebreak = np.empty(s, np.int64)
    tiebreak[observed_order] = np.arange(s)  # resample ties: by the observed score, then name
    rank_counts = np.zeros((s, s), np.int64)
    patterns: dict[str, int] = {}
    same_order = same_pattern = 0
    step = block_size(data, limit)
    for block in range(start, stop, step):
        worker_counts, segment_counts = _draws(data, seed, block, min(block + step, stop))
        mean, variance, n = weighted_scores(data, worker_counts, segment_counts)
        order = _orders(mean, tiebreak)
        rank = np.empty_like(order)
        np.put_along_axis(rank, order, np.arange(s)[None, :], axis=1)
        rank_counts += np.bincount((np.arange(s)[None, :] * s + rank).ravel(), minlength=s * s).reshape(s, s)
        same_order += int(np.all(order == observed_order, axis=1).sum())
        unique, counts = np.unique(_relations(mean, variance, n, first, second), axis=0, return_counts=True)
        for pattern, count in zip(_pattern_strings(unique), counts.tolist(), strict=True):
            patterns[pattern] = patterns.get(pattern, 0) + count
    same_pattern = patterns.get(observed_pattern, 0)
    return StabilityCounts(data.systems, observed_mean, observed_order, observed_pattern, stop - start, rank_counts,
                           patterns, same_order, same_pattern)


def merge(shares: list[StabilityCounts]) -> StabilityCounts:
    """Add up the counts of shares of one bootstrap (same data; the observed figures must agree;
    docs/methods.md §12.4)."""
    if not shares:
        raise ValueError("nothing to merge")
    head = shares[0]
    for other in shares[1:]:
        if other.systems != head.systems or other.observed_pattern != head.observed_pattern:
            raise ValueError("the shares come from different data")
    patterns: dict[str, int] = {}
    for share in shares:
        for pattern, count in share.patterns.items():
            patterns[pattern] = patterns.get(pattern, 0) + count
    return StabilityCounts(head.systems, head.observed_mean, head.observed_order, head.observed_pattern,
                           sum(x.resamples for x in shares), sum(x.rank_counts for x in shares), patterns,
                           sum(x.same_order for x in shares), patterns.get(head.observed_pattern, 0))


def stable_ranking_probability(pattern_counts) -> float:
    """Σ c (c − 1) / (R (R − 1)) over the counts c of the distinct patterns, R = Σ c: the probability that two
    resamples drawn without replacement from the R show the same pattern (Riley et al. 2024's stable-ranking
    probability, adapted to the bootstrap: docs/methods.md §12.4). NaN with fewer than two."""
    c = np.asarray(list(pattern_counts), dtype=np.float64)
    total = c.sum()
    if total < 2:
        return float("nan")
    return float(np.sum(c * (c - 1)) / (total * (total - 1)))


def rank_interval(rank_counts: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Per system (rows of counts over ranks 1..S) the (low, high) ranks of the central `level` interval:
    the smallest rank k with P(rank ≤ k) ≥ (1 − level)/2, respectively ≥ (1 + level)/2 (numpy's
    "inverted_cdf" quantiles of the resampled ranks; docs/methods.md §12.4). A system without rank counts gets the
    empty interval (0, 0); no systems (shape (0, 0): a filter that keeps no judgment yet) give empty arrays."""
    counts = np.asarray(rank_counts, dtype=np.float64)
    if counts.size == 0:  # numpy's argmax refuses an empty axis
        return np.zeros(counts.shape[0], np.int64), np.zeros(counts.shape[0], np.int64)
    total = counts.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        cdf = np.cumsum(counts, axis=1) / total
    out = []
    for q in ((1 - level) / 2, (1 + level) / 2):
        reached = cdf >= q - 1e-12
        out.append(np.where(reached.any(axis=1), reached.argmax(axis=1) + 1, 0))
    return out[0], out[1]


@dataclass(frozen=True)
class StabilityResult:
    """The bootstrap's figures. Per system (by code): ``rank_probability[s, k]`` = P(rank k + 1),
    ``mean_rank``, ``rank_low``/``rank_high`` (95 %), ``observed_rank``; ``better[i, j]`` = share of
    resamples in which i is significantly better than j. For the ranking: ``stable_ranking_probability``,
    ``same_order`` and ``same_pattern`` (shares of resamples reproducing the observed order / relations),
    ``distinct_patterns``."""

    systems: tuple[str, ...]
    resamples: int
    observed_mean: np.ndarray
    observed_rank: np.ndarray
    rank_probability: np.ndarray
    mean_rank: np.ndarray
    rank_low: np.ndarray
    rank_high: np.ndarray
    better: np.ndarray
    stable_ranking_probability: float
    same_order: float
    same_pattern: float
    distinct_patterns: int
    observed_pattern: str

    def __post_init__(self):
        freeze(self)


def summarise(counts: StabilityCounts, level: float = 0.95) -> StabilityResult:
    """Probabilities and intervals from the (merged) counts (docs/methods.md §12.4)."""
    s, r = len(counts.systems), counts.resamples
    with np.errstate(invalid="ignore", divide="ignore"):
        probability = counts.rank_counts / float(r) if r else np.full((s, s), np.nan)
    mean_rank = probability @ np.arange(1, s + 1) if r else np.full(s, np.nan)
    low, high = rank_interval(counts.rank_counts, level)
    observed_rank = np.empty(s, np.int64)
    observed_rank[counts.observed_order] = np.arange(1, s + 1)
    better = np.zeros((s, s))
    if counts.patterns and s > 1:
        first, second = _pairs(s)
        patterns = list(counts.patterns)
        weights = np.array([counts.patterns[p] for p in patterns], dtype=np.float64)
        codes = np.frombuffer("".join(patterns).encode("ascii"), dtype=np.uint8).reshape(len(patterns), -1)
        np.add.at(better, (first, second), weights @ (codes == ord(RELATION_CHARS[1])))
        np.add.at(better, (second, first), weights @ (codes == ord(RELATION_CHARS[-1])))
        better /= max(r, 1)
    return StabilityResult(
        systems=counts.systems, resamples=r, observed_mean=counts.observed_mean, observed_rank=observed_rank,
        rank_probability=probability, mean_rank=mean_rank, rank_low=low, rank_high=high, better=better,
        stable_ranking_probability=stable_ranking_probability(counts.patterns.values()),
        same_order=counts.same_order / r if r else float("nan"),
        same_pattern=counts.same_pattern / r if r else float("nan"),
        distinct_patterns=len(counts.patterns), observed_pattern=counts.observed_pattern,
    )


def bootstrap(data: StabilityData, resamples: int = 1000, seed: int = 0) -> StabilityResult:
    """All `resamples` in one process (docs/methods.md §12.4; the Celery tasks split the same sequence into
    shares)."""
    return summarise(resample_counts(data, seed, 0, resamples))
