"""The results page's button that (re)runs ranking stability (docs/methods.md §12)."""
from __future__ import annotations

import logging

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from ..families import BadQuery
from ..permissions import researcher_required, visible_campaigns
from ..stability_tasks import start

log = logging.getLogger(__name__)


@require_POST
@researcher_required
def run_stability(request, slug: str):
    """Start the bootstrap for the campaign's worker filters (or the one `workers` names) and return to the
    page's "Ranking stability" section."""
    campaign = get_object_or_404(visible_campaigns(request.user), slug=slug)
    try:
        runs = start(campaign, request.POST)
    except BadQuery as exc:
        messages.error(request, str(exc))
    except Exception as exc:  # no broker, or (tasks in-process) the bootstrap itself failed
        log.exception("ranking stability of %s failed to start", campaign.slug)
        messages.error(request, f"Could not run ranking stability: {exc}")
    else:
        if all(run["status"] == "done" for run in runs):
            messages.success(request, "Ranking stability computed.")
        else:
            messages.success(request, "Ranking stability queued; reload in a moment to see the figures.")
    return redirect(reverse("results:campaign", kwargs={"slug": campaign.slug}) + "#stability")
