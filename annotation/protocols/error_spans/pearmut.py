"""Pearmut's annotation export (docs/api.md §5.8): its log as JSON Lines, a line per rater and item (a document
of segments), imported into an `esa` or `mqm` campaign, and written back (`pearmut-jsonl`) so that the file
re-imports to the same judgments.

    {"user_id": "alice", "item_i": 0, "item": [{"src": "…", "tgt": {"GPT-4": "…", "Claude": "…"}}],
     "annotation": [{"GPT-4": {"score": 85, "error_spans": [{"start_i": 21, "end_i": 25, "severity": "minor",
     "category": null}]}, "Claude": {"score": 92, "error_spans": []}}], "comment": "…", "time": 45}

`item` and `annotation` are aligned lists (a segment each; one object each is read as a list of one); without
`item` the texts are unknown and spans are checked against their own ends only. Pearmut's span ends are
**inclusive**: `[start_i, end_i]` is stored half-open as `[start_i, end_i + 1)` (code points); an omission (the
platform's empty span at the end of the text) is written `start_i = len, end_i = len - 1`. The document is
`item_i` and a segment's number its place in `item` (from 1); other fields (`comment`, `actions`, `time`) are not
kept."""
from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from annotation.building.campaign_files import MAX_TEXT, Problems, unstorable
from annotation.building.json_records import json_records
from annotation.building.judgment_files import ExportFormat, JudgmentFormat
from annotation.building.offsets import inclusive_spans
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


def _name(value, what: str, longest: int) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or unstorable(value):
        raise ValueError(f"'{what}' must be a text")
    return checked_name(value, f"'{what}'", longest)


def _text(value, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > MAX_TEXT or unstorable(value):
        raise ValueError(f"'{what}' must be a text of at most {MAX_TEXT} characters")
    return value


def half_open(spans, where: str) -> list[dict]:
    """Pearmut's spans (`start_i`, inclusive `end_i`) as the platform's half-open spans; ValueError if malformed."""
    if not isinstance(spans, list):
        raise ValueError(f"{where}: 'error_spans' must be a list")
    return inclusive_spans(spans, f"{where}: ")

def parse_pearmut(lines: Iterable[bytes | str], protocol: str = "esa", pair: str | None = None
                  ) -> ErrorSpanJudgments:
    """Validate Pearmut's annotation log; `protocol`: esa or mqm, the campaign it makes; `pair`: the languages."""
    if protocol not in PROTOCOLS:
        raise Problems([(0, f"protocol: pearmut imports into esa or mqm, not {str(protocol)[:40]!r}")]).refuse()
    languages = language_pair(pair)
    problems = Problems()
    c = Collected()
    seen_any = False
    for number, record in json_records(lines, problems):
        seen_any = True
        try:
            _record(c, number, record)
        except (ValueError, SpanError) as exc:
            problems.append((number, str(exc)))
    return parsed_error_spans(c, problems, empty=not seen_any, fmt="pearmut", protocol=protocol,
                              languages=languages)


def _record(c: Collected, number: int, record) -> None:
    if not isinstance(record, dict):
        raise ValueError("a line must be a JSON object")
    for key in ("user_id", "item_i", "annotation"):
        if key not in record:
            raise ValueError(f"'{key}' is missing")
    rater = c.rater(_name(record["user_id"], "user_id", MAX_RATER))
    doc = c.document(_name(record["item_i"], "item_i", MAX_NAME))
    annotation, items = record["annotation"], record.get("item")
    annotation = [annotation] if isinstance(annotation, dict) else annotation
    items = [items] if isinstance(items, dict) else items
    if not isinstance(annotation, list) or (items is not None and (not isinstance(items, list)
                                                                   or len(items) != len(annotation))):
        raise ValueError("'annotation' must be a list of objects, as long as 'item'")
    for position, judged in enumerate(annotation, start=1):
        if judged is None:  # a skipped segment
            continue
        item = items[position - 1] if items is not None else {}
        if not isinstance(judged, dict) or not isinstance(item, dict):
            raise ValueError(f"segment {position}: 'annotation' and 'item' hold objects")
        targets = item.get("tgt") or {}
        if not isinstance(targets, dict):
            raise ValueError(f"segment {position}: 'tgt' must map each model to its translation")
        segment = c.segment(doc, position, _text(item.get("src"), "src"), number)
        for model, answer in judged.items():
            where = f"segment {position}, model {model[:40]!r}"
            if not isinstance(answer, dict):
                raise ValueError(f"{where}: the annotation must be an object")
            target = _text(targets.get(model), "tgt")
            output = c.output(_name(model, "model", MAX_NAME), segment, target, number)
            spans = half_open(answer.get("error_spans") or [], where)
            known = c.out_text[output]
            longest = max((s["end"] for s in spans), default=0)
            try:
                checked = check_esa_spans(spans, known if known is not None else " " * min(longest, MAX_TEXT))
            except SpanError as exc:
                raise SpanError(f"{where}: {exc}") from None
            score = answer.get("score")
            score = float("nan") if score is None else bounded_number(score, f"{where}: 'score'", 0, 100)
            judgment = c.new_judgment(output, rater, number, score)
            for span in checked:
                c.add_span(judgment, span["start"], span["end"], span["severity"], span.get("category"))


def pearmut_lines(campaign: Campaign) -> Iterator[str]:
    """The campaign's judgments as Pearmut's log: a line per rater and document, segments in order."""
    lines: dict[tuple[str, str], dict[int, dict]] = {}
    for (external_id, username, system, doc, _domain, position, _segment, _global, source, target, score, spans,
         _wave, *_media_and_instructions) in single_judgments(campaign):
        segments = lines.setdefault((external_id or username, doc), {})
        item, judged = segments.setdefault(position, ({"src": source, "tgt": {}}, {}))
        item["tgt"][system] = target
        judged[system] = {"score": score, "error_spans": [
            {"start_i": s["start"], "end_i": s["end"] - 1, "severity": s["severity"],
             "category": s.get("category")} for s in spans or ()]}
    for (rater, doc), segments in lines.items():
        numbers = range(1, max(segments) + 1)
        item_i = int(doc) if doc.isdigit() else doc
        yield json.dumps({"user_id": rater, "item_i": item_i,
                          "item": [segments[n][0] if n in segments else {} for n in numbers],
                          "annotation": [segments[n][1] if n in segments else None for n in numbers]},
                         ensure_ascii=False) + "\n"


def _writes(spec) -> bool:
    return spec.name in PROTOCOLS


#: The esa and mqm protocols' Pearmut format, read and written.
PEARMUT = JudgmentFormat("pearmut", parse_pearmut, listed=6, protocols=PROTOCOLS, text_options={"pair": LANGUAGES_HELP})
PEARMUT_JSONL = ExportFormat("pearmut-jsonl", pearmut_lines, "application/x-ndjson; charset=utf-8", "jsonl", _writes)
