"""The Direct Assessment analysis of one campaign, from judgment arrays to results (docs/methods.md §4-§6).

Pure numpy glue around `evaluation.stats` (no Django): the task loads the arrays, calls
`analyse`, and stores what it returns. Quality-control pairs are matched here: a bad
reference or a repeat pairs with the system-output judgment of the same assignment (one
worker, one HIT) and the same system output — the WMT scripts' (worker, HIT, system,
segment) key.

Rows are put in judgment-id order first, so every sum runs in the same order whatever order
the database returned them in; with the per-translation means rounded to the preset's significant
digits (15) in the core, the same judgments give bit-identical results on any database.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from evaluation import reliability_tests, stats
from evaluation.presets import passes

SYSTEM, BAD_REF, REPEAT, REFERENCE = 0, 1, 2, 3
ITEM_CODES = {"system": SYSTEM, "bad_ref": BAD_REF, "repeat": REPEAT, "reference": REFERENCE}
SEGMENT, DOCUMENT = 0, 1
HUMAN_REFERENCE = "human reference"
KAPPA_BINS = (5, 4, 2)


@dataclass
class DAJudgments:
    """One row per scored judgment. `system` and `output` are -1 for reference items."""

    judgment_id: np.ndarray
    annotator_id: np.ndarray
    assignment: np.ndarray
    item_type: np.ndarray
    system: np.ndarray
    segment: np.ndarray
    output: np.ndarray
    score: np.ndarray
    seconds: np.ndarray
    system_names: list[str]
    #: Document-level DA (docs/methods.md §1.1): 1 for a document item's judgment, 0 for a segment's; None
    #: when the campaign has no document items. A document item's `segment` and `output` are those of its
    #: document's first segment.
    unit: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.score.size)

    def in_id_order(self) -> DAJudgments:
        """The same rows sorted by judgment id (a no-op when they already are)."""
        ids = self.judgment_id
        if ids.size < 2 or bool(np.all(ids[1:] > ids[:-1])):
            return self
        order = np.argsort(ids, kind="stable")
        return DAJudgments(**{name: getattr(self, name)[order] for name in _ROW_ARRAYS},
                           system_names=self.system_names, unit=None if self.unit is None else self.unit[order])

    def has_documents(self) -> bool:
        return self.unit is not None and bool(np.any(self.unit == DOCUMENT))

    def keyed_by_unit(self) -> DAJudgments:
        """The same rows with each document item's `output` moved past every real output id, so that the
        quality-control pairs and the agreement pairs never join a document item with its first segment."""
        if not self.has_documents():
            return self
        shift = (self.unit == DOCUMENT) & (self.output >= 0)
        output = np.where(shift, self.output + int(self.output.max(initial=0)) + 1, self.output)
        return DAJudgments(**{**{name: getattr(self, name) for name in _ROW_ARRAYS}, "output": output},
                           system_names=self.system_names, unit=self.unit)


_ROW_ARRAYS = ("judgment_id", "annotator_id", "assignment", "item_type", "system", "segment", "output", "score",
               "seconds")


@dataclass(frozen=True)
class PooledReliability:
    """A reliability test run over a worker's pairs in every campaign of a study: per annotator id (sorted),
    the p-value and the pairs it used."""

    annotator_ids: np.ndarray
    p: np.ndarray
    pairs: np.ndarray

    def lookup(self, annotator_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        at = np.clip(np.searchsorted(self.annotator_ids, annotator_ids), 0, max(self.annotator_ids.size - 1, 0))
        found = self.annotator_ids.size > 0
        known = (self.annotator_ids[at] == annotator_ids) if found else np.zeros(annotator_ids.size, bool)
        p = np.where(known, self.p[at] if found else np.nan, np.nan)
        pairs = np.where(known, self.pairs[at] if found else 0, 0)
        return p, pairs.astype(np.int64)


@dataclass
class SystemTable:
    names: list[str]
    is_reference: np.ndarray
    scores: stats.SystemScores
    significance: stats.Significance
    clusters: stats.Clusters
    #: wins[i, j]: system i significantly better than j and ranked above it (docs/methods.md §5.3).
    wins: np.ndarray


@dataclass
class DAAnalysis:
    annotator_ids: np.ndarray
    hits: np.ndarray
    judgments: np.ndarray
    mean_seconds: np.ndarray
    z: stats.ZScores
    test: str
    p_value: np.ndarray
    pairs: np.ndarray
    reliable: np.ndarray
    assumption_a: stats.AssumptionAResult
    repeat_pairs: np.ndarray
    systems: dict[str, SystemTable] = field(default_factory=dict)
    #: Document-level DA: the same tables over the document items' judgments (empty without document items).
    document_systems: dict[str, SystemTable] = field(default_factory=dict)
    summary: dict = field(default_factory=dict)
    agreement: dict = field(default_factory=dict)


def match_pairs(data: DAJudgments, kinds: tuple[int, ...] = (BAD_REF, REPEAT)) -> list[tuple[np.ndarray, np.ndarray]]:
    """For each kind (bad reference, repeat): its rows, and the rows of the system outputs they pair with.

    The key (assignment, output) is one int64 (database ids are far below 2^31), so one sort of
    the system-output rows serves every kind.
    """
    key = data.assignment.astype(np.int64) * (int(data.output.max(initial=0)) + 2) + (data.output + 1)
    system_rows = np.flatnonzero(data.item_type == SYSTEM)
    order = np.argsort(key[system_rows], kind="stable")
    sorted_keys = key[system_rows][order]
    pairs = []
    for kind in kinds:
        kind_rows = np.flatnonzero(data.item_type == kind)
        at = np.searchsorted(sorted_keys, key[kind_rows])
        found = at < sorted_keys.size
        found[found] = sorted_keys[at[found]] == key[kind_rows][found]
        pairs.append((kind_rows[found], system_rows[order[at[found]]]))
    return pairs


def _quality_pairs(data: DAJudgments) -> tuple[np.ndarray, np.ndarray, stats.ZScores, reliability_tests.QualityPairs]:
    """Worker codes, annotator ids, z-scores and the quality-control pairs of one campaign's (id-ordered) rows."""
    annotator_ids, worker = np.unique(data.annotator_id, return_inverse=True)
    z = stats.standardise(worker, data.score, annotator_ids.size)
    (bad, bad_orig), (rep, rep_orig) = match_pairs(data)
    return annotator_ids, worker, z, reliability_tests.QualityPairs(worker, data.score, z.z, bad, bad_orig, rep,
                                                                    rep_orig, annotator_ids.size)


def pooled_reliability(campaigns: list[DAJudgments], test: str, threshold: float) -> PooledReliability:
    """Run `test` on each worker's pairs over all `campaigns` at once (a study; docs/methods.md §4): the
    campaigns' rows side by side, each with its own z-scores, workers matched by annotator id."""
    parts = [_quality_pairs(data.in_id_order().keyed_by_unit()) for data in campaigns]
    union = np.unique(np.concatenate([ids for ids, *_ in parts])) if parts else np.empty(0, np.int64)
    offset, workers, scores, zs, bad, bad_orig, rep, rep_orig = 0, [], [], [], [], [], [], []
    for annotator_ids, worker, z, q in parts:
        workers.append(np.searchsorted(union, annotator_ids)[worker])
        scores.append(q.score)
        zs.append(z.z)
        for target, rows in ((bad, q.bad), (bad_orig, q.bad_orig), (rep, q.rep), (rep_orig, q.rep_orig)):
            target.append(rows + offset)
        offset += q.score.size

    def joined(arrays, dtype):
        return np.concatenate(arrays).astype(dtype) if arrays else np.empty(0, dtype)

    pairs = reliability_tests.QualityPairs(joined(workers, np.int64), joined(scores, np.float64),
                                           joined(zs, np.float64), joined(bad, np.int64), joined(bad_orig, np.int64),
                                           joined(rep, np.int64), joined(rep_orig, np.int64), union.size)
    p, used, _ = reliability_tests.run(test, pairs, threshold)
    return PooledReliability(union, np.asarray(p, np.float64), np.asarray(used, np.int64))


def _system_table(data: DAJudgments, z: np.ndarray, rows: np.ndarray, with_reference: bool,
                  cluster_rule: str = "wmt", digits: int = stats.TRANSLATION_DIGITS) -> SystemTable:
    names = list(data.system_names)
    system = data.system[rows]
    if with_reference:
        system = np.where(data.item_type[rows] == REFERENCE, len(names), system)
        names.append(HUMAN_REFERENCE)
    _, segment = np.unique(data.segment[rows], return_inverse=True)
    scores = stats.system_scores(system, segment, data.score[rows], z[rows], len(names), digits=digits)
    finite = np.isfinite(scores.translation_z)
    significance = stats.significance(scores.translation_system[finite], scores.translation_z[finite], len(names))
    clusters = stats.clusters(scores.mean_z, significance.p, rule=cluster_rule)
    wins = stats.wins(scores.mean_z, significance.p)
    is_reference = np.zeros(len(names), bool)
    if with_reference:
        is_reference[-1] = True
    return SystemTable(names, is_reference, scores, significance, clusters, wins)


def _kappas(a_raw, b_raw, a_z, b_z, all_z) -> dict:
    out = {"raw": {}, "z": {}}
    for k in KAPPA_BINS:
        out["raw"][str(k)] = stats.cohen_kappa(stats.bin_equal_width(a_raw, k), stats.bin_equal_width(b_raw, k),
                                               n_categories=k).kappa
        ok = np.isfinite(a_z) & np.isfinite(b_z)
        out["z"][str(k)] = stats.cohen_kappa(stats.bin_percentile(a_z[ok], k, reference=all_z),
                                             stats.bin_percentile(b_z[ok], k, reference=all_z), n_categories=k).kappa
    return out


def _agreement(data: DAJudgments, worker, z, rep, rep_orig) -> dict:
    """Ask-again differences and kappas, same judge and distinct judges (docs/methods.md §6, Graham et al. 2013 §6)."""
    all_z = z[np.isfinite(z)]
    same = stats.score_differences(data.score[rep_orig], data.score[rep])
    result = {"intra": {"pairs": same.n, "mean_abs_diff": same.mean, "sd_abs_diff": same.sd,
                        "kappa": _kappas(data.score[rep_orig], data.score[rep], z[rep_orig], z[rep], all_z)}}
    # Distinct judges: the first two system-output judgments of each output by two different workers.
    rows = np.flatnonzero(data.item_type == SYSTEM)
    order_key = data.output[rows] * (int(data.judgment_id.max(initial=0)) + 1) + data.judgment_id[rows]
    rows = rows[np.argsort(order_key)]  # by output, then by judgment id (one int64 key sorts faster than lexsort)
    starts = np.flatnonzero(np.r_[True, data.output[rows][1:] != data.output[rows][:-1]])
    starts = starts[starts + 1 < rows.size]
    first, second = rows[starts], rows[starts + 1]
    keep = (data.output[first] == data.output[second]) & (worker[first] != worker[second])
    first, second = first[keep], second[keep]
    other = stats.score_differences(data.score[first], data.score[second])
    result["inter"] = {"pairs": other.n, "mean_abs_diff": other.mean, "sd_abs_diff": other.sd,
                       "kappa": _kappas(data.score[first], data.score[second], z[first], z[second], all_z)}
    return result


def analyse(data: DAJudgments, test: str = "paired-t", threshold: float = 0.05, reference_as_system: bool = False,
            threshold_rule: str = "lt", cluster_rule: str = "wmt", pooled: PooledReliability | None = None,
            digits: int = stats.TRANSLATION_DIGITS) -> DAAnalysis:
    """Reliability, z-scores, system rankings with and without filtering, agreement.

    A worker is reliable when the test's p passes the threshold by `threshold_rule` ("lt": p < α,
    "le": p ≤ α; a test with a fixed threshold uses its own) and their scores can be standardised.
    With `pooled`, p and the pairs come from the worker's pairs in the whole study.
    """
    data = data.in_id_order().keyed_by_unit()
    annotator_ids, worker, z, quality = _quality_pairs(data)
    n_workers = annotator_ids.size
    bad, rep, rep_orig = quality.bad, quality.rep, quality.rep_orig
    threshold = reliability_tests.threshold_in_use(test, threshold)
    if pooled is None:
        p, pairs, _ = reliability_tests.run(test, quality, threshold)
    else:
        p, pairs = pooled.lookup(annotator_ids)
    reliable = passes(p, threshold, threshold_rule) & ~z.constant
    assumption = stats.assumption_a(worker[rep], data.score[rep_orig], data.score[rep], n_workers)
    _, hit_worker = np.unique(data.assignment, return_index=True)
    hits = np.bincount(worker[hit_worker], minlength=n_workers)
    seconds_ok = np.isfinite(data.seconds)
    seconds_n = np.bincount(worker[seconds_ok], minlength=n_workers)
    seconds_sum = np.bincount(worker[seconds_ok], weights=data.seconds[seconds_ok], minlength=n_workers)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_seconds = np.where(seconds_n > 0, seconds_sum / np.maximum(seconds_n, 1), np.nan)

    analysis = DAAnalysis(
        annotator_ids=annotator_ids, hits=hits, judgments=np.bincount(worker, minlength=n_workers),
        mean_seconds=mean_seconds, z=z, test=test, p_value=p, pairs=pairs, reliable=reliable,
        assumption_a=assumption, repeat_pairs=np.bincount(worker[rep], minlength=n_workers),
    )
    counted = np.isin(data.item_type, [SYSTEM, REPEAT, REFERENCE] if reference_as_system else [SYSTEM, REPEAT])
    documents = data.has_documents()
    if documents:  # segments and documents are ranked apart, on the same z-scores (docs/methods.md §1.1)
        counted_documents = counted & (data.unit == DOCUMENT)
        counted = counted & (data.unit != DOCUMENT)
    analysis.systems["all"] = _system_table(data, z.z, np.flatnonzero(counted), reference_as_system, cluster_rule,
                                            digits)
    analysis.systems["reliable"] = _system_table(data, z.z, np.flatnonzero(counted & reliable[worker]),
                                                 reference_as_system, cluster_rule, digits)
    if documents:
        analysis.document_systems["all"] = _system_table(data, z.z, np.flatnonzero(counted_documents),
                                                         reference_as_system, cluster_rule, digits)
        analysis.document_systems["reliable"] = _system_table(
            data, z.z, np.flatnonzero(counted_documents & reliable[worker]), reference_as_system, cluster_rule, digits)
    share = stats.assumption_a_share(assumption, reliable)
    analysis.summary = {
        "workers": int(n_workers), "reliable_workers": int(reliable.sum()),
        "constant_workers": int(z.constant.sum()), "test": test, "threshold": threshold,
        "threshold_rule": threshold_rule, "pooled_over_study": pooled is not None,
        "bad_reference_pairs": int(bad.size), "repeat_pairs": int(rep.size),
        "assumption_a": {k: (float(v) if isinstance(v, (float, np.floating)) else v) for k, v in share.items()},
    }
    if documents:
        analysis.summary["document_judgments"] = int(np.sum(data.unit == DOCUMENT))
    analysis.agreement = _agreement(data, worker, z.z, rep, rep_orig)
    return analysis
