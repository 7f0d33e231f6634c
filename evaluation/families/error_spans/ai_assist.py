"""ESA^AI in the results (docs/methods.md#esa-ai): when a campaign sent the outputs its automatic system found
error-free only at a rate (`ai_error_free_rate` < 1), the system scores are replaced by the post-stratified
Hájek scores (`evaluation.stats.esa_ai`), the scores per domain by the Hájek mean within each domain, the
significance matrix by its paired z-tests and the clusters are drawn again from them; the systems table gains the
naive score and the interval, and the summary says how much of the judging the rule saved and how far the ranking
moved against the naive one.

An output is AI-clean when the campaign file gave it an empty `error_spans` list (stored as `spans = []`); it was
sent when it has a `system` item. The population is every output of the segments that are not tutorial
segments. The item scores are the analysis's own (the same judgments counted, judges averaged per item).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from annotation.models import HitItem, SystemOutput

from ... import stats
from ...services.storing import finite
from ...stats import error_spans as es
from ...stats.esa_ai import AiSkipScores, budget_saved, ipw_scores, kendall_tau
from .analysis import SpanAnalysis


@dataclass(frozen=True)
class AiAssist:
    """The corrected scores, the rate, the naive scores (the analysis's own, uncorrected), the budget figures and
    Kendall's τ between the corrected and the naive ranking."""

    rate: float
    scores: AiSkipScores
    naive: np.ndarray
    budget: dict
    tau: float


def rate_of(campaign) -> float:
    """The campaign's `ai_error_free_rate` (1: the rule is off)."""
    return float((campaign.options or {}).get("ai_error_free_rate", 1.0) or 1.0)


@dataclass(frozen=True)
class Population:
    """The outputs the estimator counts, as (segment × system) matrices over `segments` (ids) and the systems in
    pk order: `present` (a non-tutorial output), `clean` (AI-clean), `sent` (has a system item); `group`, each
    segment's domain code."""

    segments: np.ndarray
    present: np.ndarray
    clean: np.ndarray
    sent: np.ndarray
    group: np.ndarray

    def as_rows(self) -> dict:
        """One entry per present output: segment id, system code, group and verdict (stats.stability.prepare)."""
        row, col = np.nonzero(self.present)
        return {"segment": self.segments[row], "system": col, "group": self.group[row],
                "clean": self.clean[row, col]}


def population(campaign, system_pks: list[int], domain_of_document: dict[int, int]) -> Population | None:
    """The campaign's ESA^AI population; None when the rule is off (or nothing is counted)."""
    if rate_of(campaign) >= 1 or campaign.protocol_spec.contrastive:
        return None
    tutorial = HitItem.objects.filter(hit__campaign=campaign, item_type="tutorial").values("segment_id")
    outputs = np.array(list(SystemOutput.objects.filter(campaign=campaign).exclude(segment_id__in=tutorial)
                            .values_list("segment_id", "system_id", "segment__document_id")), dtype=np.int64)
    if outputs.size == 0:
        return None
    clean_pairs = set(SystemOutput.objects.filter(campaign=campaign, spans=[]).values_list("segment_id", "system_id"))
    sent_pairs = set(HitItem.objects.filter(hit__campaign=campaign, item_type="system")
                     .values_list("output__segment_id", "output__system_id").distinct())
    segments, row = np.unique(outputs[:, 0], return_inverse=True)
    col = np.searchsorted(np.asarray(system_pks, dtype=np.int64), outputs[:, 1])
    shape = (segments.size, len(system_pks))
    present, clean, sent = np.zeros(shape, bool), np.zeros(shape, bool), np.zeros(shape, bool)
    present[row, col] = True
    pairs = list(zip(outputs[:, 0].tolist(), outputs[:, 1].tolist(), strict=True))
    clean[row, col] = [p in clean_pairs for p in pairs]
    sent[row, col] = [p in sent_pairs for p in pairs]
    group = np.zeros(segments.size, np.int64)
    group[row] = [domain_of_document.get(int(d), 0) for d in outputs[:, 2]]
    return Population(segments, present, clean, sent, group)


def correct(campaign, result: SpanAnalysis, system_pks: list[int], domain_of_document: dict[int, int],
            macro: bool, alpha: float, cluster_rule: str) -> tuple[SpanAnalysis, AiAssist] | None:
    """The analysis with corrected scores, tests and clusters, and the figures; None when the rule is off."""
    counted = population(campaign, system_pks, domain_of_document)
    if counted is None:
        return None
    segments, present, clean, sent, group = (counted.segments, counted.present, counted.clean, counted.sent,
                                             counted.group)
    shape = present.shape
    score = np.full(shape, np.nan)
    at = np.searchsorted(segments, result.item_segment)
    known = (at < segments.size) & (segments[np.minimum(at, segments.size - 1)] == result.item_segment)
    score[at[known], result.item_system[known]] = result.item_score[known]
    scores = ipw_scores(score, clean, present=present, group=group, macro=macro)
    ranked = result.ranked & np.isfinite(scores.score)
    both = present.T.astype(np.int64) @ present.astype(np.int64)
    significance = es.PairedSignificance(p=scores.p, n=both, method="esa-ai-z")
    clusters = stats.clusters(np.where(ranked, scores.score, np.nan), scores.p, alpha, rule=cluster_rule)
    domain_scores = np.full_like(result.domain_scores, np.nan)  # per domain: the Hájek mean within the domain
    domain_scores[:, :scores.group_score.shape[0]] = scores.group_score.T
    corrected = replace(result, system_score=scores.score, ranked=ranked, significance=significance,
                        clusters=clusters, domain_scores=domain_scores)
    figures = AiAssist(rate=rate_of(campaign), scores=scores, naive=result.system_score,
                       budget=budget_saved(clean, sent, present), tau=kendall_tau(scores.score, result.system_score))
    return corrected, figures


def system_fields(ai: AiAssist | None, index: int) -> dict:
    """The systems table's ESA^AI columns for one system (none when the rule is off)."""
    if ai is None:
        return {}
    s = ai.scores
    return {"naive_score": finite(ai.naive[index]), "score_low": finite(s.low[index]),
            "score_high": finite(s.high[index]), "se": finite(s.se[index]), "ai_flagged": int(s.flagged[index]),
            "ai_clean": int(s.clean[index]), "ai_clean_judged": int(s.judged_clean[index])}


def summary(ai: AiAssist | None, names: list[str]) -> dict | None:
    """The summary's `ai_assist` entry: rate, budget saved, Kendall's τ, systems whose AI-clean items were all
    unjudged (left out of their score)."""
    if ai is None:
        return None
    return {"rate": ai.rate, **ai.budget, "kendall_tau_vs_naive": finite(ai.tau),
            "estimator": "post-stratified Hájek (unsent AI-clean items imputed from the judged AI-clean items)",
            "interval": "95 % normal, delta-method variance", "test": "paired two-sided z-test",
            "no_clean_judged": [names[i] for i in np.flatnonzero(ai.scores.no_clean_judged)]}


def table_rows(ai: AiAssist | None) -> list[dict]:
    """The `ai_assist` table (API `ai_assist/`, ai_assist.csv): one row per figure; empty when the rule is off."""
    if ai is None:
        return []
    figures = {"ai_error_free_rate": ai.rate, "not_sent": ai.budget["not_sent"], "would_send": ai.budget["would_send"],
               "budget_saved": finite(ai.budget["saved"]), "kendall_tau_vs_naive": finite(ai.tau)}
    return [{"measure": name, "value": value} for name, value in figures.items()]
