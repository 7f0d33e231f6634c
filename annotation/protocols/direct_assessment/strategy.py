"""Direct Assessment on a 100-point slider: fluency, monolingual adequacy and source-based
adequacy (docs/methods.md §1-§3). The HIT structure is in building.qc_hits; document-level DA
(`document_mode`, docs/methods.md §1.1) in services.document_builder."""
from __future__ import annotations

import random
from decimal import Decimal

from annotation.building.adaptive_rules import adaptive_problems
from annotation.building.degradation import degrade_adequacy, degrade_fluency
from annotation.building.hit_layout import HitPlanError
from annotation.building.qc_hits import check_hit_size, plan_da_hits
from annotation.building.screen_context import UNIT_ITEMS, unit_items
from annotation.building.shared_options import GATE_OPTIONS, RELIABILITY_OPTIONS
from annotation.building.training import (
    SCORE_TRAINING_OPTIONS,
    SILENT,
    check_tutorial,
    expected_answers,
    parse_expected,
)
from annotation.building.training import mode as training_mode
from annotation.building.tutorial_plans import place_tutorials, tutorial_items, tutorial_plans, tutorial_segments
from annotation.protocols.base import Protocol, Screen, language_name, require_item_id, require_number, require_only
from annotation.protocols.direct_assessment import document_page
from annotation.protocols.direct_assessment.planner import plan_document_hits
from annotation.protocols.options import Option

#: Adaptive allocation with a stopping rule (docs/methods.md#adaptive-allocation); checked together by
#: building.adaptive_rules.adaptive_problems.
ADAPTIVE_OPTIONS = (
    Option("adaptive", "bool", None, "Adaptive allocation with a stopping rule (docs/methods.md#adaptive-allocation): "
           "HITs are built batch by batch; after each batch a look finds the adjacent systems not yet separated, "
           "the next batch gives more of its system outputs to them, and the campaign stops when every adjacent "
           "pair is decided or the budget is spent. Needs budget_judgments or budget_money.",
           label="Adaptive allocation", target="options", default_text="no"),
    Option("budget_judgments", "int", None, "Adaptive: the most judgments to collect, every item of every HIT "
           "counted once per worker; at most budget_judgments / (hit_size × redundancy) HITs are built (rounded "
           "down).", minimum=1, maximum=10**9, target="options", default_text="none"),
    Option("budget_money", "decimal", None, "Adaptive: the most money to pay, at payment_per_hit per finished HIT; "
           "at most budget_money / (payment_per_hit × redundancy) HITs are built (rounded down). With "
           "budget_judgments too, the smaller budget holds.", minimum=Decimal("0.01"),
           maximum=Decimal("99999999.99"), decimal_places=2, target="options", default_text="none", store=str),
    Option("batch_hits", "int", None, "Adaptive: HITs per batch; the first batch spreads the systems evenly, and a "
           "look follows each batch.", minimum=1, maximum=10_000, target="options", default_text="10"),
    Option("adaptive_alpha", "float", None, "Adaptive: the two-sided error rate of calling an adjacent pair "
           "different, over all the looks together.", minimum=0.001, maximum=0.2, target="options",
           default_text="0.05"),
    Option("adaptive_futility", "float", None, "Adaptive: from half the budget on, give up an open pair whose "
           "chance of being separated by the end of the budget (predictive power) is below this; a given-up pair "
           "is never separated and gets no more outputs of its own. 0: never give a pair up.", minimum=0.0,
           maximum=0.49, target="options", default_text="0.1"),
    Option("alpha_spending", "choice", None, "Adaptive: how the error rate is spent over the looks (Lan–DeMets).",
           choices=(("obrien-fleming", "O'Brien–Fleming: strict early, almost the whole α at the end"),
                    ("pocock", "Pocock: about even over the looks")),
           target="options", default_text="obrien-fleming"),
)
LIKERT_LEAD = "Read the text below and rate it by how much you agree that:"
#: Direct Assessment's own import options; the reliability tests are registered by the evaluation app.
DA_OPTIONS = (
    Option("hit_size", "int", 100, "Items per HIT: a multiple of 20 between 20 and 200. With document_mode, "
           "segments per HIT (about 7 × hit_size / 10, documents kept whole) and HITs hold more items; the import "
           "and the preview say how many.", minimum=20, maximum=200,
           step=20),
    *RELIABILITY_OPTIONS,
    *GATE_OPTIONS,
    Option("reference_as_system", "bool", False, "Rank the human reference among the systems in the results.",
           target="options"),
    Option("document_mode", "bool", None, "Document-level DA (WMT20–23): HITs of whole documents, each segment "
           "rated in order with its document in view, then the whole document rated as one more item "
           "(docs/methods.md#document-level-da).", target="options", default_text="no"),
    Option(document_page.OPTION, "bool", None, "With document_mode: the whole document on one page (Appraise's "
           "document-level DA, WMT20–23), a slider per segment and one for the document, sent as one batch of "
           "answers (docs/methods.md#document-level-da). Not with require_media_played, instruction_judgment, or "
           "per-line media or instructions in the file.", target="options", default_text="no"),
    Option("sqm_labels", "bool", None, "Label the slider with SQM's marks (WMT22–23): 0 no meaning preserved, "
           "2 some meaning preserved, 4 most meaning preserved and few grammar mistakes, 6 perfect meaning and "
           "grammar, at 0, 33.3, 66.7 and 100.", label="SQM labels", target="options", default_text="no"),
    *ADAPTIVE_OPTIONS,
    *SCORE_TRAINING_OPTIONS,  # tutorial lines with an expected score range: loud training or silent checks
)
#: SQM's described marks (0–6 scale) at their places on the 0–100 slider (docs/methods.md §1.1).
SQM_MARKS = (
    {"at": 0.0, "sqm": 0, "text": "No meaning preserved"},
    {"at": 33.33, "sqm": 2, "text": "Some meaning preserved"},
    {"at": 66.67, "sqm": 4, "text": "Most meaning preserved and few grammar mistakes"},
    {"at": 100.0, "sqm": 6, "text": "Perfect meaning and grammar"},
)


class DirectAssessment(Protocol):
    family = "direct-assessment"
    screen = Screen("direct_assessment/slider.html", ("direct_assessment/vas.js", "direct_assessment/document_page.js",
                                                      "direct_assessment/slider.js"))
    requires_reference = True
    own_options = DA_OPTIONS
    judgment_formats = ("annotation.protocols.direct_assessment.formats.WMT_DA",
                        "annotation.protocols.direct_assessment.appraise_csv.APPRAISE_DA_CSV",
                        "annotation.protocols.direct_assessment.pearmut_da.PEARMUT_DA")
    export_formats = ("annotation.protocols.direct_assessment.appraise_csv.APPRAISE_DA_CSV_EXPORT",
                      "annotation.protocols.direct_assessment.pearmut_da.PEARMUT_DA_JSONL")
    #: A document-level item shows its unit's segments (read only for items that belong to a unit).
    screen_reads = frozenset({UNIT_ITEMS})

    def __init__(self, name: str, label: str, context: str | None, degrade, statement: str):
        self.name = name
        self.label = label
        self.context = context  # "reference", "source" or None: what is shown in gray
        self.degrade = degrade
        self._statement = statement

    def default_statement(self, language: str) -> str:
        return f"{LIKERT_LEAD} {self._statement.format(language=language_name(language))}"

    def check_parsed(self, values: dict) -> list[tuple[str, str]]:
        return adaptive_problems(values) + document_page.option_problems(values)

    def check_options(self, options: dict, system_names: set[str], hit_size: int) -> list[str]:
        try:
            check_hit_size(hit_size)
        except HitPlanError as exc:
            return [f"hit_size: {exc}"]
        page_problems = document_page.option_problems(options)
        if page_problems:
            return [f"{name}: {reason}" for name, reason in page_problems]
        if options.get("adaptive") and len(system_names) < 2:
            return ["adaptive: adaptive allocation compares systems and needs at least two; the file has "
                    f"{len(system_names)}"]
        return []

    def size_warnings(self, options: dict, n_systems: int, hit_size: int, hit_sizes: list[int]) -> list[str]:
        """Document-level HITs keep documents whole and add each document's own item and controls, so they
        rarely hold exactly hit_size items (docs/methods.md#document-level-da)."""
        if not options.get("document_mode") or not hit_sizes or set(hit_sizes) == {hit_size}:
            return []
        low, high = min(hit_sizes), max(hit_sizes)
        held = f"{low}" if low == high else f"{low} to {high}"
        return [f"hit_size: document-level HITs hold {held} items, not the {hit_size} asked for: documents are "
                "kept whole (about 7 × hit_size / 10 segments a HIT), with an item for each whole document and the "
                "quality-control items besides"]

    def plan_hits(self, content, hit_size, options, rng: random.Random):
        """The HITs of the file's segments (docs/methods.md §2, §1.1); its tutorial lines (`"tutorial": true`, with
        or without an expected score range) open every HIT as `tutorial` items, or, as silent attention checks
        with expected answers, sit between its sets (documents) at random (docs/methods.md §12.5)."""
        tutorial = tutorial_segments(content)
        expected = expected_answers(content, lambda value, text: parse_expected(value, text, None, None))
        if tutorial and options.get("adaptive"):
            raise HitPlanError("tutorial lines are not offered with adaptive allocation, whose later batches are "
                               "built from the campaign's outputs", field="adaptive", suggestion=False)
        skip = set(tutorial)
        if options.get("document_mode"):
            if options.get(document_page.OPTION):
                document_page.check_file(content)
            plans = plan_document_hits(content, self.degrade, hit_size, rng, skip)
            if options.get(document_page.OPTION):
                document_page.mark_pages(plans)
        else:
            n_systems = len(content.system_names)
            outputs = [o for i, o in enumerate(content.outputs) if i // n_systems not in skip]
            plans = plan_da_hits(outputs, self.degrade, hit_size, rng)
        if tutorial:
            items = tutorial_plans(tutorial_items(content, tutorial, expected, rng))
            scatter = bool(expected) and training_mode(options) == SILENT
            plans = [place_tutorials(hit, items, scatter, rng) for hit in plans]
        if options.get("sqm_labels"):  # on the items, so the screen needs no read of the campaign
            for hit in plans:
                for plan in hit:
                    plan.payload["sqm"] = True
        return plans

    @staticmethod
    def _candidate(item) -> str:
        if item.text:
            return item.text
        if item.output_id is not None:
            return item.output.text
        return item.segment.reference

    def _context(self, segment) -> dict:
        return self._shown(segment.reference, segment.source)

    def _shown(self, reference: str, source: str) -> dict:
        if self.context == "reference":
            return {"reference": reference}
        if self.context == "source":
            return {"source": source}
        return {}

    def item_payload(self, item) -> dict:
        stored = item.payload or {}
        unit = stored.get("unit")
        if unit is None:
            payload = {"id": item.id, "protocol": self.name, "candidate": self._candidate(item),
                       **self._context(item.segment)}
        else:
            payload = self._document_payload(item, unit, stored)
        if stored.get("sqm"):
            payload["marks"] = [dict(mark) for mark in SQM_MARKS]
        return payload

    def _document_payload(self, item, unit: str, stored: dict) -> dict:
        """A document-mode item: the unit's segments as this HIT shows them (degraded in a bad copy), each with
        the id of its item so the screen can show the scores already given; `current` is the segment being
        rated, null for the document item."""
        first = int(stored["first"])
        segments, _ = self._unit(item)
        if unit == "document":
            return {"id": item.id, "protocol": self.name, "unit": "document",
                    "candidate": "\n".join(s["candidate"] for s in segments),
                    "document": {"segments": segments, "current": None}}
        return {"id": item.id, "protocol": self.name, "unit": "segment", "candidate": self._candidate(item),
                **self._context(item.segment),
                "document": {"segments": segments, "current": item.position - first}}

    def _unit(self, item) -> tuple[list[dict], int]:
        """The segments of `item`'s unit as this HIT shows them (degraded in a bad copy), each with the id of its
        item, and the id of the unit's document item (the row after them)."""
        rows = unit_items(item)
        count = int(item.payload["count"])
        segments = [{"item": pk, "candidate": text or (output_text if output_id is not None else reference),
                     **self._shown(reference, source)}
                    for pk, text, output_id, output_text, reference, source in rows[:count]]
        return segments, rows[count][0]

    def page(self, item) -> list[dict] | None:
        """With `document_page`, a segment's page: the segments of its document still to rate and the document
        item (document_page.py); a document item's page is itself alone; an item of no document unit (a tutorial)
        has none."""
        stored = item.payload or {}
        if not stored.get(document_page.PAGED):
            return super().page(item)
        if stored.get("unit") == "document":
            return [{"id": item.id, "unit": "document"}]
        return document_page.page(item, *self._unit(item))

    def parse_judgment(self, body) -> dict:
        require_item_id(body)
        require_only(body, {"item", "score"}, '{"item", "score"}')
        return {"score": require_number(body, "score", 0, 100)}

    def check_expected(self, item, fields: dict):
        """A tutorial item's score against its expected range (building/training.py); None for any other item."""
        return check_tutorial(item, [], fields["score"])


#: The protocols of this package, in the order of the protocol choices (settings.MTEVAL_PROTOCOLS).
PROTOCOLS = (
    DirectAssessment(
        "fluency", "Fluency (monolingual, candidate only)", None, degrade_fluency,
        "the text is fluent {language}.",
    ),
    DirectAssessment(
        "adequacy", "Adequacy (reference in gray, candidate in black)", "reference", degrade_adequacy,
        "the black text adequately expresses the meaning of the gray text.",
    ),
    DirectAssessment(
        "source-adequacy", "Source-based adequacy (source in gray)", "source", degrade_adequacy,
        "the black text adequately expresses the meaning of the gray text.",
    ),
)
