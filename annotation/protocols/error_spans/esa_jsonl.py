"""The `esa-jsonl` format of judgments collected elsewhere (docs/api.md §5.5): one ESA judgment a line, imported
into an analysis-only campaign of protocol `esa` (store.py: what is collected, how it is stored, the
offsets' convention).

One object per judged segment `{"system", "doc_id", "seg_id", "rater", "score", "spans", "domain"?, "source"?,
"target"?, "wave"?, "media"?, "doc_media"?}` (media: docs/api.md §2.1, kept and exported, never fetched); `wave`
is the annotation wave, an integer from 1 (default 1; WMT25 counts two waves' ratings
of an item as two observations, docs/methods.md §11), kept in the item's payload when not 1; spans `{"start",
"end", "severity", "category"?}` checked by building.spans (minor, major, critical; no overlaps) against the
target where a line of the same segment gives it.
"""
from __future__ import annotations

import json
from collections.abc import Iterable

from annotation.building.campaign_files import MAX_TEXT, Problems, too_deep, unstorable
from annotation.building.instructions import MAX_INSTRUCTIONS
from annotation.building.judgment_files import JudgmentFormat
from annotation.building.media_records import parsed_media
from annotation.building.spans import SEVERITIES, SpanError, check_spans
from annotation.building.text_lines import bounded_number, numbered_lines
from annotation.protocols.error_spans.store import (
    INTEGER,
    LANGUAGES_HELP,
    LIMIT,
    MAX_CATEGORY,
    MAX_NAME,
    MAX_RATER,
    Collected,
    ErrorSpanJudgments,
    checked_name,
    language_pair,
    parsed_error_spans,
)

ESA_FIELDS = ("system", "doc_id", "seg_id", "rater", "score", "spans", "domain", "source", "target", "wave", "media",
              "doc_media", "instructions")
ESA_REQUIRED = ("system", "doc_id", "seg_id", "rater", "score")
MAX_DOMAIN = 100
_NO_CATEGORY = object()


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def check_esa_spans(spans, text: str) -> list[dict]:
    """building.spans' checks (minor/major/critical, no overlaps, omissions at the end) with an optional
    category on each span; raises SpanError."""
    if not isinstance(spans, list):
        raise SpanError("'spans' must be a list of {\"start\", \"end\", \"severity\"} objects")
    given, prepared = [], []
    for index, span in enumerate(spans):
        if isinstance(span, dict) and "category" in span:
            category = span["category"]
            if not isinstance(category, str) or not category or len(category) > MAX_CATEGORY or unstorable(category):
                raise SpanError(f"span {index}: 'category' must be a text of 1 to {MAX_CATEGORY} characters")
            given.append(category)
            prepared.append(span)
        else:
            prepared.append({**span, "category": _NO_CATEGORY} if isinstance(span, dict) else span)
    checked = check_spans(prepared, text, SEVERITIES, [*given, _NO_CATEGORY])
    for span in checked:
        if span.get("category") is _NO_CATEGORY:
            del span["category"]
    return checked


def _text(record: dict, key: str, longest: int, required: bool = True) -> str | None:
    value = record.get(key)
    if value is None and not required:
        return None
    if key == "doc_id" and isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise ValueError(f"'{key}' must be a text")
    if value or required:
        checked_name(value, f"'{key}'", longest)
    if unstorable(value):
        raise ValueError(f"'{key}' must not contain NUL characters or lone surrogates")
    return value


def _seg_id(value) -> int:
    if isinstance(value, str) and INTEGER.fullmatch(value.strip()):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not -LIMIT <= value < LIMIT:
        raise ValueError(f"'seg_id' must be an integer below 2^31, not {str(value)[:20]!r}")
    return value


def _wave(value) -> int:
    """The annotation wave: an integer from 1 below 2^31 (a JSON integer, not a boolean)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value < LIMIT:
        raise ValueError(f"'wave' must be an integer from 1 below 2^31, not {str(value)[:20]!r}")
    return value


def parse_esa_jsonl(lines: Iterable[bytes | str], pair: str | None = None) -> ErrorSpanJudgments:
    """Validate an ESA JSON Lines file; `pair`: the languages, e.g. en-de."""
    languages = language_pair(pair)
    problems = Problems()
    c = Collected()
    unchecked: list[tuple[int, int, list]] = []  # (line, output, spans) checked without their text
    seen_any = False
    for number, raw in numbered_lines(lines, problems):
        text = raw.strip()
        if not text:
            continue
        seen_any = True
        try:
            _line(c, number, text, unchecked)
        except (ValueError, SpanError) as exc:
            problems.append((number, str(exc)))
    for number, output, spans in unchecked:  # a text given on a later line of the same segment
        if problems:
            break
        target = c.out_text[output]
        if target is not None:
            try:
                check_esa_spans(spans, target)
            except SpanError as exc:
                problems.append((number, str(exc)))
    return parsed_error_spans(c, problems, empty=not seen_any, fmt="esa-jsonl", protocol="esa", languages=languages)


def _line(c: Collected, number: int, text: str, unchecked: list) -> None:
    """Collect one line's judgment; ValueError or SpanError."""
    if too_deep(text):
        raise ValueError("the JSON nests too deep")
    try:
        record = json.loads(text, parse_constant=_no_constant)
    except ValueError as exc:
        if "digits" in str(exc):
            raise ValueError("a number has more than 4300 digits") from None
        raise ValueError(f"not valid JSON: {str(exc)[:120]}") from None
    if not isinstance(record, dict):
        raise ValueError("a line must be a JSON object")
    unknown = sorted(set(record) - set(ESA_FIELDS))
    if unknown:
        raise ValueError(f"unexpected field {unknown[0][:40]!r}; the fields are {', '.join(ESA_FIELDS)}")
    missing = [k for k in ESA_REQUIRED if k not in record]
    if missing:
        raise ValueError(f"'{missing[0]}' is missing")
    system = _text(record, "system", MAX_NAME)
    doc = _text(record, "doc_id", MAX_NAME)
    rater = _text(record, "rater", MAX_RATER)
    seg_id = _seg_id(record["seg_id"])
    score = bounded_number(record["score"], "'score'", 0, 100)
    wave = _wave(record["wave"]) if "wave" in record else 1
    domain = _text(record, "domain", MAX_DOMAIN, required=False)
    source = _text(record, "source", MAX_TEXT, required=False)
    target = _text(record, "target", MAX_TEXT, required=False)
    instructions = _text(record, "instructions", MAX_INSTRUCTIONS, required=False)
    spans = record.get("spans", [])
    doc_index = c.document(doc)
    if domain:
        known = c.doc_domains[doc_index]
        if known and known != domain:
            raise ValueError(f"document {doc[:40]!r} is in domain {known[:40]!r} on an earlier line and in "
                             f"{domain[:40]!r} here; a document has one domain")
        c.doc_domains[doc_index] = domain
    segment = c.segment(doc_index, seg_id, source, number)
    c.instructions(segment, instructions)
    _media(c, record, doc_index, segment)
    output = c.output(system, segment, target, number)
    known = c.out_text[output]
    if known is not None:
        checked = check_esa_spans(spans, known)
    else:  # bounds unknown until a line gives the text: check all else against the longest span's end
        longest = max((s["end"] for s in spans if isinstance(s, dict) and isinstance(s.get("end"), int)
                       and not isinstance(s.get("end"), bool)), default=0) if isinstance(spans, list) else 0
        if longest > MAX_TEXT:
            raise SpanError(f"a span ends at {longest}, beyond the longest text allowed ({MAX_TEXT} characters)")
        checked = check_esa_spans(spans, " " * max(longest, 0))
        unchecked.append((number, output, spans))
    judgment = c.new_judgment(output, c.rater(rater), number, score, wave)
    for span in checked:
        c.add_span(judgment, span["start"], span["end"], span["severity"], span.get("category"))


def _media(c: Collected, record: dict, doc_index: int, segment: int) -> None:
    """A line's `media` and `doc_media` (docs/api.md §2.1), kept per segment and document; several lines of one
    segment (or document) must agree."""
    for key, held, at in (("media", c.seg_media, segment), ("doc_media", c.doc_media, doc_index)):
        media = parsed_media(record, key)
        if media is None:
            continue
        if held.get(at, media) != media:
            raise ValueError(f"'{key}' differs from an earlier line's of the same "
                             f"{'segment' if key == 'media' else 'document'}")
        held[at] = media


#: The esa protocol's judgment format.
ESA_JSONL = JudgmentFormat("esa-jsonl", parse_esa_jsonl, listed=3, protocols=("esa",), text_options={
    "pair": LANGUAGES_HELP})
