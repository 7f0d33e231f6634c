"""Compute and store a ranking campaign's results (docs/methods.md §8), then hand TrueSkill's bootstrap runs
to Celery subtasks (bootstrap.py), whose results replace the single pass's ranks when they are all in."""
from __future__ import annotations

import time

import numpy as np
from django.db.models import Count, Max

from annotation.models import Annotator, Campaign, Judgment

from ... import stats
from ...models import CampaignResults, WorkerResult
from ...services.storing import finite, jsonable, replace_results
from ...stats import ranking as stats_ranking
from ..common.ranked import system_names
from ..common.slots import load_slots
from .analysis import COUNT_SCORES, DEFAULT_SCORE, SCORE_NAMES, RankingAnalysis, analyse
from .bootstrap import start_trueskill_bootstrap
from .options import options_of


def systems_rows(names: list[str], result: RankingAnalysis, score_name: str, reference: dict | None = None
                 ) -> list[dict]:
    """One table per score: system, score, score_name, n, rank, rank_range, cluster and the counts."""
    table, values, s = result.tables[score_name], result.score_values[score_name], result.scores
    rows = []
    for i, name in enumerate(names):
        if s.n[i] == 0:
            continue
        row = {"system": name, "score": finite(values[i]), "score_name": score_name, "n": int(s.n[i]),
               "rank": int(table["rank"][i]),
               "rank_range": [int(table["rank_low"][i]), int(table["rank_high"][i])],
               "cluster": int(table["cluster"][i]) if table["cluster"][i] > 0 else None,
               "low": finite(table["low"][i]), "high": finite(table["high"][i]),
               "wins": int(s.n_wins[i]), "ties": int(s.n_ties[i]), "losses": int(s.n_losses[i])}
        if score_name == "trueskill":
            row["sigma"] = finite(result.trueskill.sigma[i])
        if reference is not None and name in reference:
            row["reference"] = reference[name]
        rows.append(row)
    return sorted(rows, key=lambda r: (r["rank"], r["system"]))


def spearman_rows(names: list[str], result: RankingAnalysis, reference: dict, is_rank: bool) -> list[dict]:
    """Spearman's rho of every score against the researcher's reference ranking (scipy.stats.spearmanr)."""
    ref = np.array([float(reference[n]) if n in reference else np.nan for n in names])
    played = result.scores.n > 0
    rows = []
    for name in SCORE_NAMES:
        values = np.where(played, result.score_values[name], np.nan)
        corr = stats_ranking.spearman(values, ref, reference_is_rank=is_rank)
        rows.append({"score_name": name, "rho": finite(corr.rho), "p_value": finite(corr.p_value), "n": corr.n})
    return rows


def compute_ranking(campaign: Campaign) -> CampaignResults | None:
    started = time.perf_counter()
    last_id = Judgment.objects.filter(campaign=campaign).aggregate(m=Max("id"))["m"] or 0
    slots = load_slots(campaign, last_id)
    if slots.n_rankings == 0:
        return None
    names = system_names(campaign)
    options = options_of(campaign)
    result = analyse(slots, len(names), options)
    reference = (campaign.options or {}).get("reference_ranking") or None
    is_rank = (campaign.options or {}).get("reference_kind") == "rank"
    labels = {a.pk: a.label for a in Annotator.objects.filter(pk__in=result.workers.tolist()).select_related("user")}
    hits = dict(Judgment.objects.filter(campaign=campaign, id__lte=last_id).values("annotator_id")
                .annotate(h=Count("assignment_id", distinct=True)).values_list("annotator_id", "h"))
    workers = [WorkerResult(
        campaign=campaign, annotator_id=int(aid), worker=labels.get(int(aid), ""), hits=hits.get(int(aid), 0),
        judgments=int(result.worker_rankings[w]), pairs=int(result.gold.n_gold[w]), test="gold", p_value=None,
        reliable=bool(result.counted_workers[w]), mean_seconds=finite(result.worker_seconds[w]))
        for w, aid in enumerate(result.workers)]
    gold_rows = [{"worker": labels.get(int(aid), ""), "gold": int(result.gold.n_gold[w]),
                  "gold_correct": int(result.gold.n_correct[w]), "gold_accuracy": finite(result.gold.accuracy[w]),
                  "trusted": bool(result.trusted[w]),
                  "status": "trusted" if result.trusted[w] else ("failed" if result.failed[w] else "probation"),
                  "counted": bool(result.counted_workers[w]),
                  "agreement_with_others": finite(result.worker_agreement[w]),
                  "mean_seconds": finite(result.worker_seconds[w]), "rankings": int(result.worker_rankings[w])}
                 for w, aid in enumerate(result.workers)]
    tables: dict = {("systems", name): systems_rows(names, result, name, reference) for name in SCORE_NAMES}
    tables["systems"] = tables[("systems", DEFAULT_SCORE)]
    tables["gold"] = gold_rows
    tables["head_to_head"] = head_to_head_rows(names, result)
    tables["agreement"] = [{"pairing": a.pairing, "kind": a.kind, "comparisons": a.n_comparisons,
                            "agreements": a.n_agree, "p_agree": a.p_agree, "p_tie": a.p_tie,
                            "p_expected_uniform": a.p_expected_uniform, "kappa_uniform": a.kappa_uniform,
                            "p_expected_ties": a.p_expected_ties, "kappa_ties": a.kappa_ties}
                           for a in result.agreement]
    tables["combined"] = [{"system": name, "combination": combination,
                           **{score: finite(values[score][i]) for score in COUNT_SCORES}, "n": int(values["n"][i])}
                          for combination, values in result.combined.items() for i, name in enumerate(names)
                          if values["n"][i] > 0]
    if reference:
        tables["spearman"] = spearman_rows(names, result, reference, is_rank)
    summary = {
        "systems": len(names), "rankings": result.rankings, "rankings_used": result.rankings_used,
        "outcomes": result.outcomes.size, "gold_screens": result.gold_screens, "workers": int(result.workers.size),
        "reliable_workers": int(result.counted_workers.sum()), "trusted_workers": int(result.trusted.sum()),
        "failed_workers": int(result.failed.sum()), "gold_filter": options.gold_filter, "min_gold": options.min_gold,
        "min_gold_accuracy": options.min_gold_accuracy, "bootstrap_runs": options.bootstrap_runs,
        "confidence": options.confidence, "trueskill": {"beta": result.trueskill.beta, "runs": 0,
                                                         "status": "single pass"},
        "fleiss_kappa": finite(result.fleiss.kappa), "landis_koch": stats.landis_koch(result.fleiss.kappa),
        "default_score": DEFAULT_SCORE,
    }
    header = replace_results(campaign, {WorkerResult: workers}, {
        "seconds": time.perf_counter() - started, "judgments": result.rankings, "last_judgment_id": last_id,
        "summary": jsonable(summary), "agreement": {}, "translations": b""}, tables=tables)
    if options.bootstrap_runs and result.outcomes.size:
        start_trueskill_bootstrap(campaign.pk, last_id, options.bootstrap_runs)
    return header


def head_to_head_rows(names: list[str], result: RankingAnalysis) -> list[dict]:
    """Win rate of each row system against each column system (ties left out), with the counts."""
    rate, wins, ties = result.head_to_head, result.scores.wins, result.scores.ties
    return [{"system": names[i], "opponent": names[j], "win_rate": finite(rate[i, j]), "wins": int(wins[i, j]),
             "losses": int(wins[j, i]), "ties": int(ties[i, j])}
            for i in range(len(names)) for j in range(len(names)) if i != j and wins[i, j] + wins[j, i] + ties[i, j]]
