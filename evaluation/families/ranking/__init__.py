"""Relative ranking results (docs/methods.md §8): pairwise expansion, ≥ others, > others, expected wins and
TrueSkill with bootstrap rank ranges and clusters; gold accuracy and trust; Schulze combination with weighted
votes; inter- and intra-annotator agreement in WMT's two pairings; Spearman's rho against a reference; its
outcomes are battles for the Bradley–Terry leaderboard (§8.8)."""
from __future__ import annotations

from ...services.results_read import freshness, stored_rows
from ..base import Family, Offers, Table
from . import bootstrap, presenter  # noqa: F401  (bootstrap registers its Celery task with every worker)
from .analysis import SCORE_NAMES
from .bootstrap import ranking_battles
from .storage import compute_ranking


class RankingFamily(Family):
    name = "ranking"
    label = "Relative ranking"
    template = "evaluation/families/ranking.html"
    sections = (("systems", "System scores"), ("head-to-head", "Head to head"), ("workers", "Workers and gold"),
                ("agreement", "Agreement"), ("combined", "Combined judges"), ("spearman", "Against a reference"))
    endpoints = ("agreement", "head_to_head", "combined", "gold", "spearman")
    offers = Offers(reference_ranking=True, parts=(*Offers().parts, "bradley_terry"))

    def compute(self, campaign):
        return compute_ranking(campaign)

    def battles(self, campaign, last_id):
        """The counted pairwise outcomes of the rankings, for the Bradley–Terry leaderboard (§8.8)."""
        return ranking_battles(campaign, last_id)

    def systems(self, campaign, params):
        """`systems/?score=<name>`: one of expected_wins (default), expected_wins_compared, geq_others, gt_others,
        trueskill."""
        name = presenter.score_param(params)
        return {**freshness(campaign).as_api(), "score_name": name, "scores": list(SCORE_NAMES),
                "results": stored_rows(campaign, "systems", name)}

    def agreement(self, campaign, params):
        return {**freshness(campaign).as_api(), "results": stored_rows(campaign, "agreement")}

    def head_to_head(self, campaign, params):
        return {**freshness(campaign).as_api(), "results": stored_rows(campaign, "head_to_head")}

    def combined(self, campaign, params):
        return {**freshness(campaign).as_api(), "results": stored_rows(campaign, "combined")}

    def gold(self, campaign, params):
        return {**freshness(campaign).as_api(), "results": stored_rows(campaign, "gold")}

    def spearman(self, campaign, params):
        return {**freshness(campaign).as_api(), "reference": (campaign.options or {}).get("reference_ranking"),
                "results": stored_rows(campaign, "spearman")}

    def page_context(self, campaign, header, workers, request):
        return presenter.page_context(campaign, header, workers, request)

    def tables(self):
        stored = self.stored_table
        return [Table("workers", self.workers_table),
                Table("systems", presenter.systems_table, presenter.systems_latex),
                Table("head_to_head", stored("head_to_head", presenter.HEAD_TO_HEAD_COLUMNS)),
                Table("gold", stored("gold", presenter.GOLD_COLUMNS)),
                Table("agreement", stored("agreement", presenter.AGREEMENT_COLUMNS)),
                Table("combined", stored("combined", presenter.COMBINED_COLUMNS)),
                Table("spearman", stored("spearman", presenter.SPEARMAN_COLUMNS))]

    def gate(self, campaign, annotator):
        """The live reliability gate on the worker's gold screens (gate.py, docs/methods.md §12.1)."""
        from .gate import gate

        return gate(campaign, annotator)

    def admin_summary(self, summary):
        if "reliable_workers" in summary:
            return f"{summary['reliable_workers']} / {summary['workers']} counted"
        return "–"


#: The family object `settings.MTEVAL_RESULT_FAMILIES` names.
FAMILY = RankingFamily()
