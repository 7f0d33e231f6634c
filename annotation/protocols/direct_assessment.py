"""Direct Assessment on a 100-point slider: fluency, monolingual adequacy and source-based
adequacy (docs/methods.md §1-§3). The HIT structure is in services.hit_builder."""
from __future__ import annotations

import random

from ..services.degradation import degrade_adequacy, degrade_fluency
from ..services.hit_builder import HitPlanError, check_hit_size, plan_da_hits
from . import register
from .base import Protocol, language_name, require_item_id, require_number
from .options import Option

LIKERT_LEAD = "Read the text below and rate it by how much you agree that:"
#: Direct Assessment's own import options; the reliability tests are registered by the evaluation app.
DA_OPTIONS = (
    Option("hit_size", "int", 100, "Items per HIT: a multiple of 20 between 20 and 200.", minimum=20, maximum=200,
           step=20),
    Option("statistics_preset", "choice", None, "A named set of statistical conventions (test, threshold, "
           "cluster rule, scope); the options below override it (docs/methods.md#worker-reliability).",
           label="Statistics preset", choices="statistics_preset", target="options",
           default_text="the family's default, WMT21 DA"),
    Option("qc_test", "choice", None, "How careful workers are told from careless ones "
           "(docs/methods.md#worker-reliability).", label="Reliability test", choices="qc_test",
           default_text="the preset's"),
    Option("qc_threshold", "float", None, "A worker is reliable when the test's p-value is below this "
           "(appraise keeps its fixed 0.01).", label="Reliability threshold", minimum=0.0001, maximum=0.5,
           default_text="the reliability test's own (0.05 for most)"),
    Option("threshold_rule", "choice", None, "Whether a worker passes at p < threshold or p ≤ threshold.",
           choices="threshold_rule", target="options", default_text="the preset's"),
    Option("reliability_scope", "choice", None, "Test each worker on their pairs in the whole study, or in this "
           "campaign only.", choices="reliability_scope", target="options", default_text="the preset's"),
    Option("cluster_rule", "choice", None, "How systems are grouped into significance clusters "
           "(docs/methods.md#significance-and-clusters).", choices="cluster_rule", target="options",
           default_text="the preset's"),
    Option("reference_as_system", "bool", False, "Rank the human reference among the systems in the results.",
           target="options"),
)


class DirectAssessment(Protocol):
    family = "direct-assessment"
    template = "annotation/screens/slider.html"
    script = "annotation/slider.js"
    requires_reference = True
    own_options = DA_OPTIONS

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
            return [f"hit_size: {exc}"]
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
