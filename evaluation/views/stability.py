"""Ranking stability's API action and the results page's button (docs/methods.md §12.4)."""
from __future__ import annotations

import logging
from collections.abc import Mapping

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.views.decorators.http import require_POST
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from kombu.exceptions import OperationalError
from rest_framework import status
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, JSONParser
from rest_framework.response import Response

from annotation.api.responses import queue_unavailable
from annotation.models import Campaign
from annotation.permissions import researcher_required

from ..families import BadQuery
from ..families.common.stability import MAX_RESAMPLES, MAX_SEED, MIN_RESAMPLES
from ..stability_tasks import start

log = logging.getLogger(__name__)

PARAMETERS = [
    OpenApiParameter("workers", str, enum=["reliable", "all"],
                     description="GET: which stored run (default reliable); POST: which to run (default both)"),
    OpenApiParameter("score", str, enum=["z", "raw"], default="z"),
    OpenApiParameter("resamples", {"type": "integer", "minimum": MIN_RESAMPLES, "maximum": MAX_RESAMPLES},
                     description="100 to 10,000 (POST: default 1,000)"),
    OpenApiParameter("seed", {"type": "integer", "minimum": 0, "maximum": MAX_SEED},
                     description="a non-negative integer (POST: default 0)"),
]


class StabilityActions:
    """`GET|POST /api/campaigns/<slug>/stability/`, mixed into the campaign view set (whose generic family route
    would answer GET alone)."""

    @extend_schema(parameters=PARAMETERS, request=None,
                   responses={200: OpenApiTypes.OBJECT, 202: OpenApiTypes.OBJECT, 503: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["get", "post"], pagination_class=None, filterset_fields=None,
            parser_classes=[JSONParser, FormParser])
    def stability(self, request, slug=None):
        """Ranking stability: GET the stored rank probabilities and stable-ranking probability (the family's
        `stability` endpoint); POST starts the bootstrap over workers and segments (202)."""
        if request.method == "GET":
            return self.family_result(request, slug=slug, endpoint="stability")
        campaign = self.get_object()
        if not isinstance(request.data, Mapping):
            return Response({"detail": "send the options as a JSON object or as form fields"},
                            status=status.HTTP_400_BAD_REQUEST)
        params = {**request.query_params.dict(), **{k: str(v) for k, v in request.data.items()}}
        try:
            runs = start(campaign, params)
        except BadQuery as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_400_BAD_REQUEST)
        except OperationalError as exc:  # the broker cannot be reached (config/celery.py's GuardedTask)
            return queue_unavailable(f"The task queue is unavailable ({exc.__class__.__name__}); try again later.")
        return Response({"runs": runs}, status=status.HTTP_202_ACCEPTED)


@require_POST
@researcher_required
def run_stability(request, slug: str):
    """Start the bootstrap for the campaign's worker filters (or the one `workers` names) and return to the
    page's "Ranking stability" section."""
    campaign = get_object_or_404(Campaign.objects.visible_to(request.user), slug=slug)
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
