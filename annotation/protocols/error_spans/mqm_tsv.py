"""The `mqm-tsv` format of judgments collected elsewhere (docs/api.md §5.4): Google's published MQM files,
imported into an analysis-only campaign of protocol `mqm` (store.py: what is collected, how it is
stored, the offsets' convention).

A header naming the columns `system doc doc_id seg_id rater source target category severity` and optionally
`comment` (other columns are ignored), then one row per error, fields split on tabs with no quote handling. A
row's span is marked `<v>…</v>` in the source or the target (a `<v>` never closed runs to the end of the text,
with a warning naming the lines: Google's TED files hold one each); a row without marks is an error without a span; a
`No-error` row with no marks only says the rater rated the segment. The rows of one (system, doc, doc_id, rater)
are one judgment; spans may overlap (raters did mark overlapping errors). A row is one error, however many spans
it marks (a few published rows mark two): it weighs once, and its span is the first marked in the target, else
in the source (the export writes that one). Categories are kept as given, severities lower-cased; source-side
spans carry `"side": "source"`. A cell that starts with an apostrophe and then =, +, - or @ (or with more
apostrophes and then one of these) is read without its first apostrophe: the export's guard against
spreadsheet formulas (`spreadsheet_safe`).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from operator import itemgetter

from annotation.building.campaign_files import MAX_TEXT, Problems, unstorable
from annotation.building.judgment_files import JudgmentFormat, lines_warning
from annotation.building.text_lines import is_binary_file, numbered_lines, split_binary
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

MQM_COLUMNS = ("system", "doc", "doc_id", "seg_id", "rater", "source", "target", "category", "severity")
MQM_OPTIONAL = ("comment",)
#: A category that marks a rating with nothing wrong (compared lower-cased, as the statistics do).
NO_ERROR = ("no-error", "no error")
MAX_SEVERITY = 32
#: The category code of a No-error row while parsing (it is not a category unless the row marks a span).
_NO_ERROR_CODE = -2
_MARK = re.compile(r"(</?v>)")


#: The start of a cell a spreadsheet runs as a formula, after any apostrophes (see `spreadsheet_safe`).
_FORMULA = re.compile(r"'*[=+\-@\t\r]")


def spreadsheet_safe(text: str) -> str:
    """A cell of the mqm-tsv export that no spreadsheet runs (docs/api.md §6.4): an apostrophe before a text that
    starts like a formula (=, +, -, @) or with apostrophes and then like one; `spreadsheet_text` undoes it."""
    return "'" + text if _FORMULA.match(text) else text


def spreadsheet_text(cell: str) -> str:
    """A cell of an mqm-tsv file as text: an apostrophe before what starts like a formula (or like a quoted one)
    is taken off, as spreadsheets show it; every other cell is kept as given (a leading apostrophe too)."""
    return cell[1:] if cell[:1] == "'" and _FORMULA.match(cell, 1) else cell


def strip_marks(text: str, what: str = "text", unclosed: list[str] | None = None) -> tuple[str, list[tuple[int, int]]]:
    """The text without its `<v>`/`</v>` marks and the marked spans as code-point offsets into it; ValueError
    ("<what>: …") when a `<v>` opens inside another or a `</v>` closes none. A last `<v>` never closed (Google's
    TED files hold one each) marks a span running to the end of the text, and `what` is added to `unclosed`: the
    MQM weight does not depend on where a span ends (docs/methods.md §11)."""
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
        spans.append((start, length))
        if unclosed is not None:
            unclosed.append(what)
    return "".join(kept), spans


def _integer(text: str, what: str) -> int:
    if text.isascii() and text.isdigit() and len(text) < 10:
        return int(text)
    if not INTEGER.fullmatch(text) or not -LIMIT <= int(text) < LIMIT:
        raise ValueError(f"{what} must be an integer below 2^31, not {text[:20]!r}")
    return int(text)


def _header(line: str) -> tuple[list[int], int]:
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
    languages = language_pair(pair)
    problems = Problems()
    c = Collected()
    texts = _TextWatch(lines)
    positions = fields_of = None
    width = 0
    previous, found = None, (0, 0, 0)
    severity_codes: dict[str, int] = {}
    category_codes: dict[str, int] = {}
    unclosed: list[str] = []
    unclosed_lines: list[int] = []
    for number, raw in numbered_lines(texts, problems):
        line = raw.rstrip("\r\n")
        if positions is None:
            try:
                positions, width = _header(line)
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
        if "'" in line:  # a cell the export quoted against spreadsheet formulas
            system, doc, rater, source, target, category, severity = map(
                spreadsheet_text, (system, doc, rater, source, target, category, severity))
        try:
            source_text, source_spans = strip_marks(source, "source", unclosed)
            target_text, target_spans = strip_marks(target, "target", unclosed)
            if unclosed:
                unclosed_lines.append(number)
                unclosed.clear()
            key = (system, doc, doc_id, seg_id, rater)
            if key != previous:
                found = _judgment(c, number, key, source_text, target_text)
                previous = key
            else:
                c.check_source(found[1], source_text)
                c.check_translation(found[2], target_text)
            marked = len(source_spans) + len(target_spans)
            category_code = category_codes.get(category)
            if category_code is None:
                checked_name(category, "category", MAX_CATEGORY)
                category_code = category_codes[category] = _NO_ERROR_CODE if category.lower() in NO_ERROR else len(
                    c.categories)
                if category_code >= 0:
                    c.categories[category] = category_code
            severity_code = severity_codes.get(severity)
            if severity_code is None:
                lower = checked_name(severity, "severity", MAX_SEVERITY).lower()
                severity_code = severity_codes[severity] = c.severities.setdefault(lower, len(c.severities))
        except ValueError as exc:
            problems.append((number, str(exc)))
            continue
        if category_code == _NO_ERROR_CODE:
            if not marked:
                continue  # rated, nothing wrong
            category_code = c.categories.setdefault(category, len(c.categories))  # a marked span: kept as given
        # A row is one error, however many spans it marks (a few published rows mark two): it weighs once,
        # and its span is the first marked in the target, else in the source.
        if target_spans:
            start, end = target_spans[0]
        elif source_spans:
            start, end = source_spans[0]
        else:
            start = end = len(target_text)
        c.append_span(found[0], start, end, severity_code, category_code, bool(source_spans) and not target_spans)
    options = {"mqm_weights": "google", "taxonomy": sorted(c.categories), "critical": "critical" in c.severities}
    parsed = parsed_error_spans(c, problems, empty=positions is None, fmt="mqm-tsv", protocol="mqm",
                                languages=languages, options=options, global_ids=True)
    if unclosed_lines:
        parsed.warnings.append(lines_warning("a <v> is never closed by </v>: its span runs to the end of the text",
                                             unclosed_lines))
    return parsed


def _judgment(c: Collected, number: int, key: tuple[str, ...], source: str, target: str) -> tuple[int, int, int]:
    """The (judgment, segment, output) of a row that starts a judgment (or goes on with one seen before), its
    fields checked; ValueError."""
    system, doc, doc_id, seg_id, rater = key
    checked_name(system, "system", MAX_NAME)
    checked_name(doc, "doc", MAX_NAME)
    checked_name(rater, "rater", MAX_RATER)
    position = _integer(doc_id, "doc_id")
    global_id = _integer(seg_id, "seg_id")
    for text, what in ((source, "source"), (target, "target")):
        if len(text) > MAX_TEXT:
            raise ValueError(f"{what} must be at most {MAX_TEXT} characters, not {len(text)}")
    segment = c.segment(c.document(doc), position, source, number)
    output = c.output(system, segment, target, number, global_id)
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


#: The mqm protocol's judgment format.
MQM_TSV = JudgmentFormat("mqm-tsv", parse_mqm_tsv, listed=2, protocols=("mqm",), text_options={
    "pair": LANGUAGES_HELP})
