"""Comparing two test sets through a benchmark system run on both (test-set calibration, docs/methods.md §5)."""
from __future__ import annotations

from django.http import Http404
from django.shortcuts import render
from django.views.decorators.http import require_GET

from annotation.models import Campaign
from annotation.permissions import researcher_required
from config.csv_export import csv_response

from ..families import family_of


def _context(request) -> dict:
    """Candidates are the campaigns the user may see with results whose family calibrates; that family builds the
    page (a campaign outside the candidates is answered as one that does not exist)."""
    candidates, family = [], None
    for campaign in Campaign.objects.visible_to(request.user).filter(results__isnull=False).only(
            "name", "slug", "protocol", "created_at").order_by("-created_at"):
        if family_of(campaign).offers.calibration:
            candidates.append(campaign)
            family = family or family_of(campaign)
    if family is None:
        return {"candidates": [], "error": None, "result": None, "shared": [], "old": None, "new": None,
                "workers": "reliable", "old_systems": [], "new_systems": []}
    return family.compare_context(request.GET, candidates)


@require_GET
@researcher_required
def compare(request):
    return render(request, "evaluation/compare.html", _context(request))


@require_GET
@researcher_required
def compare_csv(request):
    context = _context(request)
    result = context.get("result")
    if result is None:
        raise Http404(context.get("error") or "Pick the campaigns and the benchmark system.")
    name = f"calibration-{context['old'].slug}-{context['new'].slug}.csv"
    return csv_response(name, *context["csv"])
