"""The results the annotation app's campaign API and judgment export show (annotation/extensions.py), answered
from the stored results; installed in `EvaluationConfig.ready()`."""
from __future__ import annotations

from datetime import datetime

from django.db.models import QuerySet

from annotation.extensions import ResultsSource

from .models import CampaignResults
from .services.results_read import z_lookup


class StoredResults(ResultsSource):
    def with_results(self, campaigns: QuerySet) -> QuerySet:
        """The results row joined, without its large columns (the list and the campaign show only its date)."""
        return campaigns.select_related("results").defer("results__translations", "results__agreement",
                                                          "results__summary")

    def computed_at(self, campaign) -> datetime | None:
        try:
            return campaign.results.computed_at
        except CampaignResults.DoesNotExist:
            return None

    def standardisation(self, campaign) -> dict[int, tuple[float, float]]:
        return z_lookup(campaign)

    def recompute(self, campaign) -> bool:
        """Queue `compute_campaign_results`; False when the broker cannot be reached (the results stay as they were
        until the next compute)."""
        from kombu.exceptions import OperationalError

        from .tasks import compute_campaign_results

        try:
            compute_campaign_results.apply_async((campaign.pk,), retry=False)
        except OperationalError:
            return False
        return True
