"""The error-span formats of judgments collected elsewhere (docs/api.md §5.4, §5.5): `mqm-tsv`, Google's
published MQM files, and `esa-jsonl`, one ESA judgment a line. Both import into an analysis-only campaign of
protocol `mqm` or `esa` with the texts, so the document view, the statistics and the export work as for a
campaign annotated here; evaluation/services/export.py writes both formats back, and an export re-imports to
the same judgments.

Offsets are half-open `[start, end)` in Unicode code points of the text without `<v>` marks (Python's `len`);
an error with no span is a zero-length span at the end of the translation (the omission convention of
services/spans.py).

mqm-tsv: a header naming the columns `system doc doc_id seg_id rater source target category severity` and
optionally `comment` (other columns are ignored), then one row per error, fields split on tabs with no quote
handling. A row's span is marked `<v>…</v>` in the source or the target; a row without marks is an error
without a span; a `No-error` row with no marks only says the rater rated the segment. The rows of one (system,
doc, doc_id, rater) are one judgment; spans may overlap (raters did mark overlapping errors). A row is one
error, however many spans it marks (a few published rows mark two): it weighs once, and its span is the first
marked in the target, else in the source (the export writes that one). Categories are kept as given,
severities lower-cased; source-side spans carry `"side": "source"`.

esa-jsonl: one object per judged segment `{"system", "doc_id", "seg_id", "rater", "score", "spans",
"domain"?, "source"?, "target"?}`; spans `{"start", "end", "severity", "category"?}` checked by
services.spans (minor, major, critical; no overlaps) against the target where a line of the same
segment gives it.

Parsing keeps what it collects in flat arrays (no object per row): 1.5 million rows fit in a few hundred MB.
"""
from __future__ import annotations

import json
import math
import re
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import itemgetter

import numpy as np
from django.utils import timezone

from ..models import (
    Annotator,
    Assignment,
    Campaign,
    Document,
    Hit,
    HitItem,
    Judgment,
    Segment,
    System,
    SystemOutput,
    new_token,
)
from .bulk import insert
from .campaign_import import (
    MAX_TEXT,
    CampaignFileError,
    Problems,
    study_named,
    too_deep,
    unique_slug,
    unstorable,
)
from .judgment_import import JudgmentImportResult, ParsedJudgments
from .spans import SEVERITIES, SpanError, check_spans
from .text_lines import is_binary_file, numbered_lines, split_binary

MQM_COLUMNS = ("system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity")
MQM_OPTIONAL = ("comment",)
#: A category that marks a rating with nothing wrong (compared lower-cased, as the statistics do).
NO_ERROR = ("no-error", "no error")
ESA_FIELDS = ("system", "doc_id", "seg_id", "rater", "score", "spans", "domain", "source", "target")
ESA_REQUIRED = ("system", "doc_id", "seg_id", "rater", "score")
MAX_NAME, MAX_RATER, MAX_CATEGORY, MAX_SEVERITY, MAX_DOMAIN, MAX_LANGUAGE = 200, 255, 100, 32, 100, 16
#: Items per imported HIT: a rater's judgments are split into HITs of this many (positions are small integers).
HIT_ITEMS = 1000
_INTEGER = re.compile(r"[+-]?\d{1,10}")
_MARK = re.compile(r"(</?v>)")
_LIMIT = 2**31


def strip_marks(text: str, what: str = "text") -> tuple[str, list[tuple[int, int]]]:
    """The text without its `<v>`/`</v>` marks and the marked spans as code-point offsets into it; ValueError
    ("<what>: …") when the marks do not pair up."""
    if "<v>" not in text and "</v>" not in text:
        return text, []
    opened = text.find("<v>")
    closed = text.find("</v>")
    if opened < closed and text.count("<v>") == 1 and text.count("</v>") == 1:  # one span: most rows
        return text[:opened] + text[opened + 3:closed] + text[closed + 4:], [(opened, closed - 3)]
    pieces = _MARK.split(text)
    kept, spans, length, start = [], [], 0, None
    for i, piece in enumerate(pieces):
        if i % 2 == 0:
            kept.append(piece)
            length += len(piece)
        elif piece == "<v>":
            if start is not None:
                raise ValueError(f"{what}: a <v> opens inside another <v>…</v>")
            start = length
        else:
            if start is None:
                raise ValueError(f"{what}: a </v> closes no <v>")
            spans.append((start, length))
            start = None
    if start is not None:
        raise ValueError(f"{what}: a <v> is not closed by </v>")
    return "".join(kept), spans


def _integer(text: str, what: str) -> int:
    if text.isascii() and text.isdigit() and len(text) < 10:
        return int(text)
    if not _INTEGER.fullmatch(text) or not -_LIMIT <= int(text) < _LIMIT:
        raise ValueError(f"{what} must be an integer below 2^31, not {text[:20]!r}")
    return int(text)


def _name(value: str, what: str, longest: int) -> str:
    if not value:
        raise ValueError(f"{what} is empty")
    if len(value) > longest:
        raise ValueError(f"{what} must be at most {longest} characters, not {len(value)}")
    return value


def _languages(pair: str | None) -> tuple[str, str]:
    """`pair` as (source, target) language codes: 'en-de' or 'en_US-de_DE'."""
    if pair is None:
        return "", ""
    parts = pair.strip().split("-") if isinstance(pair, str) else []
    if len(parts) != 2 or not all(0 < len(p) <= MAX_LANGUAGE and p.replace("_", "").isalnum() for p in parts):
        raise CampaignFileError([(0, "pair: the languages as source-target, e.g. en-de")])
    return parts[0], parts[1]


@dataclass
class Collected:
    """What a file holds, as indices into interned names and flat arrays (docs, segments, outputs, raters,
    judgments, spans), in the order first seen."""

    docs: dict[str, int] = field(default_factory=dict)
    doc_domains: list[str] = field(default_factory=list)
    segments: dict[int, int] = field(default_factory=dict)
    seg_doc: array = field(default_factory=lambda: array("q"))
    seg_number: array = field(default_factory=lambda: array("q"))
    seg_line: array = field(default_factory=lambda: array("q"))
    seg_source: list = field(default_factory=list)
    systems: dict[str, int] = field(default_factory=dict)
    outputs: dict[int, int] = field(default_factory=dict)
    out_system: array = field(default_factory=lambda: array("q"))
    out_segment: array = field(default_factory=lambda: array("q"))
    out_line: array = field(default_factory=lambda: array("q"))
    out_text: list = field(default_factory=list)
    #: MQM: the output's global `seg_id` (kept in each judgment's item payload and written back on export).
    out_global: array = field(default_factory=lambda: array("q"))
    raters: dict[str, int] = field(default_factory=dict)
    judgments: dict[int, int] = field(default_factory=dict)
    j_output: array = field(default_factory=lambda: array("q"))
    j_rater: array = field(default_factory=lambda: array("q"))
    j_line: array = field(default_factory=lambda: array("q"))
    j_score: array = field(default_factory=lambda: array("d"))
    s_judgment: array = field(default_factory=lambda: array("q"))
    s_start: array = field(default_factory=lambda: array("q"))
    s_end: array = field(default_factory=lambda: array("q"))
    s_severity: array = field(default_factory=lambda: array("l"))
    s_category: array = field(default_factory=lambda: array("l"))
    s_source_side: array = field(default_factory=lambda: array("b"))
    severities: dict[str, int] = field(default_factory=dict)
    categories: dict[str, int] = field(default_factory=dict)

    def document(self, name: str) -> int:
        index = self.docs.get(name)
        if index is None:
            index = self.docs[name] = len(self.docs)
            self.doc_domains.append("")
        return index

    def segment(self, doc: int, number: int, source: str | None, line: int) -> tuple[int, str | None]:
        """The segment's index, and a problem if `source` differs from the source seen before (None: unknown)."""
        key = (doc << 32) | (number + _LIMIT)
        index = self.segments.get(key)
        if index is None:
            index = self.segments[key] = len(self.seg_line)
            self.seg_doc.append(doc)
            self.seg_number.append(number)
            self.seg_line.append(line)
            self.seg_source.append(source)
            return index, None
        known = self.seg_source[index]
        if source is not None and known != source:
            if known is None:
                self.seg_source[index] = source
            else:
                return index, f"the source differs from the one on line {self.seg_line[index]} for the same segment"
        return index, None

    def output(self, system: str, segment: int, text: str | None, line: int, global_id: int = 0
               ) -> tuple[int, str | None]:
        sys_index = self.systems.get(system)
        if sys_index is None:
            sys_index = self.systems[system] = len(self.systems)
        key = (sys_index << 40) | segment
        index = self.outputs.get(key)
        if index is None:
            index = self.outputs[key] = len(self.out_line)
            self.out_system.append(sys_index)
            self.out_segment.append(segment)
            self.out_line.append(line)
            self.out_text.append(text)
            self.out_global.append(global_id)
            return index, None
        known = self.out_text[index]
        if text is not None and known != text:
            if known is None:
                self.out_text[index] = text
            else:
                return index, (f"the translation differs from the one on line {self.out_line[index]} for the same "
                               "system and segment")
        if global_id != self.out_global[index]:
            return index, (f"seg_id is {global_id} here but {self.out_global[index]} on line {self.out_line[index]} "
                           "for the same system and segment")
        return index, None

    def rater(self, name: str) -> int:
        index = self.raters.get(name)
        if index is None:
            index = self.raters[name] = len(self.raters)
        return index

    def new_judgment(self, output: int, rater: int, line: int, score: float = math.nan) -> int:
        index = len(self.j_line)
        self.j_output.append(output)
        self.j_rater.append(rater)
        self.j_line.append(line)
        self.j_score.append(score)
        return index

    def add_span(self, judgment: int, start: int, end: int, severity: str, category: str | None,
                 source_side: bool = False) -> None:
        self.s_judgment.append(judgment)
        self.s_start.append(start)
        self.s_end.append(end)
        code = self.severities.get(severity)
        if code is None:
            code = self.severities[severity] = len(self.severities)
        self.s_severity.append(code)
        if category is None:
            self.s_category.append(-1)
        else:
            code = self.categories.get(category)
            if code is None:
                code = self.categories[category] = len(self.categories)
            self.s_category.append(code)
        self.s_source_side.append(source_side)

    def spans_by_judgment(self) -> tuple[list[int], list[int]]:
        """(span indices ordered by judgment, each judgment's first position in that order; one more at the
        end), the spans of a judgment in the order they were added."""
        n = len(self.j_line)
        owner = np.frombuffer(self.s_judgment, dtype=np.int64) if len(self.s_judgment) else np.zeros(0, np.int64)
        order = np.argsort(owner, kind="stable")
        starts = np.concatenate([[0], np.cumsum(np.bincount(owner, minlength=n))])
        return order.tolist(), starts.tolist()


@dataclass
class ErrorSpanJudgments(ParsedJudgments):
    """A parsed error-span file: `collected` instead of `rows`, stored by its own storer (documents, texts,
    domains and spans)."""

    collected: Collected | None = None
    #: Whether each item keeps its output's global `seg_id` (MQM files number segments across documents too).
    global_ids: bool = False

    def store(self, name: str, study: str | None = None, owner=None) -> JudgmentImportResult:
        return store_error_spans(self, name, study, owner)


# --------------------------------------------------------------------------- mqm-tsv


def _mqm_header(line: str) -> tuple[list[int], int]:
    """The positions of the nine MQM columns (read by name) and the number of fields; ValueError."""
    names = [name.strip().lower() for name in line.split("\t")]
    missing = [c for c in MQM_COLUMNS if c not in names]
    if missing:
        raise ValueError("the header must name the tab-separated columns " + " ".join(MQM_COLUMNS)
                         + " [comment]; missing: " + ", ".join(missing))
    twice = sorted({n for n in names if names.count(n) > 1 and n in (*MQM_COLUMNS, *MQM_OPTIONAL)})
    if twice:
        raise ValueError("the header names a column twice: " + ", ".join(twice))
    return [names.index(c) for c in MQM_COLUMNS], len(names)


def parse_mqm_tsv(lines: Iterable[bytes | str], pair: str | None = None) -> ErrorSpanJudgments:
    """Validate a Google MQM file (tab-separated, no quoting); `pair`: the languages, e.g. en-de.

    The rows of one judgment follow each other in Google's files: a row of the same system, doc, doc_id, seg_id
    and rater as the row before is checked only for what may differ (texts, marks, category, severity)."""
    source_language, target_language = _languages(pair)
    problems = Problems()
    c = Collected()
    texts = _TextWatch(lines)
    positions = fields_of = None
    width = 0
    previous, found = None, (0, 0, 0)
    spans_of, starts, ends, sides = c.s_judgment, c.s_start, c.s_end, c.s_source_side
    severity_codes: dict[str, int] = {}
    category_codes: dict[str, int] = {}
    for number, raw in numbered_lines(texts, problems):
        line = raw.rstrip("\r\n")
        if positions is None:
            try:
                positions, width = _mqm_header(line)
            except ValueError as exc:
                problems.append((number, str(exc)))
                break
            fields_of = itemgetter(*positions)
            continue
        fields = line.split("\t")
        if len(fields) != width:
            if line.strip():
                problems.append((number, f"expected {width} tab-separated fields, found {len(fields)}"))
            continue
        if "\x00" in line or (texts.surrogates_possible and unstorable(line)):
            named = [name for name, p in zip(MQM_COLUMNS, positions, strict=True) if unstorable(fields[p])]
            problems.append((number, f"{named[0] if named else 'a column'} must not contain NUL characters or "
                                     "lone surrogates"))
            continue
        system, doc, doc_id, seg_id, rater, source, target, category, severity = fields_of(fields)
        try:
            source_text, source_spans = strip_marks(source, "source")
            target_text, target_spans = strip_marks(target, "target")
            key = (system, doc, doc_id, seg_id, rater)
            if key != previous:
                found = _mqm_judgment(c, number, key, source_text, target_text)
                previous = key
            else:
                segment, output = found[1], found[2]
                if c.seg_source[segment] != source_text:
                    raise ValueError(f"the source differs from the one on line {c.seg_line[segment]} for the same "
                                     "segment")
                if c.out_text[output] != target_text:
                    raise ValueError(f"the translation differs from the one on line {c.out_line[output]} for the "
                                     "same system and segment")
            # A row is one error, however many spans it marks (a few published rows mark two): it weighs once,
            # and its span is the first marked in the target, else in the source.
            marked = len(source_spans) + len(target_spans)
            category_code = category_codes.get(category)
            if category_code is None:
                _name(category, "category", MAX_CATEGORY)
                category_code = category_codes[category] = -2 if category.lower() in NO_ERROR else len(
                    c.categories)
                if category_code >= 0:
                    c.categories[category] = category_code
            severity_code = severity_codes.get(severity)
            if severity_code is None:
                lower = _name(severity, "severity", MAX_SEVERITY).lower()
                severity_code = severity_codes[severity] = c.severities.setdefault(lower, len(c.severities))
        except ValueError as exc:
            problems.append((number, str(exc)))
            continue
        if not marked and category_code == -2:
            continue  # No-error: rated, nothing wrong
        if category_code == -2:  # a No-error category with a marked span: kept as given
            category_code = c.categories.setdefault(category, len(c.categories))
        spans_of.append(found[0])
        if target_spans:
            starts.append(target_spans[0][0])
            ends.append(target_spans[0][1])
        elif source_spans:
            starts.append(source_spans[0][0])
            ends.append(source_spans[0][1])
        else:
            starts.append(len(target_text))
            ends.append(len(target_text))
        c.s_severity.append(severity_code)
        c.s_category.append(category_code)
        sides.append(bool(source_spans) and not target_spans)
    if positions is None and not problems:
        problems.append((0, "the file is empty"))
    if not problems and not len(c.j_line):
        problems.append((0, "the file has no judgments"))
    if problems:
        raise problems.refuse()
    options = {"imported_format": "mqm-tsv", "mqm_weights": "google", "taxonomy": sorted(c.categories),
               "critical": "critical" in c.severities, "show_source": True, "perturbation_rate": 0.0}
    return ErrorSpanJudgments(rows=[], protocol="mqm", source_language=source_language,
                              target_language=target_language, options=options, collected=c, global_ids=True)


def _mqm_judgment(c: Collected, number: int, key: tuple[str, ...], source: str, target: str
                  ) -> tuple[int, int, int]:
    """The (judgment, segment, output) of a row that starts a judgment (or goes on with one seen before), its
    fields checked; ValueError."""
    system, doc, doc_id, seg_id, rater = key
    _name(system, "system", MAX_NAME)
    _name(doc, "doc", MAX_NAME)
    _name(rater, "rater", MAX_RATER)
    position = _integer(doc_id, "doc_id")
    global_id = _integer(seg_id, "seg_id")
    for text, what in ((source, "source"), (target, "target")):
        if len(text) > MAX_TEXT:
            raise ValueError(f"{what} must be at most {MAX_TEXT} characters, not {len(text)}")
    segment, problem = c.segment(c.document(doc), position, source, number)
    if problem:
        raise ValueError(problem)
    output, problem = c.output(system, segment, target, number, global_id)
    if problem:
        raise ValueError(problem)
    rater_index = c.rater(rater)
    judgment_key = (output << 32) | rater_index
    judgment = c.judgments.get(judgment_key)
    if judgment is None:
        judgment = c.judgments[judgment_key] = c.new_judgment(output, rater_index, number)
    return judgment, segment, output


class _TextWatch:
    """Lines passed on as they come, noting whether any came as text (str): only those can hold lone surrogates
    (bytes are decoded as strict UTF-8)."""

    def __init__(self, lines):
        self.lines = lines
        self.surrogates_possible = False

    def __iter__(self):
        if is_binary_file(self.lines):
            self.lines.seek(0)
            yield from (line for _, _, line in split_binary(self.lines.read))
            return
        for line in self.lines:
            if isinstance(line, str):
                self.surrogates_possible = True
            yield line


# --------------------------------------------------------------------------- esa-jsonl

_NO_CATEGORY = object()


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


def check_esa_spans(spans, text: str) -> list[dict]:
    """services.spans' checks (minor/major/critical, no overlaps, omissions at the end) with an optional
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
    if required and not value:
        raise ValueError(f"'{key}' is empty")
    if len(value) > longest:
        raise ValueError(f"'{key}' must be at most {longest} characters, not {len(value)}")
    if unstorable(value):
        raise ValueError(f"'{key}' must not contain NUL characters or lone surrogates")
    return value


def _seg_id(value) -> int:
    if isinstance(value, str) and _INTEGER.fullmatch(value.strip()):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not -_LIMIT <= value < _LIMIT:
        raise ValueError(f"'seg_id' must be an integer below 2^31, not {str(value)[:20]!r}")
    return value


def _score(value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"'score' must be a number from 0 to 100, not {str(value)[:20]!r}")
    if not math.isfinite(value) or not 0 <= value <= 100:
        raise ValueError(f"'score' must lie between 0 and 100, not {str(value)[:20]}")
    return float(value)


def parse_esa_jsonl(lines: Iterable[bytes | str], pair: str | None = None) -> ErrorSpanJudgments:
    """Validate an ESA JSON Lines file; `pair`: the languages, e.g. en-de."""
    source_language, target_language = _languages(pair)
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
            _esa_line(c, number, text, unchecked)
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
    if not seen_any and not problems:
        problems.append((0, "the file is empty"))
    elif not problems and not len(c.j_line):
        problems.append((0, "the file has no judgments"))
    if problems:
        raise problems.refuse()
    options = {"imported_format": "esa-jsonl", "show_source": True, "perturbation_rate": 0.0}
    return ErrorSpanJudgments(rows=[], protocol="esa", source_language=source_language,
                              target_language=target_language, options=options, collected=c)


def _esa_line(c: Collected, number: int, text: str, unchecked: list) -> None:
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
    score = _score(record["score"])
    domain = _text(record, "domain", MAX_DOMAIN, required=False)
    source = _text(record, "source", MAX_TEXT, required=False)
    target = _text(record, "target", MAX_TEXT, required=False)
    spans = record.get("spans", [])
    doc_index = c.document(doc)
    if domain:
        known = c.doc_domains[doc_index]
        if known and known != domain:
            raise ValueError(f"document {doc[:40]!r} is in domain {known[:40]!r} on an earlier line and in "
                             f"{domain[:40]!r} here; a document has one domain")
        c.doc_domains[doc_index] = domain
    segment, problem = c.segment(doc_index, seg_id, source, number)
    if problem:
        raise ValueError(problem)
    output, problem = c.output(system, segment, target, number)
    if problem:
        raise ValueError(problem)
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
    judgment = c.new_judgment(output, c.rater(rater), number, score)
    for span in checked:
        c.add_span(judgment, span["start"], span["end"], span["severity"], span.get("category"))


# --------------------------------------------------------------------------- storing


def store_error_spans(parsed: ErrorSpanJudgments, name: str, study: str | None = None, owner=None
                      ) -> JudgmentImportResult:
    """Write a parsed error-span file: documents (with domains), segments (sources), systems, outputs
    (translations), one completed assignment per rater and HIT of at most HIT_ITEMS items (a rater's judgments in
    file order), an item and a judgment with its spans per judged segment. Bulk inserts (COPY on PostgreSQL)."""
    c = parsed.collected
    now = timezone.now()
    campaign = Campaign.objects.create(
        name=name, slug=unique_slug(name), protocol=parsed.protocol, analysis_only=True, options=parsed.options,
        study=study_named(study, owner), owner=owner, status=Campaign.Status.CLOSED,
        source_language=parsed.source_language, target_language=parsed.target_language, hit_size=HIT_ITEMS)
    pk = campaign.pk
    doc_names = list(c.docs)
    doc_pks = insert(Document, ["campaign_id", "doc_id", "position", "domain"],
                     [(pk, d, i, c.doc_domains[i]) for i, d in enumerate(doc_names)])
    n_seg = len(c.seg_line)
    seg_order = sorted(range(n_seg), key=lambda s: (c.seg_doc[s], c.seg_number[s]))
    seg_pks = array("q", bytes(8 * n_seg))
    for s, seg_pk in zip(seg_order, insert(
            Segment, ["campaign_id", "document_id", "seg_id", "source", "reference"],
            ((pk, doc_pks[c.seg_doc[s]], c.seg_number[s], c.seg_source[s] or "", "") for s in seg_order),
            count=n_seg), strict=True):
        seg_pks[s] = seg_pk
    system_names = sorted(c.systems)
    system_pk = {s.name: s.pk for s in System.objects.bulk_create([System(campaign=campaign, name=n)
                                                                   for n in system_names])}
    sys_pks = [0] * len(c.systems)
    for system, index in c.systems.items():
        sys_pks[index] = system_pk[system]
    n_out = len(c.out_line)
    out_order = sorted(range(n_out), key=lambda o: (seg_pks[c.out_segment[o]], sys_pks[c.out_system[o]]))
    out_pks = array("q", bytes(8 * n_out))
    for o, out_pk in zip(out_order, insert(
            SystemOutput, ["campaign_id", "segment_id", "system_id", "text"],
            ((pk, seg_pks[c.out_segment[o]], sys_pks[c.out_system[o]], c.out_text[o] or "") for o in out_order),
            count=n_out), strict=True):
        out_pks[o] = out_pk
    annotator_pks = _annotators(list(c.raters))

    # HITs: each rater's judgments in file order, HIT_ITEMS at a time
    n = len(c.j_line)
    by_rater = np.argsort(np.frombuffer(c.j_rater, dtype=np.int64), kind="stable").tolist()
    chunks: list[tuple[int, int, int]] = []  # (rater, first, end) in by_rater
    first = 0
    while first < n:
        rater = c.j_rater[by_rater[first]]
        end = first
        while end < n and end - first < HIT_ITEMS and c.j_rater[by_rater[end]] == rater:
            end += 1
        chunks.append((rater, first, end))
        first = end
    rater_names = list(c.raters)
    hit_pks = insert(Hit, ["campaign_id", "number", "size", "external_id"],
                     [(pk, number + 1, end - first, rater_names[rater][:100])
                      for number, (rater, first, end) in enumerate(chunks)])
    assignment_pks = insert(
        Assignment, ["campaign_id", "hit_id", "annotator_id", "token", "status", "position", "started_at",
                     "last_activity_at", "completed_at", "completion_code"],
        [(pk, hit_pk, annotator_pks[rater], new_token(), Assignment.Status.COMPLETED, end - first, now, now, now, "")
         for hit_pk, (rater, first, end) in zip(hit_pks, chunks, strict=True)])
    global_ids = parsed.global_ids

    def items():
        for hit_pk, (_, first, end) in zip(hit_pks, chunks, strict=True):
            for position in range(end - first):
                output = c.j_output[by_rater[first + position]]
                yield (hit_pk, position, position // 10, "system", seg_pks[c.out_segment[output]],
                       out_pks[output], "", {"seg_id": c.out_global[output]} if global_ids else {})

    item_pks = insert(HitItem, ["hit_id", "position", "set_index", "item_type", "segment_id", "output_id", "text",
                                "payload"], items(), count=n)
    span_order, span_starts = c.spans_by_judgment()
    severities, categories = list(c.severities), list(c.categories)
    starts, ends, sevs, cats, sides = c.s_start, c.s_end, c.s_severity, c.s_category, c.s_source_side

    def spans_of(j: int) -> list[dict]:
        spans = []
        for s in span_order[span_starts[j]:span_starts[j + 1]]:
            span = {"start": starts[s], "end": ends[s], "severity": severities[sevs[s]]}
            if cats[s] >= 0:
                span["category"] = categories[cats[s]]
            if sides[s]:
                span["side"] = "source"
            spans.append(span)
        return spans

    def judgments():
        for assignment_pk, (rater, first, end) in zip(assignment_pks, chunks, strict=True):
            annotator = annotator_pks[rater]
            for k in range(first, end):
                j = by_rater[k]
                score = c.j_score[j]
                yield (pk, assignment_pk, annotator, item_pks[k], None if math.isnan(score) else score,
                       spans_of(j), now)

    insert(Judgment, ["campaign_id", "assignment_id", "annotator_id", "item_id", "score", "spans", "created_at"],
           judgments(), count=n, return_ids=False)
    return JudgmentImportResult(campaign=campaign, judgments=n)


def _annotators(names: list[str]) -> list[int]:
    """The annotator pk of each rater (by external id), created where new."""
    known = dict(Annotator.objects.filter(external_id__in=names).values_list("external_id", "pk"))
    new = [w for w in names if w not in known]
    Annotator.objects.bulk_create([Annotator(external_id=w, source="imported") for w in new], batch_size=5000)
    known.update(Annotator.objects.filter(external_id__in=new).values_list("external_id", "pk"))
    return [known[w] for w in names]
