"""Post-editing results (docs/methods.md §9): HTER per system from the closest verified post-edit (sacrebleu's
TER), with rank ranges and clusters, HTER against the number of editors, and every edit with its votes."""
from __future__ import annotations

from ...services.results_read import freshness, stored_rows
from .. import register
from ..base import Family, Table
from . import presenter
from .storage import compute_post_edit, root_of


class PostEditFamily(Family):
    name = "post-edit"
    label = "Post-editing (HTER)"
    template = "evaluation/families/post_edit.html"
    sections = (("systems", "HTER"), ("curve", "Editors"), ("stages", "Stages"), ("edits", "Edits"))
    endpoints = ("edits", "curve", "significance", "stages")

    def compute(self, campaign):
        return compute_post_edit(campaign)

    def systems(self, campaign, params):
        return {**freshness(root_of(campaign)).as_api(), "results": stored_rows(root_of(campaign), "systems")}

    def edits(self, campaign, params):
        """Every edit with its verification votes, its TER against the MT output and whether it was chosen."""
        return {**freshness(root_of(campaign)).as_api(), "results": stored_rows(root_of(campaign), "edits")}

    def curve(self, campaign, params):
        return {**freshness(root_of(campaign)).as_api(), "results": stored_rows(root_of(campaign), "curve")}

    def significance(self, campaign, params):
        return {**freshness(root_of(campaign)).as_api(), "results": stored_rows(root_of(campaign), "significance")}

    def stages(self, campaign, params):
        """Each stage of the task: its campaign, HITs, finished assignments and what it waits for."""
        from annotation.services.stages import stage_progress

        return {"results": stage_progress(campaign)}

    def page_context(self, campaign, header, workers, request):
        return presenter.page_context(campaign, header, workers, request)

    def tables(self):
        stored = self.stored_table
        return [Table("workers", self.workers_table), Table("systems", stored("systems")),
                Table("edits", stored("edits")), Table("curve", stored("curve")),
                Table("significance", stored("significance"))]

    def admin_summary(self, summary):
        if "edits" in summary:
            return f"{summary['edits_passed']} / {summary['edits']} edits passed"
        return "–"


register(PostEditFamily())
