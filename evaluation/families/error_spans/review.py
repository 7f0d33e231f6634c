"""Results of the review stage of an error-span task (docs/methods.md "Review of error spans"), stored with the
first stage's results: scores from the reviewed annotations beside the first pass's (`review_systems`), how often
reviewers kept, changed and deleted each first-pass rater's spans by category and severity (`review_changes`), and
each first-pass rater's precision and recall against the reviewed spans, exact and lenient (`review_raters`); the
reviewed scores get the first stage's preset's significance test, clusters and rank ranges (`reviewed_significance`,
`review_significance`).

A *review* is one reviewer's judgment of one first-pass annotation; when a reviewer judged the same first-pass
annotation twice, the later judgment counts."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from annotation.models import Campaign, Judgment

from ... import stats
from ...services.storing import finite
from ...stats import error_spans as es
from ...stats import span_review as sr
from ...stats.error_spans import GOOGLE, MQM_PRESETS, error_weights
from .analysis import SpanRules, item_significance

#: The stored tables and their columns (for downloads while a table has no rows).
TABLES = {
    "review_systems": ("system", "score_name", "reviews", "items", "first_pass_score", "reviewed_score", "rank",
                       "rank_range", "cluster"),
    "review_significance": ("system", "opponent", "p_value", "shared_items", "method"),
    "review_changes": ("first_rater", "category", "severity", "spans", "kept", "changed", "deleted", "kept_share",
                       "changed_share", "deleted_share"),
    "review_raters": ("first_rater", "reviews", "first_pass_spans", "reviewed_spans", "added", "precision_exact",
                      "recall_exact", "precision_lenient", "recall_lenient"),
}
ACTION_CODE = {name: code for code, name in enumerate(sr.ACTIONS)}


def _codes(names: dict, name) -> int:
    return names.setdefault(name, len(names))


def _reviews(stage: Campaign) -> tuple[list[tuple], list[int], list[int]]:
    """The stage's reviews, the later judgment of a reviewer on the same first-pass annotation winning; and each
    review's segment and document."""
    rows = (Judgment.objects.filter(campaign=stage, answer__isnull=False, spans__isnull=False).order_by("pk")
            .values_list("annotator_id", "item__payload", "item__output__system__name", "score", "spans", "answer",
                         "item__segment_id", "item__segment__document_id"))
    latest: dict[tuple, tuple] = {}
    for reviewer, payload, system, score, spans, answer, segment, document in rows:
        latest[(reviewer, payload.get("judgment"), payload.get("output"))] = (payload, system, score, spans, answer,
                                                                              segment, document)
    reviews = list(latest.values())
    return [r[:5] for r in reviews], [r[5] for r in reviews], [r[6] for r in reviews]


@dataclass(frozen=True)
class ReviewRanking:
    """How the reviewed scores are ranked: the first stage's preset (`rules`: test, α, min_items), its cluster
    rule, the documents' domains (codes) and the seed of a randomization test."""

    rules: SpanRules
    cluster_rule: str
    domain_of_document: dict[int, int]
    seed: int = 0


def preset_scores(ranking: ReviewRanking, unit_system: np.ndarray, unit_segment: np.ndarray,
                  unit_document: np.ndarray, unit_score: np.ndarray, n_systems: int) -> np.ndarray:
    """System scores from review scores under the first stage's preset, as its own table averages
    (analysis.analyse): WMT24 (`latest_per_judge`) the mean over items (system, segment) of their reviews' mean,
    macro-averaged over domains; WMT25 the mean over reviews (macro over domains where the preset says so). NaN
    scores are left out (docs/methods.md §9.4)."""
    n_domains = max(ranking.domain_of_document.values(), default=0) + 1
    domain = np.array([ranking.domain_of_document.get(int(d), 0) for d in unit_document], dtype=np.int64)
    if not ranking.rules.latest_per_judge:
        return es.system_means(unit_system, unit_score, n_systems, domain, n_domains, macro=ranking.rules.macro)
    finite_rows = np.flatnonzero(np.isfinite(unit_score))
    key = unit_system[finite_rows] * (int(unit_segment.max(initial=0)) + 1) + unit_segment[finite_rows]
    items, item_of_row = np.unique(key, return_inverse=True)
    item_of_row = item_of_row.ravel()
    item_score = es.item_means(item_of_row, unit_score[finite_rows], items.size)
    item_system, item_domain = np.zeros(items.size, np.int64), np.zeros(items.size, np.int64)
    item_system[item_of_row] = unit_system[finite_rows]
    item_domain[item_of_row] = domain[finite_rows]
    return es.system_means(item_system, item_score, n_systems, item_domain, n_domains, macro=ranking.rules.macro)


def reviewed_significance(ranking: ReviewRanking, unit_system: np.ndarray, unit_segment: np.ndarray,
                          unit_document: np.ndarray, unit_score: np.ndarray, n_systems: int):
    """The preset's test and clusters on the reviewed scores: items are (system, segment), each the mean of its
    reviews' scores (several first-pass annotations or reviewers of one translation averaged), paired by segment
    and, under WMT24, tested per domain and combined, as the first stage's own table (docs/methods.md §9.4). The
    systems are ordered by `preset_scores`; those with fewer reviewed items than the preset's `min_items` are
    unranked (by the caller, with the clusters). (items per system, significance)."""
    finite_rows = np.flatnonzero(np.isfinite(unit_score))
    key = unit_system[finite_rows] * (int(unit_segment.max(initial=0)) + 1) + unit_segment[finite_rows]
    items, item_of_row = np.unique(key, return_inverse=True)
    item_of_row = item_of_row.ravel()
    item_score = es.item_means(item_of_row, unit_score[finite_rows], items.size)
    item_system, item_segment, item_domain = (np.zeros(items.size, np.int64) for _ in range(3))
    item_system[item_of_row] = unit_system[finite_rows]
    item_segment[item_of_row] = unit_segment[finite_rows]
    domain = np.array([ranking.domain_of_document.get(int(d), 0) for d in unit_document], dtype=np.int64)
    item_domain[item_of_row] = domain[finite_rows]
    significance = item_significance(ranking.rules, item_system, item_segment, item_score, n_systems, item_domain,
                                     ranking.seed)
    return np.bincount(item_system, minlength=n_systems), significance


def review_tables(root: Campaign, ranking: ReviewRanking) -> dict[str, list[dict]]:
    """The review tables of the task whose first stage is `root` (empty lists when it has no review stage)."""
    tables: dict[str, list[dict]] = {name: [] for name in TABLES}
    stage = Campaign.objects.filter(stage_input=root, stage_name="review").order_by("pk").first()
    reviews, unit_segments, unit_documents = _reviews(stage) if stage is not None else ([], [], [])
    if not reviews:
        return tables
    kind = "mqm" if root.protocol_spec.mqm else "esa"
    weights = MQM_PRESETS.get((root.options or {}).get("mqm_weights", "google"), GOOGLE)
    raters, systems, categories, severities = {}, {}, {"": 0}, {}
    first_scores = dict(Judgment.objects.filter(pk__in=[p.get("judgment") for p, *_ in reviews if p.get("judgment")])
                        .values_list("pk", "score"))
    unit_rater, unit_system, unit_score, unit_first_score = [], [], [], []
    first = {k: [] for k in ("unit", "start", "end", "severity", "category", "action")}
    reviewed = {k: [] for k in ("unit", "start", "end", "severity", "category", "origin")}
    for u, (payload, system, score, spans, answer) in enumerate(reviews):
        unit_rater.append(_codes(raters, answer.get("first_rater") or payload.get("rater") or ""))
        unit_system.append(_codes(systems, system))
        unit_score.append(np.nan if score is None else score)
        first_score = first_scores.get(payload.get("judgment"))
        unit_first_score.append(np.nan if first_score is None else first_score)
        for entry in answer.get("review") or ():
            span = entry["from"]
            for key, value in (("unit", u), ("start", span["start"]), ("end", span["end"]),
                               ("severity", _codes(severities, span["severity"])),
                               ("category", _codes(categories, span.get("category", ""))),
                               ("action", ACTION_CODE[entry["action"]])):
                first[key].append(value)
        for span in spans:
            for key, value in (("unit", u), ("start", span["start"]), ("end", span["end"]),
                               ("severity", _codes(severities, span["severity"])),
                               ("category", _codes(categories, span.get("category", ""))),
                               ("origin", span.get("origin", "added"))):
                reviewed[key].append(value)
    first_arrays = {k: np.asarray(v, dtype=np.int64) for k, v in first.items()}
    reviewed_arrays = {k: np.asarray(v, dtype=np.int64) for k, v in reviewed.items() if k != "origin"}
    unit_rater_a = np.asarray(unit_rater, dtype=np.int64)
    rater_names, category_names, severity_names = list(raters), list(categories), list(severities)
    n_units = len(reviews)

    if kind == "mqm":
        def penalty(table):
            w = error_weights(category_names, severity_names, table["category"], table["severity"],
                              np.zeros(table["unit"].size, bool), weights)
            return -np.bincount(table["unit"], weights=w, minlength=n_units)
        first_unit, reviewed_unit = penalty(first_arrays), penalty(reviewed_arrays)
    else:
        first_unit, reviewed_unit = np.asarray(unit_first_score, float), np.asarray(unit_score, float)
    system_a = np.asarray(unit_system, dtype=np.int64)
    system_names = list(systems)
    where = (system_a, np.asarray(unit_segments, dtype=np.int64), np.asarray(unit_documents, dtype=np.int64))
    reviewed_score = preset_scores(ranking, *where, reviewed_unit, len(system_names))
    first_score = preset_scores(ranking, *where, first_unit, len(system_names))
    n_items, significance = reviewed_significance(ranking, *where, reviewed_unit, len(system_names))
    ranked = (n_items >= max(ranking.rules.min_items, 1)) & np.isfinite(reviewed_score)
    c = stats.clusters(np.where(ranked, reviewed_score, np.nan), significance.p, ranking.rules.alpha,
                       rule=ranking.cluster_rule)
    for s, name in enumerate(system_names):
        mine = system_a == s
        tables["review_systems"].append({
            "system": name, "score_name": kind, "reviews": int(mine.sum()), "items": int(n_items[s]),
            "first_pass_score": finite(first_score[s]),
            "reviewed_score": finite(reviewed_score[s]), "rank": int(c.rank[s]) if ranked[s] else None,
            "rank_range": [int(c.rank_low[s]), int(c.rank_high[s])] if ranked[s] else None,
            "cluster": int(c.cluster[s]) if ranked[s] and c.cluster[s] > 0 else None})
    tables["review_systems"].sort(key=lambda r: (-(r["reviewed_score"] if r["reviewed_score"] is not None
                                                  else -np.inf), r["system"]))
    tables["review_significance"] = [
        {"system": system_names[i], "opponent": system_names[j], "p_value": finite(significance.p[i, j]),
         "shared_items": int(significance.n[i, j]), "method": significance.method}
        for i in range(len(system_names)) for j in range(len(system_names)) if i != j and significance.n[i, j] > 0]

    changes = sr.change_counts(unit_rater_a[first_arrays["unit"]], first_arrays["category"],
                               first_arrays["severity"], first_arrays["action"], len(rater_names),
                               len(category_names), len(severity_names))
    for r, c, v in zip(*np.nonzero(changes.counts.sum(axis=-1)), strict=True):
        counts, shares = changes.counts[r, c, v], changes.shares[r, c, v]
        tables["review_changes"].append({
            "first_rater": rater_names[r], "category": category_names[c], "severity": severity_names[v],
            "spans": int(counts.sum()), **{a: int(counts[k]) for k, a in enumerate(sr.ACTIONS)},
            **{f"{a}_share": finite(shares[k]) for k, a in enumerate(sr.ACTIONS)}})

    exact = sr.rater_precision_recall(first_arrays, reviewed_arrays, unit_rater_a, len(rater_names), "exact")
    lenient = sr.rater_precision_recall(first_arrays, reviewed_arrays, unit_rater_a, len(rater_names), "lenient")
    added = np.bincount(unit_rater_a[reviewed_arrays["unit"]],
                        weights=np.asarray([o == "added" for o in reviewed["origin"]], float),
                        minlength=len(rater_names))
    per_rater = np.bincount(unit_rater_a, minlength=len(rater_names))
    for r, name in enumerate(rater_names):
        tables["review_raters"].append({
            "first_rater": name, "reviews": int(per_rater[r]), "first_pass_spans": int(exact.first[r]),
            "reviewed_spans": int(exact.reviewed[r]), "added": int(added[r]),
            "precision_exact": finite(exact.precision[r]), "recall_exact": finite(exact.recall[r]),
            "precision_lenient": finite(lenient.precision[r]), "recall_lenient": finite(lenient.recall[r])})
    return tables


__all__ = ["TABLES", "ReviewRanking", "preset_scores", "review_tables", "reviewed_significance"]
