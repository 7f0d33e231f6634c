"""The researcher REST API (CONTRACT.md, "Researcher API")."""
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response

from annotation.models import Annotator, Campaign
from annotation.services import assignment as assigning

from ..models import CampaignResults, PairwiseResult, SignificanceResult, SystemResult, WorkerFilter, WorkerResult
from ..serializers import CampaignSerializer, SystemResultSerializer, WorkerResultSerializer
from ..services.crowd import approval_suggestions, cost_report
from ..services.export import as_csv, as_json, columns_for, judgment_rows, rows_as_csv
from ..services.progress import campaign_counts
from ..services.results_read import CalibrationError, calibration, freshness, z_lookup
from ..tasks import compute_campaign_results
from .imports import ImportActions

WORKERS_PARAMETER = OpenApiParameter("workers", str, enum=["reliable", "all"], default="reliable",
                                     description="Reliable workers only (METHODS.md §4), or everyone.")


def bad_request(detail: str) -> Response:
    return Response({"detail": detail}, status=status.HTTP_400_BAD_REQUEST)


class CampaignViewSet(ImportActions, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Campaigns with their settings, progress counts and results."""

    queryset = (Campaign.objects.select_related("results")
                .defer("results__translations", "results__agreement", "results__summary").order_by("-created_at"))
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

    def _workers_filter(self, request) -> str | None:
        value = request.query_params.get("workers", WorkerFilter.RELIABLE)
        return value if value in WorkerFilter.values else None

    @extend_schema(request=None, responses={202: inline_serializer("ComputeQueued", {"task": serializers.CharField()})})
    @action(detail=True, methods=["post"])
    def compute(self, request, slug=None):
        """Queue the statistics for this campaign on the Celery workers."""
        campaign = self.get_object()
        task = compute_campaign_results.apply_async((campaign.pk,))
        return Response({"task": task.id}, status=status.HTTP_202_ACCEPTED)

    @extend_schema(parameters=[OpenApiParameter("format", str, enum=["csv", "json"], default="csv")],
                   responses={(200, "text/csv"): OpenApiTypes.STR, (200, "application/json"): OpenApiTypes.OBJECT})
    @action(detail=True, methods=["get"], pagination_class=None, filterset_fields=None)
    def judgments(self, request, slug=None):
        """Every judgment of the campaign, streamed as CSV (default) or a JSON array, with z-scores."""
        campaign = self.get_object()
        fmt = request.query_params.get("format", "csv")
        if fmt not in ("csv", "json"):
            return bad_request("format must be csv or json")
        rows = judgment_rows(campaign, z_lookup(campaign))
        if fmt == "json":
            return StreamingHttpResponse(as_json(rows), content_type="application/json")
        response = StreamingHttpResponse(as_csv(rows, columns_for(campaign)), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{campaign.slug}-judgments.csv"'
        return response

    @extend_schema(responses=WorkerResultSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=None, filterset_fields=None)
    def workers(self, request, slug=None):
        """Per worker: HITs, judgments, quality-control pairs, p-value, reliable, mean seconds (METHODS.md §4)."""
        campaign = self.get_object()
        rows = WorkerResult.objects.filter(campaign=campaign).order_by("worker")
        return Response({**freshness(campaign), "results": WorkerResultSerializer(rows, many=True).data})

    @extend_schema(parameters=[WORKERS_PARAMETER], responses=SystemResultSerializer(many=True))
    @action(detail=True, methods=["get"], pagination_class=None, filterset_fields=None)
    def systems(self, request, slug=None):
        """Per system: translations, judgments, mean raw and z with 95 % intervals, rank and cluster (§5)."""
        campaign = self.get_object()
        workers = self._workers_filter(request)
        if workers is None:
            return bad_request("workers must be reliable or all")
        rows = SystemResult.objects.filter(campaign=campaign, workers=workers).order_by("rank", "system")
        return Response({**freshness(campaign), "workers": workers,
                         "results": SystemResultSerializer(rows, many=True).data})

    @extend_schema(parameters=[WORKERS_PARAMETER], responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], pagination_class=None, filterset_fields=None)
    def significance(self, request, slug=None):
        """One-sided Wilcoxon rank-sum p-values between systems, in rank order; p[i][j]: i better than j."""
        campaign = self.get_object()
        workers = self._workers_filter(request)
        if workers is None:
            return bad_request("workers must be reliable or all")
        matrix = SignificanceResult.objects.filter(campaign=campaign, workers=workers).first()
        body = {"systems": matrix.systems, "p_values": matrix.p_values, "stars": matrix.stars} if matrix else {
            "systems": [], "p_values": [], "stars": []}
        return Response({**freshness(campaign), "workers": workers, **body})

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], pagination_class=None, filterset_fields=None)
    def agreement(self, request, slug=None):
        """Ask-again differences and Cohen's kappas, same and distinct judges; Assumption A (§4, §6)."""
        campaign = self.get_object()
        header = CampaignResults.objects.filter(campaign=campaign).first()
        return Response({**freshness(campaign), "agreement": header.agreement if header else {},
                         "summary": header.summary if header else {}})

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], pagination_class=None, filterset_fields=None)
    def pairwise(self, request, slug=None):
        """Per condition (criterion × unit), in total and per rater: a, b, t, the two-sided sign test
        (x = b, n = a + b; and Emerson-Simon), spam misses, majority vote and agreement (§7)."""
        campaign = self.get_object()
        if campaign.protocol_spec.family != "pairwise":
            return bad_request("not a pairwise campaign")
        header = CampaignResults.objects.filter(campaign=campaign).only("agreement").first()
        agreement = header.agreement if header else {}
        conditions = {}
        for row in PairwiseResult.objects.filter(campaign=campaign).order_by("criterion", "unit", "rater"):
            key = f"{row.criterion}/{row.unit}"
            counts = {"a": row.a, "b": row.b, "t": row.t}
            spam = {"spam_seen": row.spam_seen, "spam_missed": row.spam_missed,
                    "spam_missed_ties": row.spam_missed_ties}
            if not row.rater:
                conditions[key] = {"criterion": row.criterion, "unit": row.unit, **counts, "x": row.x, "n": row.n,
                                   "p_value": row.p_value, "p_value_emerson_simon": row.p_value_emerson_simon,
                                   **spam, **{k: v for k, v in agreement.get(key, {}).items()}, "raters": []}
            else:
                conditions[key]["raters"].append({"rater": row.rater, **counts, "x": row.x, "n": row.n,
                                                  "p_value": row.p_value, **spam, "excluded": row.excluded})
        return Response({**freshness(campaign), "systems": campaign.options.get("systems", []),
                         "conditions": list(conditions.values())})

    @extend_schema(request=inline_serializer("StatusChange", {"status": serializers.ChoiceField(
        choices=["active", "paused", "closed"])}), responses=CampaignSerializer)
    @action(detail=True, methods=["post"], parser_classes=[JSONParser, FormParser])
    def status(self, request, slug=None):
        """Publish (active), pause or close the campaign."""
        campaign = self.get_object()
        value = request.data.get("status")
        if value not in ("active", "paused", "closed") or campaign.analysis_only:
            return bad_request("status must be active, paused or closed (analysis-only campaigns stay closed)")
        campaign.status = value
        campaign.save(update_fields=["status"])
        return Response(self.get_serializer(campaign).data)

    @extend_schema(request=inline_serializer("WorkerBlock", {"worker": serializers.CharField()}),
                   responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["post"], parser_classes=[JSONParser, FormParser])
    def block(self, request, slug=None):
        """Keep a worker (external id) out of this campaign; their unfinished HITs end, judgments stay."""
        campaign = self.get_object()
        annotator = Annotator.objects.filter(external_id=request.data.get("worker", "")).first()
        if annotator is None:
            return bad_request("no worker with that id")
        ended = assigning.block(campaign, annotator)
        return Response({"worker": annotator.external_id, "blocked": True, "hits_ended": ended})

    @extend_schema(request=inline_serializer("WorkerUnblock", {"worker": serializers.CharField()}),
                   responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["post"], parser_classes=[JSONParser, FormParser])
    def unblock(self, request, slug=None):
        campaign = self.get_object()
        annotator = Annotator.objects.filter(external_id=request.data.get("worker", "")).first()
        if annotator is None:
            return bad_request("no worker with that id")
        assigning.unblock(campaign, annotator)
        return Response({"worker": annotator.external_id, "blocked": False})

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], pagination_class=None, filterset_fields=None)
    def costs(self, request, slug=None):
        """Payment per HIT × HITs paid, per system, and the share spent on unreliable workers (000 §4)."""
        campaign = self.get_object()
        return Response({**freshness(campaign), **cost_report(campaign)})

    @extend_schema(parameters=[OpenApiParameter("format", str, enum=["json", "csv"], default="json")],
                   responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], pagination_class=None, filterset_fields=None)
    def approvals(self, request, slug=None):
        """Per worker an approve/reject suggestion: reject only clear random clicking (METHODS.md §10)."""
        campaign = self.get_object()
        rows = approval_suggestions(campaign)
        if request.query_params.get("format") == "csv":
            columns = ["worker", "hits", "judgments", "pairs", "p_value", "reliable", "suggestion", "reason"]
            response = StreamingHttpResponse(rows_as_csv(rows, columns), content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = f'attachment; filename="{campaign.slug}-approvals.csv"'
            return response
        return Response({**freshness(campaign), "results": rows})

    @extend_schema(parameters=[
        OpenApiParameter("against", str, required=True, description="Slug of the campaign on the old test set."),
        OpenApiParameter("benchmark", str, required=True, description="The system run on both test sets."),
        OpenApiParameter("system", str, description="System of this campaign (default: its top-ranked)."),
        OpenApiParameter("against_system", str, description="System of the old campaign (default: its top)."),
        WORKERS_PARAMETER], responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], pagination_class=None, filterset_fields=None)
    def calibration(self, request, slug=None):
        """Test-set difficulty calibration against an older campaign sharing a benchmark system (000 §4)."""
        campaign = self.get_object()
        params = request.query_params
        workers = self._workers_filter(request)
        old = Campaign.objects.filter(slug=params.get("against", "")).first()
        if old is None or workers is None or not params.get("benchmark"):
            return bad_request("give against=<campaign slug>, benchmark=<system> and workers=reliable|all")

        def top(c):
            row = SystemResult.objects.filter(campaign=c, workers=workers, is_reference=False).exclude(
                system=params["benchmark"]).order_by("rank").first()
            return row.system if row else ""
        try:
            body = calibration(campaign, old, params["benchmark"], params.get("system") or top(campaign),
                               params.get("against_system") or top(old), workers)
        except CalibrationError as exc:
            return bad_request(str(exc))
        return Response(body)
