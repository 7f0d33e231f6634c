"""Handing HITs to workers (docs/methods.md §2, §10).

Each HIT is done by `campaign.redundancy` distinct workers. A worker keeps their
unfinished HIT until they finish it or stay idle longer than the campaign's timeout;
after that the HIT may go to someone else, and the idle worker's partial judgments stay.
"""
from __future__ import annotations

import re
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Count, Q
from django.utils import timezone

from ..models import MTURK_SUBMIT_TO, Annotator, Assignment, Campaign, Hit

WORKER_ID_PATTERN = re.compile(r"^[\w.@:+\-]{1,255}$")
#: URL parameters that carry a worker id, and which market each one means.
WORKER_ID_PARAMETERS = (("worker_id", "crowd"), ("PROLIFIC_PID", "prolific"), ("workerId", "mturk"))
#: Other start-link parameters kept with the HIT for the completion URL: MTurk's ExternalQuestion adds
#: assignmentId, hitId and turkSubmitTo; Prolific can add STUDY_ID and SESSION_ID.
ENTRY_PARAMETERS = (("assignmentId", "assignment_id"), ("hitId", "hit_id"), ("STUDY_ID", "study_id"),
                    ("SESSION_ID", "session_id"))
#: What MTurk puts in place of the assignment id while a worker only previews the HIT.
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"


class NoHitAvailable(Exception):
    """Every HIT of the campaign is taken or already done by this worker."""


class InvalidWorkerId(ValueError):
    pass


def worker_from_query(params) -> tuple[str, str] | None:
    """The (worker id, market) a crowd market put into the URL, or None."""
    for key, market in WORKER_ID_PARAMETERS:
        value = params.get(key)
        if value is not None:
            value = value.strip()
            if not WORKER_ID_PATTERN.match(value):
                raise InvalidWorkerId("a worker id is 1-255 letters, digits or . @ : + - _")
            return value, market
    return None


def entry_from_query(params, worker_id: str) -> dict:
    """What the start link carried besides the worker id, for the completion URL (Assignment.entry).

    Values that are not plain ids are dropped, MTurk's preview placeholder too, and `turkSubmitTo` is kept only
    when it is one of MTurk's own hosts (the link is the worker's to edit)."""
    entry = {"worker_id": worker_id}
    for key, name in ENTRY_PARAMETERS:
        value = (params.get(key) or "").strip()
        if WORKER_ID_PATTERN.match(value) and value != MTURK_PREVIEW:
            entry[name] = value
    submit_to = (params.get("turkSubmitTo") or "").strip().rstrip("/")
    if submit_to in MTURK_SUBMIT_TO:
        entry["turk_submit_to"] = submit_to
    return entry


def crowd_annotator(external_id: str, market: str) -> Annotator:
    try:
        annotator, _ = Annotator.objects.get_or_create(external_id=external_id, defaults={"source": market})
    except IntegrityError:  # created by a parallel request
        annotator = Annotator.objects.get(external_id=external_id)
    return annotator


def user_annotator(user) -> Annotator:
    try:
        annotator, _ = Annotator.objects.get_or_create(user=user, defaults={"source": "user"})
    except IntegrityError:
        annotator = Annotator.objects.get(user=user)
    return annotator


def idle_cutoff(campaign: Campaign):
    return timezone.now() - timedelta(minutes=campaign.hit_timeout_minutes)


def _live(cutoff) -> Q:
    return Q(status=Assignment.Status.COMPLETED) | Q(status=Assignment.Status.ACTIVE, last_activity_at__gte=cutoff)


def assign(campaign: Campaign, annotator: Annotator, entry: dict | None = None) -> Assignment:
    """The worker's unfinished HIT of this campaign, or a new one. Raises NoHitAvailable.

    `entry` (crowd workers: what their start link carried, see `entry_from_query`) is kept with the HIT, the
    latest one when a worker comes back, for the completion URL."""
    current = (
        Assignment.objects.filter(campaign=campaign, annotator=annotator, status=Assignment.Status.ACTIVE)
        .order_by("started_at").first()
    ) or _resume_abandoned(campaign, annotator)
    if current is not None:
        if entry is not None and current.entry != entry:
            current.entry = entry
            Assignment.objects.filter(pk=current.pk).update(entry=entry)
        return current
    protocol = campaign.protocol_spec
    seen = list(Hit.objects.filter(campaign=campaign, assignments__annotator=annotator)
                .values_list("exposure", flat=True))
    for _ in range(5):
        cutoff = idle_cutoff(campaign)
        candidates = (
            Hit.objects.filter(campaign=campaign)
            .exclude(assignments__annotator=annotator)
            .annotate(live=Count("assignments", filter=_live_on_hits(cutoff)))
            .filter(live__lt=campaign.redundancy)
            .order_by("live", "number")
            .values_list("pk", "exposure")[:50]
        )
        candidates = [pk for pk, exposure in candidates if not protocol.conflicts(exposure, seen)]
        if not candidates:
            raise NoHitAvailable
        for hit_id in candidates[:10]:
            assignment = _claim(campaign, hit_id, annotator, cutoff, entry or {})
            if assignment is not None:
                return assignment
    raise NoHitAvailable


def _live_on_hits(cutoff) -> Q:
    return Q(assignments__status=Assignment.Status.COMPLETED) | Q(
        assignments__status=Assignment.Status.ACTIVE, assignments__last_activity_at__gte=cutoff
    )


def _resume_abandoned(campaign: Campaign, annotator: Annotator) -> Assignment | None:
    """A worker back after losing an unfinished HIT gets it back if nobody has taken their place."""
    left = (Assignment.objects.filter(campaign=campaign, annotator=annotator, status=Assignment.Status.ABANDONED)
            .order_by("-last_activity_at").first())
    if left is None:
        return None
    cutoff = idle_cutoff(campaign)
    with transaction.atomic():
        hit = Hit.objects.select_for_update().filter(pk=left.hit_id).first()
        if hit.assignments.filter(_live(cutoff)).count() >= campaign.redundancy:
            return None
        Assignment.objects.filter(pk=left.pk).update(status=Assignment.Status.ACTIVE, last_activity_at=timezone.now(),
                                                     item_served_at=None)
    left.refresh_from_db()
    return left


def _claim(campaign: Campaign, hit_id: int, annotator: Annotator, cutoff, entry: dict) -> Assignment | None:
    """Lock the HIT, release its idle assignments, and take a free place if one is left."""
    with transaction.atomic():
        hit = Hit.objects.select_for_update(skip_locked=True).filter(pk=hit_id).first()
        if hit is None:
            return None
        hit.assignments.filter(status=Assignment.Status.ACTIVE, last_activity_at__lt=cutoff).update(
            status=Assignment.Status.ABANDONED
        )
        if hit.assignments.filter(_live(cutoff)).count() >= campaign.redundancy:
            return None
        try:
            with transaction.atomic():
                return Assignment.objects.create(campaign=campaign, hit=hit, annotator=annotator, entry=entry)
        except IntegrityError:
            return None


def finished(campaign: Campaign, annotator: Annotator) -> list[Assignment]:
    """The worker's completed HITs of this campaign that have a completion code, in the order they finished."""
    return list(Assignment.objects.filter(campaign=campaign, annotator=annotator,
                                          status=Assignment.Status.COMPLETED).exclude(completion_code="")
                .select_related("campaign").order_by("completed_at", "pk"))


def block(campaign: Campaign, annotator: Annotator) -> int:
    """Keep a worker out of a campaign: no new HIT, and their unfinished ones end (judgments kept)."""
    campaign.blocked_annotators.add(annotator)
    return Assignment.objects.filter(campaign=campaign, annotator=annotator, status=Assignment.Status.ACTIVE).update(
        status=Assignment.Status.ABANDONED)


def unblock(campaign: Campaign, annotator: Annotator) -> None:
    campaign.blocked_annotators.remove(annotator)


def is_blocked(campaign: Campaign, annotator: Annotator) -> bool:
    return campaign.blocked_annotators.filter(pk=annotator.pk).exists()


def needs_qualification(campaign: Campaign, annotator: Annotator) -> bool:
    return campaign.require_qualification and not (annotator.native_language and annotator.country)


def qualifies(campaign: Campaign, annotator: Annotator) -> bool:
    """A declared native language matching the campaign's requirement (when it has one), case-insensitively."""
    required = campaign.required_native_language.strip().lower()
    return not required or annotator.native_language.strip().lower() == required
