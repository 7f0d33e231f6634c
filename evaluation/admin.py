"""Admin: per campaign its stored results, read-only and rounded as the results pages print them, with a
prominent link to the results page itself (`/results/<slug>/`), and a recompute action. A researcher sees the
campaigns they own or that are shared with them (evaluation/permissions.py)."""
from django.contrib import admin, messages
from django.http import Http404
from django.urls import NoReverseMatch, reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.html import format_html, format_html_join

from .admin_inlines import WorkerInline, is_p_value
from .charts import format_p
from .families import family_of
from .models import CampaignStatistics
from .permissions import visible_campaigns
from .services.results_read import header_of
from .tasks import compute_campaign_results

#: The conventions the summary records (DA), as the admin labels them, in order.
CONVENTIONS = (("preset_label", "statistics preset"), ("test", "reliability test"), ("threshold", "threshold"),
               ("threshold_rule", "threshold rule"), ("scope", "reliability scope"), ("cluster_rule", "cluster rule"),
               ("differs_from_preset", "differs from the preset in"))

#: Summary keys the conventions table already shows.
SHOWN_IN_CONVENTIONS = ("test", "threshold", "threshold_rule")


def _worker_inline(family) -> type[WorkerInline]:
    """The workers' inline with the family's worker columns (those that are stored fields)."""
    serializer = family.worker_table_serializer
    stored = {f.name for f in serializer.Meta.model._meta.get_fields()}
    fields = [name for name in serializer.Meta.fields if name in stored]
    return type(f"{serializer.__name__}Inline", (WorkerInline,), {"fields": fields, "readonly_fields": fields})


def results_url(campaign) -> str:
    try:
        return reverse("results:campaign", args=[campaign.slug])
    except NoReverseMatch:
        return f"/results/{campaign.slug}/"


def _when(moment) -> str:
    return date_format(timezone.localtime(moment), "DATETIME_FORMAT") if moment else "–"


def _value(value, name: str) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v).replace("_", " ") for v in value) or "–"
    if isinstance(value, float):
        return format_p(value) if is_p_value(name) else f"{value:.3g}"
    return "–" if value in (None, "") else str(value)


@admin.register(CampaignStatistics)
class CampaignStatisticsAdmin(admin.ModelAdmin):
    """The computed data is viewable, never editable: the change page has no Save button."""

    list_display = ["name", "protocol", "computed_at", "judgments_covered", "reliable_workers", "results_page"]
    list_filter = ["protocol"]
    search_fields = ["name", "slug"]
    fields = ["results_page", "name", "slug", "protocol", "computed_at", "judgments_covered", "conventions", "summary"]
    readonly_fields = fields
    actions = ["recompute"]
    change_form_template = "admin/evaluation/campaignstatistics/change_form.html"

    def get_queryset(self, request):
        return visible_campaigns(request.user, super().get_queryset(request)).select_related("results").defer(
            "results__translations")

    def get_fields(self, request, obj=None):
        """The conventions only where the summary records them (Direct Assessment's reliability test)."""
        results = header_of(obj) if obj is not None else None
        if results is None or not (results.summary or {}).get("conventions"):
            return [name for name in self.fields if name != "conventions"]
        return self.fields

    def get_inlines(self, request, obj):
        """The family's tables that hold rows for this campaign (an empty one is left out)."""
        if obj is None:
            return []
        family = family_of(obj)
        return [inline for inline in [_worker_inline(family), *family.admin_inlines()]
                if inline.model._default_manager.filter(campaign_id=obj.pk).exists()]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def change_view(self, request, object_id, form_url="", extra_context=None):
        campaign = self.get_object(request, object_id)
        if campaign is None:
            raise Http404("No such campaign.")  # someone else's is not found either
        extra_context = {**(extra_context or {}), "results_url": results_url(campaign),
                         "title": f"Results: {campaign.name}", "subtitle": None}
        return super().change_view(request, object_id, form_url, extra_context)

    @admin.display(description="results page")
    def results_page(self, campaign):
        url = results_url(campaign)
        return format_html('<a href="{}">{}</a>', url, url)

    @admin.display(description="computed at")
    def computed_at(self, campaign):
        results = header_of(campaign)
        return _when(results.computed_at) if results else "not yet"

    @admin.display(description="judgments")
    def judgments_covered(self, campaign):
        results = header_of(campaign)
        return results.judgments if results else 0

    @admin.display(description="reliable workers")
    def reliable_workers(self, campaign):
        results = header_of(campaign)
        return family_of(campaign).admin_summary(results.summary) if results else "–"

    @admin.display(description="conventions")
    def conventions(self, campaign):
        results = header_of(campaign)
        stored = (results.summary or {}).get("conventions") if results else None
        if not stored:
            return "–"
        rows = [(label, _value(stored.get(key), key)) for key, label in CONVENTIONS if key in stored]
        return format_html('<table class="results-summary">{}</table>',
                           format_html_join("", "<tr><th>{}</th><td>{}</td></tr>", rows))

    @admin.display(description="summary")
    def summary(self, campaign):
        results = header_of(campaign)
        if not results or not results.summary:
            return "–"
        shown_above = SHOWN_IN_CONVENTIONS if results.summary.get("conventions") else ()
        rows = [(key.replace("_", " "), _value(value, key)) for key, value in results.summary.items()
                if not isinstance(value, dict) and key not in shown_above]
        return format_html('<table class="results-summary">{}</table>',
                           format_html_join("", "<tr><th>{}</th><td>{}</td></tr>", rows))

    @admin.action(description="Recompute the statistics")
    def recompute(self, request, queryset):
        for campaign in queryset:
            compute_campaign_results.apply_async((campaign.pk,))
        messages.success(request, f"Queued {queryset.count()} campaign(s) for recomputation.")
