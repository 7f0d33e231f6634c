"""The annotator's state machine (docs/api.md, "Annotators").

An assignment shows its items strictly in order. Only the current item is accepted; a
repeat of the submission just stored is answered as before and stored once; anything
else is a conflict. Seconds per item are measured on the server, from the moment the
item was handed out (the previous answer's response, or the first GET) to the moment the
answer arrives. Each request runs a fixed number of queries, whatever the progress: a GET
reads once (and writes once more only to start the clock of a HIT's first item); a POST
reads once and writes once (judging_sql.py; the write is two statements off PostgreSQL), and
reads again only if a parallel request for the same assignment got there first. A POST may carry several
answers for consecutive items (`{"batch": [...]}`): the same read and write, all stored or none. Where the
protocol shows several items on one screen (`Protocol.page`, docs/architecture.md "Pages"), the state carries the
page and a batch may not reach past it.

A paused or closed campaign takes effect at the next request of a HIT in progress: the
campaign's status comes with the same read, so checking it costs nothing, and the write's
guard re-checks it, so nothing is stored once a pause or close is committed. A finished
HIT keeps answering its done state (its completion code is never withheld).
"""
from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from ..building import instructions, media_actions
from ..building.campaign_files import unstorable
from ..building.media_payload import media_fields, shows_document
from ..models import Assignment, Campaign, HitItem, Judgment
from ..protocols import JudgmentError
from ..protocols.base import require_item_id
from ..signals import assignment_completed, judgments_recorded
from . import judging_sql, trials, tutorials
from .judging_sql import Snapshot


class AssignmentGone(Exception):
    """The worker stayed idle past the timeout and the HIT went to someone else; or, `blocked`, they were kept
    out of the campaign (by hand, or by the live reliability gate) and their HIT ended."""

    def __init__(self, blocked: bool = False):
        super().__init__("blocked" if blocked else "gone")
        self.blocked = blocked


def navigation_allowed(campaign: Campaign) -> bool:
    """The campaign's `allow_item_navigation` (default on): off, an answer to another item than the next is a 400."""
    return (campaign.options or {}).get("allow_item_navigation", True) is not False


PAUSED_TEXT = "This campaign is paused; your work so far is saved. Come back later."
CLOSED_TEXT = "This campaign has closed; your judgments are saved."


class CampaignHalted(Exception):
    """The campaign of an unfinished HIT is paused (or not yet published) or closed: nothing is served or stored.
    `state` is the HIT's progress (`position`, `total`, `done`: false), without the item."""

    def __init__(self, closed: bool, state: dict):
        super().__init__(CLOSED_TEXT if closed else PAUSED_TEXT)
        self.closed = closed
        self.state = state


class Conflict(Exception):
    """The submission is not for the current item, or replays it with another answer; `state` is the
    assignment's current state, `stored` the answer kept for a replayed item."""

    def __init__(self, message: str, state: dict, stored: dict | None = None):
        super().__init__(message)
        self.state = state
        self.stored = stored


@dataclass
class Answer:
    status: int
    state: dict


def unstorable_text(body: Any) -> str | None:
    """What in a parsed body holds a text no database stores (a NUL character or a lone surrogate), for the
    message: 'edits/2' for a value, "a field name" for a key; None when nothing does. Iterative: the parser's
    nesting limit is its own, not this walk's."""
    stack = [(body, "")]
    while stack:
        value, where = stack.pop()
        if isinstance(value, str):
            if unstorable(value):
                return repr(where[:60]) if where else "the body"
        elif isinstance(value, dict):
            for key, child in value.items():
                if unstorable(key):
                    return f"a field name in {where[:60]!r}" if where else "a field name"
                stack.append((child, f"{where}/{key}" if where else key))
        elif isinstance(value, list):
            stack.extend((child, f"{where}/{k}" if where else str(k)) for k, child in enumerate(value))
    return None


#: What in a raw body may parse to a text no database stores: a NUL byte, a surrogate encoded in UTF-8 (json.loads
#: lets both through as characters), or a \u0000 or surrogate escape (lone or paired). A body in UTF-16 or UTF-32
#: has NUL bytes. A body without any of them cannot hold such a text, so the walk over it is skipped (most answers).
MAY_BE_UNSTORABLE = re.compile(rb"\x00|\xed[\xa0-\xbf]|\\u(?:0000|[dD][89a-fA-F])")


def parse_body(raw: bytes) -> Any:
    """An annotator's POST body, parsed: the one place every answer is read, so every protocol gets the same
    refusals (JudgmentError, 400) of what is not JSON (nor UTF-8, or nests or counts past the parser) and of
    text no database stores (NUL, lone surrogates: PostgreSQL refuses both), in values and field names alike."""
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON or not UTF-8; also a too-long integer, too deep a nesting
        raise JudgmentError("the body must be JSON") from None
    if MAY_BE_UNSTORABLE.search(raw) is None:
        return body
    where = unstorable_text(body)
    if where is not None:
        raise JudgmentError(f"{where} must not contain NUL characters or lone surrogates")
    return body


def load(token: str) -> Snapshot | None:
    """The assignment with this token and the item at its current position, all a GET shows (the next item's row
    cost the read 10-30 µs more); None if unknown."""
    return judging_sql.read(token, span=0)


def _done_state(assignment: Assignment) -> dict:
    total = assignment.hit.size
    campaign = assignment.campaign
    code = assignment.completion_code
    state = {"position": total, "total": total, "done": True, "completion_code": code,
             "completion_url": campaign.completion_link(code, assignment.entry) or None}
    if campaign.status == Campaign.Status.CLOSED:
        state.update(closed=True, detail=CLOSED_TEXT)
    return state


def _check_open(assignment: Assignment) -> None:
    """Raise CampaignHalted or AssignmentGone for an assignment that may not go on now; finished HITs pass.

    Closed comes first (it is true for everyone, the idle worker too); a worker who lost the HIT is told so
    before a pause, which their HIT would not outlast anyway. A trial's HIT goes on in a draft campaign
    (services/trials.py)."""
    status = assignment.campaign.status
    done = assignment.position >= assignment.hit.size
    progress = {"position": min(assignment.position + 1, assignment.hit.size), "total": assignment.hit.size,
                "done": False}
    if not done and status == Campaign.Status.CLOSED:
        raise CampaignHalted(True, progress)
    if assignment.status == Assignment.Status.ABANDONED:
        raise AssignmentGone(assignment.campaign.blocked_annotators.filter(pk=assignment.annotator_id).exists())
    if not done and status != Campaign.Status.ACTIVE and not trials.works_in_draft(assignment):
        raise CampaignHalted(False, progress)


def _item_state(assignment: Assignment, item: HitItem) -> dict:
    protocol = assignment.campaign.protocol_spec
    payload = protocol.item_payload(item)
    payload.update(instructions.screen_fields(item.segment, protocol.instruction_targets(item),
                                              assignment.campaign.options))
    # every protocol alike (building/media_payload.py)
    payload.update(media_fields(assignment.token, item, shows_document(protocol, item)))
    payload.update(tutorials.screen_fields(item, assignment.campaign.options))  # "Practice" on a tutorial item
    state = {"position": assignment.position + 1, "total": assignment.hit.size, "done": False, "item": payload}
    page = protocol.page(item)
    if page and len(page) > 1:  # a screen of several items, answered in one batch (Protocol.page)
        state["page"] = page
    return state


def state_of(snapshot: Snapshot) -> dict:
    assignment = snapshot.assignment
    if assignment.position >= assignment.hit.size:
        return _done_state(assignment)
    return _item_state(assignment, snapshot.items[assignment.position])


def serve(snapshot: Snapshot) -> dict:
    """The current state; starts the clock of the current item if it has not started.

    Raises AssignmentGone (410) and CampaignHalted (paused 423, closed 410)."""
    assignment = snapshot.assignment
    _check_open(assignment)
    if assignment.position < assignment.hit.size and assignment.item_served_at is None:
        now = timezone.now()
        Assignment.objects.filter(pk=assignment.pk, item_served_at__isnull=True).update(
            item_served_at=now, last_activity_at=now
        )
    return state_of(snapshot)


def completion_code_for(assignment: Assignment) -> str:
    return assignment.campaign.completion_code or secrets.token_hex(5).upper()


#: The most answers one POST may carry (`{"batch": [...]}`); a HIT holds at most this many items anyway.
MAX_BATCH = 100
BATCH = "batch"


def answers_of(body: Any) -> list:
    """The answers a POST body carries: the body itself, or the list under `batch` (docs/api.md §8.3, "Several
    answers in one request"): 1 to MAX_BATCH answers, each a body as one POST would send it, for consecutive
    items from the current one on. Raises JudgmentError (400) for a malformed batch."""
    if not isinstance(body, dict) or BATCH not in body or "item" in body:
        return [body]
    answers = body[BATCH]
    if len(body) != 1:
        raise JudgmentError(f"a batch is {{\"{BATCH}\": [answers]}} and nothing else")
    if not isinstance(answers, list) or not 1 <= len(answers) <= MAX_BATCH:
        raise JudgmentError(f"'{BATCH}' must be a list of 1 to {MAX_BATCH} answers")
    return answers


@dataclass
class _Judged:
    """One answer of a POST, parsed (not yet checked against its item)."""

    item_id: int
    fields: dict
    media: Any


def submit(token: str, body) -> Answer | None:
    """Store the answer (or the batch of answers) to the current item (and those after it). None if the token is
    unknown.

    Raises JudgmentError (malformed, 400), Conflict (not the current item, 409),
    AssignmentGone (410) and CampaignHalted (paused 423, closed 410). The write only
    succeeds if the assignment is still where it was read and the campaign still active;
    if a parallel request for the same assignment moved it first, the answer is judged
    again against the new state (typically a replay of the one just stored). A batch is stored whole or not
    at all: every answer is checked as if it came alone before any is stored.
    """
    bodies = answers_of(body)
    item_ids = [require_item_id(one) for one in bodies]
    # After losing to a parallel request, the answer is a replay, a conflict or gone: one more read settles it.
    for _attempt in range(2):
        snapshot = judging_sql.read(token, span=len(bodies))
        if snapshot is None:
            return None
        answer = _try_submit(snapshot, item_ids, bodies)
        if answer is not None:
            return answer
    raise Conflict("this HIT is changing under several requests at once; fetch the current item", state_of(snapshot))


def _parse(assignment: Assignment, item_id: int, body) -> _Judged:
    """The answer's fields as the protocol reads them, the instruction judgment with the option on, and the media
    report every protocol's answer may carry (building/media_actions.py), read apart."""
    protocol, options = assignment.campaign.protocol_spec, assignment.campaign.options
    body, media = media_actions.split(body)
    own, judged = instructions.split(body, options)  # the instruction judgment, with the option on
    fields = protocol.parse_judgment(own)
    if instructions.enabled(options):
        fields["instruction"] = instructions.parse(judged)
    return _Judged(item_id, fields, media)


def _check(assignment: Assignment, item: HitItem, judged: _Judged) -> None:
    """The answer against the item it answers (400 when it does not fit); sets the checked media report."""
    protocol = assignment.campaign.protocol_spec
    protocol.check_answer(item, judged.fields)
    if "instruction" in judged.fields:
        instructions.check_keys(judged.fields["instruction"], protocol.instruction_targets(item))
    required = (assignment.campaign.options or {}).get("require_media_played") or 0
    judged.fields["media"] = media_actions.check(item, judged.media, required)


def _batch_items(snapshot: Snapshot, judged: list[_Judged]) -> list[HitItem]:
    """The items a batch answers, from the current one on; a batch that skips, repeats or reorders items, or runs
    past the HIT's end, is a 400 (its first answer was already found to be for the current item)."""
    assignment = snapshot.assignment
    items = []
    for k, one in enumerate(judged):
        item = snapshot.items.get(assignment.position + k)
        if item is None or item.id != one.item_id:
            expected = f"item {item.id}" if item is not None else "nothing (the HIT ends before it)"
            raise JudgmentError(f"'{BATCH}/{k}': the answers of a batch are for consecutive items in order, from "
                                f"the current one; expected {expected}, not item {one.item_id}")
        items.append(item)
    return items


def _check_page(assignment: Assignment, current: HitItem, judged: list[_Judged]) -> None:
    """A batch from an item shown on a page (Protocol.page; a document item's page is itself alone) stays on that
    page: 400 past its end."""
    page = assignment.campaign.protocol_spec.page(current)
    if page is not None and len(page) < len(judged):
        raise JudgmentError(f"'{BATCH}/{len(page)}': item {judged[len(page)].item_id} is past the current page, "
                            f"which ends with item {page[-1]['id']}; send one page's answers per batch")


def _try_submit(snapshot: Snapshot, item_ids: list[int], bodies: list) -> Answer | None:
    """Judge the submission against `snapshot`; None if the assignment moved on before it was stored. A replay
    is judged by its answers alone (their media reports aside)."""
    assignment = snapshot.assignment
    _check_open(assignment)
    judged = [_parse(assignment, item_id, body) for item_id, body in zip(item_ids, bodies, strict=True)]
    if item_ids[-1] == assignment.last_item_id:
        return _replay(snapshot, judged)
    total = assignment.hit.size
    position = assignment.position
    if position >= total:
        raise Conflict("this HIT is complete", state_of(snapshot))
    current = snapshot.items[position]
    if item_ids[0] != current.id:
        if not navigation_allowed(assignment.campaign):
            raise JudgmentError(f"this campaign takes its items in order: only item {current.id} (position "
                                f"{position + 1}), the next one, can be answered")
        raise Conflict("only the current item can be answered", state_of(snapshot))
    if len(judged) > 1:
        _check_page(assignment, current, judged)
    items = _batch_items(snapshot, judged)
    for item, one in zip(items, judged, strict=True):
        _check(assignment, item, one)
    if len(judged) > 1 and tutorials.loud_among(assignment, items, [one.fields for one in judged]):
        raise JudgmentError(f"a tutorial item is answered by itself, not in a '{BATCH}'")
    fields = judged[0].fields
    pending, stay = tutorials.before_record(assignment, current, fields, lambda: _item_state(assignment, current))
    if stay is not None:  # a loud tutorial's wrong try: stored as a try, the item stays current
        return Answer(200, stay)
    # the POST's tutorial answers to keep with their judgments; a batch's silent checks too, each scored and kept as
    # if it came alone (never told apart from the other items)
    checks = [(current, fields, pending)] + [
        (item, one.fields, tutorials.before_record(assignment, item, one.fields, None)[0])
        for item, one in zip(items[1:], judged[1:], strict=True)]
    checks = [check for check in checks if check[2] is not None]
    now = timezone.now()
    served_at = assignment.item_served_at or assignment.started_at
    # A batch's answers arrive together: the time since its first item was served is shared out equally.
    step = max(0.0, (now - served_at).total_seconds()) / len(judged)
    judgments = [Judgment(
        campaign_id=assignment.campaign_id, assignment_id=assignment.pk, annotator_id=assignment.annotator_id,
        item_id=item.id, served_at=served_at + timedelta(seconds=step * k), seconds=step, **one.fields,
    ) for k, (item, one) in enumerate(zip(items, judged, strict=True))]
    assignment.position = position + len(judgments)
    assignment.last_item_id = items[-1].id
    assignment.item_served_at = now
    assignment.last_activity_at = now
    if assignment.position >= total:
        assignment.status = Assignment.Status.COMPLETED
        assignment.completed_at = now
        assignment.completion_code = completion_code_for(assignment)
    if not checks:
        if not judging_sql.record(assignment, judgments, expected_position=position):
            return None
    else:
        with transaction.atomic():
            if not judging_sql.record(assignment, judgments, expected_position=position):
                return None
            for item, item_fields, item_pending in checks:
                tutorials.after_record(assignment, item, item_fields, item_pending)
    _announce(assignment, len(judgments), completed=assignment.position >= total)
    state = _done_state(assignment) if assignment.position >= total else _item_state(
        assignment, snapshot.items[assignment.position])
    said = tutorials.outcome(pending) if pending is not None else None
    if said is not None:
        state["training"] = said
    return Answer(201, state)


def _announce(assignment: Assignment, count: int, completed: bool) -> None:
    """The signals of stored judgments (and of a completed HIT), sent once the write is committed."""
    campaign_id, protocol, options = assignment.campaign_id, assignment.campaign.protocol, assignment.campaign.options
    # robust: the judgment is stored whatever a listener does (a Redis outage must not turn it into a 500).
    transaction.on_commit(lambda: judgments_recorded.send(sender=Judgment, campaign_id=campaign_id, count=count,
                                                          protocol=protocol, options=options), robust=True)
    if completed:
        annotator_id, assignment_id = assignment.annotator_id, assignment.pk
        transaction.on_commit(lambda: assignment_completed.send(
            sender=Assignment, campaign_id=campaign_id, annotator_id=annotator_id, assignment_id=assignment_id,
            protocol=protocol, options=options), robust=True)


def _replay(snapshot: Snapshot, judged: list[_Judged]) -> Answer:
    """A repeated POST of the answers just saved (the last one's item is the one stored last): answered as before
    (201) when each carries the answer stored, 409 with the first stored answer that differs otherwise. Only
    replays pay this one read; nothing is written."""
    assignment = snapshot.assignment
    keys = list(dict.fromkeys(key for one in judged for key in one.fields))
    rows = Judgment.objects.filter(assignment_id=assignment.pk, item_id__in=[one.item_id for one in judged])
    stored_of = {row.pop("item_id"): row for row in rows.values("item_id", *keys)}
    if len(judged) > 1 and any(one.item_id not in stored_of for one in judged):
        raise Conflict("only the current item can be answered", state_of(snapshot))  # not a batch stored before
    differing = None
    for one in judged:
        stored = {key: value for key, value in stored_of.get(one.item_id, {}).items() if key in one.fields}
        if stored and stored != one.fields:
            item = HitItem.objects.filter(pk=one.item_id).first()
            if item is not None:  # a malformed replay is refused as malformed (400), not as a conflict
                assignment.campaign.protocol_spec.check_answer(item, one.fields)  # also brings it to its stored form
                if stored == one.fields:
                    continue
            differing = differing or (one.item_id, stored)
    if differing is not None:
        if not navigation_allowed(assignment.campaign):
            raise JudgmentError("this campaign takes its items in order: an item already answered cannot be "
                                "answered again")
        raise Conflict("this item was already answered; the answer stored is kept", state_of(snapshot),
                       stored={"item": differing[0], **differing[1]})
    return Answer(201, state_of(snapshot))


__all__ = ["MAX_BATCH", "Answer", "AssignmentGone", "CampaignHalted", "Conflict", "JudgmentError", "answers_of", "load",
           "parse_body", "serve", "state_of", "submit"]
