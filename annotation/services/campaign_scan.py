"""Reading a campaign file (docs/api.md, "Campaign input") without keeping its texts: each line is checked
(`check_record`), the file is scanned once keeping only where each segment's line is (`ScannedFile`), and the HIT
planner gets compact references whose texts are read back from the file when it asks (`FileContent`). Used by
annotation/services/campaign_import.py, which plans and stores."""
from __future__ import annotations

import json
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ..building import instructions
from ..building.campaign_files import (
    MAX_DEPTH,
    MAX_KEPT_ERRORS,  # noqa: F401  (also read from here: services/import_jobs.py)
    MAX_REPORTED_ERRORS,  # noqa: F401  (also read from here: the admin)
    MAX_TEXT,
    Problems,
    too_deep,
    unstorable,
)
from ..building.hit_layout import CampaignContent
from ..building.media_refs import check_media
from ..building.spans import SEVERITIES, SpanError, check_spans
from ..building.text_lines import LineSource, decode

#: Limits of a campaign line (docs/api.md §4): names, domains, seg_id (nesting and texts: building/campaign_files.py).
MAX_NAME = 200
MAX_DOMAIN = 100
SEG_ID_MIN, SEG_ID_MAX = -(2**31), 2**31 - 1
#: How often the import reports the lines read (see `import_campaign`'s `progress`).
PROGRESS_EVERY = 2000

#: (stage, lines read or None) -> None: what a long import is doing (annotation/services/import_jobs.py).
Progress = Callable[..., None]

def parse_json_line(text: str) -> tuple[object, str | None]:
    """(value, None) or (None, why the line is not acceptable JSON)."""
    if too_deep(text):
        return None, f"JSON nested more than {MAX_DEPTH} levels deep"
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON ({exc.msg.removesuffix(' at')} at column {exc.colno})"
    except RecursionError:
        return None, f"JSON nested more than {MAX_DEPTH} levels deep"
    except ValueError:  # an integer of more than 4,300 digits (Python's int-string limit)
        return None, "invalid JSON (a number with too many digits)"


def _check_text(what: str, value: str, limit: int, problems: list[str]) -> bool:
    if len(value) > limit:
        problems.append(f"{what} must be at most {limit} characters, not {len(value)}")
        return False
    if unstorable(value):
        problems.append(f"{what} must not contain NUL characters or lone surrogates")
        return False
    return True


def _text(record: dict, key: str, required: bool, problems: list[str]) -> None:
    value = record.get(key)
    if value is None:
        if required:
            problems.append(f"missing field '{key}'")
        return
    if not isinstance(value, str):
        problems.append(f"'{key}' must be a string")
        return
    if _check_text(f"'{key}'", value, MAX_TEXT, problems) and required and not value.strip():
        problems.append(f"'{key}' is empty")


def _shown(name: str) -> str:
    """A name from the file, safe to quote in a message (repr escapes what a database cannot store)."""
    return repr(name if len(name) <= 40 else name[:40] + "…")


def check_record(record, requires_reference: bool) -> tuple[tuple[str, int, frozenset] | None, list[str]]:
    """((doc_id, seg_id, system names), []) for a valid campaign line, else (None, its problems)."""
    problems: list[str] = []
    if not isinstance(record, dict):
        return None, ["each line must be a JSON object"]
    doc_id = record.get("doc_id")
    if isinstance(doc_id, int) and not isinstance(doc_id, bool):
        doc_id = str(doc_id)
    if doc_id is None:
        problems.append("missing field 'doc_id'")
    elif not isinstance(doc_id, str) or not doc_id.strip() or len(doc_id) > MAX_NAME:
        problems.append(f"'doc_id' must be a non-empty string of at most {MAX_NAME} characters")
    elif unstorable(doc_id):
        problems.append("'doc_id' must not contain NUL characters or lone surrogates")
    seg_id = record.get("seg_id")
    if seg_id is None:
        problems.append("missing field 'seg_id'")
    elif isinstance(seg_id, bool) or not isinstance(seg_id, int) or not SEG_ID_MIN <= seg_id <= SEG_ID_MAX:
        problems.append(f"'seg_id' must be an integer between {SEG_ID_MIN} and {SEG_ID_MAX}")
    _text(record, "source", True, problems)
    _text(record, "reference", requires_reference, problems)
    _text(record, "gold", False, problems)
    instructions.check_line(record, problems)
    _text(record, "instructions", False, problems)
    _text(record, "document_instructions", False, problems)
    systems = record.get("systems")
    if systems is None:
        problems.append("missing field 'systems'")
    elif not isinstance(systems, dict) or not systems:
        problems.append("'systems' must be a non-empty object of system name to translation")
    else:
        for system, text in systems.items():
            if not system.strip() or len(system) > MAX_NAME or unstorable(system):
                problems.append(f"system name {_shown(system)} must be non-empty, at most {MAX_NAME} characters, "
                                "without NUL characters or lone surrogates")
            elif not isinstance(text, str) or not text.strip():
                problems.append(f"the translation of system '{system}' is empty or not a string")
            else:
                _check_text(f"the translation of system '{system}'", text, MAX_TEXT, problems)
    domain = record.get("domain")
    if domain is not None and (not isinstance(domain, str) or len(domain) > MAX_DOMAIN or unstorable(domain)):
        problems.append(f"'domain' must be a string of at most {MAX_DOMAIN} characters")
    if record.get("tutorial") not in (None, True, False):
        problems.append("'tutorial' must be true or false")
    if not problems:
        _check_prefilled_spans(record, problems)
    if problems:
        return None, problems
    return (doc_id, seg_id, frozenset(systems)), []


def _check_prefilled_spans(record: dict, problems: list[str]) -> None:
    """`error_spans`: {system: [span]} marked in advance (e.g. by a quality-estimation model) for the error-span
    screens, each span as an annotator's (docs/api.md §2)."""
    prefilled = record.get("error_spans")
    if prefilled is None:
        return
    if not isinstance(prefilled, dict):
        problems.append("'error_spans' must be an object of system name to a list of spans")
        return
    for system, spans in prefilled.items():
        if system not in record["systems"]:
            problems.append(f"'error_spans' names {_shown(system)}, which is not among the line's systems")
            continue
        categories = None
        if isinstance(spans, list) and any(isinstance(s, dict) and "category" in s for s in spans):
            categories = sorted({s.get("category") for s in spans if isinstance(s, dict)
                                 and isinstance(s.get("category"), str) and 0 < len(s["category"]) <= 100})
            if not all(isinstance(s, dict) and s.get("category") in categories for s in spans):
                problems.append(f"'error_spans' of {_shown(system)}: give every span a category (a string of at "
                                "most 100 characters) or none")
                continue
        try:
            check_spans(spans, record["systems"][system], SEVERITIES, categories)
        except SpanError as exc:
            problems.append(f"'error_spans' of {_shown(system)}: {exc}")


def prefilled_spans(record: dict, system: str) -> list[dict] | None:
    """A system's `error_spans` from its line (checked when scanned), in offset order; None if it has none."""
    spans = (record.get("error_spans") or {}).get(system)
    if spans is None:
        return None
    return sorted(({k: span[k] for k in ("start", "end", "severity", "category") if k in span} for span in spans),
                  key=lambda span: (span["start"], span["end"]))


@dataclass
class ScannedFile:
    """A valid campaign file as its segments in document order (documents by first appearance, segments by
    seg_id), each kept as where its line is and a few integers; texts stay in the file (`read`)."""

    source: LineSource
    doc_ids: list[str]
    system_names: list[str]
    #: Per document (by position), its domain ('' where the file gives none).
    doc_domains: list[str]
    #: Per document (by position), its `document_instructions` ('' where the file gives none).
    doc_instructions: list[str]
    #: Per segment, in document order: its line's offset and length in the file, its document's position
    #: and its seg_id.
    offsets: array
    lengths: array
    docs: array
    seg_ids: array
    #: Whether any line carries `media` or `doc_media` (docs/api.md §2.1).
    has_media: bool = False

    def __len__(self) -> int:
        return len(self.offsets)

    def record(self, index: int) -> dict:
        """Segment `index`'s line, parsed again (it was valid when scanned)."""
        return json.loads(self.source.read(self.offsets[index], self.lengths[index]).decode().lstrip("\ufeff"))


def scan_campaign_file(source: LineSource, requires_reference: bool, progress: Progress | None = None,
                       allow_remote_media: bool = False) -> ScannedFile:
    """Validate a whole campaign file in one pass, keeping only where each segment's line is; raises
    CampaignFileError with every problem found (the first MAX_KEPT_ERRORS, and a count of the rest). An http(s)
    media `src` is refused unless `allow_remote_media` (the campaign's `fetch_remote_media`)."""
    errors = Problems()
    offsets, lengths, numbers, docs, seg_ids, sets = (array("q"), array("q"), array("l"), array("l"), array("l"),
                                                      array("l"))
    doc_index: dict[str, int] = {}
    doc_domains: list[str] = []
    doc_instructions: list[str] = []
    system_sets: dict[frozenset, int] = {}
    first_line_of: dict[int, int] = {}
    number = 0
    has_media = False
    for number, offset, length, raw in source.lines():
        if progress is not None and number % PROGRESS_EVERY == 0:
            progress("reading the file", number)
        line_errors: list[tuple[int, str]] = []
        text = decode(number, raw, line_errors)
        if line_errors:
            errors.add(*line_errors[0])
            continue
        if not text.strip():
            continue
        record, why = parse_json_line(text)
        if why is not None:
            errors.add(number, why)
            continue
        checked, problems = check_record(record, requires_reference)
        if isinstance(record, dict) and ("media" in record or "doc_media" in record):
            has_media = True
            problems = problems + check_media(record.get("media"), "media", allow_remote_media) + check_media(
                record.get("doc_media"), "doc_media", allow_remote_media)
        if problems:
            for problem in problems:
                errors.add(number, problem)
            continue
        doc_id, seg_id, systems = checked
        doc = doc_index.setdefault(doc_id, len(doc_index))
        if doc == len(doc_domains):
            doc_domains.append("")
            doc_instructions.append("")
        given = (record.get("document_instructions") or "").strip()
        if given and doc_instructions[doc] and given != doc_instructions[doc]:
            errors.add(number, f"document {_shown(doc_id)} has other 'document_instructions' on an earlier line; "
                               "a document has one")
            continue
        doc_instructions[doc] = doc_instructions[doc] or given
        domain = record.get("domain") or ""
        if domain and doc_domains[doc] and domain != doc_domains[doc]:
            errors.add(number, f"document {_shown(doc_id)} is in domain {_shown(doc_domains[doc])} on an earlier "
                               f"line and in {_shown(domain)} here; a document has one domain")
            continue
        doc_domains[doc] = doc_domains[doc] or domain
        key = (doc << 32) | (seg_id - SEG_ID_MIN)
        first = first_line_of.setdefault(key, number)
        if first != number:
            errors.add(number, f"duplicate segment doc_id={doc_id!r} seg_id={seg_id} (first on line {first})")
            continue
        offsets.append(offset)
        lengths.append(length)
        numbers.append(number)
        docs.append(doc)
        seg_ids.append(seg_id)
        sets.append(system_sets.setdefault(systems, len(system_sets)))
    if progress is not None:
        progress("reading the file", number)
    del first_line_of
    if not offsets and not errors:
        errors.add(0, "the file has no segments")
    all_systems = frozenset().union(*system_sets)
    lacking = {index: ", ".join(sorted(all_systems - systems)) for systems, index in system_sets.items()
               if systems != all_systems}
    if lacking:
        for i, set_index in enumerate(sets):
            if set_index in lacking:
                errors.add(numbers[i], f"segment lacks systems: {lacking[set_index]}")
    if errors or errors.omitted:
        raise errors.refuse()
    order = sorted(range(len(offsets)), key=lambda i: (docs[i] << 32) | (seg_ids[i] - SEG_ID_MIN))
    return ScannedFile(
        source=source, doc_ids=list(doc_index), system_names=sorted(all_systems), doc_domains=doc_domains,
        doc_instructions=doc_instructions,
        offsets=array("q", (offsets[i] for i in order)), lengths=array("q", (lengths[i] for i in order)),
        docs=array("l", (docs[i] for i in order)), seg_ids=array("l", (seg_ids[i] for i in order)),
        has_media=has_media,
    )


class FileContent:
    """What the HIT planner reads of a scanned file (the interface of hit_layout's SegmentRef, OutputRef and
    CampaignContent): compact references, each text read from the file when asked for (the last lines read
    are kept, as planners read a segment's outputs together)."""

    CACHED = 64

    def __init__(self, scanned: ScannedFile):
        self.scanned = scanned
        self.n_systems = len(scanned.system_names)
        self._records: OrderedDict[int, dict] = OrderedDict()
        #: One int object per segment, shared by its outputs' references and the items planned from them.
        self.segment_ints = list(range(len(scanned)))

    def record(self, index: int) -> dict:
        record = self._records.get(index)
        if record is None:
            record = self._records[index] = self.scanned.record(index)
            if len(self._records) > self.CACHED:
                self._records.popitem(last=False)
        return record

    def output_text(self, segment: int, system: int) -> str:
        return self.record(segment)["systems"][self.scanned.system_names[system]]

    def content(self) -> CampaignContent:
        n = len(self.scanned)
        return CampaignContent(segments=_Refs(n, lambda i: _SegmentRef(self, i)),
                               system_names=list(self.scanned.system_names),
                               outputs=_Refs(n * self.n_systems, lambda i: _OutputRef(self, i)),
                               record=self.record)


class _Refs(Sequence):
    """A sequence whose items are made when asked for."""

    def __init__(self, n: int, make: Callable[[int], object]):
        self.n, self.make = n, make

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self.make(i) for i in range(*index.indices(self.n))]
        if index < 0:
            index += self.n
        if not 0 <= index < self.n:
            raise IndexError(index)
        return self.make(index)

    def __iter__(self) -> Iterator:
        return map(self.make, range(self.n))


class _OutputRef:
    """hit_layout.OutputRef with its text read on demand."""

    __slots__ = ("id", "segment_id", "system_id", "_content")

    def __init__(self, content: FileContent, index: int):
        self.id = index
        segment, self.system_id = divmod(index, content.n_systems)
        self.segment_id = content.segment_ints[segment]
        self._content = content

    @property
    def text(self) -> str:
        return self._content.output_text(self.segment_id, self.system_id)


class _SegmentRef:
    """hit_layout.SegmentRef with its texts read on demand."""

    __slots__ = ("index", "doc", "seg_id", "_content")

    def __init__(self, content: FileContent, index: int):
        self.index, self._content = index, content
        self.doc, self.seg_id = content.scanned.docs[index], content.scanned.seg_ids[index]

    @property
    def doc_id(self) -> str:
        return self._content.scanned.doc_ids[self.doc]

    @property
    def source(self) -> str:
        return self._content.record(self.index)["source"]

    @property
    def reference(self) -> str:
        return self._content.record(self.index).get("reference") or ""
