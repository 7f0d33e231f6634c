"""The campaign API (docs/api.md §4-§6): campaigns listed and shown, imported (annotation/api/imports.py), opened,
paused and closed, shared, with workers blocked, later stages built and judgments exported. The results of a
campaign are the evaluation app's, under the same URLs (evaluation/views/api.py)."""
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import mixins, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response

from ..extensions import results_source
from ..models import Annotator, Campaign
from ..permissions import CAN_SHARE, CAN_USE, ExplainsDenials
from ..protocols.options import OptionError
from ..services import assignment as assigning
from ..services.campaign_options import apply_options, parse_change, stored_values
from ..services.export import EXPORT_FORMATS, as_csv, as_json, columns_for, export_format_problem, judgment_rows
from ..services.lifecycle import set_status
from ..services.parquet_export import CONTENT_TYPE as PARQUET
from ..services.parquet_export import as_parquet
from ..services.progress import campaign_counts
from .imports import ImportActions
from .responses import bad_request
from .serializers import CampaignSerializer, OptionsChange, ShareChange, StatusChange, WorkerRef


def sharing(campaign) -> dict:
    return {"campaign": campaign.slug, "owner": campaign.owner.get_username() if campaign.owner else None,
            "users": sorted(u.get_username() for u in campaign.shared_with.all()),
            "groups": sorted(campaign.shared_with_groups.values_list("name", flat=True))}


class VisibleCampaigns(ExplainsDenials, viewsets.GenericViewSet):
    """A view set over the campaigns the user may see (annotation/ownership.py): any other is not found. The
    campaign API below and the evaluation app's results actions (evaluation/views/api.py) both build on it, so a
    campaign is found, filtered and shown the same way under every `/api/campaigns/<slug>/…` route."""

    queryset = Campaign.objects.select_related("study").order_by("-created_at")
    serializer_class = CampaignSerializer
    lookup_field = "slug"
    parser_classes = [MultiPartParser, FormParser]
    filterset_fields = ["protocol", "status", "analysis_only"]
    permission_classes = [CAN_USE]

    def get_queryset(self):
        return results_source().with_results(super().get_queryset()).visible_to(self.request.user)

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


class CampaignViewSet(ImportActions, mixins.ListModelMixin, mixins.RetrieveModelMixin, VisibleCampaigns):
    """Campaigns with their settings, progress counts and results: those the user owns or that are shared with
    them (superusers: all); any other campaign is not found (annotation/ownership.py)."""

    def get_parsers(self):
        if getattr(self, "action", None) == "partial_update" or self.request is not None and \
                self.request.method == "PATCH":
            return [JSONParser()]
        return super().get_parsers()

    @extend_schema(request=OptionsChange, responses=OpenApiTypes.OBJECT)
    def partial_update(self, request, slug=None):
        """Change the campaign's statistics options (`Protocol.analysis_options`: preset, test, weights, …) and
        queue a recompute: `{"options": {...}}`. A bad option is a 400 naming it, and nothing changes."""
        campaign = self.get_object()
        form = OptionsChange(data=request.data)
        form.is_valid(raise_exception=True)
        try:
            parsed = parse_change(campaign, form.validated_data["options"])
        except OptionError as exc:
            detail: dict[str, list[str]] = {}
            for name, reason in exc.errors:
                detail.setdefault(name, []).append(reason)
            return Response({"options": detail}, status=400)
        changed = apply_options(campaign, parsed)
        queued = results_source().recompute(campaign) if changed else False
        return Response({"campaign": campaign.slug, "options": stored_values(campaign), "changed": changed,
                         "recompute_queued": queued})

    @extend_schema(request=None, responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["post"], url_path="build-stages")
    def build_stages(self, request, slug=None):
        """Build the HITs of the later stages this campaign feeds from its finished output so far (they are also
        built by themselves as output arrives): `{"built": {"<stage slug>": <new HITs>}}`."""
        from ..services.stages import build_stages

        campaign = self.get_object()
        built = build_stages(campaign)
        if not built:
            return bad_request("this campaign feeds no later stage")
        return Response({"built": built})

    @extend_schema(request=OpenApiTypes.OBJECT, responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["post"], url_path="add-stages", parser_classes=[JSONParser])
    def add_stages(self, request, slug=None):
        """Add the later stages the protocol declares for the options given to a campaign that has none, e.g. the
        review stage of imported MQM judgments (`{"review": "judges", "reviewers": 2}`): 201 with
        `{"stages": [{"campaign", "stage", "protocol", "hits"}]}`; 400 naming a bad option, or when the campaign
        already feeds a stage or the options ask for none."""
        from ..services.stages import StagesRefused, add_stages

        campaign = self.get_object()
        if not isinstance(request.data, dict):
            return bad_request("give the stage options as a JSON object")
        try:
            created = add_stages(campaign, dict(request.data))
        except OptionError as exc:
            detail: dict[str, list[str]] = {}
            for name, reason in exc.errors:
                detail.setdefault(name, []).append(reason)
            return Response({"options": detail}, status=400)
        except StagesRefused as exc:
            return bad_request(str(exc))
        return Response({"stages": [{"campaign": s.slug, "stage": s.stage_name, "protocol": s.protocol,
                                     "hits": s.hits.count()} for s in created]}, status=201)

    @extend_schema(parameters=[OpenApiParameter("format", str, enum=["csv", "json", "parquet", *EXPORT_FORMATS],
                                                default="csv")],
                   responses={(200, "text/csv"): OpenApiTypes.STR,
                              (200, "application/json"): {"type": "array", "items": {"type": "object"}},
                              (200, "text/tab-separated-values"): OpenApiTypes.STR,
                              (200, "application/x-ndjson"): OpenApiTypes.STR,
                              (200, PARQUET): OpenApiTypes.BINARY})
    @action(detail=True, methods=["get"], pagination_class=None, filterset_fields=None)
    def judgments(self, request, slug=None):
        """Every judgment of the campaign, streamed as CSV (default) or a JSON array, with z-scores; an error-span
        campaign also as mqm-tsv (MQM) or esa-jsonl (ESA, contrastive ESA), the layouts it is imported in."""
        campaign = self.get_object()
        fmt = request.query_params.get("format", "csv")
        if fmt in EXPORT_FORMATS:
            problem = export_format_problem(campaign, fmt)
            if problem:
                return bad_request(problem)
            declared = EXPORT_FORMATS[fmt]
            response = StreamingHttpResponse(declared.writer(campaign), content_type=declared.content_type)
            response["Content-Disposition"] = f'attachment; filename="{campaign.slug}-judgments.{declared.suffix}"'
            return response
        if fmt not in ("csv", "json", "parquet"):
            return bad_request(f"format must be one of csv, json, parquet, {', '.join(EXPORT_FORMATS)}")
        rows = judgment_rows(campaign, results_source().standardisation(campaign))
        if fmt == "parquet":
            response = StreamingHttpResponse(as_parquet(rows, columns_for(campaign)), content_type=PARQUET)
            response["Content-Disposition"] = f'attachment; filename="{campaign.slug}-judgments.parquet"'
            return response
        if fmt == "json":
            return StreamingHttpResponse(as_json(rows), content_type="application/json")
        response = StreamingHttpResponse(as_csv(rows, columns_for(campaign)), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{campaign.slug}-judgments.csv"'
        return response

    @extend_schema(request=StatusChange, responses=CampaignSerializer)
    @action(detail=True, methods=["post"], parser_classes=[JSONParser, FormParser])
    def status(self, request, slug=None):
        """Publish (active), pause or close the campaign: its whole task, every stage of a multi-stage one."""
        campaign = self.get_object()
        form = StatusChange(data=request.data)
        form.is_valid(raise_exception=True)
        if campaign.analysis_only:
            return bad_request("analysis-only campaigns stay closed")
        set_status(campaign, form.validated_data["status"])
        return Response(self.get_serializer(campaign).data)

    def _worker(self, request) -> Annotator | None:
        form = WorkerRef(data=request.data)
        form.is_valid(raise_exception=True)
        return Annotator.objects.filter(external_id=form.validated_data["worker"]).first()

    @extend_schema(request=WorkerRef, responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["post"], parser_classes=[JSONParser, FormParser])
    def block(self, request, slug=None):
        """Keep a worker (external id) out of this campaign; their unfinished HITs end, judgments stay."""
        campaign = self.get_object()
        annotator = self._worker(request)
        if annotator is None:
            return bad_request("no worker with that id")
        ended = assigning.block(campaign, annotator)
        return Response({"worker": annotator.external_id, "blocked": True, "hits_ended": ended})

    @extend_schema(request=WorkerRef, responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["post"], parser_classes=[JSONParser, FormParser])
    def unblock(self, request, slug=None):
        campaign = self.get_object()
        annotator = self._worker(request)
        if annotator is None:
            return bad_request("no worker with that id")
        assigning.unblock(campaign, annotator)
        return Response({"worker": annotator.external_id, "blocked": False})

    @extend_schema(request=ShareChange, responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["post"], parser_classes=[JSONParser, FormParser], permission_classes=[CAN_SHARE])
    def share(self, request, slug=None):
        """Share the campaign with researchers (by user name) and groups (by name): they see and act on it as its
        owner does, but only the owner (or a superuser) shares. Answers who has it now."""
        return self._change_sharing(request, add=True)

    @extend_schema(request=ShareChange, responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["post"], parser_classes=[JSONParser, FormParser], permission_classes=[CAN_SHARE])
    def unshare(self, request, slug=None):
        """Take the share back from these users and groups."""
        return self._change_sharing(request, add=False)

    def _change_sharing(self, request, add: bool) -> Response:
        campaign = self.get_object()
        form = ShareChange(data=request.data)
        form.is_valid(raise_exception=True)
        names, group_names = set(form.validated_data["users"]), set(form.validated_data["groups"])
        users = list(get_user_model().objects.filter(**{f"{get_user_model().USERNAME_FIELD}__in": names}))
        groups = list(Group.objects.filter(name__in=group_names))
        unknown = sorted(names - {u.get_username() for u in users}) + sorted(group_names - {g.name for g in groups})
        if unknown:
            return bad_request("no user or group called: " + ", ".join(unknown))
        if add:
            campaign.shared_with.add(*users)
            campaign.shared_with_groups.add(*groups)
        else:
            campaign.shared_with.remove(*users)
            campaign.shared_with_groups.remove(*groups)
        return Response(sharing(campaign))
