"""Compute and store an error-span campaign's results (docs/methods.md §11): system scores with clusters and rank
ranges, the significance matrix, scores per domain, errors by category and severity, span agreement and the
workers' perturbation test."""
from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
from django.db.models import Count, Max

from annotation.models import Annotator, Campaign, Document, Judgment, Segment, System
from annotation.services.stages import first_stage, task_judgments

from ...models import CampaignResults, WorkerResult
from ...presets import conventions_of
from ...services.storing import finite, jsonable, replace_results
from ...stats import esa_ranking
from ...stats.error_spans import GOOGLE, MQM_PRESETS
from . import ai_assist
from .analysis import SIGNIFICANCE_METHODS, SYSTEM, SpanAnalysis, agreement, analyse, counted_rows, shared_items
from .loading import add_counts, load_observations, span_counts, spans_of
from .presets import FAMILY, SPAN_RULES
from .review import ReviewRanking, review_tables
from .sxs import consistency_rows, win_rate_rows


def score_kind(campaign: Campaign) -> str:
    """"mqm" for protocols that weigh errors by category (MQM), else "esa" (the 0–100 score)."""
    return "mqm" if campaign.protocol_spec.mqm else "esa"


def rules_of(campaign: Campaign, preset: str):
    options = campaign.options or {}
    rules = SPAN_RULES.get(preset) or SPAN_RULES["wmt24-esa"]
    if options.get("significance_test") in SIGNIFICANCE_METHODS:
        rules = replace(rules, significance=options["significance_test"])
    if "min_items" in options:
        rules = replace(rules, min_items=int(options["min_items"]))
    return rules


def compute_error_spans(campaign: Campaign) -> CampaignResults | None:
    """The task's results, stored on its first stage (a review stage's results are its first stage's)."""
    campaign = first_stage(campaign)
    started = time.perf_counter()
    last_id = task_judgments(campaign).aggregate(m=Max("id"))["m"] or 0  # every stage's: the page counts them all
    systems = list(System.objects.filter(campaign=campaign).order_by("pk").values_list("pk", "name"))
    pks, names = [pk for pk, _ in systems], [name for _, name in systems]
    contrastive = campaign.protocol_spec.contrastive
    obs = load_observations(campaign, last_id, pks, contrastive)
    documents = list(Document.objects.filter(campaign=campaign).values_list("pk", "domain"))
    domain_names = sorted({domain for _, domain in documents})
    domain_code = {name: i for i, name in enumerate(domain_names)}
    domain_of_document = {pk: domain_code[domain] for pk, domain in documents}
    conventions = conventions_of(campaign, FAMILY)
    rules = rules_of(campaign, conventions.preset)
    # the review stage's tables come from its own judgments, whatever the first stage holds (methods §9.4)
    reviewed = review_tables(campaign, ReviewRanking(rules, conventions.cluster_rule, domain_of_document,
                                                     int(campaign.seed or 0)))
    if obs.size == 0:
        return _review_only(campaign, started, last_id, reviewed, conventions, rules) if any(
            reviewed.values()) else None
    options = campaign.options or {}
    weights = MQM_PRESETS.get(options.get("mqm_weights", "google"), GOOGLE)
    counts = span_counts(campaign, last_id, obs)
    add_counts(obs, counts, weights)
    kind = score_kind(campaign)
    result = analyse(obs, len(names), domain_of_document, len(domain_names), rules, kind, conventions.test,
                     conventions.threshold, conventions.threshold_rule, conventions.cluster_rule,
                     seed=int(campaign.seed or 0))
    corrected = ai_assist.correct(campaign, result, pks, domain_of_document, rules.macro, rules.alpha,
                                  conventions.cluster_rule)
    result, ai = corrected if corrected is not None else (result, None)
    counted = result.counted
    shared_rows, _ = shared_items(obs, counted)
    spans = spans_of(campaign, last_id, obs.judgment[shared_rows])
    agreed = agreement(obs, counted, spans, kind)

    labels = {a.pk: a.label for a in Annotator.objects.filter(pk__in=result.workers.tolist()).select_related("user")}
    hits = dict(Judgment.objects.filter(campaign=campaign, id__lte=last_id).values("annotator_id")
                .annotate(h=Count("assignment_id", distinct=True)).values_list("annotator_id", "h"))
    workers = [WorkerResult(
        campaign=campaign, annotator_id=int(aid), worker=labels.get(int(aid), ""), hits=hits.get(int(aid), 0),
        judgments=int(result.worker_judgments[w]), pairs=int(result.worker_pairs[w]), test=conventions.test[:16],
        p_value=finite(result.worker_p[w]), reliable=bool(result.worker_reliable[w]),
        mean_seconds=finite(result.worker_seconds[w])) for w, aid in enumerate(result.workers)]
    tables = {
        "systems": systems_rows(names, result, kind, ai, rules.table_rules),
        "significance": significance_rows(names, result),
        "domains": [{"system": names[i], "domain": domain or "(none)", "score": finite(result.domain_scores[i, d]),
                     "score_name": kind} for i in range(len(names)) for d, domain in enumerate(domain_names)
                    if np.isfinite(result.domain_scores[i, d])],
        "breakdown": breakdown_rows(names, obs, counted, counts),
        "segments": segment_rows(names, result, kind),
        "ai_assist": ai_assist.table_rows(ai),
        "perturbation": [{"worker": labels.get(int(aid), ""), "pairs": int(result.worker_pairs[w]),
                          "p_value": finite(result.worker_p[w]), "reliable": bool(result.worker_reliable[w]),
                          "major_on_perturbed": finite(result.worker_major_on_perturbed[w])}
                         for w, aid in enumerate(result.workers)],
        "agreement": [{"measure": "span F1 (characters)", "value": finite(agreed["f1"]),
                       "n": agreed["judge_pairs"]},
                      {"measure": "span F1 (characters, same severity)", "value": finite(agreed["f1_severity"]),
                       "n": agreed["judge_pairs"]},
                      {"measure": "Krippendorff's alpha (interval) on the scores", "value": finite(agreed["alpha"]),
                       "n": agreed["items"]}],
    }
    tables.update(reviewed)  # empty unless the task has a review stage; ranked as this table is (methods §9.4)
    if contrastive:  # side by side: who beat whom on the same screen, and identical words marked alike (sxs.py)
        value = obs.score if kind == "esa" else -obs.penalty
        tables["win_rates"] = win_rate_rows(names, obs, counted, value, kind)
        tables["consistency"] = consistency_rows(campaign, obs, counted, pks)
    summary = {
        "score_name": kind, "systems": len(names), "observations": obs.size, "counted": int(counted.sum()),
        "perturbed": int((obs.kind == 1).sum()), "tutorial": int((obs.kind == 2).sum()),
        "spans": int(obs.n_spans.sum()), "domains": [d or "(none)" for d in domain_names],
        "workers": int(result.workers.size), "reliable_workers": int(result.worker_reliable.sum()),
        "conventions": conventions.as_dict(), "rules": rules.__dict__,
        "mqm_weights": weights.name if kind == "mqm" else None, "agreement": jsonable(agreed),
        "unranked": [names[i] for i in range(len(names)) if result.system_items[i] and not result.ranked[i]],
        "ai_assist": ai_assist.summary(ai, names),
    }
    return replace_results(campaign, {WorkerResult: workers}, {
        "seconds": time.perf_counter() - started, "judgments": int(np.unique(obs.judgment).size),
        "last_judgment_id": last_id, "summary": jsonable(summary), "agreement": {}, "translations": b""},
        tables=tables)


def _review_only(campaign: Campaign, started: float, last_id: int, reviewed: dict, conventions, rules
                 ) -> CampaignResults:
    """The results of a task whose first stage has no judgment yet (a `prefilled` review of automatic spans): the
    review stage's tables alone, the first pass's tables empty and its summary saying it has no data yet."""
    reviews = sum(row["reviews"] for row in reviewed["review_systems"])
    summary = {"score_name": score_kind(campaign), "systems": System.objects.filter(campaign=campaign).count(),
               "observations": 0, "counted": 0, "first_pass": "no judgments yet", "reviews": reviews,
               "conventions": conventions.as_dict(), "rules": rules.__dict__, "unranked": []}
    return replace_results(campaign, {WorkerResult: []}, {
        "seconds": time.perf_counter() - started, "judgments": reviews, "last_judgment_id": last_id,
        "summary": jsonable(summary), "agreement": {}, "translations": b""}, tables=reviewed)


def systems_rows(names: list[str], result: SpanAnalysis, kind: str, ai=None, table_rules: bool = False) -> list[dict]:
    """Per system: score (ESA mean or MQM score), rank, rank range, cluster, items and observations; with ESA^AI
    (`ai`) the corrected score and its interval, the naive score and the AI-verdict counts (ai_assist.py); with
    `table_rules` (WMT25), `table_rule`: whether WMT25's table draws a rule below the row (null otherwise)."""
    c = result.clusters
    rule_below = np.zeros(len(names), dtype=bool)
    if table_rules and c.order.size:
        rule_below[c.order] = esa_ranking.wmt25_table_rules(c.rank_low[c.order], c.rank_high[c.order])
    rows = []
    for i, name in enumerate(names):
        if result.system_items[i] == 0:
            continue
        ranked = bool(result.ranked[i])
        rows.append({
            "system": name, "score": finite(result.system_score[i]), "score_name": kind,
            "n": int(result.system_items[i]), "observations": int(result.system_observations[i]),
            "rank": int(c.rank[i]) if ranked else None,
            "rank_range": [int(c.rank_low[i]), int(c.rank_high[i])] if ranked else None,
            "cluster": int(c.cluster[i]) if ranked and c.cluster[i] > 0 else None,
            "mean_score": finite(result.mean_score[i]), "ranked": ranked,
            "table_rule": (bool(rule_below[i]) if ranked else None) if table_rules else None,
            **ai_assist.system_fields(ai, i)})
    return sorted(rows, key=lambda r: (r["rank"] is None, r["rank"] or 0, r["system"]))


def segment_rows(names: list[str], result: SpanAnalysis, kind: str) -> list[dict]:
    """Per item (system, segment): the score the system table is built from (ESA mean or MQM score, averaged over
    the item's counted judgments), with the segment's document and number."""
    where = {pk: (doc, seg) for pk, doc, seg in Segment.objects.filter(pk__in=np.unique(result.item_segment).tolist())
             .values_list("pk", "document__doc_id", "seg_id")}
    rows = [{"system": names[int(sys)], "doc_id": where.get(int(seg), ("", None))[0],
             "seg_id": where.get(int(seg), ("", None))[1], "score": finite(score), "score_name": kind}
            for sys, seg, score in zip(result.item_system, result.item_segment, result.item_score, strict=True)]
    return sorted(rows, key=lambda r: (r["system"], r["doc_id"], r["seg_id"] if r["seg_id"] is not None else -1))


def significance_rows(names: list[str], result: SpanAnalysis) -> list[dict]:
    s = result.significance
    return [{"system": names[i], "opponent": names[j], "p_value": finite(s.p[i, j]), "shared_items": int(s.n[i, j]),
             "method": s.method} for i in range(len(names)) for j in range(len(names))
            if i != j and s.n[i, j] > 0]


def breakdown_rows(names: list[str], obs, counted, counts) -> list[dict]:
    """Errors per system by category and severity over the counted system items, with the rate per item."""
    keep = counted[counts.row] & (obs.kind[counts.row] == SYSTEM)
    if not keep.any():
        return []
    system = obs.system[counts.row[keep]]
    n_c, n_s = max(len(counts.categories), 1), max(len(counts.severities), 1)
    cell = (system * n_c + counts.category[keep]) * n_s + counts.severity[keep]
    total = np.bincount(cell, weights=counts.count[keep], minlength=len(names) * n_c * n_s)
    observations = np.bincount(obs.system[counted & (obs.kind == SYSTEM)], minlength=len(names))
    rows = []
    for index in np.flatnonzero(total):
        s, rest = divmod(int(index), n_c * n_s)
        c, v = divmod(rest, n_s)
        rows.append({"system": names[s], "category": counts.categories[c] or "all errors",
                     "severity": counts.severities[v], "errors": int(total[index]),
                     "per_judgment": finite(total[index] / observations[s]) if observations[s] else None})
    return rows


__all__ = ["compute_error_spans", "counted_rows"]
