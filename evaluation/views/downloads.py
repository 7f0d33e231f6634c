"""Result tables as downloads from the results pages: CSV for every table, LaTeX where the family offers it."""
from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_GET

from annotation.models import Campaign
from annotation.permissions import researcher_required
from config.csv_export import csv_response

from ..families import family_of
from ..presenters.common import tables_of


def _table(request, slug: str, name: str):
    campaign = get_object_or_404(Campaign.objects.visible_to(request.user), slug=slug)
    table = tables_of(family_of(campaign)).get(name)  # a part that does not apply answers its header alone
    if table is None:
        raise Http404("No such table for this campaign.")
    return campaign, table


@require_GET
@researcher_required
def table_csv(request, slug: str, table: str):
    campaign, spec = _table(request, slug, table)
    columns, rows = spec.rows(campaign, request.GET)
    return csv_response(f"{campaign.slug}-{spec.name}.csv", columns, rows)


@require_GET
@researcher_required
def table_latex(request, slug: str, table: str):
    campaign, spec = _table(request, slug, table)
    if spec.latex is None:
        raise Http404("This table has no LaTeX version.")
    response = HttpResponse(spec.latex(campaign, request.GET), content_type="application/x-tex; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{campaign.slug}-{spec.name}.tex"'
    return response
