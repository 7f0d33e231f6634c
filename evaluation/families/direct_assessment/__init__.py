"""Direct Assessment results (docs/methods.md §4-§6): worker reliability, z-scores, system rankings with
and without quality control, the significance matrix, agreement and test-set calibration."""
from __future__ import annotations

from collections.abc import Mapping

from ...models import CampaignResults, SignificanceResult, SystemResult
from ...services.results_read import freshness
from ..base import BadQuery, Family, Offers, Table
from ..common.stability import answer as stability_answer
from ..common.stability import table_rows as stability_table
from . import presenter
from .calibration import CalibrationError, calibration, compare_context, ranked_systems, top_system
from .presets import PRESETS
from .serializers import SystemResultSerializer
from .storage import DOCUMENT_KEY, compute_da, compute_study

WORKER_FILTERS = ("reliable", "all")
UNITS = ("segment", "document")


def _workers_param(params: Mapping[str, str]) -> str:
    value = params.get("workers", "reliable")
    if value not in WORKER_FILTERS:
        raise BadQuery("workers must be reliable or all")
    return value


def _document_tables(campaign, params: Mapping[str, str]) -> dict | None:
    """The stored document-level tables when `unit=document` asks for them (document-level DA,
    docs/methods.md §1.1), None for the segment level (the default); a bad unit, or `document` for a campaign
    without document items, is a BadQuery."""
    unit = params.get("unit", "segment")
    if unit not in UNITS:
        raise BadQuery("unit must be segment or document")
    if unit == "segment":
        return None
    if not (campaign.options or {}).get("document_mode"):
        raise BadQuery("unit=document needs a campaign imported with document_mode")
    header = CampaignResults.objects.filter(campaign=campaign).only("summary").first()
    summary = header.summary if header else {}
    return {"conventions": summary.get("conventions"), **(summary.get(DOCUMENT_KEY) or {})}


class DirectAssessmentFamily(Family):
    name = "direct-assessment"
    label = "Direct Assessment"
    presets = PRESETS
    template = "evaluation/families/direct_assessment.html"
    sections = (("workers", "Workers"), ("systems", "System ranking"), ("significance", "Significance"),
                ("stability", "Ranking stability"), ("agreement", "Agreement"))
    endpoints = ("significance", "agreement", "calibration", "stability", "power")
    offers = Offers(power=True, calibration=True)

    def compute(self, campaign):
        return compute_da(campaign)

    def compute_study(self, campaigns):
        return compute_study(campaigns)

    def gate(self, campaign, annotator):
        """The live reliability gate on the worker's bad-reference pairs (gate.py, docs/methods.md §12.1)."""
        from .gate import gate

        return gate(campaign, annotator)

    stability_filters = WORKER_FILTERS

    def stability_data(self, campaign, workers, score, last_judgment_id):
        """The judgments the ranking counts, for the bootstrap over workers and segments (stability.py)."""
        from .stability import stability_data

        return stability_data(campaign, workers, score, last_judgment_id)

    def stability(self, campaign, params):
        """Ranking stability by bootstrap over workers and segments (common/stability.py, docs/methods.md §12.4)."""
        return stability_answer(campaign, self, params)

    def power(self, campaign, params):
        """Judgments, HITs and money needed to separate systems δ apart, from the campaign so far (power.py)."""
        from .power import power

        return power(campaign, params)

    def adaptive(self):
        """Adaptive allocation's view of this family (adaptive.py, docs/methods.md §12.2)."""
        from .adaptive import ADAPTIVE

        return ADAPTIVE

    def systems(self, campaign, params):
        workers = _workers_param(params)
        documents = _document_tables(campaign, params)
        if documents is not None:
            return {**freshness(campaign).as_api(), "workers": workers, "unit": "document",
                    "conventions": documents["conventions"],
                    "results": (documents.get(workers) or {}).get("results", [])}
        rows = SystemResult.objects.filter(campaign=campaign, workers=workers).order_by("rank", "system")
        header = CampaignResults.objects.filter(campaign=campaign).only("summary").first()
        return {**freshness(campaign).as_api(), "workers": workers,
                "conventions": (header.summary.get("conventions") if header else None),
                "results": SystemResultSerializer(rows, many=True).data}

    def significance(self, campaign, params):
        """One-sided Wilcoxon rank-sum p-values between systems, in rank order; p[i][j]: i better than j."""
        workers = _workers_param(params)
        documents = _document_tables(campaign, params)
        if documents is not None:
            stored = (documents.get(workers) or {}).get("significance") or {}
            return {**freshness(campaign).as_api(), "workers": workers, "unit": "document",
                    **{key: stored.get(key, []) for key in ("systems", "p_values", "stars")}}
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
                Table("agreement", presenter.agreement_table),
                Table("stability", stability_table)]

    def admin_inlines(self):
        from .admin import SystemInline

        return [SystemInline]


#: The family object `settings.MTEVAL_RESULT_FAMILIES` names.
FAMILY = DirectAssessmentFamily()
