"""The results side of the researcher REST API (docs/api.md); the campaigns themselves are annotation's
(annotation/api/). Results are answered by the campaign's family (evaluation/families/): `systems/` and `workers/`
by every family, other tables at `/api/campaigns/<slug>/<table>/` by those that offer them."""
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from kombu.exceptions import OperationalError
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.parsers import FormParser, JSONParser
from rest_framework.response import Response

from annotation.api.campaigns import VisibleCampaigns
from annotation.api.responses import bad_request, queue_unavailable
from annotation.api.schema import ERROR
from annotation.api.serializers import WorkerRef
from annotation.models import Campaign
from config.csv_export import csv_response

from ..families import BadQuery, all_endpoints, family_of
from ..models import WorkerGate
from ..parts import PARTS, parts_of
from ..presenters.common import APPROVAL_COLUMNS, tables_of
from ..presets import settings_notices
from ..services import reference_ranking as reference
from ..services.crowd import approval_suggestions, cost_report
from ..services.gates import active_gate, lift
from ..services.results_read import freshness
from ..tasks import compute_campaign_results
from .stability import StabilityActions

WORKERS_PARAMETER = OpenApiParameter("workers", str, enum=["reliable", "all"], default="reliable",
                                     description="Reliable workers only (docs/methods.md §4), or everyone.")


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


class CampaignResultsViewSet(StabilityActions, VisibleCampaigns):
    """A campaign's results under `/api/campaigns/<slug>/`: compute, workers, systems, tables and the family's own,
    gates, costs, approvals, the reference ranking and stability. The campaign itself (list, detail, import,
    status, sharing, blocking, stages, judgments) is annotation's (annotation/api/campaigns.py)."""

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
        family = family_of(campaign)
        return self._answer(lambda: with_notices(family.systems(campaign, request.query_params),
                                                 settings_notices(campaign, family.name)))

    @extend_schema(responses=OpenApiTypes.OBJECT)
    @action(detail=True, methods=["get"], pagination_class=None, filterset_fields=None)
    def tables(self, request, slug=None):
        """The campaign's downloadable tables: names and the formats each is offered in."""
        campaign = self.get_object()
        base = request.build_absolute_uri(f"/api/campaigns/{campaign.slug}/tables/")
        return Response({"tables": [{"name": t.name, "csv": f"{base}{t.name}/?format=csv",
                                     "latex": f"{base}{t.name}/?format=latex" if t.latex else None}
                                    for t in tables_of(family_of(campaign), parts_of(campaign), campaign).values()]})

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
        part = PARTS.get(endpoint)
        if handler is None and part is not None:  # a result part (instruction following), where it applies
            if part not in parts_of(campaign):
                return bad_request(f"this campaign has no {part.label.lower()} results (docs/api.md lists when "
                                   "they apply)")
            handler = part.answer
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
        hidden = set(named.values()) - set(Campaign.objects.visible_to(self.request.user)
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


def with_notices(answer: dict, notices: list[dict]) -> dict:
    """`systems/`'s answer with `notices` (evaluation.presets.settings_notices) when there are any."""
    return {**answer, "notices": notices} if notices else answer
