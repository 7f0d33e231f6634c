"""Admin: per campaign its stored results, read-only and rounded as the results pages print them, with a
prominent link to the results page itself (`/results/<slug>/`), and a recompute action. A researcher sees the
campaigns they own or that are shared with them (annotation/ownership.py)."""
from django import forms
from django.contrib import admin, messages
from django.http import Http404, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.formats import date_format
from django.utils.html import format_html, format_html_join
from kombu.exceptions import OperationalError

from annotation.models import Campaign

from . import admin_adaptive  # noqa: F401  (adaptive campaigns' admin, docs/methods.md §12.2)
from .admin_inlines import WorkerGateInline, WorkerInline, is_p_value, results_url
from .charts import format_p
from .families import family_of
from .models import CampaignStatistics, WorkerGate
from .services import reference_ranking as reference
from .services.gates import lift
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
        return super().get_queryset(request).visible_to(request.user).select_related("results").defer(
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
        return [inline for inline in [_worker_inline(family), *family.admin_inlines(), WorkerGateInline]
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
        reference_url = (reverse("admin:evaluation_campaignstatistics_reference_ranking", args=[campaign.pk])
                         if family_of(campaign).offers.reference_ranking else None)
        extra_context = {**(extra_context or {}), "results_url": results_url(campaign), "reference_url": reference_url,
                         "title": f"Results: {campaign.name}", "subtitle": None}
        return super().change_view(request, object_id, form_url, extra_context)

    def get_urls(self):
        view = self.admin_site.admin_view
        return [path("<int:pk>/reference-ranking/", view(self.reference_ranking_view),
                     name="evaluation_campaignstatistics_reference_ranking")] + super().get_urls()

    def reference_ranking_view(self, request, pk: int):
        """Set or remove the reference ranking the results correlate with (docs/methods.md §8.5)."""
        campaign = self.get_object(request, str(pk))
        if campaign is None:
            raise Http404("No such campaign.")
        options = campaign.options or {}
        current = options.get("reference_ranking") or {}
        form = ReferenceRankingForm(request.POST or None, initial={
            "kind": options.get("reference_kind") or "score",
            "values": "\n".join(f"{name}\t{value:g}" for name, value in current.items())})
        if request.method == "POST" and form.is_valid():
            if "remove" in request.POST:
                reference.store(campaign, None, None)
            else:
                values, errors = reference.parse_lines(form.cleaned_data["values"])
                errors += reference.problems(campaign, form.cleaned_data["kind"], values) if not errors else []
                if errors:
                    for error in errors:
                        form.add_error("values", error)
                    return self._reference_page(request, campaign, form)
                reference.store(campaign, form.cleaned_data["kind"], values)
            try:
                compute_campaign_results.apply_async((campaign.pk,))
            except OperationalError:  # the broker cannot be reached: the ranking is stored all the same
                messages.warning(request, "Reference ranking saved; the task queue is unavailable, so recompute "
                                          "the statistics later.")
            else:
                messages.success(request, "Reference ranking saved; the statistics are being recomputed.")
            return HttpResponseRedirect(reverse("admin:evaluation_campaignstatistics_change", args=[campaign.pk]))
        return self._reference_page(request, campaign, form)

    def _reference_page(self, request, campaign, form):
        return TemplateResponse(request, "admin/evaluation/reference_ranking.html", {
            **self.admin_site.each_context(request), "title": f"Reference ranking: {campaign.name}", "form": form,
            "campaign": campaign, "opts": self.model._meta, "systems": list(campaign.systems.values_list(
                "name", flat=True))})

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
        try:
            for campaign in queryset:
                compute_campaign_results.apply_async((campaign.pk,))
        except OperationalError:  # the broker cannot be reached (config/celery.py's GuardedTask)
            messages.error(request, "The task queue is unavailable; try again in a moment.")
        else:
            messages.success(request, f"Queued {queryset.count()} campaign(s) for recomputation.")


@admin.register(WorkerGate)
class WorkerGateAdmin(admin.ModelAdmin):
    """Workers stopped by the live reliability gate (docs/methods.md §12.1), with the reason; "Lift" lets them
    back in (the gate is kept, marked lifted, and not applied to them again in that campaign)."""

    list_display = ["annotator", "campaign", "rule", "reason", "p_value", "pairs", "created_at", "lifted_at"]
    list_filter = ["campaign", "rule", ("lifted_at", admin.EmptyFieldListFilter)]
    search_fields = ["annotator__external_id", "campaign__name", "campaign__slug"]
    fields = list_display + ["test", "missed_share", "lifted_by"]
    readonly_fields = fields
    actions = ["lift_gates"]

    def get_queryset(self, request):
        campaigns = Campaign.objects.visible_to(request.user).values("pk")
        return super().get_queryset(request).filter(campaign__in=campaigns).select_related(
            "annotator__user", "campaign")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.action(description="Lift the gate on the selected workers (let them back in)")
    def lift_gates(self, request, queryset):
        lifted = 0
        for gate in queryset.filter(lifted_at__isnull=True):
            lift(gate.campaign, gate, request.user)
            lifted += 1
        self.message_user(request, f"{lifted} gate(s) lifted.", messages.SUCCESS)


class ReferenceRankingForm(forms.Form):
    kind = forms.ChoiceField(choices=[("score", "score: higher is better (e.g. a metric)"),
                                      ("rank", "rank: 1 is best (e.g. experts' ranks)")])
    values = forms.CharField(widget=forms.Textarea(attrs={"rows": 12, "cols": 60}), required=False, max_length=200_000,
                             help_text="One system per line: its name, a tab or a space, then its score or rank.")

