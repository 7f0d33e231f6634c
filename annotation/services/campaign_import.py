"""Import of campaign files (docs/api.md, "Campaign input"): JSON Lines, one source segment a line.

The whole file is validated before anything is written, and the HITs are planned before anything is
written too; then everything is stored in one transaction. A bad file raises `CampaignFileError` listing
line numbers and reasons, and changes nothing.

Memory stays bounded by the number of segments, not the size of their texts (issue "Hardening" 7: a 50 MB
file once took 1.3 GB): the file is read once, line by line, keeping of each segment only where its line is
and a few integers (`ScannedFile`); the HIT planner gets compact references whose texts are read from the
file when it asks (`FileContent`); and the rows are streamed to the database (COPY on PostgreSQL,
annotation/building/bulk.py), each line read again as its rows are sent.
"""
from __future__ import annotations

import json
import random
import secrets
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from django.db import transaction

from ..building import instructions
from ..building.adaptive_rules import AdaptiveSettingsError, adaptive_settings
from ..building.bulk import insert
from ..building.campaign_files import (
    MAX_DEPTH,
    MAX_KEPT_ERRORS,  # noqa: F401  (also read from here: services/import_jobs.py)
    MAX_REPORTED_ERRORS,  # noqa: F401  (also read from here: the admin)
    MAX_TEXT,
    CampaignFileError,
    Problems,
    study_named,
    too_deep,
    unique_slug,
    unstorable,
)
from ..building.hit_layout import CampaignContent, HitPlanError, ItemPlan
from ..building.media_refs import check_media
from ..building.spans import SEVERITIES, SpanError, check_spans
from ..building.text_lines import LineSource, decode
from ..models import Campaign, Document, Hit, HitItem, Segment, System, SystemOutput
from ..protocols import UnknownProtocol, get_protocol
from ..protocols import options as option_hooks
from ..protocols.options import ParsedOptions, number_text
from .adaptive_batches import first_batch
from .media_import import MediaPlan, campaign_source, plan_media
from .stages import create_stages

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


def _prefilled(record: dict, system: str) -> list[dict] | None:
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


@dataclass
class ImportResult:
    campaign: Campaign
    hits: int
    #: What the researcher should know before publishing (e.g. too few quality-control pairs per HIT).
    warnings: list[str] = field(default_factory=list)


#: A worker who does one HIT should pass the reliability test with a clear but not extreme effect: their bad
#: references this many standard deviations (of their bad-minus-original differences) below the originals.
#: One 100-item HIT (10 pairs) asks 0.58 of the paired t-test; one 20-item HIT (2 pairs) asks 4.46.
MAX_REASONABLE_DROP = 1.0
#: The bad-reference pairs of one standard 100-item HIT (docs/methods.md §2), quoted for comparison.
STANDARD_PAIRS = 10


@dataclass(frozen=True)
class ReliabilityCapacity:
    """How many quality-control pairs a campaign's workers can give its reliability test, and whether the
    test can pass them (docs/methods.md §2, §4). A worker does each HIT at most once, so however large the
    redundancy, a worker gives at most the bad-reference pairs of all the HITs together."""

    test: str
    label: str
    threshold: float
    rule: str
    hits: int
    pairs_per_hit: int
    max_pairs: int
    #: Pairs the test needs to pass anyone (None: more than evaluation searched).
    min_pairs: int | None
    #: The study's other campaigns add their pairs (the campaign is in a study, reliability_scope "study").
    pooled: bool
    #: The other reliability tests that could pass a worker with `max_pairs` pairs.
    alternatives: tuple[str, ...] = ()
    #: (pairs) -> the drop, in standard deviations of a worker's bad-minus-original differences, with which
    #: the test passes a worker with that many pairs (None: none does); the "critical_drop" hook.
    drop: Callable[[int], float | None] = field(default=lambda pairs: None, compare=False, repr=False)

    @cached_property
    def drop_one_hit(self) -> float | None:
        return self.drop(self.pairs_per_hit)

    @cached_property
    def drop_all(self) -> float | None:
        return self.drop(self.max_pairs)

    @cached_property
    def drop_standard(self) -> float | None:
        return self.drop(STANDARD_PAIRS)

    @property
    def possible(self) -> bool:
        return self.min_pairs is not None and self.max_pairs >= self.min_pairs

    @property
    def passing(self) -> str:
        return f"p {'≤' if self.rule == 'le' else '<'} {number_text(self.threshold)}"

    @property
    def pairs(self) -> str:
        """How many bad-reference pairs a worker can give, and why."""
        if self.hits == 1:
            return f"a worker gives at most {self.max_pairs} bad-reference pairs (the campaign's one HIT holds them)"
        return (f"a worker gives {self.pairs_per_hit} bad-reference pairs per HIT and at most {self.max_pairs} "
                f"({self.pairs_per_hit} per HIT × {self.hits} HITs, each done by a worker at most once)")

    def _needs(self) -> str:
        needed = f"at least {self.min_pairs}" if self.min_pairs else f"more than {self.max_pairs}"
        return (f"the reliability test “{self.label}” needs {needed} bad-reference pairs per worker to reach "
                f"{self.passing}, and here {self.pairs}")

    def refusal(self) -> str | None:
        """Why the campaign is refused: its test can never pass a worker on the pairs they can give (unless the
        study's other campaigns add theirs)."""
        if self.possible or self.pooled:
            return None
        fix = (f"Choose a test that can pass a worker with {self.max_pairs} pairs ({', '.join(self.alternatives)})"
               if self.alternatives else "Choose another test")
        return f"{self._needs()}: every worker would be unreliable. {fix}, or add segments."

    def warning(self) -> str | None:
        """What the preview warns about: pooled pairs that may not suffice, or a test that passes a worker who
        does one HIT only with an extreme effect (or not at all)."""
        if not self.possible:
            return (f"Quality control: {self._needs()}. Only the pairs of the study's other campaigns can make a "
                    "worker reliable.")
        if self.drop_one_hit is not None and self.drop_one_hit <= MAX_REASONABLE_DROP:
            return None
        one = (f"with one HIT's {self.pairs_per_hit} pairs it cannot pass anyone" if self.drop_one_hit is None
               else f"with one HIT's {self.pairs_per_hit} pairs it passes a worker only when their bad references "
                    f"score at least {number_text(self.drop_one_hit)} standard deviations (of their "
                    "bad-minus-original differences) below the originals")
        text = (f"Quality control is weak: {self.pairs}. The reliability test “{self.label}” ({self.passing}) "
                f"needs at least {self.min_pairs} pairs to pass anyone; {one}")
        if self.max_pairs > self.pairs_per_hit and self.drop_all is not None:
            text += f"; with all {self.max_pairs}, {number_text(self.drop_all)}"
        if self.drop_standard is not None and self.max_pairs < STANDARD_PAIRS:
            text += f"; with the {STANDARD_PAIRS} pairs of one 100-item HIT, {number_text(self.drop_standard)}"
        return text + ". Larger HITs (hit_size) give a worker more pairs per HIT; more segments give more HITs."


def reliability_capacity(spec, *, qc_test: str, qc_threshold: float, options: dict, bad_pairs_per_hit: Sequence[int],
                         in_study: bool) -> ReliabilityCapacity | None:
    """The capacity of a campaign of protocol `spec` whose HITs hold `bad_pairs_per_hit` bad references; None
    when the protocol has no reliability test or no bad references, or no app told annotation how many pairs
    a test needs (the "min_pairs" and "critical_drop" option hooks, filled in by evaluation)."""
    min_pairs, critical_drop = option_hooks.provider("min_pairs"), option_hooks.provider("critical_drop")
    test_option = next((option for option in spec.option_fields() if option.name == "qc_test"), None)
    if test_option is None or not bad_pairs_per_hit or min(bad_pairs_per_hit) == 0 or not min_pairs \
            or not critical_drop or qc_test not in dict(test_option.choice_list()):
        return None
    rule = options.get("threshold_rule") or "lt"
    in_use = option_hooks.provider("threshold_in_use")
    threshold = float(in_use(qc_test, qc_threshold) if in_use else qc_threshold)
    per_hit, total = min(bad_pairs_per_hit), sum(bad_pairs_per_hit)
    choices = test_option.choice_list()
    alternatives = tuple(value for value, _ in choices
                         if value != qc_test and (min_pairs(value, threshold, rule) or total + 1) <= total)
    return ReliabilityCapacity(
        test=qc_test, label=dict(choices).get(qc_test, qc_test), threshold=threshold, rule=rule,
        hits=len(bad_pairs_per_hit), pairs_per_hit=per_hit, max_pairs=total,
        min_pairs=min_pairs(qc_test, threshold, rule),
        pooled=in_study and options.get("reliability_scope") != "campaign", alternatives=alternatives,
        drop=lambda pairs: critical_drop(qc_test, threshold, rule, pairs),
    )


def _bad_pairs(plans: list[list[ItemPlan]]) -> list[int]:
    return [sum(item.item_type == "bad_ref" for item in plan) for plan in plans]


def import_campaign(
    lines,
    *,
    name: str,
    protocol: str,
    parsed: ParsedOptions | None = None,
    redundancy: int = 1,
    seed: int | None = None,
    hit_size: int = 100,
    options: dict | None = None,
    owner=None,
    progress: Progress | None = None,
    **settings,
) -> ImportResult:
    """Validate the file, plan the HITs, then store campaign, texts and HITs in one transaction.

    `lines` is the file: a binary file object (an upload, an open file), a path, or an iterable of lines
    (bytes or str). The front-ends pass `parsed`, what `Protocol.parse_options` made of their fields; code and
    tests may pass the settings as keywords instead (Campaign fields, and `options`). `owner` (a user, or
    None) owns the new campaign, and the study when this import creates it (annotation/ownership.py).
    `progress(stage, lines_read=None)` is told what the import is doing (a background job shows it)."""
    if parsed is not None:
        if parsed.protocol != protocol:
            raise ValueError(f"options parsed for {parsed.protocol!r}, not {protocol!r}")
        fields = dict(parsed.campaign_fields)
        redundancy = fields.pop("redundancy", redundancy)
        seed = fields.pop("seed", seed)
        hit_size = fields.pop("hit_size", hit_size)
        options = {**parsed.options, **(options or {})}
        settings = {**fields, **settings}
    options = options or {}
    study = settings.pop("study", None)
    report = progress or (lambda stage, lines_read=None: None)
    errors: list[tuple[int, str]] = []
    if not name or not name.strip():
        errors.append((0, "the campaign needs a name"))
    try:
        spec = get_protocol(protocol)
    except UnknownProtocol as exc:
        raise CampaignFileError([(0, str(exc))]) from None
    if spec.stage_only:
        raise CampaignFileError([(0, f"protocol: {protocol!r} is a later stage, built from its first stage's "
                                     "output; import the first stage's protocol")])
    if not isinstance(redundancy, int) or redundancy < 1:
        errors.append((0, "redundancy must be a positive integer"))
    if errors:
        raise CampaignFileError(errors)
    with campaign_source(lines) as (lines, bundle), LineSource(lines) as source:
        scanned = scan_campaign_file(source, spec.requires_reference, report,
                                     allow_remote_media=bool(options.get("fetch_remote_media")))
        option_problems = spec.check_options(options, set(scanned.system_names), hit_size)
        if option_problems:
            raise CampaignFileError([(0, p) for p in option_problems])
        try:  # the front-ends checked these already (Protocol.check_parsed); code passing options may not have
            adaptive = adaptive_settings(options, hit_size=hit_size, redundancy=redundancy,
                                         payment_per_hit=settings.get("payment_per_hit"))
        except AdaptiveSettingsError as exc:
            raise CampaignFileError([(0, f"{name}: {reason}") for name, reason in exc.errors]) from None
        seed = secrets.randbelow(2**31) if seed is None else seed
        report("planning the HITs")
        try:
            plans = spec.plan_hits(FileContent(scanned).content(), hit_size, options, random.Random(seed))
        except HitPlanError as exc:
            suggestions = {exc.field: exc.suggestion} if exc.field and exc.suggestion is not None else {}
            raise CampaignFileError([(0, f"{exc.field}: {exc}" if exc.field else str(exc))], suggestions) from None
        bad_pairs = _bad_pairs(plans)
        if adaptive is not None:  # the HITs the budget buys, all laid out alike
            bad_pairs = bad_pairs[:1] * adaptive.budget_hits
        capacity = reliability_capacity(
            spec, qc_test=settings.get("qc_test") or Campaign._meta.get_field("qc_test").default,
            qc_threshold=settings.get("qc_threshold") or Campaign._meta.get_field("qc_threshold").default,
            options=options, bad_pairs_per_hit=bad_pairs, in_study=bool(study))
        if capacity is not None and capacity.refusal():
            raise CampaignFileError([(0, f"qc_test: {capacity.refusal()}")])
        if adaptive is not None:  # the later batches are built after looks (services/adaptive_batches.py)
            plans = first_batch(plans, adaptive)
        media = MediaPlan(bundle)
        if scanned.has_media:
            report("checking the media")
            media = plan_media(scanned, bundle, bool(options.get("fetch_remote_media")))
        try:
            media.write_files()  # after every check; removed again if the transaction fails
            with transaction.atomic():
                campaign = Campaign.objects.create(
                    name=name.strip(), slug=unique_slug(name), protocol=protocol, redundancy=redundancy, seed=seed,
                    hit_size=hit_size, options=options, study=study_named(study, owner), owner=owner, **settings,
                )
                _store(campaign, spec, scanned, plans, report, batch=1 if adaptive is not None else None,
                       media=media)
                create_stages(campaign)
        except BaseException:
            media.remove_written()
            raise
        finally:
            media.close()
    warning = capacity.warning() if capacity is not None else None
    warnings = spec.size_warnings(options, len(scanned.system_names), hit_size, [len(plan) for plan in plans])
    return ImportResult(campaign=campaign, hits=len(plans), warnings=warnings + ([warning] if warning else []))


#: Rows between two progress reports while storing.
STORE_PROGRESS_EVERY = 20_000


def _counting(rows: Iterable, what: str, total: int, report: Progress) -> Iterator:
    for n, row in enumerate(rows, start=1):
        if n % STORE_PROGRESS_EVERY == 0:
            report(f"storing {what}: {n:,} of {total:,}")
        yield row


def _store(campaign: Campaign, spec, scanned: ScannedFile, plans: list[list[ItemPlan]], report: Progress,
           batch: int | None = None, media: MediaPlan | None = None) -> None:
    """Write a scanned file's documents, segments, systems, outputs and the planned HITs (of adaptive batch
    `batch`); each segment's line is read again as its rows are sent, so no text is held beyond the row being
    sent."""
    pk, n, names = campaign.pk, len(scanned), scanned.system_names

    def lines() -> Iterator[tuple[int, dict]]:
        for i in range(n):
            yield i, scanned.record(i)

    report("storing documents")
    doc_pks = insert(Document, ["campaign_id", "doc_id", "position", "domain", "instructions"],
                     [(pk, doc_id, position, domain, text) for position, (doc_id, domain, text)
                      in enumerate(zip(scanned.doc_ids, scanned.doc_domains, scanned.doc_instructions, strict=True))])
    report(f"storing segments: 0 of {n:,}")
    media = media or MediaPlan(None)
    segment_pks = insert(
        Segment, ["campaign_id", "document_id", "seg_id", "source", "reference", "instructions", "media"],
        _counting(((pk, doc_pks[scanned.docs[i]], scanned.seg_ids[i], record["source"],
                    record.get("reference") or "",
                    instructions.segment_text(record, scanned.doc_instructions[scanned.docs[i]]),
                    media.segment_media(i)) for i, record in lines()), "segments", n, report),
        count=n)
    if media:
        media.store(campaign, scanned, doc_pks)
    system_pks = insert(System, ["campaign_id", "name"], [(pk, name) for name in names])
    total = n * len(names)
    report(f"storing system outputs: 0 of {total:,}")
    output_pks = insert(
        SystemOutput, ["campaign_id", "segment_id", "system_id", "text", "spans"],
        _counting(((pk, segment_pks[i], system_pks[s], record["systems"][name], _prefilled(record, name))
                   for i, record in lines() for s, name in enumerate(names)), "system outputs", total, report),
        count=total)
    report("storing HITs")
    hit_pks = insert(Hit, ["campaign_id", "number", "size", "exposure", "batch"],
                     [(pk, number, len(items), spec.hit_exposure(items), batch)
                      for number, items in enumerate(plans, 1)])
    items = sum(map(len, plans))
    report(f"storing items: 0 of {items:,}")
    insert(
        HitItem, ["hit_id", "position", "set_index", "item_type", "segment_id", "output_id", "text",
                  "partner_position", "payload"],
        _counting(((hit, p.position, p.set_index, p.item_type,
                    None if p.segment_id is None else segment_pks[p.segment_id],
                    None if p.output_id is None else output_pks[p.output_id], p.text, p.partner_position, p.payload)
                   for hit, planned in zip(hit_pks, plans, strict=True) for p in planned), "items", items, report),
        count=items, return_ids=False)
