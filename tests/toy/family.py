"""The toy thumbs protocol's result family: per system, the share of thumbs up with its Wilson score interval
(evaluation.stats.comprehension.wilson_interval), stored as the `systems` table and shown on the results page by
templates/toy/thumbs_results.html. The settings name `FAMILY` (tests.toy.family.FAMILY)."""
from __future__ import annotations

from django.db.models import Count, Q

from annotation.models import Judgment
from evaluation.families import Family, Table
from evaluation.services.latex import booktabs
from evaluation.services.results_read import stored_rows
from evaluation.services.storing import replace_results
from evaluation.stats.comprehension import wilson_interval


class ThumbsFamily(Family):
    name = "toy-thumbs"
    label = "Toy thumbs"
    template = "toy/thumbs_results.html"
    sections = (("toy-thumbs", "Thumbs up"),)

    def compute(self, campaign):
        counts = list(Judgment.objects.filter(campaign=campaign, item__item_type="system")
                      .values("item__output__system__name")
                      .annotate(n=Count("id"), up=Count("id", filter=Q(choice="up")))
                      .order_by("item__output__system__name"))
        if not counts:
            return None
        low, high = wilson_interval([c["up"] for c in counts], [c["n"] for c in counts])
        rows = [{"system": c["item__output__system__name"], "score": round(100 * c["up"] / c["n"], 6),
                 "score_name": "thumbs_up_percent", "n": c["n"], "low": round(100 * float(lo), 6),
                 "high": round(100 * float(hi), 6)} for c, lo, hi in zip(counts, low, high, strict=True)]
        rows.sort(key=lambda r: (-r["score"], r["system"]))
        for rank, row in enumerate(rows, 1):
            row.update(rank=rank, rank_range=[rank, rank], cluster=rank)
        judgments = sum(c["n"] for c in counts)
        return replace_results(campaign, {}, {"seconds": 0.0, "judgments": judgments, "summary": {}},
                               tables={"systems": rows})

    def page_context(self, campaign, header, workers, request) -> dict:
        return {"thumbs_rows": stored_rows(campaign, "systems")}

    def tables(self) -> list[Table]:
        def latex(campaign, params):
            return booktabs([("System", "system", "l"), ("Thumbs up (%)", "score", "r"), ("Low", "low", "r"),
                             ("High", "high", "r")], stored_rows(campaign, "systems"))
        return [Table("workers", self.workers_table), Table("systems", self.stored_table("systems"), latex=latex)]


FAMILY = ThumbsFamily()
