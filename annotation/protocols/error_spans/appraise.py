"""Appraise's document-level results (docs/api.md §5.9): `manage.py ExportSystemScoresToJSONL`'s records, one
judged segment each, imported directly into an `esa` or `mqm` campaign and written back (`appraise-jsonl`).

    {"annotator": "engdeu0a1b", "target_id": "ONLINE-B", "document_id": "doc7", "item_id": 3, "item_type": "TGT",
     "source_text": "…", "target_text": "Hi 😀 there", "score": 71,
     "mqm_annotations": "[{\"start_i\": 6, \"end_i\": 10, \"severity\": \"minor\"}]", ...}

`mqm_annotations` (a JSON text, as Appraise stores it, or a list) holds spans whose offsets count **UTF-16 code
units** with an **inclusive** end: `[start_i, end_i]` is stored as the half-open code-point span covering the same
characters; an offset inside a surrogate pair is refused. Only `TGT` items are judgments of systems; other item
types (Appraise's quality controls `BAD`, `CHK`, `REF`) are left out with a warning naming their lines."""
from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator

from annotation.building.campaign_files import MAX_TEXT, Problems, unstorable
from annotation.building.json_records import json_records
from annotation.building.judgment_files import ExportFormat, JudgmentFormat, lines_warning
from annotation.building.offsets import code_point_to_utf16, inclusive_spans
from annotation.building.spans import SpanError
from annotation.building.text_lines import bounded_number
from annotation.models import Campaign

from .esa_jsonl import check_esa_spans
from .export import single_judgments
from .store import (
    LANGUAGES_HELP,
    MAX_NAME,
    MAX_RATER,
    Collected,
    ErrorSpanJudgments,
    checked_name,
    language_pair,
    parsed_error_spans,
)

PROTOCOLS = ("esa", "mqm")
REQUIRED = ("annotator", "target_id", "document_id", "item_id", "target_text", "score")


def _name(record: dict, key: str, longest: int) -> str:
    value = record.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or unstorable(value):
        raise ValueError(f"'{key}' must be a text")
    return checked_name(value, f"'{key}'", longest)


def code_point_spans(raw, text: str) -> list[dict]:
    """Appraise's spans (UTF-16, inclusive ends) as half-open code-point spans of `text`; ValueError if bad."""
    if isinstance(raw, str):
        try:
            raw = json.loads(raw) if raw.strip() else []
        except ValueError:
            raise ValueError("'mqm_annotations' is not valid JSON") from None
    if raw is None:
        raw = []
    if not isinstance(raw, list):
        raise ValueError("'mqm_annotations' must be a list of spans")
    return inclusive_spans(raw, utf16_of=text)

def parse_appraise(lines: Iterable[bytes | str], protocol: str = "esa", pair: str | None = None
                   ) -> ErrorSpanJudgments:
    """Validate Appraise's JSONL results; `protocol`: esa or mqm, the campaign made; `pair`: the languages."""
    if protocol not in PROTOCOLS:
        raise Problems([(0, f"protocol: appraise imports into esa or mqm, not {str(protocol)[:40]!r}")]).refuse()
    languages = language_pair(pair)
    problems = Problems()
    c = Collected()
    seen_any, controls = False, []
    for number, record in json_records(lines, problems):
        seen_any = True
        try:
            if isinstance(record, dict) and record.get("item_type", "TGT") != "TGT":
                controls.append(number)
                continue
            _record(c, number, record)
        except (ValueError, SpanError) as exc:
            problems.append((number, str(exc)))
    parsed = parsed_error_spans(c, problems, empty=not seen_any, fmt="appraise", protocol=protocol,
                                languages=languages)
    if controls:
        parsed.warnings.append(lines_warning("a quality-control item (not TGT) left out", controls))
    return parsed


def _record(c: Collected, number: int, record) -> None:
    if not isinstance(record, dict):
        raise ValueError("a line must be a JSON object")
    missing = [k for k in REQUIRED if k not in record]
    if missing:
        raise ValueError(f"'{missing[0]}' is missing")
    target = record["target_text"]
    source = record.get("source_text")
    for text, what in ((target, "target_text"), (source, "source_text")):
        if text is not None and (not isinstance(text, str) or len(text) > MAX_TEXT or unstorable(text)):
            raise ValueError(f"'{what}' must be a text of at most {MAX_TEXT} characters")
    if target is None:
        raise ValueError("'target_text' must be a text")
    item = record["item_id"]
    if isinstance(item, bool) or not isinstance(item, int) or not 0 <= item < 2**31:
        raise ValueError(f"'item_id' must be a whole number below 2^31, not {str(item)[:20]!r}")
    score = record["score"]
    score = math.nan if score is None or score == -1 else bounded_number(score, "'score'", 0, 100)
    spans = check_esa_spans(code_point_spans(record.get("mqm_annotations"), target), target)
    segment = c.segment(c.document(_name(record, "document_id", MAX_NAME)), item, source, number)
    output = c.output(_name(record, "target_id", MAX_NAME), segment, target, number)
    judgment = c.new_judgment(output, c.rater(_name(record, "annotator", MAX_RATER)), number, score)
    for span in spans:
        c.add_span(judgment, span["start"], span["end"], span["severity"], span.get("category"))


def appraise_lines(campaign: Campaign) -> Iterator[str]:
    """The campaign's judgments as Appraise's JSONL results, spans in UTF-16 with inclusive ends."""
    for (external_id, username, system, doc, _domain, position, _segment, _global, source, target, score, spans,
         _wave, *_media_and_instructions) in single_judgments(campaign):
        annotations = []
        for span in spans or ():
            one = {"start_i": code_point_to_utf16(target, span["start"]),
                   "end_i": code_point_to_utf16(target, span["end"]) - 1, "severity": span["severity"]}
            if span.get("category"):
                one["category"] = span["category"]
            annotations.append(one)
        yield json.dumps({
            "annotator": external_id or username, "target_id": system, "document_id": doc, "item_id": position,
            "item_type": "TGT", "source_text": source, "target_text": target, "score": score,
            "mqm_annotations": json.dumps(annotations, ensure_ascii=False),
            "source_language": campaign.source_language, "target_language": campaign.target_language,
            "task_type": "Document"}, ensure_ascii=False) + "\n"


def _writes(spec) -> bool:
    return spec.name in PROTOCOLS


#: The esa and mqm protocols' Appraise format, read and written.
APPRAISE = JudgmentFormat("appraise", parse_appraise, listed=7, protocols=PROTOCOLS, text_options={
    "pair": LANGUAGES_HELP})
APPRAISE_JSONL = ExportFormat("appraise-jsonl", appraise_lines, "application/x-ndjson; charset=utf-8", "jsonl",
                              _writes)
