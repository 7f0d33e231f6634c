"""Direct Assessment results (docs/methods.md §4-§6): worker reliability, z-scores, system rankings with
and without quality control, the significance matrix, agreement and test-set calibration."""
from __future__ import annotations

from collections.abc import Mapping

from ...models import CampaignResults
from ...services.results_read import freshness
from .. import register
from ..base import BadQuery, Family, Table
from . import presenter, presets  # noqa: F401  (registers the family's statistics presets)
from .calibration import CalibrationError, calibration, compare_context, ranked_systems, top_system
from .models import SignificanceResult, SystemResult
from .serializers import SystemResultSerializer
from .storage import compute_da, compute_study

WORKER_FILTERS = ("reliable", "all")


def _workers_param(params: Mapping[str, str]) -> str:
    value = params.get("workers", "reliable")
    if value not in WORKER_FILTERS:
        raise BadQuery("workers must be reliable or all")
    return value


class DirectAssessmentFamily(Family):
    name = "direct-assessment"
    label = "Direct Assessment"
    template = "evaluation/families/direct_assessment.html"
    sections = (("workers", "Workers"), ("systems", "System ranking"), ("significance", "Significance"),
                ("agreement", "Agreement"))
    endpoints = ("significance", "agreement", "calibration")
    calibrates = True

    def compute(self, campaign):
        return compute_da(campaign)

    def compute_study(self, campaigns):
        return compute_study(campaigns)

    def systems(self, campaign, params):
        workers = _workers_param(params)
        rows = SystemResult.objects.filter(campaign=campaign, workers=workers).order_by("rank", "system")
        header = CampaignResults.objects.filter(campaign=campaign).only("summary").first()
        return {**freshness(campaign).as_api(), "workers": workers,
                "conventions": (header.summary.get("conventions") if header else None),
                "results": SystemResultSerializer(rows, many=True).data}

    def significance(self, campaign, params):
        """One-sided Wilcoxon rank-sum p-values between systems, in rank order; p[i][j]: i better than j."""
        workers = _workers_param(params)
        matrix = SignificanceResult.objects.filter(campaign=campaign, workers=workers).first()
        body = {"systems": matrix.systems, "p_values": matrix.p_values, "stars": matrix.stars} if matrix else {
            "systems": [], "p_values": [], "stars": []}
        return {**freshness(campaign).as_api(), "workers": workers, **body}

    def calibration(self, campaign, params):
        """Test-set difficulty calibration against an older campaign (`against`) sharing a `benchmark` system."""
        from annotation.models import Campaign

        old = Campaign.objects.filter(slug=params.get("against", "")).first()
        workers = params.get("workers", "reliable")
        if old is None or workers not in WORKER_FILTERS or not params.get("benchmark"):
            raise BadQuery("give against=<campaign slug>, benchmark=<system> and workers=reliable|all")
        benchmark = params["benchmark"]
        names = ranked_systems([campaign, old], workers)
        try:
            return calibration(campaign, old, benchmark, params.get("system") or top_system(names[campaign.pk],
                                                                                           benchmark),
                               params.get("against_system") or top_system(names[old.pk], benchmark), workers)
        except CalibrationError as exc:
            raise BadQuery(str(exc)) from None

    def compare_context(self, params, candidates):
        return compare_context(params, candidates)

    def page_context(self, campaign, header, workers, request):
        return presenter.page_context(campaign, header, workers)

    def tables(self):
        return [Table("workers", self.workers_table),
                Table("systems", presenter.systems_table, latex=presenter.systems_latex),
                Table("significance", presenter.significance_table),
                Table("agreement", presenter.agreement_table)]

    def admin_inlines(self):
        from .admin import SystemInline

        return [SystemInline]


register(DirectAssessmentFamily())
