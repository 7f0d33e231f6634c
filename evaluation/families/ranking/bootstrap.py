"""TrueSkill's bootstrap runs as Celery subtasks (docs/methods.md §8): more workers on more machines finish
sooner. Each subtask reloads the judgments the results cover (up to the same judgment id), runs its share of
the runs (each run's resample is seeded by (seed, run), so the split does not change the answer) and stores
its μ per run. Whichever subtask stores the last share turns all runs into rank ranges and clusters, under the
campaign's row lock, so that happens exactly once; shares of a run that newer results superseded are dropped.
A subtask lost with a worker is redelivered (late acknowledgement)."""
from __future__ import annotations

import numpy as np
from celery import shared_task
from django.conf import settings
from django.db import transaction

from annotation.models import Campaign

from ...models import CampaignResults, ResultTable
from ...services.storing import finite, jsonable
from ...stats import trueskill as ts
from ..common.ranked import system_names
from ..common.slots import load_slots
from .analysis import counted_outcomes
from .options import options_of

RUNS_TABLE = "trueskill_runs"


def runs_per_task() -> int:
    return max(1, int(getattr(settings, "RANKING_BOOTSTRAP_RUNS_PER_TASK", 10)))


def start_trueskill_bootstrap(campaign_id: int, last_id: int, runs: int) -> int:
    """Queue the subtasks of `runs` bootstrap runs; how many subtasks."""
    size = runs_per_task()
    chunks = [list(range(start, min(start + size, runs))) for start in range(0, runs, size)]
    for index, chunk in enumerate(chunks):
        trueskill_runs.delay(campaign_id, last_id, index, len(chunks), chunk)
    return len(chunks)


def bootstrap_mu(campaign: Campaign, last_id: int, runs: list[int]) -> np.ndarray:
    """μ per system for each of `runs`, on the outcomes the results of `last_id` counted."""
    options = options_of(campaign)
    n_systems = len(system_names(campaign))
    outcomes = counted_outcomes(load_slots(campaign, last_id), n_systems, options).outcomes
    winner, loser, drawn = ts.winner_loser(outcomes.first, outcomes.second, outcomes.result)
    return ts.trueskill_bootstrap(winner, loser, drawn, n_systems, runs, options.seed, options.trueskill)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def trueskill_runs(campaign_id: int, last_id: int, index: int, n_chunks: int, runs: list[int]) -> dict:
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None or not _current(campaign_id, last_id):
        return {"campaign": campaign_id, "status": "superseded"}
    mu = bootstrap_mu(campaign, last_id, runs)
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=campaign_id).values_list("pk", flat=True).first()
        if not _current(campaign_id, last_id):
            return {"campaign": campaign_id, "status": "superseded"}
        ResultTable.objects.update_or_create(campaign=campaign, name=RUNS_TABLE, variant=f"{last_id}:{index}",
                                             defaults={"columns": ["runs", "mu"],
                                                       "rows": [{"runs": runs, "mu": mu.tolist()}]})
        stored = ResultTable.objects.filter(campaign=campaign, name=RUNS_TABLE, variant__startswith=f"{last_id}:")
        if stored.count() < n_chunks:
            return {"campaign": campaign_id, "status": f"share {index + 1} of {n_chunks} stored"}
        mu_runs = np.concatenate([np.array(t.rows[0]["mu"], dtype=np.float64).reshape(len(t.rows[0]["runs"]), -1)
                                  for t in stored])
        _store_ranges(campaign, mu_runs)
        stored.delete()
    return {"campaign": campaign_id, "status": f"{mu_runs.shape[0]} runs done"}


def _current(campaign_id: int, last_id: int) -> bool:
    return CampaignResults.objects.filter(campaign_id=campaign_id, last_judgment_id=last_id).exists()


def _store_ranges(campaign: Campaign, mu_runs: np.ndarray) -> None:
    """Replace the TrueSkill table with the bootstrap's: mean μ over runs, its sd and percentile interval,
    rank ranges and clusters (WMT14's rule)."""
    header = CampaignResults.objects.get(campaign=campaign)
    confidence = float(header.summary.get("confidence", 0.95))
    ranges = ts.rank_ranges(mu_runs, confidence)
    table = ResultTable.objects.filter(campaign=campaign, name="systems", variant="trueskill").first()
    rows = table.rows if table else []
    index = {name: i for i, name in enumerate(system_names(campaign))}
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(mu_runs, [tail, 100 - tail], axis=0)
    for row in rows:
        i = index[row["system"]]
        row.update(score=finite(ranges.mean_mu[i]), rank=int(ranges.rank[i]),
                   rank_range=[int(ranges.rank_low[i]), int(ranges.rank_high[i])], cluster=int(ranges.cluster[i]),
                   low=finite(low[i]), high=finite(high[i]), sd_runs=finite(ranges.sd_mu[i]))
    rows.sort(key=lambda r: (r["rank"], r["system"]))
    if table is not None:
        table.rows = jsonable(rows)
        table.columns = list(dict.fromkeys(c for row in rows for c in row))
        table.save(update_fields=["rows", "columns"])
    header.summary = {**header.summary, "trueskill": {**header.summary.get("trueskill", {}),
                                                      "runs": int(mu_runs.shape[0]), "status": "bootstrap"}}
    header.save(update_fields=["summary"])


__all__ = ["start_trueskill_bootstrap", "trueskill_runs"]
