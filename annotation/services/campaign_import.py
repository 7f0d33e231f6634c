"""Import of campaign files (docs/api.md, "Campaign input"): JSON Lines, one source segment a line.

The whole file is validated before anything is written, and the HITs are planned before
anything is written too; then everything is stored in one transaction with bulk inserts.
A bad file raises `CampaignFileError` listing line numbers and reasons, and changes nothing.
"""
from __future__ import annotations

import json
import random
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from django.conf import settings
from django.db import transaction
from django.utils.text import slugify

from ..models import Campaign, Document, Hit, HitItem, Segment, Study, System, SystemOutput
from ..protocols import UnknownProtocol, get_protocol
from ..protocols import options as option_hooks
from ..protocols.options import ParsedOptions, number_text
from .hit_builder import CampaignContent, HitPlanError, ItemPlan, OutputRef, SegmentRef
from .text_lines import numbered_lines

MAX_REPORTED_ERRORS = 20
BATCH = 5000


class CampaignFileError(ValueError):
    """The campaign file or the options are refused; `errors` lists (line, reason), line 0 = the file as a whole
    (a reason "name: …" concerns option `name`). `suggestions` maps an option to a value that would fit the
    file (e.g. the largest HIT size it fills)."""

    def __init__(self, errors: list[tuple[int, str]], suggestions: dict | None = None):
        self.errors = errors
        self.suggestions = suggestions or {}
        shown = errors[:MAX_REPORTED_ERRORS]
        text = "; ".join(f"line {line}: {reason}" if line else reason for line, reason in shown)
        if len(errors) > len(shown):
            text += f"; and {len(errors) - len(shown)} more"
        super().__init__(text)


@dataclass
class ParsedSegment:
    line: int
    doc_id: str
    seg_id: int
    source: str
    reference: str
    systems: dict[str, str]


def _text(record: dict, key: str, required: bool, problems: list[str]) -> str:
    value = record.get(key)
    if value is None:
        if required:
            problems.append(f"missing field '{key}'")
        return ""
    if not isinstance(value, str):
        problems.append(f"'{key}' must be a string")
        return ""
    if required and not value.strip():
        problems.append(f"'{key}' is empty")
    return value


def _parse_record(record, requires_reference: bool) -> tuple[ParsedSegment | None, list[str]]:
    problems: list[str] = []
    if not isinstance(record, dict):
        return None, ["each line must be a JSON object"]
    doc_id = record.get("doc_id")
    if isinstance(doc_id, int) and not isinstance(doc_id, bool):
        doc_id = str(doc_id)
    if doc_id is None:
        problems.append("missing field 'doc_id'")
    elif not isinstance(doc_id, str) or not doc_id.strip() or len(doc_id) > 200:
        problems.append("'doc_id' must be a non-empty string of at most 200 characters")
    seg_id = record.get("seg_id")
    if seg_id is None:
        problems.append("missing field 'seg_id'")
    elif isinstance(seg_id, bool) or not isinstance(seg_id, int) or abs(seg_id) >= 2**31:
        problems.append("'seg_id' must be an integer")
    source = _text(record, "source", True, problems)
    reference = _text(record, "reference", requires_reference, problems)
    systems = record.get("systems")
    if systems is None:
        problems.append("missing field 'systems'")
    elif not isinstance(systems, dict) or not systems:
        problems.append("'systems' must be a non-empty object of system name to translation")
    else:
        for system, text in systems.items():
            if not system.strip() or len(system) > 200:
                problems.append(f"system name {system!r} must be non-empty and at most 200 characters")
            elif not isinstance(text, str) or not text.strip():
                problems.append(f"the translation of system '{system}' is empty or not a string")
    if problems:
        return None, problems
    return ParsedSegment(0, doc_id, seg_id, source, reference, dict(systems)), []


def parse_campaign_lines(lines: Iterable[bytes | str], requires_reference: bool) -> list[ParsedSegment]:
    """Parse and validate a whole campaign file; raises CampaignFileError with every problem found."""
    errors: list[tuple[int, str]] = []
    segments: list[ParsedSegment] = []
    first_line_of: dict[tuple[str, int], int] = {}
    for number, raw in numbered_lines(lines, errors):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except json.JSONDecodeError as exc:
            errors.append((number, f"invalid JSON ({exc.msg.removesuffix(' at')} at column {exc.colno})"))
            continue
        segment, problems = _parse_record(record, requires_reference)
        if problems:
            errors.extend((number, p) for p in problems)
            continue
        segment.line = number
        key = (segment.doc_id, segment.seg_id)
        if key in first_line_of:
            errors.append((number, f"duplicate segment doc_id={key[0]!r} seg_id={key[1]} (first on line "
                                   f"{first_line_of[key]})"))
            continue
        first_line_of[key] = number
        segments.append(segment)
    if not segments and not errors:
        errors.append((0, "the file has no segments"))
    all_systems = set().union(*(s.systems for s in segments)) if segments else set()
    for segment in segments:
        missing = all_systems.difference(segment.systems)
        if missing:
            errors.append((segment.line, f"segment lacks systems: {', '.join(sorted(missing))}"))
    if errors:
        errors.sort()
        raise CampaignFileError(errors)
    return segments


def unique_slug(name: str) -> str:
    """A slug from `name`, numbered if taken or reserved for a fixed route (RESERVED_CAMPAIGN_SLUGS)."""
    base = slugify(name)[:200] or "campaign"
    slug, n = base, 1
    while slug in settings.RESERVED_CAMPAIGN_SLUGS or Campaign.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return slug


def study_named(study: str | Study | None, owner=None) -> Study | None:
    """The study a campaign joins: a `Study`, or one named so (created on first use, owned by `owner`); None
    for none."""
    if isinstance(study, str):
        name = study.strip()
        if not name:
            return None
        existing = Study.objects.filter(name=name).first()
        if existing is not None:
            return existing
        study = Study.named(name)
        if owner is not None:
            Study.objects.filter(pk=study.pk, owner__isnull=True).update(owner=owner)
            study.owner = owner
    return study


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
    lines: Iterable[bytes | str],
    *,
    name: str,
    protocol: str,
    parsed: ParsedOptions | None = None,
    redundancy: int = 1,
    seed: int | None = None,
    hit_size: int = 100,
    options: dict | None = None,
    owner=None,
    **settings,
) -> ImportResult:
    """Validate `lines`, plan the HITs, then store campaign, texts and HITs in one transaction.

    The front-ends pass `parsed`, what `Protocol.parse_options` made of their fields; code and
    tests may pass the settings as keywords instead (Campaign fields, and `options`). `owner` (a user, or
    None) owns the new campaign, and the study when this import creates it (evaluation/permissions.py)."""
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
    errors: list[tuple[int, str]] = []
    if not name or not name.strip():
        errors.append((0, "the campaign needs a name"))
    try:
        spec = get_protocol(protocol)
    except UnknownProtocol as exc:
        raise CampaignFileError([(0, str(exc))]) from None
    if not isinstance(redundancy, int) or redundancy < 1:
        errors.append((0, "redundancy must be a positive integer"))
    if errors:
        raise CampaignFileError(errors)
    segments = parse_campaign_lines(lines, spec.requires_reference)
    system_names = sorted(segments[0].systems)
    option_problems = spec.check_options(options, set(system_names), hit_size)
    if option_problems:
        raise CampaignFileError([(0, p) for p in option_problems])

    doc_order: dict[str, int] = {}
    for segment in segments:
        doc_order.setdefault(segment.doc_id, len(doc_order))
    segments.sort(key=lambda s: (doc_order[s.doc_id], s.seg_id))
    system_index = {name: i for i, name in enumerate(system_names)}
    planned_outputs = [
        OutputRef(id=len(system_names) * seg_index + system_index[system], segment_id=seg_index,
                  system_id=system_index[system], text=segment.systems[system])
        for seg_index, segment in enumerate(segments) for system in system_names
    ]
    seed = secrets.randbelow(2**31) if seed is None else seed
    try:
        content = CampaignContent(
            segments=[SegmentRef(index=i, doc=doc_order[s.doc_id], doc_id=s.doc_id, seg_id=s.seg_id, source=s.source,
                                 reference=s.reference) for i, s in enumerate(segments)],
            system_names=system_names, outputs=planned_outputs,
        )
        plans = spec.plan_hits(content, hit_size, options, random.Random(seed))
    except HitPlanError as exc:
        suggestions = {exc.field: exc.suggestion} if exc.field and exc.suggestion is not None else {}
        raise CampaignFileError([(0, f"{exc.field}: {exc}" if exc.field else str(exc))], suggestions) from None
    capacity = reliability_capacity(
        spec, qc_test=settings.get("qc_test") or Campaign._meta.get_field("qc_test").default,
        qc_threshold=settings.get("qc_threshold") or Campaign._meta.get_field("qc_threshold").default,
        options=options, bad_pairs_per_hit=_bad_pairs(plans), in_study=bool(study))
    if capacity is not None and capacity.refusal():
        raise CampaignFileError([(0, f"qc_test: {capacity.refusal()}")])

    with transaction.atomic():
        campaign = Campaign.objects.create(
            name=name.strip(), slug=unique_slug(name), protocol=protocol, redundancy=redundancy, seed=seed,
            hit_size=hit_size, options=options, study=study_named(study, owner), owner=owner, **settings,
        )
        docs = Document.objects.bulk_create(
            [Document(campaign=campaign, doc_id=doc_id, position=pos) for doc_id, pos in doc_order.items()],
            batch_size=BATCH,
        )
        doc_by_id = {d.doc_id: d for d in docs}
        segment_rows = Segment.objects.bulk_create(
            [Segment(campaign=campaign, document=doc_by_id[s.doc_id], seg_id=s.seg_id, source=s.source,
                     reference=s.reference) for s in segments],
            batch_size=BATCH,
        )
        system_rows = System.objects.bulk_create([System(campaign=campaign, name=n) for n in system_names])
        output_rows = SystemOutput.objects.bulk_create(
            [SystemOutput(campaign=campaign, segment=segment_rows[o.segment_id], system=system_rows[o.system_id],
                          text=o.text) for o in planned_outputs],
            batch_size=BATCH,
        )
        hits = Hit.objects.bulk_create(
            [Hit(campaign=campaign, number=n + 1, size=len(items), exposure=spec.hit_exposure(items))
             for n, items in enumerate(plans)],
            batch_size=BATCH,
        )
        HitItem.objects.bulk_create(
            (
                HitItem(
                    hit=hit, position=p.position, set_index=p.set_index, item_type=p.item_type,
                    segment_id=None if p.segment_id is None else segment_rows[p.segment_id].pk,
                    output_id=None if p.output_id is None else output_rows[p.output_id].pk,
                    text=p.text, partner_position=p.partner_position, payload=p.payload,
                )
                for hit, items in zip(hits, plans, strict=False) for p in items
            ),
            batch_size=BATCH,
        )
    warning = capacity.warning() if capacity is not None else None
    return ImportResult(campaign=campaign, hits=len(hits), warnings=[warning] if warning else [])
