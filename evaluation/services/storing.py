"""Storing a family's results: one transaction that replaces every table of the campaign at once."""
from __future__ import annotations

import math
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
from django.db import models, transaction
from django.utils import timezone

from annotation.models import Campaign

from ..models import CampaignResults, ResultTable

#: The compute request (`CampaignResults.requested_at`) the run in progress covers: the store that ends the run
#: clears it in its own transaction, so no reader sees the new run's results still marked as asked for.
_covered_request: ContextVar = ContextVar("covered_request", default=None)


@contextmanager
def covering_request(requested_at):
    """Within this block, storing results also clears the compute request noted at `requested_at` (unless a newer
    request replaced it meanwhile: that one waits for its own run)."""
    token = _covered_request.set(requested_at)
    try:
        yield
    finally:
        _covered_request.reset(token)


def jsonable(value):
    """NaN and infinities become None, numpy scalars plain numbers, recursively."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [jsonable(v) for v in value]
    if isinstance(value, (np.floating, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    return value


def finite(value) -> float | None:
    """A float for storing, or None for a missing, NaN or infinite value."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def replace_results(campaign: Campaign, rows: dict[type[models.Model], list[models.Model]], header: dict,
                    tables: dict[str | tuple[str, str], list[dict]] | None = None) -> CampaignResults:
    """Replace the campaign's stored results in one transaction: readers see the old or the new, never a mix.

    `rows` maps each result model to its new rows (the old rows of those models are deleted);
    `tables` maps a table name, or (name, variant), to JSON rows stored in `ResultTable`;
    `header` holds the `CampaignResults` fields (judgments, seconds, summary, …). The campaign's row
    is locked first, so two runs that overlap (whatever the cache) store one after the other.
    """
    tables = tables or {}
    stored_tables = [ResultTable(campaign=campaign, name=key if isinstance(key, str) else key[0],
                                 variant="" if isinstance(key, str) else key[1],
                                 columns=list(dict.fromkeys(c for row in value for c in row)), rows=jsonable(value))
                     for key, value in tables.items()]
    with transaction.atomic():
        Campaign.objects.select_for_update().filter(pk=campaign.pk).values_list("pk", flat=True).first()
        for model, new_rows in rows.items():
            model.objects.filter(campaign=campaign).delete()
            model.objects.bulk_create(new_rows, batch_size=2000)
        ResultTable.objects.filter(campaign=campaign).delete()
        ResultTable.objects.bulk_create(stored_tables)
        runs = CampaignResults.objects.filter(campaign=campaign).values_list("runs", flat=True).first() or 0
        result, _ = CampaignResults.objects.update_or_create(campaign=campaign, defaults={
            "runs": runs + 1, "computed_at": timezone.now(), **header})
        covered = _covered_request.get()
        if covered is not None and result.requested_at == covered:
            CampaignResults.objects.filter(pk=result.pk, requested_at=covered).update(requested_at=None)
            result.requested_at = None
    return result
