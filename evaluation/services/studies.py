"""A study's campaigns and its workers' reliability across them (docs/methods.md §4), for the API and the page."""
from __future__ import annotations

from annotation.models import Study

from ..models import WorkerResult


def study_overview(study: Study) -> dict:
    """The study's campaigns, and per worker their verdict in each campaign they worked in.

    With a study-wide test the verdict, p-value and pair count are the same in every campaign that
    uses the same test: they come from all of the worker's pairs in the study."""
    campaigns = list(study.campaigns.select_related("results").order_by("name"))
    rows: dict[str, dict] = {}
    for result in (WorkerResult.objects.filter(campaign__study=study).select_related("campaign")
                   .order_by("worker", "campaign__name")):
        row = rows.setdefault(result.worker, {"worker": result.worker, "judgments": 0, "campaigns": {}})
        row["judgments"] += result.judgments
        row["campaigns"][result.campaign.slug] = {"p_value": result.p_value, "pairs": result.pairs,
                                                   "reliable": result.reliable, "test": result.test}
    return {
        "name": study.name, "slug": study.slug,
        "campaigns": [{"slug": c.slug, "name": c.name, "protocol": c.protocol,
                       "results_computed_at": getattr(getattr(c, "results", None), "computed_at", None)}
                      for c in campaigns],
        "workers": list(rows.values()),
    }
