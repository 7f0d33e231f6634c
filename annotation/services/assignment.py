"""Handing HITs to workers (docs/methods.md §2, §10).

Each HIT is done by `campaign.redundancy` distinct workers. A worker keeps their
unfinished HIT until they finish it or stay idle longer than the campaign's timeout;
after that the HIT may go to someone else, and the idle worker's partial judgments stay.

A crowd worker id is held, in each campaign, by the browser it is used in (`browser`, a random cookie set
at crowd entry, kept in `Assignment.browser_key` of the worker's HITs): that browser gets the worker's open
HIT, their next HIT and their completion codes; another browser gets nothing of theirs (`HeldElsewhere`)
until the id has been unused for the campaign's idle timeout, which frees it as it frees any HIT. Codes
stay with the browser that finished the HIT. A worker first seen is stored only when a HIT is handed out
(`crowd_worker`). `max_open_per_ip` caps the open HITs of a campaign taken from one address
(`Assignment.entry_ip`). Entry links (worker id, signatures, client address): services/crowd_links.
"""
from __future__ import annotations

import hashlib
from datetime import timedelta

from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.utils import timezone

from .. import languages
from ..models import Annotator, Assignment, Campaign, Hit, StageExposure
from .crowd_links import BROWSER_KEY_PATTERN as BROWSER_KEY_PATTERN
from .crowd_links import ENTRY_PARAMETERS as ENTRY_PARAMETERS
from .crowd_links import MTURK_PREVIEW as MTURK_PREVIEW
from .crowd_links import WORKER_ID_PARAMETERS as WORKER_ID_PARAMETERS
from .crowd_links import WORKER_ID_PATTERN as WORKER_ID_PATTERN
from .crowd_links import InvalidWorkerId as InvalidWorkerId
from .crowd_links import active_entry_limits as active_entry_limits
from .crowd_links import client_ip as client_ip
from .crowd_links import entry_from_query as entry_from_query
from .crowd_links import entry_signature as entry_signature
from .crowd_links import is_lab as is_lab
from .crowd_links import signature_matches as signature_matches
from .crowd_links import signed_entry_path as signed_entry_path
from .crowd_links import worker_from_query as worker_from_query


class NoHitAvailable(Exception):
    """Every HIT of the campaign is taken or already done by this worker."""


class HeldElsewhere(NoHitAvailable):
    """The worker id is in use in another browser (an open HIT, or HITs finished there, with activity within the
    campaign's idle timeout), and this browser has no open HIT of it: nothing of the worker's is given here."""


class NotTrusted(NoHitAvailable):
    """The protocol's quality control says this worker gets no new HIT (e.g. gold units mostly missed);
    `reason` is shown to them."""

    def __init__(self, reason: str):
        self.reason = reason
        super().__init__(reason)


class TooManyOpenHits(Exception):
    """The address already holds `limit` open HITs of the campaign."""

    def __init__(self, limit: int):
        self.limit = limit
        super().__init__(f"{limit} open HITs from this address")


def crowd_worker(external_id: str, market: str) -> Annotator:
    """The crowd worker with this id, or an unsaved one when the id is new: `assign` stores it only when it
    hands out a HIT, so refused entries leave no record."""
    return Annotator.objects.filter(external_id=external_id).first() or Annotator(external_id=external_id,
                                                                                   source=market)


def store_worker(annotator: Annotator) -> None:
    """Save a worker first seen now (`crowd_worker`); a parallel request may have saved the id first."""
    try:
        with transaction.atomic():
            annotator.save(force_insert=True)
    except IntegrityError:
        annotator.pk, annotator._state.adding = Annotator.objects.get(external_id=annotator.external_id).pk, False


def worker_assignments(campaign: Campaign, annotator: Annotator) -> list[Assignment]:
    """All of the worker's HITs of this campaign, oldest first (none, without a query, for a worker not stored)."""
    if annotator.pk is None:
        return []
    return list(Assignment.objects.filter(campaign=campaign, annotator=annotator).order_by("started_at", "pk"))


def in_use_elsewhere(campaign: Campaign, mine: list[Assignment], browser: str) -> bool:
    """Whether the worker id is held by another browser: this browser has no open HIT of the worker, and one of
    the worker's HITs bound to another browser, open or finished (not lost), saw activity within the idle
    timeout."""
    if any(a.status == Assignment.Status.ACTIVE and a.browser_key == browser for a in mine):
        return False
    cutoff = idle_cutoff(campaign)
    return any(a.browser_key and a.browser_key != browser and a.last_activity_at >= cutoff
               and a.status != Assignment.Status.ABANDONED for a in mine)


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


def assign(campaign: Campaign, annotator: Annotator, entry: dict | None = None, *, browser: str | None = None,
           ip: str | None = None, max_open_per_ip: int | None = None,
           mine: list[Assignment] | None = None) -> Assignment:
    """The worker's unfinished HIT of this campaign, or a new one. Raises NoHitAvailable (HeldElsewhere when
    the worker id is in use in another browser), or TooManyOpenHits.

    `entry` (crowd workers: what their start link carried, see `entry_from_query`) is kept with the HIT, the
    latest one when a worker comes back, for the completion URL. `browser` (crowd workers: the entry cookie)
    binds the worker id to that browser (`in_use_elsewhere`); without it (in-house annotators) the worker's
    unfinished HIT is theirs wherever they come from. `ip` is stored with a HIT taken now, and with
    `max_open_per_ip` no more than that many open HITs of the campaign are taken from one address. `mine` is
    `worker_assignments`, when the caller has it already. An unsaved `annotator` is saved with the HIT."""
    cap = max_open_per_ip if ip and max_open_per_ip else None
    cutoff = idle_cutoff(campaign)
    mine = worker_assignments(campaign, annotator) if mine is None else mine
    active = [a for a in mine if a.status == Assignment.Status.ACTIVE]
    if browser is None:
        current = active[0] if active else None
    else:
        current = next((a for a in active if a.browser_key == browser), None)
        if current is None:
            if in_use_elsewhere(campaign, mine, browser):
                raise HeldElsewhere
            current = _rebind(campaign, active, browser, ip, cap, cutoff)
            _bind_finished(campaign, mine, browser)
    if current is None:
        current = _resume_abandoned(campaign, mine, browser, ip, cap)
    if current is not None:
        if entry is not None and current.entry != entry:
            current.entry = entry
            Assignment.objects.filter(pk=current.pk).update(entry=entry)
        return current
    reason = campaign.protocol_spec.refusal(campaign, annotator) if annotator.pk else None
    if reason:
        raise NotTrusted(reason)
    return _new_hit(campaign, annotator, entry or {}, browser or "", ip, cap, mine)


def _bind_finished(campaign: Campaign, mine: list[Assignment], browser: str) -> None:
    """Finished HITs that no browser holds (done before HITs were bound) go to the browser the worker id is
    now used in, so that their codes are shown there and nowhere else."""
    unbound = [a.pk for a in mine if a.status == Assignment.Status.COMPLETED and not a.browser_key]
    if unbound:
        Assignment.objects.filter(pk__in=unbound, browser_key="").update(browser_key=browser)
        for a in mine:
            if a.pk in unbound:
                a.browser_key = browser


def _new_hit(campaign: Campaign, annotator: Annotator, entry: dict, browser: str, ip: str | None,
             cap: int | None, mine: list[Assignment]) -> Assignment:
    if cap is not None:
        _check_open_from(campaign, ip, cap, idle_cutoff(campaign))
    protocol = campaign.protocol_spec
    seen = list(Hit.objects.filter(pk__in=[a.hit_id for a in mine]).values_list("exposure", flat=True)) \
        if mine else []
    held = {key for e in seen if isinstance(e, dict) for key in e.get("exclusive") or ()}
    for _ in range(5):
        cutoff = idle_cutoff(campaign)
        candidates = _free_hits(campaign, [a.hit_id for a in mine], cutoff)
        candidates = [pk for pk, exposure in candidates if not protocol.conflicts(exposure, seen, annotator.pk)
                      and not (held and held.intersection(_exclusive(exposure)))]
        if not candidates:
            raise NoHitAvailable
        for hit_id in candidates[:10]:
            assignment = _claim(campaign, hit_id, annotator, cutoff, entry, browser, ip, cap)
            if assignment is not None:
                return assignment
    raise NoHitAvailable


#: How many idle places (open assignments idle past the timeout) one lookup reads at most, oldest first.
IDLE_READ = 250


def _free_hits(campaign: Campaign, taken: list[int], cutoff, limit: int = 50,
               idle_read: int = IDLE_READ) -> list[tuple[int, dict]]:
    """(pk, exposure) of up to `limit` HITs with a free place, fewest live assignments first, then by number
    (docs/methods.md §2.3), leaving out the HITs in `taken` (the worker's own).

    A HIT's live assignments are its held ones (`Hit.held`: active or completed, kept by database triggers) less
    those idle past the timeout. One statement of two bounded reads, whatever the campaign's size
    (benchmarks/free_hit_lookup.py): the first `limit` HITs by (held, number), an index walk that stops there; and
    the first `limit` HITs with idle
    places by (live, number), counted over the `idle_read` oldest idle places (the partial index of active
    assignments, walked by last activity). A HIT of the walk with idle places either comes back from the second
    read with its live count, or ranks behind `limit` HITs that do.

    The order is exact while at most `idle_read` places of the campaign are idle at once. Beyond that, a HIT
    whose idle places are all newer than the oldest `idle_read` ranks by its held places, as if they were still
    live (as before they went idle; a full one is not offered), until older ones are handed out again: `_claim`
    releases every idle place of the HIT it takes, so the oldest go first. No HIT is ever filled past its
    redundancy (`_claim` counts under the HIT's lock)."""
    hit, assignment = Hit._meta.db_table, Assignment._meta.db_table
    own = f"AND h.id NOT IN ({', '.join(['%s'] * len(taken))})" if taken else ""
    sql = (f"SELECT * FROM (SELECT h.id, h.exposure, h.number, h.held AS live, 0 AS idle_places FROM {hit} h "
           f"WHERE h.campaign_id = %s AND h.held < %s {own} ORDER BY h.held, h.number LIMIT %s) walk UNION ALL "
           f"SELECT * FROM (SELECT h.id, h.exposure, h.number, h.held - i.idle AS live, 1 AS idle_places FROM ("
           f"SELECT hit_id, COUNT(*) AS idle FROM (SELECT hit_id FROM {assignment} WHERE campaign_id = %s AND "
           f"status = %s AND last_activity_at < %s ORDER BY last_activity_at LIMIT %s) oldest GROUP BY hit_id) i "
           f"JOIN {hit} h ON h.id = i.hit_id "
           f"WHERE h.held - i.idle < %s {own} ORDER BY live, h.number LIMIT %s) idle")
    params = [campaign.pk, campaign.redundancy, *taken, limit,
              campaign.pk, Assignment.Status.ACTIVE, cutoff, idle_read, campaign.redundancy, *taken, limit]
    rows: dict[int, tuple] = {}
    for h in Hit.objects.raw(sql, params):  # a HIT with idle places: its live count, not its held one
        if h.idle_places or h.pk not in rows:
            rows[h.pk] = (h.pk, h.exposure, h.live, h.number)
    ranked = sorted(rows.values(), key=lambda row: (row[2], row[3]))
    return [(pk, exposure) for pk, exposure, _, _ in ranked[:limit]]


def _check_open_from(campaign: Campaign, ip: str, cap: int, cutoff, *, lock: bool = False) -> None:
    """Raise TooManyOpenHits when `ip` holds `cap` open (active, not idle) HITs of the campaign. Inside a
    transaction, `lock` first takes a lock of this campaign and address (PostgreSQL; SQLite's transactions
    already run one at a time), so that parallel entries from one address cannot all pass the count."""
    if lock:
        _lock(f"entry-ip:{campaign.pk}:{ip}")
    open_here = Assignment.objects.filter(campaign=campaign, entry_ip=ip, status=Assignment.Status.ACTIVE,
                                          last_activity_at__gte=cutoff).count()
    if open_here >= cap:
        raise TooManyOpenHits(cap)


def _lock(name: str) -> None:
    """A transaction-long lock of `name` (PostgreSQL; SQLite's transactions already run one at a time)."""
    if connection.vendor == "postgresql":
        digest = hashlib.blake2b(name.encode(), digest_size=8).digest()
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [int.from_bytes(digest, "big", signed=True)])


def _check_held(campaign: Campaign, annotator: Annotator, browser: str, cutoff) -> None:
    """Inside the claim's transaction, before any HIT is locked, with a lock of this worker id in this campaign:
    raise HeldElsewhere when a parallel request (a double click on a first visit, say) has just bound the id to
    another browser. The lock is taken by id, so that it also holds for a worker not stored yet."""
    _lock(f"entry-worker:{campaign.pk}:{annotator.external_id}")
    rows = Assignment.objects.filter(campaign=campaign, annotator__external_id=annotator.external_id,
                                     last_activity_at__gte=cutoff,
                                     status__in=[Assignment.Status.ACTIVE, Assignment.Status.COMPLETED])
    if rows.exclude(browser_key__in=["", browser]).exists():
        raise HeldElsewhere


def _rebind(campaign: Campaign, candidates: list[Assignment], browser: str, ip: str | None, cap: int | None,
            cutoff) -> Assignment | None:
    """Bind to this browser one of the worker's unfinished HITs that no browser holds: one taken before HITs
    were bound, or one whose browser stayed idle past the timeout (the worker cleared their cookies, say)."""
    for assignment in candidates:
        bound = bool(assignment.browser_key)
        with transaction.atomic():
            if cap is not None:
                _check_open_from(campaign, ip, cap, cutoff, lock=True)
            rows = Assignment.objects.filter(pk=assignment.pk, status=Assignment.Status.ACTIVE,
                                             browser_key=assignment.browser_key)
            changes = {"browser_key": browser}
            if bound:  # freed by the timeout: the idle clock starts again, and the item's clock with it
                rows = rows.filter(last_activity_at__lt=cutoff)
                changes.update(last_activity_at=timezone.now(), item_served_at=None, entry_ip=ip)
            elif assignment.entry_ip is None:
                changes["entry_ip"] = ip
            if rows.update(**changes):
                assignment.refresh_from_db()
                return assignment
    return None


def _resume_abandoned(campaign: Campaign, mine: list[Assignment], browser: str | None = None,
                      ip: str | None = None, cap: int | None = None) -> Assignment | None:
    """A worker back after losing an unfinished HIT gets it back if nobody has taken their place (bound to the
    browser they come back with)."""
    left = max((a for a in mine if a.status == Assignment.Status.ABANDONED), key=lambda a: a.last_activity_at,
               default=None)
    if left is None:
        return None
    cutoff = idle_cutoff(campaign)
    with transaction.atomic():
        if cap is not None:
            _check_open_from(campaign, ip, cap, cutoff, lock=True)
        hit = Hit.objects.select_for_update().filter(pk=left.hit_id).first()
        if hit.assignments.filter(_live(cutoff)).count() >= campaign.redundancy:
            return None
        changes = {"status": Assignment.Status.ACTIVE, "last_activity_at": timezone.now(), "item_served_at": None}
        if browser is not None:
            changes.update(browser_key=browser, entry_ip=ip)
        Assignment.objects.filter(pk=left.pk).update(**changes)
    left.refresh_from_db()
    return left


def _claim(campaign: Campaign, hit_id: int, annotator: Annotator, cutoff, entry: dict, browser: str = "",
           ip: str | None = None, cap: int | None = None) -> Assignment | None:
    """Lock the HIT, release its idle assignments, and take a free place if one is left."""
    with transaction.atomic():
        if browser and annotator.external_id:
            _check_held(campaign, annotator, browser, cutoff)
        if cap is not None:
            _check_open_from(campaign, ip, cap, cutoff, lock=True)
        hit = Hit.objects.select_for_update(skip_locked=True).filter(pk=hit_id).first()
        if hit is None:
            return None
        hit.assignments.filter(status=Assignment.Status.ACTIVE, last_activity_at__lt=cutoff).update(
            status=Assignment.Status.ABANDONED
        )
        if hit.assignments.filter(_live(cutoff)).count() >= campaign.redundancy:
            return None
        keys = _exclusive(hit.exposure)
        first_seen = annotator.pk is None
        try:
            with transaction.atomic():
                if first_seen:  # a worker first seen now is stored with their first HIT, never without one
                    annotator.save(force_insert=True)
                assignment = Assignment.objects.create(campaign=campaign, hit=hit, annotator=annotator, entry=entry,
                                                       browser_key=browser, entry_ip=ip)
                if keys:  # the database keeps a worker to one HIT per key, even when their requests race
                    StageExposure.objects.bulk_create([StageExposure(campaign=campaign, annotator=annotator, key=k)
                                                       for k in keys])
                return assignment
        except IntegrityError:  # the worker has this HIT, or holds one of its keys already: try the next HIT
            if first_seen:  # not stored after all; or stored meanwhile by a parallel request with the same id
                annotator.pk, annotator._state.adding = None, True
                stored = Annotator.objects.filter(external_id=annotator.external_id).values_list("pk", flat=True)
                if annotator.external_id and stored:
                    annotator.pk, annotator._state.adding = stored[0], False
            return None


def _exclusive(exposure) -> list[str]:
    """The keys a HIT's exposure says a worker may hold only once per campaign (`StageExposure`)."""
    keys = exposure.get("exclusive") if isinstance(exposure, dict) else None
    return [str(k) for k in keys] if isinstance(keys, list) else []


def finished(campaign: Campaign, annotator: Annotator, browser: str | None = None,
             mine: list[Assignment] | None = None) -> list[Assignment]:
    """The worker's completed HITs of this campaign that have a completion code, in the order they finished;
    with `browser` (crowd entry with binding on) only those finished in that browser. `mine` is
    `worker_assignments`, when the caller has it already."""
    mine = worker_assignments(campaign, annotator) if mine is None else mine
    if browser is not None and not in_use_elsewhere(campaign, mine, browser):
        _bind_finished(campaign, mine, browser)
    done = [a for a in mine if a.status == Assignment.Status.COMPLETED and a.completion_code
            and (browser is None or a.browser_key == browser)]
    for a in done:
        a.campaign = campaign
    return sorted(done, key=lambda a: (a.completed_at, a.pk))


def block(campaign: Campaign, annotator: Annotator) -> int:
    """Keep a worker out of a campaign: no new HIT, and their unfinished ones end (judgments kept)."""
    campaign.blocked_annotators.add(annotator)
    return Assignment.objects.filter(campaign=campaign, annotator=annotator, status=Assignment.Status.ACTIVE).update(
        status=Assignment.Status.ABANDONED)


def unblock(campaign: Campaign, annotator: Annotator) -> None:
    campaign.blocked_annotators.remove(annotator)


def is_blocked(campaign: Campaign, annotator: Annotator) -> bool:
    return annotator.pk is not None and campaign.blocked_annotators.filter(pk=annotator.pk).exists()


def needs_qualification(campaign: Campaign, annotator: Annotator) -> bool:
    return campaign.require_qualification and not (annotator.native_language and annotator.country)


def qualifies(campaign: Campaign, annotator: Annotator) -> bool:
    """A declared native language matching the campaign's requirement (when it has one) by language: the same
    primary language, and the requirement's region and script if it names them (annotation/languages.py)."""
    return languages.matches(campaign.required_native_language, annotator.native_language)
