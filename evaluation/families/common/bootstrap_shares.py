"""Bootstrap runs split across Celery subtasks (TrueSkill's, docs/methods.md §8; Bradley–Terry's, §8.8): more
workers finish sooner. Each subtask runs its share of the run numbers (run r seeded by (seed, r), so the split does
not change the answer) and stores its values per run in `ResultTable` (variant "<last judgment id>:<share>").
Whichever subtask stores the last share hands all runs to `finish`, under the campaign's row lock, so that happens
exactly once; shares of a computation that newer results superseded are dropped. A subtask lost with a worker is
redelivered (the tasks acknowledge late)."""
from __future__ import annotations

from collections.abc import Callable

import numpy as np
from django.db import transaction

from annotation.models import Campaign

from ...models import CampaignResults, ResultTable


def run_chunks(runs: int, size: int) -> list[list[int]]:
    """The run numbers 0…runs-1 in shares of `size` (one subtask each)."""
    size = max(1, int(size))
    return [list(range(start, min(start + size, runs))) for start in range(0, runs, size)]


def current(campaign_id: int, last_id: int) -> bool:
    """Whether the stored results are still those of judgment id `last_id` (a newer computation supersedes)."""
    return CampaignResults.objects.filter(campaign_id=campaign_id, last_judgment_id=last_id).exists()


def _storable(values: np.ndarray) -> list:
    """Values per run as JSON (PostgreSQL's JSON has no NaN: a system a run left out is null)."""
    return [[None if not np.isfinite(v) else float(v) for v in row] for row in np.atleast_2d(values)]


def gather_share(campaign: Campaign, table: str, last_id: int, index: int, n_chunks: int, runs: list[int],
                 values: np.ndarray, finish: Callable[[np.ndarray], None]) -> str:
    """Store share `index` of `n_chunks` (`values`: one row per run of `runs`); when it is the last one in, call
    `finish` with every run's row (rows stacked in share order) and drop the shares. Returns the status."""
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=campaign.pk).values_list("pk", flat=True).first()
        if not current(campaign.pk, last_id):
            return "superseded"
        ResultTable.objects.update_or_create(campaign=campaign, name=table, variant=f"{last_id}:{index}",
                                             defaults={"columns": ["runs", "values"],
                                                       "rows": [{"runs": runs, "values": _storable(values)}]})
        stored = ResultTable.objects.filter(campaign=campaign, name=table, variant__startswith=f"{last_id}:")
        if stored.count() < n_chunks:
            return f"share {index + 1} of {n_chunks} stored"
        shares = sorted(stored, key=lambda t: int(t.variant.partition(":")[2]))  # "…:10" sorts before "…:2"
        all_runs = np.concatenate([np.array(t.rows[0]["values"], dtype=np.float64).reshape(len(t.rows[0]["runs"]), -1)
                                   for t in shares])
        finish(all_runs)
        stored.delete()
    return f"{all_runs.shape[0]} runs done"


__all__ = ["current", "gather_share", "run_chunks"]
