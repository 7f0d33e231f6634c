"""The annotator's state machine (docs/api.md, "Annotators").

An assignment shows its items strictly in order. Only the current item is accepted; a
repeat of the submission just stored is answered as before and stored once; anything
else is a conflict. Seconds per item are measured on the server, from the moment the
item was handed out (the previous answer's response, or the first GET) to the moment the
answer arrives. Each request runs a fixed number of queries, whatever the progress: a GET
reads once (and writes once more only to start the clock of a HIT's first item); a POST
reads once and writes once (judging_sql.py; the write is two statements off PostgreSQL), and
reads again only if a parallel request for the same assignment got there first.

A paused or closed campaign takes effect at the next request of a HIT in progress: the
campaign's status comes with the same read, so checking it costs nothing, and the write's
guard re-checks it, so nothing is stored once a pause or close is committed. A finished
HIT keeps answering its done state (its completion code is never withheld).
"""
from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
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
from . import judging_sql, tutorials
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


def parse_body(raw: bytes) -> Any:
    """An annotator's POST body, parsed: the one place every answer is read, so every protocol gets the same
    refusals (JudgmentError, 400) of what is not JSON (nor UTF-8, or nests or counts past the parser) and of
    text no database stores (NUL, lone surrogates: PostgreSQL refuses both), in values and field names alike."""
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):  # not JSON or not UTF-8; also a too-long integer, too deep a nesting
        raise JudgmentError("the body must be JSON") from None
    where = unstorable_text(body)
    if where is not None:
        raise JudgmentError(f"{where} must not contain NUL characters or lone surrogates")
    return body


def load(token: str) -> Snapshot | None:
    """The assignment with this token and the items at its current and next positions; None if unknown."""
    return judging_sql.read(token)


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
    before a pause, which their HIT would not outlast anyway."""
    status = assignment.campaign.status
    done = assignment.position >= assignment.hit.size
    progress = {"position": min(assignment.position + 1, assignment.hit.size), "total": assignment.hit.size,
                "done": False}
    if not done and status == Campaign.Status.CLOSED:
        raise CampaignHalted(True, progress)
    if assignment.status == Assignment.Status.ABANDONED:
        raise AssignmentGone(assignment.campaign.blocked_annotators.filter(pk=assignment.annotator_id).exists())
    if not done and status != Campaign.Status.ACTIVE:
        raise CampaignHalted(False, progress)


def _item_state(assignment: Assignment, item: HitItem) -> dict:
    protocol = assignment.campaign.protocol_spec
    payload = protocol.item_payload(item)
    payload.update(instructions.screen_fields(item.segment, protocol.instruction_targets(item),
                                              assignment.campaign.options))
    # every protocol alike (building/media_payload.py)
    payload.update(media_fields(assignment.token, item, shows_document(protocol, item)))
    return {"position": assignment.position + 1, "total": assignment.hit.size, "done": False, "item": payload}


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


def submit(token: str, body) -> Answer | None:
    """Store the answer to the current item. None if the token is unknown.

    Raises JudgmentError (malformed, 400), Conflict (not the current item, 409),
    AssignmentGone (410) and CampaignHalted (paused 423, closed 410). The write only
    succeeds if the assignment is still where it was read and the campaign still active;
    if a parallel request for the same assignment moved it first, the answer is judged
    again against the new state (typically a replay of the one just stored).
    """
    item_id = require_item_id(body)
    # After losing to a parallel request, the answer is a replay, a conflict or gone: one more read settles it.
    for _attempt in range(2):
        snapshot = judging_sql.read(token)
        if snapshot is None:
            return None
        answer = _try_submit(snapshot, item_id, body)
        if answer is not None:
            return answer
    raise Conflict("this HIT is changing under several requests at once; fetch the current item", state_of(snapshot))


def _try_submit(snapshot: Snapshot, item_id: int, body) -> Answer | None:
    """Judge the submission against `snapshot`; None if the assignment moved on before it was stored. The media
    report every protocol's answer may carry (building/media_actions.py) is read apart from the protocol's answer;
    a replay is judged by its answer alone."""
    assignment = snapshot.assignment
    _check_open(assignment)
    protocol, options = assignment.campaign.protocol_spec, assignment.campaign.options
    body, media = media_actions.split(body)
    own, judged = instructions.split(body, options)  # the instruction judgment, with the option on
    fields = protocol.parse_judgment(own)
    if instructions.enabled(options):
        fields["instruction"] = instructions.parse(judged)
    if item_id == assignment.last_item_id:
        return _replay(snapshot, item_id, fields)
    total = assignment.hit.size
    position = assignment.position
    if position >= total:
        raise Conflict("this HIT is complete", state_of(snapshot))
    current = snapshot.items[position]
    if item_id != current.id:
        if not navigation_allowed(assignment.campaign):
            raise JudgmentError(f"this campaign takes its items in order: only item {current.id} (position "
                                f"{position + 1}), the next one, can be answered")
        raise Conflict("only the current item can be answered", state_of(snapshot))
    protocol.check_answer(current, fields)
    if "instruction" in fields:
        instructions.check_keys(fields["instruction"], protocol.instruction_targets(current))
    required = (options or {}).get("require_media_played") or 0
    fields["media"] = media_actions.check(current, media, required)
    pending, stay = tutorials.before_record(assignment, current, fields, lambda: _item_state(assignment, current))
    if stay is not None:  # a loud tutorial's wrong try: stored as a try, the item stays current
        return Answer(200, stay)
    now = timezone.now()
    served_at = assignment.item_served_at or assignment.started_at
    judgment = Judgment(
        campaign_id=assignment.campaign_id, assignment_id=assignment.pk, annotator_id=assignment.annotator_id,
        item_id=current.id, served_at=served_at, seconds=max(0.0, (now - served_at).total_seconds()), **fields,
    )
    assignment.position = position + 1
    assignment.last_item_id = current.id
    assignment.item_served_at = now
    assignment.last_activity_at = now
    if assignment.position >= total:
        assignment.status = Assignment.Status.COMPLETED
        assignment.completed_at = now
        assignment.completion_code = completion_code_for(assignment)
    if pending is None:
        if not judging_sql.record(assignment, judgment, expected_position=position):
            return None
    else:
        with transaction.atomic():
            if not judging_sql.record(assignment, judgment, expected_position=position):
                return None
            tutorials.after_record(assignment, current, fields, pending)
    campaign_id, protocol, options = assignment.campaign_id, assignment.campaign.protocol, assignment.campaign.options
    # robust: the judgment is stored whatever a listener does (a Redis outage must not turn it into a 500).
    transaction.on_commit(lambda: judgments_recorded.send(sender=Judgment, campaign_id=campaign_id, count=1,
                                                          protocol=protocol, options=options), robust=True)
    if assignment.position >= total:
        annotator_id, assignment_id, options = assignment.annotator_id, assignment.pk, assignment.campaign.options
        transaction.on_commit(lambda: assignment_completed.send(
            sender=Assignment, campaign_id=campaign_id, annotator_id=annotator_id, assignment_id=assignment_id,
            protocol=protocol, options=options), robust=True)
    state = _done_state(assignment) if assignment.position >= total else _item_state(
        assignment, snapshot.items[position + 1])
    said = tutorials.outcome(pending) if pending is not None else None
    if said is not None:
        state["training"] = said
    return Answer(201, state)


def _replay(snapshot: Snapshot, item_id: int, fields: dict) -> Answer:
    """A repeated POST of the item just saved: answered as before (201) when it carries the same answer, 409
    with the stored answer when it carries another. Only replays pay this one read; nothing is written."""
    assignment = snapshot.assignment
    stored = (Judgment.objects.filter(assignment_id=assignment.pk, item_id=item_id)
              .values(*fields).first()) or {}
    if stored and stored != fields:
        item = HitItem.objects.filter(pk=item_id).first()
        if item is not None:  # a malformed replay is refused as malformed (400), not as a conflict
            assignment.campaign.protocol_spec.check_answer(item, fields)  # also brings it to its stored form
            if stored == fields:
                return Answer(201, state_of(snapshot))
        if not navigation_allowed(assignment.campaign):
            raise JudgmentError("this campaign takes its items in order: an item already answered cannot be "
                                "answered again")
        raise Conflict("this item was already answered; the answer stored is kept", state_of(snapshot),
                       stored={"item": item_id, **stored})
    return Answer(201, state_of(snapshot))


__all__ = ["Answer", "AssignmentGone", "CampaignHalted", "Conflict", "JudgmentError", "load", "parse_body", "serve",
           "state_of", "submit"]
