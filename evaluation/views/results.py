"""The researchers' results pages, rendered on the server from the stored result tables.

The page request never runs the statistics and never scans judgments, apart from one count of
the judgments newer than the results; the number of queries is fixed per family, whatever the
campaign's size. The campaign's family (evaluation/families/) supplies its section.
"""
from __future__ import annotations

import logging

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotation.models import Campaign
from annotation.permissions import researcher_required
from annotation.protocols import UnknownProtocol
from annotation.services.stages import first_stage

from ..families import family_of
from ..parts import parts_of
from ..presenters.common import cost_rows, progress_section, tables_of
from ..presets import settings_notices
from ..services import media_played
from ..services.crowd import cost_report
from ..services.results_read import freshness, header_of
from ..tasks import compute_campaign_results

log = logging.getLogger(__name__)

WORKER_FILTERS = ("all", "reliable", "unreliable")


def protocol_label(campaign: Campaign) -> str:
    """The protocol's label, or its stored name when the protocol is no longer registered."""
    try:
        return campaign.protocol_spec.label
    except UnknownProtocol:
        return campaign.protocol


@require_GET
@researcher_required
def results_index(request):
    campaigns = (Campaign.objects.visible_to(request.user).select_related("results")
                 .defer("results__translations", "results__agreement", "results__summary", "results__progress")
                 .order_by("-created_at"))
    rows = [{"campaign": c, "header": header_of(c), "label": protocol_label(c)} for c in campaigns]
    return render(request, "evaluation/results_index.html", {"rows": rows})


def _filter_workers(rows: list[dict], which: str) -> list[dict]:
    if which == "all":
        return rows
    return [r for r in rows if r["reliable"] == (which == "reliable")]


@require_GET
@researcher_required
def campaign_results(request, slug: str):
    campaign = get_object_or_404(Campaign.objects.visible_to(request.user).select_related("results", "study")
                                 .defer("results__translations"), slug=slug)
    if campaign.stage_input_id is not None:  # a later stage: its results are its task's, on the first stage
        task = first_stage(campaign)
        if Campaign.objects.visible_to(request.user).filter(pk=task.pk).exists():
            messages.info(request, f"{campaign.name} is the {campaign.stage_name or 'later'} stage of this task; the "
                          "task's results are computed on its first stage, over the judgments of every stage.")
            return redirect("results:campaign", slug=task.slug)
    header = header_of(campaign)
    family = family_of(campaign)
    parts = parts_of(campaign, header) if header is not None else []  # the result parts its results hold
    which = request.GET.get("workers", "all")
    which = which if which in WORKER_FILTERS else "all"
    all_workers = family.worker_rows(campaign)
    shown = _filter_workers(all_workers, which)
    reliable = sum(1 for r in all_workers if r["reliable"])
    context = {
        "campaign": campaign, "family": family, "header": header, "summary": header.summary if header else {},
        "fresh": freshness(campaign, header), "protocol_label": protocol_label(campaign), "workers_filter": which,
        "settings_notices": settings_notices(campaign, family.name),
        "worker_counts": {"all": len(all_workers), "reliable": reliable, "unreliable": len(all_workers) - reliable},
        "progress": progress_section(header.progress if header else {}),
        "cost": cost_rows(cost_report(campaign)),
        "tables": [{"name": t.name, "latex": t.latex is not None} for t in tables_of(family, parts, campaign).values()],
        "parts": [{"part": part, **part.page_context(campaign)} for part in parts],
        # who played how much of the video and audio (evaluation/services/media_played.py)
        "media_workers": media_played.page_rows(campaign), "media_required": media_played.required_share(campaign),
        # the owner's "Try as a worker" judgments the results count, named (stored by evaluation/analyses.py)
        "trials": (header.summary or {}).get("trials") if header else None,
    }
    context.update(family.page_context(campaign, header, shown, request))
    return render(request, "evaluation/results.html", context)


@require_POST
@researcher_required
def recompute(request, slug: str):
    """Queue the campaign's statistics on the Celery workers and return to its page."""
    campaign = get_object_or_404(Campaign.objects.visible_to(request.user), slug=slug)
    try:
        compute_campaign_results.apply_async((campaign.pk,), retry=False)
    except Exception as exc:  # no broker, or (tasks in-process) the computation itself failed
        log.exception("queueing the results of %s failed", campaign.slug)
        messages.error(request, f"Could not recompute: {exc}")
    else:
        messages.success(request, "Recomputation queued; reload in a moment to see the new results.")
    return redirect("results:campaign", slug=campaign.slug)
