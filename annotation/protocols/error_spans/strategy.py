"""Error-span annotation: ESA, MQM and contrastive ESA (docs/methods.md §11; Kocmi et al. 2024, Freitag et
al. 2021). The judge marks error spans in the translation, with its document around it, then gives a 0–100
score. The HITs are planned in services.error_span_builder; the statistics are the `error-spans` family's.

An answer is `{"item", "spans": [{"start", "end", "severity", "category"?}], "score"}` (contrastive ESA:
`{"item", "candidates": {"<key>": {"spans": [...], "score"}}}`); spans are checked against the text the
item showed (building.spans). A score without spans is an answer; spans without a score are not.

The option declarations and their checks are in `span_options.py`; contrastive ESA in `contrastive_strategy.py`.
"""
from __future__ import annotations

import random

from annotation.building.hit_layout import HitPlanError
from annotation.building.screen_context import (
    DOCUMENT_SEGMENTS,
    DOCUMENT_SYSTEM_OUTPUTS,
    document_segments,
    document_system_outputs,
)
from annotation.building.spans import DEFAULT_MQM_TAXONOMY, SpanError, check_spans
from annotation.building.training import (
    SILENT,
    check_tutorial,
    expected_answers,
    parse_expected,
)
from annotation.building.training import mode as training_mode
from annotation.protocols.base import (
    JudgmentError,
    Protocol,
    Screen,
    language_name,
    require_item_id,
    require_number,
    require_only,
)
from annotation.protocols.error_spans.planner import plan_span_hits

from .review_options import REVIEW_OPTIONS, normalise_review, review_stages
from .span_options import ESA_ERROR, INSTRUCTION_VIOLATION, MQM_OPTIONS, SPAN_OPTIONS, check_mqm_options


def _candidate_text(item) -> str:
    return item.text or item.output.text


#: The error-span editor the screens share (static/error_spans/spans_*.js in this package), in load order.
SPAN_EDITOR_SCRIPTS = tuple(f"error_spans/spans_{part}.js"
                            for part in ("editor", "text", "render", "selection", "menus", "slider", "document"))


class ErrorSpans(Protocol):
    """ESA; MQM adds a category per span (`mqm=True`)."""

    judgment_formats = ("annotation.protocols.error_spans.mqm_tsv.MQM_TSV",
                        "annotation.protocols.error_spans.esa_jsonl.ESA_JSONL",
                        "annotation.protocols.error_spans.pearmut.PEARMUT",
                        "annotation.protocols.error_spans.appraise.APPRAISE",
                        "annotation.protocols.error_spans.anthea.ANTHEA")
    export_formats = ("annotation.protocols.error_spans.export.MQM_TSV",
                      "annotation.protocols.error_spans.export.ESA_JSONL",
                      "annotation.protocols.error_spans.pearmut.PEARMUT_JSONL",
                      "annotation.protocols.error_spans.appraise.APPRAISE_JSONL",
                      "annotation.protocols.error_spans.anthea.ANTHEA_JSONL")
    family = "error-spans"
    screen = Screen("error_spans/error_spans.html", (*SPAN_EDITOR_SCRIPTS, "error_spans/error_spans.js"))
    screen_reads = frozenset({DOCUMENT_SEGMENTS, DOCUMENT_SYSTEM_OUTPUTS})

    def __init__(self, name: str, label: str, statement: str, mqm: bool = False):
        self.name = name
        self.label = label
        self._statement = statement
        self.mqm = mqm
        self.own_options = (*(MQM_OPTIONS if mqm else SPAN_OPTIONS), *REVIEW_OPTIONS)

    def default_statement(self, language: str) -> str:
        return self._statement.format(language=language_name(language))

    def check_options(self, options: dict, system_names: set[str], hit_size: int) -> list[str]:
        options.setdefault("perturbation_rate", 0.10)
        options.setdefault("show_source", True)
        normalise_review(options)
        if "ai_error_free_rate" in {o.name for o in self.own_options}:
            options.setdefault("ai_error_free_rate", 1.0)
        if options.get("gate") and not options["perturbation_rate"]:
            return ["gate: the live reliability gate tests the perturbed copies; give perturbation_rate above 0"]
        if not self.mqm:
            return []
        return check_mqm_options(options)

    def next_stages(self, options: dict) -> list:
        """A review stage when the option `review` asks for one (review_strategy.py)."""
        return review_stages(self.name, options)

    def severities(self, options: dict) -> tuple[str, ...]:
        return ("minor", "major", "critical") if options.get("critical") else ("minor", "major")

    def categories(self, options: dict) -> list[str] | None:
        if not self.mqm:
            return [ESA_ERROR, INSTRUCTION_VIOLATION] if options.get("instruction_violation") else None
        taxonomy = list(options.get("taxonomy") or DEFAULT_MQM_TAXONOMY)
        if options.get("instruction_violation") and INSTRUCTION_VIOLATION not in taxonomy:
            taxonomy.append(INSTRUCTION_VIOLATION)
        return taxonomy

    def plan_hits(self, content, hit_size, options, rng: random.Random):
        self.check_prefilled(content, options)
        expected = self.expected_answers(content, options)
        return plan_span_hits(content, hit_size, options["perturbation_rate"], rng, expected,
                              scatter=bool(expected) and training_mode(options) == SILENT,
                              ai_error_free_rate=options.get("ai_error_free_rate", 1.0))

    def expected_answers(self, content, options: dict) -> dict[int, dict[int, dict]]:
        """The campaign file's expected answers (`expected` on tutorial lines; building/training.py), checked
        against this campaign's severities and categories: per segment index, per system index."""
        severities, categories = self.severities(options), self.categories(options)
        return expected_answers(content, lambda value, text: parse_expected(value, text, severities, categories))

    def check_expected(self, item, fields: dict):
        """The answer to a tutorial item with an expected answer, checked (building/training.Check); None for any
        other item."""
        return check_tutorial(item, fields.get("spans") or [], fields.get("score"))

    def check_prefilled(self, content, options: dict) -> None:
        """The campaign file's AI-prefilled spans (`error_spans`) must be answers this campaign accepts: its
        severities and, for MQM, its taxonomy (a judge who keeps one must be able to submit it)."""
        if content.record is None:
            return
        severities, categories = self.severities(options), self.categories(options)
        for segment in content.segments:
            record = content.record(segment.index)
            for system, spans in (record.get("error_spans") or {}).items():
                try:
                    check_spans(spans, record["systems"][system], severities, categories)
                except SpanError as exc:
                    raise HitPlanError(f"document {segment.doc_id!r}, segment {segment.seg_id}: 'error_spans' of "
                                       f"{system[:40]!r}: {exc}") from None

    @staticmethod
    def _document(item) -> list[dict]:
        """The item's document in its system's translation, each segment with its source."""
        texts = {segment: text for segment, _, text in document_system_outputs(item)}
        return [{"id": pk, "source": source, "target": texts.get(pk, "")} for pk, source, _ in document_segments(item)]

    def item_payload(self, item) -> dict:
        options = item.hit.campaign.options or {}
        document = self._document(item)
        current = next(i for i, s in enumerate(document) if s["id"] == item.segment_id)
        candidate = _candidate_text(item)
        show_source = options.get("show_source", True)
        context = [{"candidate": candidate if i == current else s["target"],
                    **({"source": s["source"]} if show_source else {})} for i, s in enumerate(document)]
        payload = {"id": item.id, "protocol": self.name, "candidate": candidate,
                   "document": {"segments": context, "current": current},
                   "severities": list(self.severities(options)),
                   "prefilled": [] if item.text else list(item.output.spans or ())}
        if show_source:
            payload["source"] = item.segment.source
        categories = self.categories(options)
        if categories is not None:
            payload["categories"] = categories
        return payload

    def parse_judgment(self, body) -> dict:
        require_item_id(body)
        require_only(body, {"item", "spans", "score"}, '{"item", "spans", "score"}')
        spans = body.get("spans", [])
        if "score" not in body:
            raise JudgmentError("'score' is missing: give the translation a 0–100 score (spans alone are not an "
                                "answer)")
        if not isinstance(spans, list):
            raise JudgmentError("'spans' must be a list of {\"start\", \"end\", \"severity\"} objects")
        return {"score": require_number(body, "score", 0, 100), "spans": spans}

    def check_answer(self, item, fields: dict) -> None:
        options = item.hit.campaign.options or {}
        try:
            fields["spans"] = check_spans(fields["spans"], _candidate_text(item), self.severities(options),
                                          self.categories(options))
        except SpanError as exc:
            raise JudgmentError(str(exc)) from None

    export_columns = ("spans", "prefilled_kept", "prefilled_changed", "prefilled_deleted")
    export_payload_keys = ()

    def export_values(self, payload: dict, options: dict, row: dict) -> dict:
        """What the judge did with the spans shown pre-marked (AI-prefilled, `payload["prefilled"]`; None when
        the item showed none): `prefilled_kept`, the prefilled spans in the answer unchanged (same offsets,
        severity and category); `prefilled_changed`, `{"from": prefilled, "to": answer}` for each other prefilled
        span paired with the answer's span overlapping it most (bounds, severity or category changed);
        `prefilled_deleted`, the prefilled spans left with nothing overlapping. The answer's spans in neither
        `kept` nor a `to` are the judge's own additions. None for all three where nothing was prefilled."""
        names = [c for c in ("prefilled_kept", "prefilled_changed", "prefilled_deleted") if c in self.export_columns]
        prefilled, spans = payload.get("prefilled"), row.get("spans")
        if not names:
            return {}
        if not isinstance(prefilled, list) or not isinstance(spans, list):
            return dict.fromkeys(names)

        def key(span: dict) -> tuple:
            return span.get("start"), span.get("end"), span.get("severity"), span.get("category")

        def overlap(a: dict, b: dict) -> int:
            if a["start"] == a["end"] == b["start"] == b["end"]:
                return 1  # two omissions at the same place
            return min(a["end"], b["end"]) - max(a["start"], b["start"])

        left = list(spans)
        kept, unmatched = [], []
        for span in prefilled:
            same = next((i for i, answer in enumerate(left) if key(answer) == key(span)), None)
            if same is None:
                unmatched.append(span)
            else:
                kept.append(span)
                del left[same]
        changed, deleted = [], []
        for span in unmatched:
            best = max(range(len(left)), key=lambda i: overlap(span, left[i]), default=None)
            if best is None or overlap(span, left[best]) <= 0:
                deleted.append(span)
            else:
                changed.append({"from": span, "to": left.pop(best)})
        values = {"prefilled_kept": kept, "prefilled_changed": changed, "prefilled_deleted": deleted}
        return {name: values[name] for name in names}


#: ESA and MQM (the package's __init__ lists every protocol of the package, in the order of the protocol choices).
PROTOCOLS = (
    ErrorSpans(
        "esa", "Error Span Annotation (ESA): mark errors, then score 0–100",
        "Mark the errors in the translation (select the text, then minor or major; [missing] for omitted content), "
        "then score the translation from 0 (no meaning preserved) to 100 (perfect).",
    ),
    ErrorSpans(
        "mqm", "MQM: mark errors with a category and a severity",
        "Mark every error in the translation: select it, choose its category and its severity ([missing] for omitted "
        "content). Then score the translation from 0 to 100.", mqm=True,
    ),
)
