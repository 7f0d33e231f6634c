"""Pairwise ranking results (docs/methods.md §6-§7): preference counts per condition and rater, sign tests,
spam misses and rater exclusion, majority votes and agreement; its judgments are battles for the Bradley–Terry
leaderboard (§8.8), which gives an imported arena campaign its per-model strengths."""
from __future__ import annotations

from ...services.results_read import freshness
from ..base import Family, Offers, Table
from . import presenter
from .serializers import RaterSerializer
from .storage import compute_pairwise, pairwise_battles


class PairwiseFamily(Family):
    name = "pairwise"
    label = "Pairwise ranking"
    template = "evaluation/families/pairwise.html"
    sections = (("preferences", "Preferences"), ("workers", "Raters"), ("agreement", "Agreement"))
    endpoints = ("pairwise", "agreement")
    worker_table_serializer = RaterSerializer
    offers = Offers(parts=(*Offers().parts, "bradley_terry"))

    def compute(self, campaign):
        return compute_pairwise(campaign)

    def battles(self, campaign, last_id):
        """Each judgment a battle between the systems shown (an arena battle's models): for Bradley–Terry."""
        return pairwise_battles(campaign, last_id)

    def pairwise(self, campaign, params):
        """Per condition (criterion × unit), in total and per rater: a, b, t, the two-sided sign test
        (x = b, n = a + b; and Emerson-Simon), spam misses, majority vote and agreement."""
        return {**freshness(campaign).as_api(), **presenter.api_conditions(campaign)}

    def worker_rows(self, campaign):
        return presenter.rater_rows(campaign)

    def spam_miss_rates(self, campaign):
        record = presenter.spam_record(presenter.pairwise_rows(campaign))
        return {annotator: missed / seen for annotator, (seen, missed) in record.items() if seen}

    def page_context(self, campaign, header, workers, request):
        return presenter.page_context(campaign, header, workers)

    def missing(self, campaign, header):
        """The sign test needs a preference: none yet when every judgment of every condition is a tie or spam."""
        rows = presenter.pairwise_table(campaign, {})[1]
        if any((r.get("n") or 0) > 0 for r in rows):
            return []
        return [{"what": "preferences", "text": "no judgment prefers one system yet (ties and spam items do not "
                 "count): the sign test needs at least one preference per condition"}]

    def tables(self):
        return [Table("workers", self.workers_table), Table("agreement", presenter.agreement_table),
                Table("pairwise", presenter.pairwise_table, latex=presenter.pairwise_latex)]

    def admin_inlines(self):
        from .admin import PairwiseInline

        return [PairwiseInline]

    def admin_summary(self, summary):
        raters = summary.get("raters", 0)
        return f"{raters - summary.get('excluded_raters', 0)} / {raters}"


#: The family object `settings.MTEVAL_RESULT_FAMILIES` names.
FAMILY = PairwiseFamily()
