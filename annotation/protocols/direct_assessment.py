"""Direct Assessment on a 100-point slider: fluency, monolingual adequacy and source-based
adequacy (METHODS.md §1-§3). The HIT structure is in services.hit_builder."""
from __future__ import annotations

import random

from ..services.degradation import degrade_adequacy, degrade_fluency
from ..services.hit_builder import HitPlanError, check_hit_size, plan_da_hits
from . import register
from .base import Protocol, language_name, require_item_id, require_number

LIKERT_LEAD = "Read the text below and rate it by how much you agree that:"


class DirectAssessment(Protocol):
    family = "direct-assessment"
    template = "annotation/screens/slider.html"
    script = "annotation/slider.js"
    requires_reference = True

    def __init__(self, name: str, label: str, context: str | None, degrade, statement: str):
        self.name = name
        self.label = label
        self.context = context  # "reference", "source" or None: what is shown in gray
        self.degrade = degrade
        self._statement = statement

    def default_statement(self, language: str) -> str:
        return f"{LIKERT_LEAD} {self._statement.format(language=language_name(language))}"

    def check_options(self, options: dict, system_names: set[str], hit_size: int) -> list[str]:
        try:
            check_hit_size(hit_size)
        except HitPlanError as exc:
            return [str(exc)]
        return []

    def plan_hits(self, content, hit_size, options, rng: random.Random):
        return plan_da_hits(content.outputs, self.degrade, hit_size, rng)

    def item_payload(self, item) -> dict:
        segment = item.segment
        if item.text:
            candidate = item.text
        elif item.output_id is not None:
            candidate = item.output.text
        else:
            candidate = segment.reference
        payload = {"id": item.id, "protocol": self.name, "candidate": candidate}
        if self.context == "reference":
            payload["reference"] = segment.reference
        elif self.context == "source":
            payload["source"] = segment.source
        return payload

    def parse_judgment(self, body) -> dict:
        require_item_id(body)
        return {"score": require_number(body, "score", 0, 100)}


register(DirectAssessment(
    "fluency", "Fluency (monolingual, candidate only)", None, degrade_fluency,
    "the text is fluent {language}.",
))
register(DirectAssessment(
    "adequacy", "Adequacy (reference in gray, candidate in black)", "reference", degrade_adequacy,
    "the black text adequately expresses the meaning of the gray text.",
))
register(DirectAssessment(
    "source-adequacy", "Source-based adequacy (source in gray)", "source", degrade_adequacy,
    "the black text adequately expresses the meaning of the gray text.",
))
