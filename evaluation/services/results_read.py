"""Reading stored results for the API and pages: freshness, tables, calibration between campaigns."""
from __future__ import annotations

import io

import numpy as np
from django.db.models import Max

from annotation.models import Campaign, Judgment

from .. import stats
from ..models import CampaignResults, WorkerResult
from .da_results import jsonable


def freshness(campaign: Campaign) -> dict:
    """When results were computed, how many judgments they cover, and whether judgments arrived since."""
    header = CampaignResults.objects.filter(campaign=campaign).only("computed_at", "judgments",
                                                                   "last_judgment_id").first()
    newest = Judgment.objects.filter(campaign=campaign).aggregate(m=Max("id"))["m"] or 0
    if header is None:
        return {"computed_at": None, "judgments_covered": 0, "new_judgments": newest > 0, "stale": newest > 0}
    arrived = newest > header.last_judgment_id
    return {"computed_at": header.computed_at, "judgments_covered": header.judgments, "new_judgments": arrived,
            "stale": arrived}


def z_lookup(campaign: Campaign) -> dict[int, tuple[float, float]]:
    """Per annotator id, the (mean, sd) that standardise their scores (METHODS.md §5); constant workers left out."""
    rows = WorkerResult.objects.filter(campaign=campaign, constant=False, sd_raw__isnull=False).values_list(
        "annotator_id", "mean_raw", "sd_raw")
    return {annotator: (mean, sd) for annotator, mean, sd in rows}


class CalibrationError(ValueError):
    pass


def _translations(campaign: Campaign, workers: str) -> dict[str, dict[str, np.ndarray]]:
    header = CampaignResults.objects.filter(campaign=campaign).only("translations").first()
    if header is None or not header.translations:
        raise CalibrationError(f"campaign {campaign.slug!r} has no computed results yet")
    arrays = np.load(io.BytesIO(bytes(header.translations)))
    names = [str(n) for n in arrays[f"{workers}_names"]]
    system = arrays[f"{workers}_system"]
    return {name: {"raw": arrays[f"{workers}_raw"][system == code], "z": arrays[f"{workers}_z"][system == code]}
            for code, name in enumerate(names)}


def calibration(new: Campaign, old: Campaign, benchmark: str, system_new: str, system_old: str,
                workers: str = "reliable") -> dict:
    """Test-set difficulty calibration between two campaigns sharing a benchmark system (METHODS.md §5, 000 §4)."""
    new_t, old_t = _translations(new, workers), _translations(old, workers)
    for campaign, table, name in ((new, new_t, benchmark), (old, old_t, benchmark), (new, new_t, system_new),
                                  (old, old_t, system_old)):
        if name not in table:
            raise CalibrationError(f"system {name!r} has no scores in campaign {campaign.slug!r}")
    result = {}
    for scale in ("raw", "z"):
        values = [t[n][scale] for t, n in ((old_t, benchmark), (new_t, benchmark), (old_t, system_old),
                                             (new_t, system_new))]
        values = [v[np.isfinite(v)] for v in values]
        result[scale] = jsonable(vars(stats.calibrate(*values)))
    return {"benchmark": benchmark, "old": {"campaign": old.slug, "system": system_old},
            "new": {"campaign": new.slug, "system": system_new}, "workers": workers, **result}
