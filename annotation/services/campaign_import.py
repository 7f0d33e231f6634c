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

import random
import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from django.db import transaction

from ..building import instructions
from ..building.adaptive_rules import AdaptiveSettingsError, adaptive_settings
from ..building.bulk import insert
from ..building.campaign_files import (
    MAX_KEPT_ERRORS,  # noqa: F401  (also read from here: services/import_jobs.py)
    MAX_REPORTED_ERRORS,  # noqa: F401  (also read from here: the admin)
    CampaignFileError,
    study_named,
    unique_slug,
)
from ..building.hit_layout import HitPlanError, ItemPlan
from ..building.text_lines import LineSource
from ..models import Campaign, Document, Hit, HitItem, Segment, System, SystemOutput
from ..protocols import UnknownProtocol, get_protocol
from ..protocols.options import ParsedOptions
from .adaptive_batches import first_batch
from .campaign_scan import (
    FileContent,
    Progress,
    ScannedFile,
    prefilled_spans,
    scan_campaign_file,
)
from .media_import import MediaPlan, campaign_source, plan_media
from .reliability_capacity import (
    bad_pairs_per_hit,
    reliability_capacity,
)
from .stages import create_stages


@dataclass
class ImportResult:
    campaign: Campaign
    hits: int
    #: What the researcher should know before publishing (e.g. too few quality-control pairs per HIT).
    warnings: list[str] = field(default_factory=list)


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
        bad_pairs = bad_pairs_per_hit(plans)
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
        _counting(((pk, segment_pks[i], system_pks[s], record["systems"][name], prefilled_spans(record, name))
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
