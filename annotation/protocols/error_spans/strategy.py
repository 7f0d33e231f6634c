"""Error-span annotation: ESA, MQM and contrastive ESA (docs/methods.md §11; Kocmi et al. 2024, Freitag et
al. 2021). The judge marks error spans in the translation, with its document around it, then gives a 0–100
score. The HITs are planned in services.error_span_builder; the statistics are the `error-spans` family's.

An answer is `{"item", "spans": [{"start", "end", "severity", "category"?}], "score"}` (contrastive ESA:
`{"item", "candidates": {"<key>": {"spans": [...], "score"}}}`); spans are checked against the text the
item showed (building.spans). A score without spans is an answer; spans without a score are not.
"""
from __future__ import annotations

import random

from annotation.building.candidates import answers_every_key
from annotation.building.hit_layout import HitPlanError
from annotation.building.instructions import candidate_systems, candidate_targets
from annotation.building.screen_context import (
    DOCUMENT_OUTPUTS,
    DOCUMENT_SEGMENTS,
    DOCUMENT_SYSTEM_OUTPUTS,
    document_outputs,
    document_segments,
    document_system_outputs,
)
from annotation.building.shared_options import GATE_OPTIONS, RELIABILITY_OPTIONS
from annotation.building.spans import DEFAULT_MQM_TAXONOMY, SpanError, check_spans
from annotation.building.training import (
    SILENT,
    TRAINING_OPTIONS,
    check_candidates,
    check_tutorial,
    expected_answers,
    min_overlap,
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
from annotation.protocols.error_spans.planner import plan_contrastive_hits, plan_span_hits
from annotation.protocols.options import Option

from .review_options import REVIEW_OPTIONS, normalise_review, review_stages

#: ESA^AI (docs/methods.md#esa-ai): outputs the automatic system found error-free are sent at this rate.
AI_ERROR_FREE_RATE = Option(
    "ai_error_free_rate", "float", 1.0, "ESA^AI: outputs on which the automatic system marked no error (an empty "
    "list in the file's error_spans) are sent to judges at this rate, a seeded draw per output; the scores "
    "correct for it (docs/methods.md#esa-ai). 1 sends everything; 0.2 is recommended (it saved 31 percent of "
    "the judging in benchmarks/esa_ai.py, with false separation as full judging's).", minimum=0.01, maximum=1.0,
    target="options")
#: The category a campaign may add for translations that ignore their instructions (option instruction_violation);
#: ESA's errors then carry a category, this or ESA_ERROR.
INSTRUCTION_VIOLATION = "Instruction violation"
ESA_ERROR = "Error"
SPAN_OPTIONS = (
    Option("segments_per_hit", "int", 100, "Segments per HIT; documents are kept whole where they fit.",
           minimum=1, maximum=1000, key="hit_size"),
    Option("perturbation_rate", "float", 0.10, "Share of a HIT's segments shown again with words removed "
           "(quality control: they should get a major error and a lower score).", minimum=0.0, maximum=0.5,
           target="options"),
    Option("show_source", "bool", True, "Show the source text beside the translation (source-based evaluation).",
           target="options"),
    *RELIABILITY_OPTIONS,  # the reliability and statistics options, shared with Direct Assessment
    *GATE_OPTIONS,  # the live reliability gate on the perturbed copies (docs/methods.md §12.1)
    Option("significance_test", "choice", None, "How systems are compared (docs/methods.md#error-span-protocols): "
           "wmt24 (per-domain paired Wilcoxon + Stouffer), wmt25 (one-sided paired Wilcoxon) or randomization "
           "(paired approximate randomization).",
           choices=(("wmt24", "WMT24: per domain, Stouffer"), ("wmt25", "WMT25: one-sided Wilcoxon"),
                    ("randomization", "paired approximate randomization")),
           target="options", default_text="the preset's"),
    Option("min_items", "int", None, "Systems with fewer judged items are not ranked.", minimum=0,
           maximum=1_000_000, target="options", default_text="the preset's (100 in WMT24 ESA, 0 in WMT25 ESA)"),
    AI_ERROR_FREE_RATE,
    Option("instruction_violation", "bool", None, f"Add the category {INSTRUCTION_VIOLATION!r}: a translation that "
           "ignores the instructions the system was given (docs/api.md#instructions). MQM: one more category of the "
           f"taxonomy, weighted as any error of its severity; ESA: each error is then {ESA_ERROR!r} or "
           f"{INSTRUCTION_VIOLATION!r}.", target="options", default_text="no"),
    *TRAINING_OPTIONS,  # tutorial lines with expected answers: loud training or silent checks
)
MQM_OPTIONS = (
    *SPAN_OPTIONS,
    Option("taxonomy", "list", None, "MQM error categories, comma-separated, a subcategory as Parent/Child.",
           target="options", default_text="Accuracy/{Mistranslation, Omission, Addition, Untranslated}, "
           "Fluency/{Grammar, Spelling, Punctuation, Register, Inconsistency}, Terminology, Style, Locale convention, "
           "Other, Non-translation"),
    Option("critical", "bool", False, "Offer the severity critical besides minor and major.", target="options"),
    Option("mqm_weights", "choice", "google", "MQM weights, a named preset (docs/methods.md §11.3): google "
           "(Freitag et al. 2021), score-mqm (TED 2021's score_mqm.py) or wmt23-marot (Marot's, WMT23).",
           choices="mqm_weights", target="options"),
)
MAX_CATEGORY = 100


def _candidate_text(item) -> str:
    return item.text or item.output.text


#: The error-span editor the screens share (static/error_spans/spans_*.js in this package), in load order.
SPAN_EDITOR_SCRIPTS = tuple(f"error_spans/spans_{part}.js"
                            for part in ("editor", "text", "render", "selection", "menus", "slider"))


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
        taxonomy = options.get("taxonomy") or list(DEFAULT_MQM_TAXONOMY)
        long = [c for c in taxonomy if len(c) > MAX_CATEGORY]
        if long:
            return [f"taxonomy: a category is at most {MAX_CATEGORY} characters; {long[0][:40]!r}… is longer"]
        if len(set(taxonomy)) != len(taxonomy):
            return ["taxonomy: a category is listed twice"]
        options["taxonomy"] = taxonomy
        options.setdefault("critical", False)
        options.setdefault("mqm_weights", "google")
        return []

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


class ContrastiveEsa(ErrorSpans):
    """Every system's translation of the same document side by side, spans and a score for each (WMT26)."""

    screen = Screen("error_spans/contrastive_esa.html", (*SPAN_EDITOR_SCRIPTS, "error_spans/contrastive_esa.js"))
    screen_reads = frozenset({DOCUMENT_SEGMENTS, DOCUMENT_OUTPUTS})
    #: An item holds every system's candidate (and maybe a bad column): the statistics read one row per candidate.
    contrastive = True

    def __init__(self, name: str, label: str, statement: str):
        super().__init__(name, label, statement, mqm=False)
        # every system of a segment shares one screen: skipping one output's column is not ESA^AI's design
        self.own_options = tuple(o for o in SPAN_OPTIONS if o is not AI_ERROR_FREE_RATE)

    def next_stages(self, options: dict) -> list:
        return []

    def instruction_targets(self, item) -> list[tuple[str, str]]:
        """One instruction judgment per translation shown (per candidate key)."""
        return candidate_targets(item.payload)

    def instruction_systems(self, payload: dict, output_system: str | None, options: dict) -> dict[str, str | None]:
        return candidate_systems(payload)

    def preview_systems(self, item, options: dict) -> str:
        """Which system each column's key stands for (a degraded copy: [bad:<system>]), as ranking's preview says."""
        def shown(c: dict) -> str:
            return str(c.get("name")) if c.get("kind") == "system" else f"[bad:{c.get('name')}]"
        return "\n".join(f"{c['key']}: {shown(c)}" for c in item.payload.get("candidates") or ())

    def plan_hits(self, content, hit_size, options, rng: random.Random):
        self.check_prefilled(content, options)
        expected = self.expected_answers(content, options)
        return plan_contrastive_hits(content, hit_size, options["perturbation_rate"], rng, expected,
                                     scatter=bool(expected) and training_mode(options) == SILENT)

    def check_expected(self, item, fields: dict):
        """A tutorial screen's answer against its expected answers, one per candidate column that has one
        (building/training.check_candidates over the checked spans, each naming its candidate, and the scores);
        None for any other item."""
        expected = (item.payload or {}).get("expected")
        if item.item_type != "tutorial" or not expected:
            return None
        return check_candidates(expected["candidates"], fields["spans"], fields["scores"],
                                min_overlap(item.hit.campaign.options))

    def item_payload(self, item) -> dict:
        options = item.hit.campaign.options or {}
        segment = item.segment
        segments = [(pk, source) for pk, source, _ in document_segments(item)]
        ids = [pk for pk, _ in segments]
        current = ids.index(segment.pk)
        texts: dict[int, dict[int, str]] = {}
        prefilled: dict[int, list] = {}
        for segment_id, system_id, text, spans, _, _ in document_outputs(item):
            texts.setdefault(segment_id, {})[system_id] = text
            if segment_id == segment.pk:
                prefilled[system_id] = spans or []
        system_ids = sorted(texts.get(segment.pk, {}))
        candidates = []
        for c in item.payload["candidates"]:
            system_id = system_ids[c["system"]]
            document = [texts.get(pk, {}).get(system_id, "") for pk in ids]
            if c["kind"] == "bad":
                document[current] = c["text"]
            candidates.append({"key": c["key"], "text": document[current], "document": document,
                               "prefilled": [] if c["kind"] == "bad" else prefilled[system_id]})
        payload = {"id": item.id, "protocol": self.name, "candidates": candidates, "current": current,
                   "severities": list(self.severities(options))}
        if options.get("show_source", True):
            payload["source"] = segment.source
            payload["sources"] = [source for _, source in segments]
        categories = self.categories(options)
        if categories is not None:
            payload["categories"] = categories
        return payload

    def parse_judgment(self, body) -> dict:
        require_item_id(body)
        require_only(body, {"item", "candidates"}, '{"item", "candidates": {"<key>": {"spans", "score"}}}')
        given = body.get("candidates")
        if not isinstance(given, dict) or not given:
            raise JudgmentError("'candidates' must be an object of candidate key to {\"spans\", \"score\"}")
        if len(given) > 50:
            raise JudgmentError(f"'candidates' holds {len(given)} entries; a screen has at most 50")
        scores, spans = {}, {}
        for key, answer in given.items():
            if not isinstance(answer, dict) or sorted(set(answer) - {"spans", "score"}):
                raise JudgmentError(f"the answer for {key[:20]!r} must be {{\"spans\", \"score\"}}")
            if "score" not in answer:
                raise JudgmentError(f"'score' is missing for {key[:20]!r}: every translation needs a 0–100 score")
            try:
                scores[key] = require_number(answer, "score", 0, 100)
            except JudgmentError as exc:
                raise JudgmentError(f"{key[:20]!r}: {exc}") from None
            spans[key] = answer.get("spans", [])
        return {"scores": scores, "spans": spans}

    def check_answer(self, item, fields: dict) -> None:
        keys = answers_every_key(item, fields["scores"], "a score")
        texts = {c["key"]: c["text"] for c in self.item_payload(item)["candidates"]}
        options = item.hit.campaign.options or {}
        checked = []
        for key in keys:
            try:
                checked += [{**span, "candidate": key} for span in
                            check_spans(fields["spans"].get(key, []), texts[key], self.severities(options),
                                        self.categories(options))]
            except SpanError as exc:
                raise JudgmentError(f"{key[:20]!r}: {exc}") from None
        fields["spans"] = checked

    export_columns = ("scores", "spans")


#: The protocols of this package, in the order of the protocol choices (settings.MTEVAL_PROTOCOLS).
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
    ContrastiveEsa(
        "contrastive-esa", "Contrastive ESA: all systems' translations side by side",
        "Mark the errors in each translation, then score each from 0 to 100. Compare them: equally good translations "
        "get the same score.",
    ),
)
