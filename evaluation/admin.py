"""Admin: per campaign the worker reliability, system scores and pairwise results, and a recompute action."""
from django.contrib import admin, messages

from .models import CampaignResults, CampaignStatistics, PairwiseResult, SystemResult, WorkerResult
from .tasks import compute_campaign_results


class ReadOnlyInline(admin.TabularInline):
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class WorkerInline(ReadOnlyInline):
    model = WorkerResult
    fields = ["worker", "hits", "judgments", "pairs", "test", "p_value", "reliable", "mean_seconds", "constant",
              "assumption_a_holds"]
    readonly_fields = fields
    ordering = ["p_value"]


class SystemInline(ReadOnlyInline):
    model = SystemResult
    fields = ["workers", "rank", "cluster", "system", "translations", "judgments", "mean_raw", "mean_z", "z_low",
              "z_high"]
    readonly_fields = fields
    ordering = ["workers", "rank"]


class PairwiseInline(ReadOnlyInline):
    model = PairwiseResult
    fields = ["criterion", "unit", "rater", "a", "b", "t", "x", "n", "p_value", "spam_seen", "spam_missed",
              "excluded"]
    readonly_fields = fields


@admin.register(CampaignStatistics)
class CampaignStatisticsAdmin(admin.ModelAdmin):
    list_display = ["name", "protocol", "computed_at", "judgments_covered", "reliable_workers"]
    list_filter = ["protocol"]
    search_fields = ["name", "slug"]
    fields = ["name", "slug", "protocol", "qc_test", "qc_threshold", "computed_at", "judgments_covered", "summary"]
    readonly_fields = fields
    inlines = [WorkerInline, SystemInline, PairwiseInline]
    actions = ["recompute"]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("results").defer("results__translations")

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def _results(self, campaign) -> CampaignResults | None:
        try:
            return campaign.results
        except CampaignResults.DoesNotExist:
            return None

    @admin.display(description="computed at")
    def computed_at(self, campaign):
        results = self._results(campaign)
        return results.computed_at if results else None

    @admin.display(description="judgments")
    def judgments_covered(self, campaign):
        results = self._results(campaign)
        return results.judgments if results else 0

    @admin.display(description="reliable workers")
    def reliable_workers(self, campaign):
        results = self._results(campaign)
        if not results:
            return "–"
        summary = results.summary
        if "reliable_workers" in summary:
            return f"{summary['reliable_workers']} / {summary['workers']}"
        return f"{summary.get('raters', 0) - summary.get('excluded_raters', 0)} / {summary.get('raters', 0)}"

    @admin.display(description="summary")
    def summary(self, campaign):
        results = self._results(campaign)
        return results.summary if results else {}

    @admin.action(description="Recompute the statistics")
    def recompute(self, request, queryset):
        for campaign in queryset:
            compute_campaign_results.apply_async((campaign.pk,))
        messages.success(request, f"Queued {queryset.count()} campaign(s) for recomputation.")
