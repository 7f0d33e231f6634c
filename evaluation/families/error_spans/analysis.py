"""Error-span statistics for one campaign (docs/methods.md §11), from loaded arrays to result tables.

Which judgments count, how items and systems are scored and how systems are separated is fixed by
the campaign's preset (WMT24 ESA or WMT25 ESA, `SpanRules`), each rule overridable by an option.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ... import reliability_tests, stats
from ...stats import _grouping as g
from ...stats import error_spans as es
from .loading import Observations

SYSTEM, BAD, TUTORIAL = 0, 1, 2
SIGNIFICANCE_METHODS = ("wmt24", "wmt25", "randomization")


@dataclass(frozen=True)
class SpanRules:
    """Which judgments count and how systems are scored and separated (one preset, docs/methods.md §11)."""

    significance: str
    macro: bool
    drop_bad: bool
    drop_incomplete: bool
    latest_per_judge: bool
    min_items: int
    alpha: float = 0.05
    randomization_trials: int = 10_000
    #: WMT25's table: a rule (`\cmidrule`) where every rank range above ends at or above it and every range below
    #: starts below it (`stats.esa_ranking.wmt25_table_rules`), stored per system row as `table_rule`.
    table_rules: bool = False
    #: WMT25's export: a later rating of the same (item, system, wave) slot overwrites an earlier one, by judgment
    #: id (import order), whoever gave it; off, every rating of a slot counts (averaged in the slot).
    latest_per_slot: bool = False


#: WMT24: drop attention checks, tutorials, unfinished HITs; a judge's later rating of an item wins; judges of an
#: item averaged; macro-average over domains; systems with < 100 items unranked; per-domain Wilcoxon + Stouffer.
WMT24 = SpanRules("wmt24", macro=True, drop_bad=True, drop_incomplete=True, latest_per_judge=True, min_items=100)
#: WMT25: drop tutorials only; the later rating of an (item, system, wave) slot wins; plain mean over the slots;
#: one-sided Wilcoxon between neighbours.
WMT25 = SpanRules("wmt25", macro=False, drop_bad=False, drop_incomplete=False, latest_per_judge=False, min_items=0,
                  table_rules=True, latest_per_slot=True)


@dataclass
class SpanAnalysis:
    counted: np.ndarray
    system_score: np.ndarray
    mean_score: np.ndarray
    system_items: np.ndarray
    system_observations: np.ndarray
    domain_scores: np.ndarray
    ranked: np.ndarray
    significance: es.PairedSignificance
    clusters: stats.Clusters
    workers: np.ndarray
    worker_pairs: np.ndarray
    worker_p: np.ndarray
    worker_reliable: np.ndarray
    worker_major_on_perturbed: np.ndarray
    worker_judgments: np.ndarray
    worker_seconds: np.ndarray
    item_system: np.ndarray
    item_segment: np.ndarray
    item_score: np.ndarray
    agreement: dict = field(default_factory=dict)


def counted_rows(obs: Observations, rules: SpanRules) -> np.ndarray:
    """Which observations count towards system scores under `rules`."""
    keep = obs.kind != TUTORIAL
    if rules.drop_bad:
        keep &= obs.kind != BAD
    if rules.drop_incomplete:
        keep &= obs.completed
    if rules.latest_per_judge and obs.size:
        # one integer key per (judge, segment, system, kind)
        judge = np.unique(obs.annotator, return_inverse=True)[1].ravel()
        segment = np.unique(obs.segment, return_inverse=True)[1].ravel()
        key = ((judge * (int(segment.max()) + 1) + segment) * (int(obs.system.max()) + 1) + obs.system) * 3 + obs.kind
        keep &= _latest(key, obs.judgment)
    if rules.latest_per_slot and obs.size:
        # one integer key per (segment, system, wave, kind), whoever rated it
        segment = np.unique(obs.segment, return_inverse=True)[1].ravel()
        wave = np.unique(obs.wave, return_inverse=True)[1].ravel()
        key = ((segment * (int(obs.system.max()) + 1) + obs.system) * (int(wave.max()) + 1) + wave) * 3 + obs.kind
        keep &= _latest(key, obs.judgment)
    return keep & np.isfinite(obs.score if obs.size else np.zeros(0))


def _latest(key: np.ndarray, judgment: np.ndarray) -> np.ndarray:
    """Whether each row is the latest (highest judgment id) of its key: the last in (key, judgment) order."""
    order = np.lexsort((judgment, key))
    last = np.r_[key[order][1:] != key[order][:-1], True]
    latest = np.zeros(key.size, dtype=bool)
    latest[order[last]] = True
    return latest


def _randomization(item_system, item_segment, item_score, n_systems: int, trials: int, seed: int
                   ) -> es.PairedSignificance:
    """Two-sided paired approximate randomization between every pair on their shared items; p[i, j] = p[j, i]
    (which one is better is read from the scores)."""
    matrix = es._shared(item_system, item_segment, item_score, n_systems)
    p = np.full((n_systems, n_systems), np.nan)
    n = np.zeros((n_systems, n_systems), dtype=np.int64)
    for i in range(n_systems):
        for j in range(i + 1, n_systems):
            both = np.isfinite(matrix[:, i]) & np.isfinite(matrix[:, j])
            n[i, j] = n[j, i] = both.sum()
            p[i, j] = p[j, i] = es.approximate_randomization(matrix[both, i], matrix[both, j], trials,
                                                             seed + i * 997 + j)
    return es.PairedSignificance(p=p, n=n, method="randomization")


def item_significance(rules: SpanRules, item_system, item_segment, item_score, n_systems: int, item_domain,
                      seed: int = 0, item_wave=None) -> es.PairedSignificance:
    """The preset's test between every two systems on their shared items (one score per (system, segment), or per
    (system, segment, wave) slot under WMT25): per-domain two-sided Wilcoxon + Stouffer (wmt24), its directional
    variant (stouffer), one-sided Wilcoxon (wmt25) or paired approximate randomization (docs/methods.md §11.4)."""
    if rules.significance == "randomization":
        return _randomization(item_system, item_segment, item_score, n_systems, rules.randomization_trials, seed)
    if rules.significance == "wmt25":
        return es.paired_significance(item_system, item_segment, item_score, n_systems, method="wmt25",
                                      item_wave=item_wave)
    return es.paired_significance(item_system, item_segment, item_score, n_systems, item_domain,
                                  method=rules.significance)


def analyse(obs: Observations, n_systems: int, domain_of_document: dict[int, int], n_domains: int,
            rules: SpanRules, score_of: str, test: str, threshold: float, threshold_rule: str, cluster_rule: str,
            seed: int = 0) -> SpanAnalysis:
    """Scores, significance, clusters and the workers' perturbation test. `score_of` is "esa" (the 0–100 score)
    or "mqm" (minus the MQM penalty)."""
    value = obs.score if score_of == "esa" else -obs.penalty
    counted = counted_rows(replace(obs, score=value), rules)
    rows = np.flatnonzero(counted)
    domain = np.array([domain_of_document.get(int(d), 0) for d in np.unique(obs.document)], dtype=np.int64)
    doc_codes = np.searchsorted(np.unique(obs.document), obs.document) if obs.size else np.zeros(0, np.int64)
    obs_domain = domain[doc_codes] if obs.size else np.zeros(0, np.int64)

    # items: (system, segment); several judges (and, in WMT25, several ratings) averaged per item
    item_key = obs.system[rows] * (int(obs.segment.max(initial=0)) + 1) + obs.segment[rows]
    items, item_of_row = np.unique(item_key, return_inverse=True)
    item_of_row = item_of_row.ravel()
    item_score = es.item_means(item_of_row, value[rows], items.size)
    item_system = np.zeros(items.size, np.int64)
    item_system[item_of_row] = obs.system[rows]
    item_segment = np.zeros(items.size, np.int64)
    item_segment[item_of_row] = obs.segment[rows]
    item_domain = np.zeros(items.size, np.int64)
    item_domain[item_of_row] = obs_domain[rows]

    if rules.latest_per_judge:  # WMT24: the system score is over items
        system_score = es.system_means(item_system, item_score, n_systems, item_domain, n_domains, macro=rules.macro)
    else:  # WMT25: every counted rating an observation (one per slot under latest_per_slot)
        system_score = es.system_means(obs.system[rows], value[rows], n_systems, obs_domain[rows], n_domains,
                                       macro=rules.macro)
    mean_score = _group_mean(obs.system[rows], obs.score[rows], n_systems)
    system_items = np.bincount(item_system, minlength=n_systems)
    system_observations = np.bincount(obs.system[rows], minlength=n_systems)
    cell = item_system * max(n_domains, 1) + item_domain
    domain_scores = _group_mean(cell, item_score, n_systems * max(n_domains, 1)).reshape(n_systems, max(n_domains, 1))
    ranked = (system_items >= max(rules.min_items, 1)) & np.isfinite(system_score)

    if rules.significance == "wmt25":  # (item, wave) slots: two waves of an item are two observations
        slot_system, slot_segment, slot_wave, slot_score = _wave_slots(obs, rows, value)
        significance = item_significance(rules, slot_system, slot_segment, slot_score, n_systems, None, seed,
                                         item_wave=slot_wave)
    else:
        significance = item_significance(rules, item_system, item_segment, item_score, n_systems, item_domain, seed)
    clusters = stats.clusters(np.where(ranked, system_score, np.nan), significance.p, rules.alpha, rule=cluster_rule)

    workers, worker_code = np.unique(obs.annotator, return_inverse=True)
    worker_code = worker_code.ravel()
    bad = np.flatnonzero((obs.kind == BAD) & (obs.partner >= 0))
    originals = obs.partner[bad]
    valid = np.isfinite(value[bad]) & np.isfinite(value[originals])
    bad, originals = bad[valid], originals[valid]
    pairs = reliability_tests.QualityPairs(worker=worker_code, score=value, z=value, bad=bad, bad_orig=originals,
                                           rep=np.zeros(0, np.int64), rep_orig=np.zeros(0, np.int64),
                                           n_workers=workers.size)
    if bad.size:
        p, n_pairs, _ = reliability_tests.run(test, pairs, threshold)
        from ...presets import passes

        reliable = passes(p, threshold, threshold_rule)
    else:
        p = np.full(workers.size, np.nan)
        n_pairs = np.zeros(workers.size, np.int64)
        reliable = np.ones(workers.size, bool)
    # a worker without perturbation pairs was not tested: counted, not marked unreliable
    reliable = np.where(np.asarray(n_pairs) > 0, reliable, True)
    all_bad = np.flatnonzero(obs.kind == BAD)
    flagged = np.bincount(worker_code[all_bad], weights=(obs.n_major[all_bad] + obs.n_critical[all_bad]) > 0,
                          minlength=workers.size)
    shown = np.bincount(worker_code[all_bad], minlength=workers.size)
    with np.errstate(invalid="ignore", divide="ignore"):
        major_rate = np.where(shown > 0, flagged / np.maximum(shown, 1), np.nan)
    judged = np.bincount(worker_code, minlength=workers.size)
    seconds = _group_mean(worker_code, obs.seconds, workers.size)
    return SpanAnalysis(
        counted=counted, system_score=system_score, mean_score=mean_score, system_items=system_items,
        system_observations=system_observations, domain_scores=domain_scores, ranked=ranked,
        significance=significance, clusters=clusters, workers=workers, worker_pairs=np.asarray(n_pairs),
        worker_p=np.asarray(p, dtype=np.float64), worker_reliable=np.asarray(reliable, dtype=bool),
        worker_major_on_perturbed=major_rate, worker_judgments=judged, worker_seconds=seconds,
        item_system=item_system, item_segment=item_segment, item_score=item_score)


def _wave_slots(obs: Observations, rows: np.ndarray, value: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(system, segment, wave, score) of each (system, segment, wave) slot of the counted rows, its score the
    mean of that slot's counted ratings (under WMT25's `latest_per_slot` one, or an original with its perturbed
    copy): WMT25 pairs systems on (item, wave) slots (docs/methods.md §11.4). With one wave the slots are the
    items."""
    wave = obs.wave[rows]
    slot_key = (obs.system[rows] * (int(obs.segment.max(initial=0)) + 1) + obs.segment[rows]) \
        * (int(wave.max(initial=1)) + 1) + wave
    slots, slot_of_row = np.unique(slot_key, return_inverse=True)
    slot_of_row = slot_of_row.ravel()
    score = es.item_means(slot_of_row, value[rows], slots.size)
    system, segment, slot_wave = (np.zeros(slots.size, np.int64) for _ in range(3))
    system[slot_of_row], segment[slot_of_row], slot_wave[slot_of_row] = obs.system[rows], obs.segment[rows], wave
    return system, segment, slot_wave, score


def _group_mean(group, values, n: int) -> np.ndarray:
    """The core's group mean over the finite values only (NaN for a group without any)."""
    values = np.asarray(values, dtype=np.float64)
    ok = np.isfinite(values)
    return g.group_mean(np.asarray(group, dtype=np.int64)[ok], values[ok], n)


def shared_items(obs: Observations, counted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The counted system observations of items (system, segment) judged at least twice, and their item codes."""
    rows = np.flatnonzero(counted & (obs.kind == SYSTEM))
    item = obs.system[rows] * (int(obs.segment.max(initial=0)) + 1) + obs.segment[rows]
    _, item_code, per_item = np.unique(item, return_inverse=True, return_counts=True)
    item_code = item_code.ravel()
    shared = per_item[item_code] >= 2
    return rows[shared], item_code[shared]


def agreement(obs: Observations, counted: np.ndarray, spans: list[tuple], score_of: str) -> dict:
    """Span F1 between judges of the same item (character level, with and without severity) and Krippendorff's
    α (interval) on the item scores, over items rated by at least two judges."""
    rows, item_code = shared_items(obs, counted)
    result = {"items": int(np.unique(item_code).size), "f1": math.nan, "f1_severity": math.nan, "judge_pairs": 0,
              "alpha": math.nan}
    if rows.size == 0:
        return result
    value = obs.score if score_of == "esa" else -obs.penalty
    result["alpha"] = es.krippendorff_interval(item_code, obs.annotator[rows], value[rows])
    where = {(int(obs.judgment[r]), obs.key[r]): (int(c), int(obs.annotator[r])) for r, c in zip(rows, item_code,
                                                                                                  strict=True)}
    severities = {"minor": 0, "major": 1, "critical": 2}
    marks = [(where[(j, k)], s, start, end) for j, k, s, _cat, side, start, end in spans
             if (j, k) in where and not side and start is not None]
    segment = [c for c, _ in where.values()] + [m[0][0] for m in marks]
    judge = [a for _, a in where.values()] + [m[0][1] for m in marks]
    start = [-1] * len(where) + [m[2] for m in marks]
    end = [-1] * len(where) + [m[3] for m in marks]
    severity = [0] * len(where) + [severities.get(m[1], 3) for m in marks]
    f1 = es.span_f1(segment, judge, start, end, severity)
    result.update(f1=f1.f1, f1_severity=f1.f1_severity, judge_pairs=f1.pairs)
    return result
