"""Post-editing results (docs/methods.md §9): HTER per system from the closest verified post-edit (sacrebleu's
TER), with rank ranges and clusters, HTER against the number of editors, and every edit with its votes."""
from __future__ import annotations

from ..base import Table
from ..staged import StagedFamily
from . import presenter, storage
from .storage import compute_post_edit


class PostEditFamily(StagedFamily):
    name = "post-edit"
    label = "Post-editing (HTER)"
    template = "evaluation/families/post_edit.html"
    sections = (("systems", "HTER"), ("curve", "Editors"), ("stages", "Stages"), ("edits", "Edits"))
    endpoints = ("edits", "curve", "significance", "stages")
    presenter = presenter

    def compute(self, campaign):
        return compute_post_edit(campaign)

    def edits(self, campaign, params):
        """Every edit with its verification votes, its TER against the MT output and whether it was chosen."""
        return self.stored(campaign, "edits")

    def curve(self, campaign, params):
        return self.stored(campaign, "curve")

    def tables(self):
        stored = self.stored_table
        return [Table("workers", self.workers_table), Table("systems", stored("systems", storage.SYSTEMS)),
                Table("edits", stored("edits", storage.EDITS)), Table("curve", stored("curve", storage.CURVE)),
                Table("significance", stored("significance", storage.SIGNIFICANCE))]

    def admin_summary(self, summary):
        if "edits" in summary:
            return f"{summary['edits_passed']} / {summary['edits']} edits passed"
        return "–"


#: The family object `settings.MTEVAL_RESULT_FAMILIES` names.
FAMILY = PostEditFamily()
