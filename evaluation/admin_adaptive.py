"""Admin: adaptive campaigns (docs/methods.md §12.2). The list shows each run's state and spend; a run's page shows
the budget and what is spent (judgments and money), the projected spend and how it is projected, the adjacent
pairs still open with their z against the boundary, and every look; "Run a look now" takes a look at once (as
`POST /api/campaigns/<slug>/adaptive/look/` does). A researcher sees the runs of the campaigns they may see."""
from datetime import datetime

from django.contrib import admin, messages
from django.http import Http404, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.formats import date_format

from annotation.models import Campaign

from .admin_inlines import results_url
from .models import AdaptiveRun
from .services.adaptive import NotAdaptive, look
from .services.adaptive_report import status


@admin.register(AdaptiveRun)
class AdaptiveRunAdmin(admin.ModelAdmin):
    list_display = ["campaign", "state", "looks_taken", "spent", "budget", "pairs_open", "reason"]
    list_filter = ["state"]
    search_fields = ["campaign__name", "campaign__slug"]

    def get_queryset(self, request):
        campaigns = Campaign.objects.visible_to(request.user).values("pk")
        return super().get_queryset(request).filter(campaign__in=campaigns).select_related("campaign")

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    @admin.display(description="looks")
    def looks_taken(self, run):
        return len(run.looks)

    @admin.display(description="judgments spent")
    def spent(self, run):
        return run.spent_judgments

    @admin.display(description="budget (judgments)")
    def budget(self, run):
        return run.budget_judgments

    @admin.display(description="pairs open")
    def pairs_open(self, run):
        return run.looks[-1]["open"] if run.looks else "–"

    def get_urls(self):
        view = self.admin_site.admin_view
        return [path("<int:pk>/look/", view(self.look_view), name="evaluation_adaptiverun_look")] + super().get_urls()

    def _run(self, request, object_id) -> AdaptiveRun:
        run = self.get_queryset(request).filter(pk=object_id).first() if str(object_id).isdigit() else None
        if run is None:
            raise Http404("No such adaptive campaign.")  # someone else's is not found either
        return run

    def change_view(self, request, object_id, form_url="", extra_context=None):
        run = self._run(request, object_id)
        try:
            state = status(run.campaign)
        except NotAdaptive as exc:
            state = {"refused": str(exc)}
        return TemplateResponse(request, "admin/evaluation/adaptiverun/run.html", {
            **self.admin_site.each_context(request), "opts": self.model._meta, "run": run, "campaign": run.campaign,
            "title": f"Adaptive allocation: {run.campaign.name}", "adaptive": state, "gauges": _gauges(state),
            "open_pairs": [_with_reach(p) for p in state.get("open_pairs", [])],
            "looks": [_look_row(e) for e in reversed(state.get("looks", []))],
            "look_url": reverse("admin:evaluation_adaptiverun_look", args=[run.pk]),
            "results_url": results_url(run.campaign)})

    def look_view(self, request, pk: int):
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        run = self._run(request, pk)
        try:
            outcome = look(run.campaign, trigger="manual")
        except NotAdaptive as exc:
            messages.error(request, str(exc))
        else:
            level = messages.SUCCESS if outcome.looked else messages.WARNING
            messages.add_message(request, level, f"Look: {outcome.message}")
        return HttpResponseRedirect(reverse("admin:evaluation_adaptiverun_change", args=[run.pk]))


def _percent(part, whole) -> float:
    return round(min(100.0, max(0.0, 100.0 * float(part) / float(whole))), 1) if whole else 0.0


def _gauges(state: dict) -> dict:
    """Widths (% of the budget) of the spent and projected bars."""
    if "budget" not in state:
        return {}
    budget = state["budget"]["judgments"]
    return {"spent": _percent(state["spent"]["judgments"], budget),
            "projected": _percent(state["projected"]["judgments"], budget)}


def _with_reach(pair: dict) -> dict:
    """An open pair with how far its |z| has come to the boundary (%, for the bar)."""
    z, boundary = pair.get("z"), pair.get("boundary")
    return {**pair, "reach": _percent(abs(z or 0.0), boundary or 0.0)}


def _look_row(entry: dict) -> dict:
    """A look as the history table shows it: its time in the site's format, a line per pair and per weight."""
    try:
        when = date_format(timezone.localtime(datetime.fromisoformat(entry["at"])), "SHORT_DATETIME_FORMAT")
    except (KeyError, TypeError, ValueError):
        when = "–"
    pairs = [f"{p['better']} > {p['worse']}: z {p['z'] if p['z'] is not None else float('nan'):.2f}"
             f"{' ✓' if p['separated'] else ' given up' if p.get('futile') else ''}" for p in entry.get("pairs", [])]
    weights = [f"{name} {w:.2f}" for name, w in (entry.get("weights") or {}).items()]
    return {**entry, "when": when, "pair_lines": pairs, "weight_lines": weights}
