"""The annotator's state machine (CONTRACT.md, "Annotators").

An assignment shows its items strictly in order. Only the current item is accepted; a
repeat of the submission just stored is answered as before and stored once; anything
else is a conflict. Seconds per item are measured on the server, from the moment the
item was handed out (the previous answer's response, or the first GET) to the moment the
answer arrives. Each request runs a fixed number of queries, whatever the progress.
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from ..models import Assignment, HitItem, Judgment
from ..protocols import JudgmentError
from ..protocols.base import require_item_id
from ..signals import judgments_recorded


class AssignmentGone(Exception):
    """The worker stayed idle past the timeout and the HIT went to someone else."""


class Conflict(Exception):
    """The submission is not for the current item."""


@dataclass
class Answer:
    status: int
    state: dict


def find_assignment(token: str, lock: bool = False) -> Assignment | None:
    # A lookup by a unique key: no ORDER BY. The models' default orderings name related models
    # (joined again, sorted, planned on every request), and first() would order by pk.
    queryset = Assignment.objects.select_related("hit", "campaign").order_by()
    if lock:
        queryset = queryset.select_for_update(of=("self",))
    found = list(queryset.filter(token=token)[:1])
    return found[0] if found else None


def _done_state(assignment: Assignment) -> dict:
    total = assignment.hit.size
    return {"position": total, "total": total, "done": True, "completion_code": assignment.completion_code}


def _item_state(assignment: Assignment, item: HitItem) -> dict:
    protocol = assignment.campaign.protocol_spec
    return {"position": assignment.position + 1, "total": assignment.hit.size, "done": False,
            "item": protocol.item_payload(item)}


def _items_at(assignment: Assignment, positions: list[int]) -> dict[int, HitItem]:
    items = (
        HitItem.objects.select_related("segment", "output")
        .filter(hit_id=assignment.hit_id, position__in=positions).order_by()
    )
    return {item.position: item for item in items}


def state_of(assignment: Assignment) -> dict:
    if assignment.position >= assignment.hit.size:
        return _done_state(assignment)
    item = _items_at(assignment, [assignment.position])[assignment.position]
    return _item_state(assignment, item)


def serve(assignment: Assignment) -> dict:
    """The current state; starts the clock of the current item if it has not started."""
    if assignment.status == Assignment.Status.ABANDONED:
        raise AssignmentGone
    if assignment.position < assignment.hit.size and assignment.item_served_at is None:
        now = timezone.now()
        Assignment.objects.filter(pk=assignment.pk, item_served_at__isnull=True).update(
            item_served_at=now, last_activity_at=now
        )
    return state_of(assignment)


def completion_code_for(assignment: Assignment) -> str:
    return assignment.campaign.completion_code or secrets.token_hex(5).upper()


def submit(token: str, body) -> Answer | None:
    """Store the answer to the current item. None if the token is unknown.

    Raises JudgmentError (malformed, 400), Conflict (not the current item, 409) and
    AssignmentGone (410).
    """
    item_id = require_item_id(body)
    with transaction.atomic():
        assignment = find_assignment(token, lock=True)
        if assignment is None:
            return None
        if assignment.status == Assignment.Status.ABANDONED:
            raise AssignmentGone
        fields = assignment.campaign.protocol_spec.parse_judgment(body)
        if item_id == assignment.last_item_id:
            return Answer(201, state_of(assignment))
        total = assignment.hit.size
        position = assignment.position
        if position >= total:
            raise Conflict("this HIT is complete")
        items = _items_at(assignment, [position, position + 1])
        current = items[position]
        if item_id != current.id:
            raise Conflict("only the current item can be answered")
        now = timezone.now()
        served_at = assignment.item_served_at or assignment.started_at
        # Where rows can be locked (PostgreSQL), the lock taken above already keeps a parallel request
        # for this assignment out until we commit, so the insert cannot collide and needs no savepoint
        # (two round trips fewer); the unique constraint still stands guard. Elsewhere (SQLite), a
        # savepoint lets us answer a collision as a replay.
        savepoint = not connection.features.has_select_for_update
        try:
            with transaction.atomic(savepoint=savepoint):
                Judgment.objects.create(
                    campaign_id=assignment.campaign_id, assignment=assignment, annotator_id=assignment.annotator_id,
                    item=current, served_at=served_at, seconds=max(0.0, (now - served_at).total_seconds()), **fields,
                )
        except IntegrityError:  # stored by a parallel request that got here first (no row locks on SQLite)
            if not savepoint:
                raise
            assignment.refresh_from_db()
            return Answer(201, state_of(assignment))
        assignment.position = position + 1
        assignment.last_item_id = current.id
        assignment.item_served_at = now
        assignment.last_activity_at = now
        update = ["position", "last_item_id", "item_served_at", "last_activity_at"]
        if assignment.position >= total:
            assignment.status = Assignment.Status.COMPLETED
            assignment.completed_at = now
            assignment.completion_code = completion_code_for(assignment)
            update += ["status", "completed_at", "completion_code"]
        assignment.save(update_fields=update)
        campaign_id = assignment.campaign_id
        transaction.on_commit(lambda: judgments_recorded.send(sender=Judgment, campaign_id=campaign_id, count=1))
    if assignment.position >= total:
        return Answer(201, _done_state(assignment))
    return Answer(201, _item_state(assignment, items[position + 1]))


__all__ = ["Answer", "AssignmentGone", "Conflict", "JudgmentError", "find_assignment", "serve", "state_of", "submit"]
