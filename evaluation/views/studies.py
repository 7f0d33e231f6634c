"""Studies in the researcher API and on the results pages: their campaigns and the workers' pooled verdicts."""
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework import mixins, serializers, viewsets
from rest_framework.response import Response

from annotation.models import Study

from .. import charts
from ..permissions import researcher_required
from ..services.studies import study_overview


class StudySerializer(serializers.ModelSerializer):
    campaigns = serializers.SlugRelatedField(slug_field="slug", many=True, read_only=True)

    class Meta:
        model = Study
        fields = ["slug", "name", "created_at", "campaigns"]


class StudyViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Studies: groups of campaigns judged by one crowd, whose workers are tested over all of them."""

    queryset = Study.objects.prefetch_related("campaigns").order_by("name")
    serializer_class = StudySerializer
    lookup_field = "slug"

    @extend_schema(responses=OpenApiTypes.OBJECT)
    def retrieve(self, request, slug=None):
        """The study's campaigns and, per worker, the verdict, p-value and pairs in each campaign."""
        return Response(study_overview(self.get_object()))


@require_GET
@researcher_required
def study_page(request, slug: str):
    study = get_object_or_404(Study, slug=slug)
    overview = study_overview(study)
    for row in overview["workers"]:
        row["cells"] = [row["campaigns"].get(c["slug"]) for c in overview["campaigns"]]
        for cell in filter(None, row["cells"]):
            cell["p_text"] = charts.format_p(cell["p_value"])
    return render(request, "evaluation/study.html", {"study": study, **overview})
