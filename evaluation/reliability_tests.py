"""The worker reliability tests a campaign can choose (docs/methods.md#worker-reliability), by name.

Each entry wraps one function of the pure statistics core (`evaluation.stats`) with its label,
default threshold and how its p-value is read. `Campaign.qc_test` stores the name and has no
fixed choices, so registering a test here needs no migration: the import front-ends list the
registered tests (filled in by `EvaluationConfig.ready`) and the analysis runs them by name.
Numpy only, no Django.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from config.registry import Registry
from evaluation import stats

APPRAISE_THRESHOLD = 0.01


@dataclass(frozen=True)
class QualityPairs:
    """One campaign's scored judgments and its quality-control pairs, as row indices into the arrays.

    `worker` codes 0..n_workers-1; `bad` rows are bad references and `bad_orig` the system outputs they
    degrade (same worker and HIT); `rep` rows are repeats of `rep_orig`. `z` holds standardised scores."""

    worker: np.ndarray
    score: np.ndarray
    z: np.ndarray
    bad: np.ndarray
    bad_orig: np.ndarray
    rep: np.ndarray
    rep_orig: np.ndarray
    n_workers: int


#: (pairs, threshold) -> (p per worker, pairs used per worker, reliable per worker)
TestFunction = Callable[[QualityPairs, float], tuple[np.ndarray, np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class ReliabilityTest:
    name: str
    label: str
    default_threshold: float
    #: How the p-value is read, e.g. "reliable when p < threshold".
    convention: str
    run: TestFunction
    #: The test keeps its own threshold and ignores the campaign's (Appraise's fixed 0.01).
    fixed_threshold: bool = False


_TESTS: Registry[ReliabilityTest] = Registry("reliability test", ValueError)
register = _TESTS.register
unregister = _TESTS.unregister  # for tests that register their own
get_test = _TESTS.get_registered


def choices() -> list[tuple[str, str]]:
    return [(test.name, test.label) for test in _TESTS.values()]


def default_threshold(values: dict) -> float:
    """The threshold of the chosen test (`values["qc_test"]`), for an import that gives none."""
    test = _TESTS.get(values.get("qc_test") or "")
    return test.default_threshold if test else 0.05


def threshold_in_use(name: str, threshold: float) -> float:
    """The threshold a campaign's test applies: its own where it fixes one, else the campaign's."""
    test = get_test(name)
    return test.default_threshold if test.fixed_threshold else threshold


def run(name: str, pairs: QualityPairs, threshold: float):
    """(p, pairs used, reliable) per worker with test `name`; a fixed-threshold test uses its own."""
    return get_test(name).run(pairs, threshold_in_use(name, threshold))


def _paired(test: str) -> TestFunction:
    def run_paired(q: QualityPairs, threshold: float):
        r = stats.reliability(q.worker[q.bad], q.score[q.bad], q.score[q.bad_orig], q.n_workers, test=test,
                              threshold=threshold)
        return r.p, r.n_pairs, r.reliable
    return run_paired


def _unpaired(test: str) -> TestFunction:
    def run_unpaired(q: QualityPairs, threshold: float):
        r = stats.reliability_welch(q.worker[q.rep], q.score[q.rep], q.score[q.rep_orig], q.worker[q.bad],
                                    q.score[q.bad], q.score[q.bad_orig], q.n_workers, test=test, threshold=threshold)
        return r.p, r.n_repeat_pairs + r.n_bad_pairs, r.reliable
    return run_unpaired


def _appraise(q: QualityPairs, threshold: float):
    rows = np.concatenate([q.bad, q.bad_orig])
    pair = np.concatenate([np.arange(q.bad.size), np.arange(q.bad.size)])
    is_bad = np.concatenate([np.ones(q.bad.size, bool), np.zeros(q.bad.size, bool)])
    r = stats.reliability_appraise(q.worker[rows], pair, is_bad, q.score[rows], q.n_workers, max(q.bad.size, 1),
                                   threshold=threshold)
    return r.p, r.n_pairs, r.reliable


BELOW = "reliable when p < threshold"
register(ReliabilityTest("paired-t", "One-sided paired t-test (WMT scripts)", 0.05, BELOW, _paired("paired-t")))
register(ReliabilityTest("wilcoxon", "One-sided Wilcoxon signed-rank", 0.05, BELOW, _paired("wilcoxon")))
register(ReliabilityTest("welch", "Welch t-test on ask-again vs bad-reference differences", 0.05, BELOW,
                         _unpaired("welch")))
register(ReliabilityTest("mann-whitney", "Mann-Whitney U on ask-again vs bad-reference differences", 0.05, BELOW,
                         _unpaired("mann-whitney")))
register(ReliabilityTest("appraise", "Appraise: Mann-Whitney U on z-scores", APPRAISE_THRESHOLD,
                         "reliable when p <= 0.01, Appraise's fixed threshold", _appraise, fixed_threshold=True))


# How many pairs a test needs (the import's sizing check, through annotation's option hook "min_pairs").

#: The most pairs `min_pairs` tries; a test that cannot pass a worker with this many never will in practice.
MAX_PAIRS_SEARCHED = 60
#: "As consistent as a worker can be": bad references scored this many standard deviations (of the worker's
#: bad-minus-original differences) below their originals.
CONSISTENT = 1e6


def _passes(p: float, threshold: float, rule: str) -> bool:
    """p < threshold ("lt") or p ≤ threshold ("le"), as `presets.passes`; no p-value never passes."""
    if not math.isfinite(p):
        return False
    return p <= threshold if rule == "le" else p < threshold


def synthetic_worker(n: int, drop: float) -> QualityPairs:
    """One worker with `n` bad-reference pairs and `n` repeat pairs, as a campaign's HITs hold them.

    The bad-minus-original differences are −drop + r_i standard deviations (of 10 points), r a fixed pattern
    of mean 0 and sample sd 1 (evenly spaced; 0 for one pair); the originals spread evenly over 65-75 and
    repeats are scored almost alike (0.01 to 0.5 points apart), so that nothing but `drop` and `n` grows or
    shrinks the evidence, and no two values tie (the rank tests then use their exact distributions)."""
    step = np.linspace(-1.0, 1.0, n) if n > 1 else np.zeros(1)
    r = step / step.std(ddof=1) if n > 1 else step
    original = 70.0 + 5.0 * step
    bad = original - 10.0 * (drop + r)
    first = 60.0 + 5.0 * step
    repeat = first + 0.01 + 0.49 * (step + 1.0) / 2.0
    score = np.concatenate([original, bad, first, repeat])
    z = (score - score.mean()) / (score.std(ddof=1) if score.size > 1 else 1.0)
    rows = np.arange(n)
    return QualityPairs(worker=np.zeros(score.size, np.int64), score=score, z=z, bad=rows + n, bad_orig=rows,
                        rep=rows + 3 * n, rep_orig=rows + 2 * n, n_workers=1)


def _passes_with(name: str, threshold: float, rule: str, n: int, drop: float) -> bool:
    p, _, _ = run(name, synthetic_worker(n, drop), threshold)
    return _passes(float(p[0]), threshold_in_use(name, threshold), rule)


@lru_cache(maxsize=256)
def min_pairs(name: str, threshold: float, rule: str = "lt") -> int | None:
    """The fewest bad-reference pairs (with as many repeat pairs) with which test `name` can pass a worker at
    all, found by running the test on the most consistent worker there can be (`CONSISTENT`): 2 for the
    t-tests (df ≥ 1), 5 for the Wilcoxon signed-rank test at 0.05 (its smallest p is 2^-n), 4 for
    Mann-Whitney (1/C(2n, n)), 5 for Appraise's test at 0.01. None for an unknown test, or when even
    `MAX_PAIRS_SEARCHED` pairs are not enough."""
    if _TESTS.get(name) is None:
        return None
    for n in range(1, MAX_PAIRS_SEARCHED + 1):
        if _passes_with(name, threshold, rule, n, CONSISTENT):
            return n
    return None


@lru_cache(maxsize=1024)
def critical_drop(name: str, threshold: float, rule: str, n: int) -> float | None:
    """How far below their originals a worker with `n` pairs must score the bad references to pass test
    `name`: the smallest mean drop, in standard deviations of their bad-minus-original differences (see
    `synthetic_worker`), found by bisection on the test itself. With the one-sided paired t-test this is
    t(1 − α, n − 1)/√n: 4.46 with 2 pairs, 1.18 with 4, 0.58 with 10. None when no drop passes."""
    if n < 1 or _TESTS.get(name) is None or not _passes_with(name, threshold, rule, n, CONSISTENT):
        return None
    low, high = 0.0, 1.0
    while not _passes_with(name, threshold, rule, n, high):
        low, high = high, high * 2
    for _ in range(40):
        middle = (low + high) / 2
        if _passes_with(name, threshold, rule, n, middle):
            high = middle
        else:
            low = middle
    return round(high, 2)
