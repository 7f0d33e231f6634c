"""The worker reliability tests a campaign can choose (docs/methods.md#worker-reliability), by name.

Each entry wraps one function of the pure statistics core (`evaluation.stats`) with its label,
default threshold and how its p-value is read. `Campaign.qc_test` stores the name and has no
fixed choices, so registering a test here needs no migration: the import front-ends list the
registered tests (filled in by `EvaluationConfig.ready`) and the analysis runs them by name.
Numpy only, no Django.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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
