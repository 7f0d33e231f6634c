"""The researcher REST API (CONTRACT.md, "Researcher API")."""
from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from annotation.models import Campaign
from annotation.services.campaign_import import CampaignFileError, import_campaign

from .serializers import CampaignImportSerializer, CampaignSerializer
from .services.export import as_csv, as_json, judgment_rows
from .services.progress import campaign_counts

ImportAnswer = inline_serializer("CampaignImported", {"campaign": serializers.CharField(),
                                                      "hits": serializers.IntegerField()})


def file_error_response(exc: CampaignFileError) -> Response:
    return Response({"detail": str(exc), "errors": [{"line": line, "reason": reason} for line, reason in exc.errors]},
                    status=status.HTTP_400_BAD_REQUEST)


class CampaignViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Campaigns with their settings, progress counts and when results were last computed."""

    queryset = Campaign.objects.all().order_by("-created_at")
    serializer_class = CampaignSerializer
    lookup_field = "slug"
    parser_classes = [MultiPartParser, FormParser]
    filterset_fields = ["protocol", "status", "analysis_only"]

    def get_serializer_context(self):
        context = super().get_serializer_context()
        page = getattr(self, "_page_objects", None)
        if page is not None:
            context["counts"] = campaign_counts(page)
        return context

    def paginate_queryset(self, queryset):
        page = super().paginate_queryset(queryset)
        self._page_objects = list(page if page is not None else queryset)
        return page

    def get_object(self):
        campaign = super().get_object()
        self._page_objects = [campaign]
        return campaign

    @extend_schema(request={"multipart/form-data": CampaignImportSerializer}, responses={201: ImportAnswer})
    def create(self, request):
        """Import a campaign file (JSON Lines) and build its HITs."""
        form = CampaignImportSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = dict(form.validated_data)
        upload = data.pop("file")
        options = {}
        if "systems" in data:
            options["systems"] = [s.strip() for s in data.pop("systems").split(",") if s.strip()]
        if "unit" in data:
            options["unit"] = data.pop("unit")
        try:
            result = import_campaign(upload, options=options, **data)
        except CampaignFileError as exc:
            return file_error_response(exc)
        return Response({"campaign": result.campaign.slug, "hits": result.hits}, status=status.HTTP_201_CREATED)

    @extend_schema(
        parameters=[OpenApiParameter("format", str, enum=["csv", "json"], default="csv")],
        responses={(200, "text/csv"): OpenApiTypes.STR, (200, "application/json"): OpenApiTypes.OBJECT},
    )
    @action(detail=True, methods=["get"], pagination_class=None, filterset_fields=None)
    def judgments(self, request, slug=None):
        """Every judgment of the campaign, streamed as CSV (default) or a JSON array."""
        campaign = get_object_or_404(Campaign, slug=slug)
        fmt = request.query_params.get("format", "csv")
        if fmt not in ("csv", "json"):
            return Response({"detail": "format must be csv or json"}, status=status.HTTP_400_BAD_REQUEST)
        rows = judgment_rows(campaign)
        if fmt == "json":
            response = StreamingHttpResponse(as_json(rows), content_type="application/json")
        else:
            response = StreamingHttpResponse(as_csv(rows), content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = f'attachment; filename="{campaign.slug}-judgments.csv"'
        return response
