"""Contrastive ESA (docs/methods.md §11; WMT26): every system's translation of one document side by side, spans
and a score for each. An answer is `{"item", "candidates": {"<key>": {"spans": [...], "score"}}}`."""
from __future__ import annotations

import random

from annotation.building.candidates import answers_every_key
from annotation.building.instructions import candidate_systems, candidate_targets
from annotation.building.screen_context import DOCUMENT_OUTPUTS, DOCUMENT_SEGMENTS, document_outputs, document_segments
from annotation.building.spans import SpanError, check_spans
from annotation.building.training import SILENT, check_candidates, min_overlap
from annotation.building.training import mode as training_mode
from annotation.protocols.base import JudgmentError, Screen, require_item_id, require_number, require_only
from annotation.protocols.error_spans.planner import plan_contrastive_hits

from .span_options import AI_ERROR_FREE_RATE, SPAN_OPTIONS
from .strategy import SPAN_EDITOR_SCRIPTS, ErrorSpans


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


CONTRASTIVE_ESA = ContrastiveEsa(
    "contrastive-esa", "Contrastive ESA: all systems' translations side by side",
    "Mark the errors in each translation, then score each from 0 to 100. Compare them: equally good translations "
    "get the same score.",
)
