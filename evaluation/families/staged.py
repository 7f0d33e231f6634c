"""What the result families of multi-stage tasks share (docs/methods.md §9): the results are computed for and
stored on the task's first stage, and any stage's slug answers for the whole task."""
from __future__ import annotations

from annotation.services.stages import first_stage, stage_progress

from ..services.results_read import freshness, stored_rows
from .base import Family


class StagedFamily(Family):
    """Base of the post-editing, reference-translation and reading-comprehension families. Subclasses set
    `presenter` (a module with `page_context`) and list "stages" among their endpoints."""

    presenter = None

    def stored(self, campaign, name: str) -> dict:
        """A stored table of the task, whichever stage `campaign` is."""
        root = first_stage(campaign)
        return {**freshness(root).as_api(), "results": stored_rows(root, name)}

    def systems(self, campaign, params):
        return self.stored(campaign, "systems")

    def significance(self, campaign, params):
        return self.stored(campaign, "significance")

    def stages(self, campaign, params):
        """Each stage of the task: its campaign, HITs, finished assignments and what it waits for."""
        return {"results": stage_progress(campaign)}

    def page_context(self, campaign, header, workers, request):
        return self.presenter.page_context(campaign, header, workers, request)
