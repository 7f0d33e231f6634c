"""Studies in the researcher API and on the results pages: their campaigns and the workers' pooled verdicts.

A researcher sees the studies they own or that are shared with them, and in a study only the campaigns they may
see (annotation/ownership.py)."""
from django.db.models import Prefetch, Sum
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.response import Response

from annotation.models import Campaign, Study
from annotation.permissions import CAN_USE, ExplainsDenials, researcher_required

from .. import charts
from ..models import WorkerResult
from ..services.studies import study_overview


def visible_overview(study: Study, user) -> dict:
    """`study_overview` with the study's campaigns that `user` may not see left out: their columns, the workers
    seen only there, and those campaigns' judgments in the workers' totals (the pooled verdicts stay as computed,
    over the whole study)."""
    overview = study_overview(study)
    members = Campaign.objects.filter(study=study)  # not study.campaigns: the view set prefetches only visible ones
    shown = set(members.visible_to(user).values_list("slug", flat=True))
    hidden = set(members.values_list("slug", flat=True)) - shown
    if not hidden:
        return overview
    elsewhere = dict(WorkerResult.objects.filter(campaign__study=study, campaign__slug__in=hidden)
                     .values("worker").annotate(n=Sum("judgments")).values_list("worker", "n"))
    workers = []
    for row in overview["workers"]:
        cells = {slug: cell for slug, cell in row["campaigns"].items() if slug in shown}
        if cells:
            workers.append({**row, "campaigns": cells, "judgments": row["judgments"] - (elsewhere.get(row["worker"])
                                                                                         or 0)})
    return {**overview, "campaigns": [c for c in overview["campaigns"] if c["slug"] in shown], "workers": workers}


class StudySerializer(serializers.ModelSerializer):
    campaigns = serializers.SlugRelatedField(slug_field="slug", many=True, read_only=True)

    class Meta:
        model = Study
        fields = ["slug", "name", "created_at", "campaigns"]


class StudyViewSet(ExplainsDenials, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Studies: groups of campaigns judged by one crowd, whose workers are tested over all of them."""

    queryset = Study.objects.order_by("name")
    serializer_class = StudySerializer
    lookup_field = "slug"
    permission_classes = [CAN_USE]

    def get_queryset(self):
        campaigns = Campaign.objects.visible_to(self.request.user).order_by("name")
        return super().get_queryset().visible_to(self.request.user).prefetch_related(
            Prefetch("campaigns", queryset=campaigns))

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def retrieve(self, request, slug=None):
        """The study's campaigns and, per worker, the verdict, p-value and pairs in each campaign (the campaigns
        the user may see)."""
        return Response(visible_overview(self.get_object(), request.user))


@require_GET
@researcher_required
def study_page(request, slug: str):
    study = get_object_or_404(Study.objects.visible_to(request.user), slug=slug)
    overview = visible_overview(study, request.user)
    for row in overview["workers"]:
        row["cells"] = [row["campaigns"].get(c["slug"]) for c in overview["campaigns"]]
        for cell in filter(None, row["cells"]):
            cell["p_text"] = charts.format_p(cell["p_value"])
    return render(request, "evaluation/study.html", {"study": study, **overview})
