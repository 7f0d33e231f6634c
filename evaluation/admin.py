"""Admin: per campaign its stored results, as its family shows them, and a recompute action."""
from django.contrib import admin, messages
from django.utils.html import format_html, format_html_join

from .admin_inlines import WorkerInline
from .families import family_of
from .models import CampaignStatistics
from .services.results_read import header_of
from .tasks import compute_campaign_results


def _worker_inline(family) -> type[WorkerInline]:
    """The workers' inline with the family's worker columns (those that are stored fields)."""
    serializer = family.worker_table_serializer
    stored = {f.name for f in serializer.Meta.model._meta.get_fields()}
    fields = [name for name in serializer.Meta.fields if name in stored]
    return type(f"{serializer.__name__}Inline", (WorkerInline,), {"fields": fields, "readonly_fields": fields})


@admin.register(CampaignStatistics)
class CampaignStatisticsAdmin(admin.ModelAdmin):
    list_display = ["name", "protocol", "computed_at", "judgments_covered", "reliable_workers"]
    list_filter = ["protocol"]
    search_fields = ["name", "slug"]
    fields = ["name", "slug", "protocol", "qc_test", "qc_threshold", "computed_at", "judgments_covered", "summary"]
    readonly_fields = fields
    actions = ["recompute"]

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("results").defer("results__translations")

    def get_inlines(self, request, obj):
        if obj is None:
            return []
        family = family_of(obj)
        return [_worker_inline(family), *family.admin_inlines()]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="computed at")
    def computed_at(self, campaign):
        results = header_of(campaign)
        return results.computed_at if results else None

    @admin.display(description="judgments")
    def judgments_covered(self, campaign):
        results = header_of(campaign)
        return results.judgments if results else 0

    @admin.display(description="reliable workers")
    def reliable_workers(self, campaign):
        results = header_of(campaign)
        return family_of(campaign).admin_summary(results.summary) if results else "–"

    @admin.display(description="summary")
    def summary(self, campaign):
        results = header_of(campaign)
        if not results or not results.summary:
            return "–"
        rows = [(key.replace("_", " "), value) for key, value in results.summary.items()
                if not isinstance(value, (dict, list))]
        return format_html("<table>{}</table>", format_html_join("", "<tr><th>{}</th><td>{}</td></tr>", rows))

    @admin.action(description="Recompute the statistics")
    def recompute(self, request, queryset):
        for campaign in queryset:
            compute_campaign_results.apply_async((campaign.pk,))
        messages.success(request, f"Queued {queryset.count()} campaign(s) for recomputation.")
