"""The import actions of the researcher API: campaign files and judgments collected elsewhere, and the status
of imports running in the background (docs/api.md §4, §5).

A file up to `IMPORT_INLINE_MAX_BYTES` (default 2 MB) is imported in the request: 201 with what was imported,
or 400 with the file's problems. A larger one is saved and imported by a background job
(annotation/services/import_jobs.py): 202 `{"job", "status_url"}`, then `GET /api/imports/<job>/` tells its
stage, the lines read, and in the end the result or the problems.
"""
from django.urls import NoReverseMatch, reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from ..models import ImportJob
from ..services import import_jobs
from ..services.campaign_import import CampaignFileError, import_campaign
from ..services.campaign_settings import export_settings
from ..services.judgment_import import FORMAT_TEXT_OPTIONS, import_judgments, imported_answer
from .responses import queue_unavailable
from .serializers import CampaignImportSerializer, JudgmentImportSerializer

ImportAnswer = inline_serializer("CampaignImported", {"campaign": serializers.CharField(),
                                                      "hits": serializers.IntegerField()})
JudgmentsImported = inline_serializer("JudgmentsImported", {
    "campaign": serializers.CharField(), "judgments": serializers.IntegerField(),
    "warnings": serializers.ListField(child=serializers.CharField(), required=False,
                                      help_text="What was accepted but not as given, naming the lines.")})
ImportQueued = inline_serializer("ImportQueued", {"job": serializers.UUIDField(),
                                                  "status_url": serializers.CharField()})
ImportStatus = inline_serializer("ImportStatus", {
    "job": serializers.UUIDField(), "kind": serializers.ChoiceField(choices=["campaign", "judgments"]),
    "status": serializers.ChoiceField(choices=ImportJob.Status.values), "stage": serializers.CharField(),
    "lines_read": serializers.IntegerField(), "created_at": serializers.DateTimeField(),
    "finished_at": serializers.DateTimeField(allow_null=True),
    "result": serializers.DictField(allow_null=True, help_text="When done: campaign and hits (or judgments)."),
    "errors": inline_serializer("ImportProblem", {"line": serializers.IntegerField(),
                                                  "reason": serializers.CharField()}, many=True),
})


def file_error_response(exc: CampaignFileError) -> Response:
    return Response({"detail": str(exc), "errors": [{"line": line, "reason": reason} for line, reason in exc.errors]},
                    status=status.HTTP_400_BAD_REQUEST)


def status_url(job: ImportJob) -> str:
    try:
        return reverse("import-job", kwargs={"pk": job.pk})
    except NoReverseMatch:
        return f"/api/imports/{job.pk}/"


def job_queued(job: ImportJob) -> Response:
    """202 with the job's status URL; 503 when the job could not be handed to a worker (the broker is down or
    hung: import_jobs.enqueue records it failed), so that the researcher knows to send the file again later."""
    url = status_url(job)
    job.refresh_from_db(fields=["status", "stage"])
    if job.status == ImportJob.Status.FAILED and job.stage.startswith("could not be queued"):  # enqueue's words
        return queue_unavailable(f"The task queue is unavailable: import job {job.pk} could not be queued; send "
                                 "the file again later.")
    return Response({"job": str(job.pk), "status_url": url}, status=status.HTTP_202_ACCEPTED,
                    headers={"Location": url})


class ImportActions:
    """`POST /api/campaigns/` and `POST /api/campaigns/import-judgments/`, mixed into the campaign view set."""

    @extend_schema(request={"multipart/form-data": CampaignImportSerializer},
                   responses={201: ImportAnswer, 202: ImportQueued})
    def create(self, request):
        """Import a campaign file (JSON Lines) and build its HITs; the campaign opens at once unless publish=false.
        A file above IMPORT_INLINE_MAX_BYTES is imported in the background: 202 with the job's status URL."""
        form = CampaignImportSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        if import_jobs.is_large(data["file"].size):
            job = import_jobs.start("campaign", data["file"], {
                "name": data["name"], "protocol": data["protocol"], "options": data["raw"]}, request.user)
            return job_queued(job)
        try:
            result = import_campaign(data["file"], name=data["name"], protocol=data["protocol"], parsed=data["parsed"],
                                     owner=request.user)
        except CampaignFileError as exc:
            return file_error_response(exc)
        return Response({"campaign": result.campaign.slug, "hits": result.hits,
                         **({"warnings": result.warnings} if result.warnings else {})}, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], url_path="settings")
    def settings_file(self, request, slug=None):
        """The campaign's effective import settings as a small JSON file (docs/api.md#settings-file), downloaded as
        `<slug>.settings.json`; an import given this file next to the same data makes the same campaign."""
        campaign = self.get_object()
        return Response(export_settings(campaign), headers={
            "Content-Disposition": f'attachment; filename="{campaign.slug}.settings.json"'})

    @extend_schema(request={"multipart/form-data": JudgmentImportSerializer},
                   responses={201: JudgmentsImported, 202: ImportQueued})
    @action(detail=False, methods=["post"], url_path="import-judgments")
    def import_judgments(self, request):
        """Import judgments collected elsewhere (wmt-da, …) into a new analysis-only campaign; a file above
        IMPORT_INLINE_MAX_BYTES in the background (202)."""
        form = JudgmentImportSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = dict(form.validated_data)
        options = {"study": data["study"]} if data.get("study") else {}
        if data.get("protocol"):
            options["protocol"] = data["protocol"]
        if data.get("systems"):
            options["systems"] = [s.strip() for s in data["systems"].split(",") if s.strip()]
        options.update({name: data[name] for name in FORMAT_TEXT_OPTIONS if data.get(name)})
        if data.get("analysis"):
            options["analysis"] = data["analysis"]
        if import_jobs.is_large(data["file"].size):
            job = import_jobs.start("judgments", data["file"], {
                "name": data["name"], "format": data["format"], "options": options}, request.user)
            return job_queued(job)
        try:
            result = import_judgments(data["file"], fmt=data["format"], name=data["name"], owner=request.user,
                                      **options)
        except CampaignFileError as exc:
            return file_error_response(exc)
        return Response(imported_answer(result), status=status.HTTP_201_CREATED)


class ImportJobView(APIView):
    """`GET /api/imports/<job>/`: a background import's status, stage and lines read, then its result (the
    campaign's slug and its HITs or judgments) or the file's problems (line, reason). Only the researcher who
    started it (and superusers) see a job; anyone else's is not found."""

    @extend_schema(responses={200: ImportStatus, 404: OpenApiTypes.OBJECT})
    def get(self, request, pk):
        jobs = ImportJob.objects.all()
        if not request.user.is_superuser:
            jobs = jobs.filter(created_by=request.user)
        job = jobs.filter(pk=pk).first()
        if job is None:
            raise NotFound("no such import")
        return Response(import_jobs.status_of(job))
