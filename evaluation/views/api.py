"""The researcher REST API (docs/api.md). Results are answered by the campaign's family (evaluation/families/):
`systems/` and `workers/` by every family, other tables at `/api/campaigns/<slug>/<table>/` by those that offer them."""
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.http import HttpResponse, StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from kombu.exceptions import OperationalError
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response

from annotation.models import Annotator, Campaign
from annotation.services import assignment as assigning
from annotation.services.lifecycle import set_status
from annotation.services.progress import campaign_counts

from ..families import BadQuery, all_endpoints, family_of
from ..models import WorkerGate
from ..permissions import CAN_SHARE, CAN_USE, ExplainsDenials, visible_campaigns
from ..presenters.common import APPROVAL_COLUMNS, tables_of
from ..schema import ERROR
from ..serializers import CampaignSerializer
from ..services import reference_ranking as reference
from ..services.crowd import approval_suggestions, cost_report
from ..services.csv_export import csv_response
from ..services.export import SPAN_FORMATS, as_csv, as_json, columns_for, judgment_rows, span_format_problem
from ..services.gates import active_gate, lift
from ..services.results_read import freshness, z_lookup
from ..tasks import compute_campaign_results
from .imports import ImportActions
from .stability import StabilityActions
from .unavailable import queue_unavailable

WORKERS_PARAMETER = OpenApiParameter("workers", str, enum=["reliable", "all"], default="reliable",
                                     description="Reliable workers only (docs/methods.md §4), or everyone.")


class StatusChange(serializers.Serializer):
    status = serializers.ChoiceField(choices=["active", "paused", "closed"])


class WorkerRef(serializers.Serializer):
    """A worker by external id (DRF's CharField refuses NUL bytes and lone surrogates)."""

    worker = serializers.CharField(max_length=255)


class ShareChange(serializers.Serializer):
    """Users (by user name) and groups (by name) to share a campaign with, or to take the share back from."""

    # 500 + 500: a form body holds at most DATA_UPLOAD_MAX_NUMBER_FIELDS (1,000) fields.
    users = serializers.ListField(child=serializers.CharField(max_length=150), required=False, default=list,
                                  max_length=500)
    groups = serializers.ListField(child=serializers.CharField(max_length=150), required=False, default=list,
                                   max_length=500)

    def validate(self, attrs):
        if not attrs["users"] and not attrs["groups"]:
            raise serializers.ValidationError("name users, groups or both")
        return attrs


class ReferenceRanking(serializers.Serializer):
    """A reference ranking of the campaign's systems (experts' ranks, a metric's scores) for Spearman's rho
    (docs/methods.md §8.5): `kind` says whether higher is better ("score") or 1 is best ("rank")."""

    kind = serializers.ChoiceField(choices=reference.KINDS)
    values = serializers.DictField(child=serializers.FloatField(min_value=-reference.LIMIT,
                                                                max_value=reference.LIMIT), allow_empty=False)

    def validate(self, attrs):
        found = reference.problems(self.context["campaign"], attrs["kind"], attrs["values"])
        if found:
            raise serializers.ValidationError({"values": found})
        return attrs


#: Query parameters that name another campaign (calibration's `against`): one the user may not see is answered
#: as a campaign that does not exist.
CAMPAIGN_PARAMETERS = ("against",)


def bad_request(detail: str) -> Response:
    return Response({"detail": detail}, status=status.HTTP_400_BAD_REQUEST)


def sharing(campaign) -> dict:
    return {"campaign": campaign.slug, "owner": campaign.owner.get_username() if campaign.owner else None,
            "users": sorted(u.get_username() for u in campaign.shared_with.all()),
            "groups": sorted(campaign.shared_with_groups.values_list("name", flat=True))}


class CampaignViewSet(ExplainsDenials, ImportActions, StabilityActions, mixins.ListModelMixin,
                      mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Campaigns with their settings, progress counts and results: those the user owns or that are shared with
    them (superusers: all); any other campaign is not found (evaluation/permissions.py)."""

    queryset = (Campaign.objects.select_related("results", "study")
                .defer("results__translations", "results__agreement", "results__summary").order_by("-created_at"))
    serializer_class = CampaignSerializer
    lookup_field = "slug"
    parser_classes = [MultiPartParser, FormParser]
    filterset_fields = ["protocol", "status", "analysis_only"]
    permission_classes = [CAN_USE]

    def get_queryset(self):
        return visible_campaigns(self.request.user, super().get_queryset())

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

    @extend_schema(request=None, responses={202: inline_serializer("ComputeQueued", {"task": serializers.CharField()}),
                                            503: OpenApiTypes.OBJECT})
    @action(detail=True, methods=["post"])
    def compute(self, request, slug=None):
        """Queue the statistics for this campaign on the Celery workers."""
        campaign = self.get_object()
        try:
            task = compute_campaign_results.apply_async((campaign.pk,), retry=False)
        except OperationalError as exc:  # the broker cannot be reached (config/celery.py's GuardedTask)
            return queue_unavailable(f"The task queue is unavailable ({exc.__class__.__name__}); the results "
                                     "will be computed when it is back: try again later.")
        return Response({"task": task.id}, status=status.HTTP_202_ACCEPTED)

    @extend_schema(request=None, responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["post"], url_path="build-stages")
    def build_stages(self, request, slug=None):
        """Build the HITs of the later stages this campaign feeds from its finished output so far (they are also
        built by themselves as output arrives): `{"built": {"<stage slug>": <new HITs>}}`."""
        from annotation.services.stages import build_stages

        campaign = self.get_object()
        built = build_stages(campaign)
        if not built:
            return bad_request("this campaign feeds no later stage")
        return Response({"built": built})

    @extend_schema(request=ReferenceRanking, responses={200: OpenApiTypes.OBJECT})  # DELETE answers 200 too
    @action(detail=True, methods=["get", "post", "delete"], url_path="reference-ranking", parser_classes=[JSONParser])
    def reference_ranking(self, request, slug=None):
        """The reference ranking the results are correlated with (Spearman's rho): read, set or remove it. A change
        queues a recompute."""
        campaign = self.get_object()
        options = campaign.options or {}
        if request.method == "GET":
            return Response({"kind": options.get("reference_kind"), "values": options.get("reference_ranking")})
        if request.method == "POST":
            given = ReferenceRanking(data=request.data, context={"campaign": campaign})
            given.is_valid(raise_exception=True)
            reference.store(campaign, given.validated_data["kind"], given.validated_data["values"])
        else:
            reference.store(campaign, None, None)
        options = campaign.options
        queued = True
        try:
            compute_campaign_results.apply_async((campaign.pk,), retry=False)
        except OperationalError:
            queued = False
        return Response({"kind": options.get("reference_kind"), "values": options.get("reference_ranking"),
                         "recompute_queued": queued})

    @extend_schema(parameters=[OpenApiParameter("format", str, enum=["csv", "json", *SPAN_FORMATS], default="csv")],
                   responses={(200, "text/csv"): OpenApiTypes.STR,
                              (200, "application/json"): {"type": "array", "items": {"type": "object"}},
                              (200, "text/tab-separated-values"): OpenApiTypes.STR,
                              (200, "application/x-ndjson"): OpenApiTypes.STR})
    @action(detail=True, methods=["get"], pagination_class=None, filterset_fields=None)
    def judgments(self, request, slug=None):
        """Every judgment of the campaign, streamed as CSV (default) or a JSON array, with z-scores; an error-span
        campaign also as mqm-tsv (MQM) or esa-jsonl (ESA, contrastive ESA), the layouts it is imported in."""
        campaign = self.get_object()
        fmt = request.query_params.get("format", "csv")
        if fmt in SPAN_FORMATS:
            problem = span_format_problem(campaign, fmt)
            if problem:
                return bad_request(problem)
            _, writer, content_type, suffix = SPAN_FORMATS[fmt]
            response = StreamingHttpResponse(writer(campaign), content_type=content_type)
            response["Content-Disposition"] = f'attachment; filename="{campaign.slug}-judgments.{suffix}"'
            return response
        if fmt not in ("csv", "json"):
            return bad_request(f"format must be one of csv, json, {', '.join(SPAN_FORMATS)}")
        rows = judgment_rows(campaign, z_lookup(campaign))
        if fmt == "json":
            return StreamingHttpResponse(as_json(rows), content_type="application/json")
        response = StreamingHttpResponse(as_csv(rows, columns_for(campaign)), content_type="text/csv; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{campaign.slug}-judgments.csv"'
        return response

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], pagination_class=None, filterset_fields=None)
    def workers(self, request, slug=None):
        """Per worker: HITs, judgments, quality-control pairs, p-value, reliable, mean seconds (docs/methods.md §4)."""
        campaign = self.get_object()
        return self._answer(lambda: family_of(campaign).workers(campaign, request.query_params))

    @extend_schema(parameters=[WORKERS_PARAMETER], responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], pagination_class=None, filterset_fields=None)
    def systems(self, request, slug=None):
        """Per system: score, score name, rank and cluster, plus the family's own columns (docs/api.md)."""
        campaign = self.get_object()
        if request.query_params.get("workers", "reliable") not in WORKERS_PARAMETER.enum:  # every family, as documented
            return bad_request("workers must be reliable or all")
        return self._answer(lambda: family_of(campaign).systems(campaign, request.query_params))

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], pagination_class=None, filterset_fields=None)
    def tables(self, request, slug=None):
        """The campaign's downloadable tables: names and the formats each is offered in."""
        campaign = self.get_object()
        base = request.build_absolute_uri(f"/api/campaigns/{campaign.slug}/tables/")
        return Response({"tables": [{"name": t.name, "csv": f"{base}{t.name}/?format=csv",
                                     "latex": f"{base}{t.name}/?format=latex" if t.latex else None}
                                    for t in tables_of(family_of(campaign)).values()]})

    @extend_schema(operation_id="campaigns_table", parameters=[
        OpenApiParameter("name", str, OpenApiParameter.PATH, description="A table named by `tables/`."),
        OpenApiParameter("format", str, enum=["csv", "latex", "json"], default="csv")],
                   responses={(200, "text/csv"): OpenApiTypes.STR, (200, "application/x-tex"): OpenApiTypes.STR,
                              (200, "application/json"): OpenApiTypes.OBJECT})
    def table(self, request, slug=None, name=None):
        """One result table as CSV (the page's download), LaTeX (booktabs, where offered) or JSON rows."""
        campaign = self.get_object()
        spec = tables_of(family_of(campaign)).get(name)
        if spec is None:
            raise NotFound(f"this campaign has no table called {name!r}")
        fmt = request.query_params.get("format", "csv")
        if fmt == "latex" and spec.latex is not None:
            return HttpResponse(spec.latex(campaign, request.query_params), content_type="application/x-tex")
        if fmt not in ("csv", "json"):
            return bad_request("format must be csv or json" + (", or latex" if spec.latex else ""))
        columns, rows = spec.rows(campaign, request.query_params)
        if fmt == "json":
            return Response({"columns": columns, "rows": [{c: row.get(c) for c in columns} for row in rows]})
        return csv_response(f"{campaign.slug}-{spec.name}.csv", columns, rows)

    @extend_schema(operation_id="campaigns_family_result", parameters=[OpenApiParameter("endpoint", str,
                                                                                        OpenApiParameter.PATH,
                                                description="A table of the campaign's family: "
                                                            "significance, agreement, calibration, pairwise, …")],
                   responses={200: OpenApiTypes.OBJECT, 400: ERROR})
    def family_result(self, request, slug=None, endpoint=None):
        """A result table that only some families offer (docs/api.md lists them per family)."""
        campaign = self.get_object()
        family = family_of(campaign)
        handler = family.endpoint(endpoint)
        if handler is None:
            if endpoint in all_endpoints():
                return bad_request(f"a {family.label or 'campaign without statistics'} campaign has no "
                                   f"{endpoint} results")
            raise NotFound(f"no results called {endpoint!r}")
        params = self._visible_params(request.query_params)
        return self._answer(lambda: handler(campaign, params))

    def _visible_params(self, params):
        """The query with any other campaign the user may not see blanked, so that it is answered exactly as a
        slug that names no campaign."""
        named = {key: params[key] for key in CAMPAIGN_PARAMETERS if params.get(key)}
        hidden = set(named.values()) - set(visible_campaigns(self.request.user)
                                           .filter(slug__in=named.values()).values_list("slug", flat=True))
        if not hidden:
            return params
        params = params.copy()
        for key, slug in named.items():
            if slug in hidden:
                params[key] = ""
        return params

    @staticmethod
    def _answer(compute) -> Response:
        try:
            return Response(compute())
        except BadQuery as exc:
            return bad_request(str(exc))

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

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], pagination_class=None, filterset_fields=None)
    def gates(self, request, slug=None):
        """The workers the live reliability gate stopped (docs/methods.md §12.1), newest first, lifted ones too."""
        campaign = self.get_object()
        rows = WorkerGate.objects.filter(campaign=campaign).select_related("annotator__user").order_by(
            "-created_at", "-pk")
        return Response({"gate": bool((campaign.options or {}).get("gate")), "results": [{
            "worker": g.annotator.label, "reason": g.reason, "rule": g.rule, "test": g.test, "p_value": g.p_value,
            "pairs": g.pairs, "missed_share": g.missed_share, "created_at": g.created_at, "lifted_at": g.lifted_at,
        } for g in rows]})

    @extend_schema(request=WorkerRef, responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["post"], url_path="gates/lift", parser_classes=[JSONParser, FormParser])
    def lift_gate(self, request, slug=None):
        """Lift a worker's gate: they are unblocked and the gate is not applied to them again here."""
        campaign = self.get_object()
        form = WorkerRef(data=request.data)
        form.is_valid(raise_exception=True)
        gate = active_gate(campaign, form.validated_data["worker"])
        if gate is None:
            return bad_request("no gated worker with that id in this campaign")
        lift(campaign, gate, request.user)
        return Response({"worker": gate.annotator.label, "lifted_at": gate.lifted_at})

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], pagination_class=None, filterset_fields=None)
    def costs(self, request, slug=None):
        """Payment per HIT × HITs paid, per system, and the share spent on unreliable workers (docs/methods.md §10)."""
        campaign = self.get_object()
        return Response({**freshness(campaign).as_api(), **cost_report(campaign)})

    @extend_schema(parameters=[OpenApiParameter("format", str, enum=["json", "csv"], default="json")],
                   responses={(200, "application/json"): OpenApiTypes.OBJECT, (200, "text/csv"): OpenApiTypes.STR})
    @action(detail=True, methods=["get"], pagination_class=None, filterset_fields=None)
    def approvals(self, request, slug=None):
        """Per worker an approve/reject suggestion: reject only clear random clicking (docs/methods.md §10)."""
        campaign = self.get_object()
        fmt = request.query_params.get("format", "json")
        if fmt not in ("json", "csv"):
            return bad_request("format must be json or csv")
        rows = approval_suggestions(campaign)
        if fmt == "csv":
            return csv_response(f"{campaign.slug}-approvals.csv", APPROVAL_COLUMNS, rows, stream=True)
        return Response({**freshness(campaign).as_api(), "results": rows})

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
