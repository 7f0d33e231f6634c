"""Reading-comprehension results (docs/methods.md §9; Callison-Burch 2009 §5.3): per system the share of questions
answered correctly with its 95 % Wilson score interval (the human translation as a control row), rank ranges and
clusters; per question its votes, whether it was kept and its difficulty."""
from __future__ import annotations

from ..base import Table
from ..staged import StagedFamily
from . import presenter, storage
from .storage import compute_reading_comprehension


class ReadingComprehensionFamily(StagedFamily):
    name = "reading-comprehension"
    label = "Reading comprehension"
    template = "evaluation/families/reading_comprehension.html"
    sections = (("systems", "Questions answered correctly"), ("questions", "Questions"), ("stages", "Stages"))
    endpoints = ("questions", "answers", "significance", "stages")
    presenter = presenter

    def compute(self, campaign):
        return compute_reading_comprehension(campaign)

    def questions(self, campaign, params):
        """Every question written: text, sample answer, votes, kept, difficulty (share of MT answers correct)."""
        return self.stored(campaign, "questions")

    def answers(self, campaign, params):
        """Every answer with its grades and whether it counts as correct."""
        return self.stored(campaign, "answers")

    def tables(self):
        stored = self.stored_table
        # No workers table: the task judges questions and answers, not workers (none stored, so it could only be a
        # header).
        return [Table("systems", stored("systems", storage.SYSTEMS)),
                Table("questions", stored("questions", storage.QUESTIONS)),
                Table("answers", stored("answers", storage.ANSWERS)),
                Table("significance", stored("significance", storage.SIGNIFICANCE))]

    def missing(self, campaign, header):
        """Beyond the default: graded answers for fewer than two rows (systems and the human control) leave the
        significance table empty, since its tests compare two of them."""
        out = super().missing(campaign, header)
        rows = self.systems(campaign, {})["results"]
        if len(rows) == 1:
            out.append({"what": "significance", "text": f"graded answers for a second system besides "
                        f"{rows[0]['system']} (the significance tests compare two)"})
        return out

    def admin_summary(self, summary):
        if "questions" in summary:
            return f"{summary['questions_kept']} / {summary['questions']} questions kept"
        return "–"


#: The family object `settings.MTEVAL_RESULT_FAMILIES` names.
FAMILY = ReadingComprehensionFamily()
