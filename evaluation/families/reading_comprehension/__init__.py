"""Reading-comprehension results (docs/methods.md §9; Callison-Burch 2009 §5.3): per system the share of questions
answered correctly with its 95 % Wilson score interval (the human translation as a control row), rank ranges and
clusters; per question its votes, whether it was kept and its difficulty."""
from __future__ import annotations

from ...services.results_read import freshness, stored_rows
from .. import register
from ..base import Family, Table
from . import presenter
from .storage import compute_reading_comprehension, root_of


class ReadingComprehensionFamily(Family):
    name = "reading-comprehension"
    label = "Reading comprehension"
    template = "evaluation/families/reading_comprehension.html"
    sections = (("systems", "Questions answered correctly"), ("questions", "Questions"), ("stages", "Stages"))
    endpoints = ("questions", "answers", "significance", "stages")

    def compute(self, campaign):
        return compute_reading_comprehension(campaign)

    def _stored(self, campaign, name):
        root = root_of(campaign)
        return {**freshness(root).as_api(), "results": stored_rows(root, name)}

    def systems(self, campaign, params):
        return self._stored(campaign, "systems")

    def questions(self, campaign, params):
        """Every question written: text, sample answer, votes, kept, difficulty (share of MT answers correct)."""
        return self._stored(campaign, "questions")

    def answers(self, campaign, params):
        """Every answer with its grades and whether it counts as correct."""
        return self._stored(campaign, "answers")

    def significance(self, campaign, params):
        return self._stored(campaign, "significance")

    def stages(self, campaign, params):
        from annotation.services.stages import stage_progress

        return {"results": stage_progress(campaign)}

    def page_context(self, campaign, header, workers, request):
        return presenter.page_context(campaign, header, workers, request)

    def tables(self):
        stored = self.stored_table
        return [Table("workers", self.workers_table), Table("systems", stored("systems")),
                Table("questions", stored("questions")), Table("answers", stored("answers")),
                Table("significance", stored("significance"))]

    def admin_summary(self, summary):
        if "questions" in summary:
            return f"{summary['questions_kept']} / {summary['questions']} questions kept"
        return "–"


register(ReadingComprehensionFamily())
