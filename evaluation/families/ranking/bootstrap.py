"""TrueSkill's bootstrap runs as Celery subtasks (docs/methods.md §8; the mechanism, shared with Bradley–Terry's,
is `common/bootstrap_shares.py`). Each subtask reloads the judgments the results cover (up to the same judgment
id), runs its share of the runs and stores its μ per run; the last share in turns all runs into rank ranges and
clusters. The ranking's outcomes are also the family's battles for the Bradley–Terry part (`ranking_battles`)."""
from __future__ import annotations

import numpy as np
from celery import shared_task
from django.conf import settings

from annotation.models import Campaign

from ...models import CampaignResults, ResultTable
from ...services.storing import finite, jsonable
from ...stats import trueskill as ts
from ..common.battles import Battles
from ..common.bootstrap_shares import current, gather_share, run_chunks
from ..common.ranked import system_names
from ..common.slots import load_slots
from .analysis import counted_outcomes
from .options import options_of

RUNS_TABLE = "trueskill_runs"


def runs_per_task() -> int:
    return max(1, int(getattr(settings, "RANKING_BOOTSTRAP_RUNS_PER_TASK", 10)))


def start_trueskill_bootstrap(campaign_id: int, last_id: int, runs: int) -> int:
    """Queue the subtasks of `runs` bootstrap runs; how many subtasks."""
    chunks = run_chunks(runs, runs_per_task())
    for index, chunk in enumerate(chunks):
        trueskill_runs.delay(campaign_id, last_id, index, len(chunks), chunk)
    return len(chunks)


def _counted(campaign: Campaign, last_id: int):
    """The outcomes the results of `last_id` counted, the options and the systems' names."""
    options = options_of(campaign)
    names = system_names(campaign)
    return counted_outcomes(load_slots(campaign, last_id), len(names), options).outcomes, options, names


def ranking_battles(campaign: Campaign, last_id: int) -> Battles:
    """The pairwise outcomes the ranking counts (docs/methods.md §8: gold filter, reference rule) as battles, the
    system shown first as a; a rank tie is a tie."""
    outcomes, _, names = _counted(campaign, last_id)
    return Battles.from_results(names, outcomes.first, outcomes.second, outcomes.result)


def bootstrap_mu(campaign: Campaign, last_id: int, runs: list[int]) -> np.ndarray:
    """μ per system for each of `runs`, on the outcomes the results of `last_id` counted."""
    outcomes, options, names = _counted(campaign, last_id)
    n_systems = len(names)
    winner, loser, drawn = ts.winner_loser(outcomes.first, outcomes.second, outcomes.result)
    return ts.trueskill_bootstrap(winner, loser, drawn, n_systems, runs, options.seed, options.trueskill)


@shared_task(acks_late=True, reject_on_worker_lost=True)
def trueskill_runs(campaign_id: int, last_id: int, index: int, n_chunks: int, runs: list[int]) -> dict:
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None or not current(campaign_id, last_id):
        return {"campaign": campaign_id, "status": "superseded"}
    mu = bootstrap_mu(campaign, last_id, runs)
    status = gather_share(campaign, RUNS_TABLE, last_id, index, n_chunks, runs, mu,
                          lambda mu_runs: _store_ranges(campaign, mu_runs))
    return {"campaign": campaign_id, "status": status}


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


__all__ = ["ranking_battles", "start_trueskill_bootstrap", "trueskill_runs"]
