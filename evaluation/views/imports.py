"""The import actions of the researcher API: campaign files and judgments collected elsewhere."""
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.response import Response

from annotation.services.campaign_import import CampaignFileError, import_campaign
from annotation.services.judgment_import import import_judgments

from ..serializers import CampaignImportSerializer, JudgmentImportSerializer

ImportAnswer = inline_serializer("CampaignImported", {"campaign": serializers.CharField(),
                                                      "hits": serializers.IntegerField()})
JudgmentsImported = inline_serializer("JudgmentsImported", {"campaign": serializers.CharField(),
                                                             "judgments": serializers.IntegerField()})


def file_error_response(exc: CampaignFileError) -> Response:
    return Response({"detail": str(exc), "errors": [{"line": line, "reason": reason} for line, reason in exc.errors]},
                    status=status.HTTP_400_BAD_REQUEST)


class ImportActions:
    """`POST /api/campaigns/` and `POST /api/campaigns/import-judgments/`, mixed into the campaign view set."""

    @extend_schema(request={"multipart/form-data": CampaignImportSerializer}, responses={201: ImportAnswer})
    def create(self, request):
        """Import a campaign file (JSON Lines) and build its HITs; the campaign opens at once unless publish=false."""
        form = CampaignImportSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        try:
            result = import_campaign(data["file"], name=data["name"], protocol=data["protocol"], parsed=data["parsed"],
                                     owner=request.user)
        except CampaignFileError as exc:
            return file_error_response(exc)
        return Response({"campaign": result.campaign.slug, "hits": result.hits,
                         **({"warnings": result.warnings} if result.warnings else {})}, status=status.HTTP_201_CREATED)

    @extend_schema(request={"multipart/form-data": JudgmentImportSerializer}, responses={201: JudgmentsImported})
    @action(detail=False, methods=["post"], url_path="import-judgments")
    def import_judgments(self, request):
        """Import judgments collected elsewhere (wmt-da, …) into a new analysis-only campaign."""
        form = JudgmentImportSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = dict(form.validated_data)
        options = {"study": data["study"]} if data.get("study") else {}
        if data.get("protocol"):
            options["protocol"] = data["protocol"]
        if data.get("systems"):
            options["systems"] = [s.strip() for s in data["systems"].split(",") if s.strip()]
        try:
            result = import_judgments(data["file"], fmt=data["format"], name=data["name"], owner=request.user,
                                      **options)
        except CampaignFileError as exc:
            return file_error_response(exc)
        return Response({"campaign": result.campaign.slug, "judgments": result.judgments},
                        status=status.HTTP_201_CREATED)

