"""Adaptive allocation in the researcher API (docs/api.md, docs/methods.md §12.2):

- `GET /api/campaigns/<slug>/adaptive/`: state, budget, spend, projected spend, the open pairs with their z and
  the boundary, and every look;
- `POST /api/campaigns/<slug>/adaptive/look/`: take a look now (it builds the next batch only when the newest one
  is finished, and stops the run when every adjacent pair is decided); answers what it did and the new state.

Same permissions as the other campaign endpoints: a researcher's token, only campaigns they own or that are
shared with them (404 for any other), 400 for a campaign that is not adaptive.
"""
from django.shortcuts import get_object_or_404
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import status as http
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.api.schema import ERROR
from annotation.models import Campaign
from annotation.permissions import CAN_USE, ExplainsDenials

from ..services.adaptive import NotAdaptive, look
from ..services.adaptive_report import status


class AdaptiveView(ExplainsDenials, APIView):
    permission_classes = [CAN_USE]

    def campaign(self, request, slug: str):
        campaign = get_object_or_404(Campaign.objects.visible_to(request.user), slug=slug)
        self.check_object_permissions(request, campaign)
        return campaign

    @staticmethod
    def refused(exc: NotAdaptive) -> Response:
        return Response({"detail": str(exc)}, status=http.HTTP_400_BAD_REQUEST)


class AdaptiveStatus(AdaptiveView):
    @extend_schema(operation_id="campaigns_adaptive", responses={200: OpenApiTypes.OBJECT, 400: ERROR})
    def get(self, request, slug: str):
        """The adaptive campaign's state, budget, spend, projected spend, open pairs and looks."""
        campaign = self.campaign(request, slug)
        try:
            return Response(status(campaign))
        except NotAdaptive as exc:
            return self.refused(exc)


class AdaptiveLook(AdaptiveView):
    @extend_schema(operation_id="campaigns_adaptive_look", request=None, responses=OpenApiTypes.OBJECT)
    def post(self, request, slug: str):
        """Take a look now: `looked` (false when no HIT was finished since the last look, or the run has
        stopped), the `decision` (stop, next-batch, wait, nothing-new, stopped), a `message`, and the state."""
        campaign = self.campaign(request, slug)
        try:
            outcome = look(campaign, trigger="manual")
            campaign.refresh_from_db()
            return Response({"looked": outcome.looked, "decision": outcome.decision, "message": outcome.message,
                             "built": outcome.built, "adaptive": status(campaign)})
        except NotAdaptive as exc:
            return self.refused(exc)


#: Registered in evaluation/urls.py before the catch-all family route.
urlpatterns = [
    path("campaigns/<slug:slug>/adaptive/", AdaptiveStatus.as_view(), name="campaign-adaptive"),
    path("campaigns/<slug:slug>/adaptive/look/", AdaptiveLook.as_view(), name="campaign-adaptive-look"),
]
