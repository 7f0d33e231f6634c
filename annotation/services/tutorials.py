"""Tutorial items with an expected answer on the judging path (annotation/building/training.py; docs/api.md §8).

`before_record` runs for an answer the protocol has checked: a loud tutorial's wrong answer before its last try is
stored here as a try and answered with feedback (the item stays current, no judgment is stored); otherwise the
answer goes on to be stored as usual, and `after_record` stores its try beside the judgment, in the same
transaction. A failed final try (the loud tutorial failed, or a silent check failed) sends `training_failed` once
committed: the evaluation app's live reliability gate then decides whether the worker is kept out.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db import IntegrityError, transaction

from ..building import training
from ..models import Assignment, HitItem, TutorialTry
from ..signals import training_failed

FAILED_TEXT = ("You did not pass the training: the answer was still not the expected one after the last try. "
               "Thank you for your work; there are no further HITs for you in this campaign.")


@dataclass
class Pending:
    """A checked tutorial answer on its way to being stored: its verdict, its try number, and its mode."""

    check: training.Check
    attempt: int
    mode: str


def screen_fields(item: HitItem, options: dict | None) -> dict:
    """What the screen is told of the item beyond its payload: `practice` on a tutorial item that opens the HIT as
    practice (loud tutorials, and tutorial lines without an expected answer). A silent check (`tutorial_mode`
    silent) is an attention check placed among the units: it is never named, nor is any other item's type."""
    if item.item_type == "tutorial" and training.mode(options) != training.SILENT:
        return {"practice": True}
    return {}


def _answer(fields: dict) -> dict:
    """The answer as checked: spans and score (Direct Assessment: the score; contrastive ESA: the spans, each
    naming its candidate, and `scores` by candidate)."""
    answer = {"spans": fields.get("spans") or [], "score": fields.get("score")}
    if "scores" in fields:
        answer["scores"] = fields["scores"]
    return answer


def loud_among(assignment: Assignment, items: list[HitItem], answers: list[dict]) -> bool:
    """Whether a batch's items hold a loud tutorial, which is answered by itself (a wrong try keeps it current, with
    feedback). A silent check goes in a batch like any item: refusing it would tell the judge which items are
    checks (docs/methods.md §12.5)."""
    if training.mode(assignment.campaign.options or {}) == training.SILENT:
        return False
    protocol = assignment.campaign.protocol_spec
    return any(protocol.check_expected(item, fields) is not None for item, fields in zip(items, answers, strict=True))


def before_record(assignment: Assignment, item: HitItem, fields: dict, state_of_item) -> tuple[Pending | None, dict
                                                                                                 | None]:
    """(what to store with the judgment, None) for an answer that goes on; (None, the state to answer with) for a
    loud tutorial's wrong try that stays on the item. (None, None) when the item has no expected answer."""
    protocol = assignment.campaign.protocol_spec
    check = protocol.check_expected(item, fields)
    if check is None:
        return None, None
    options = assignment.campaign.options or {}
    mode = training.mode(options)
    if mode == training.SILENT:
        return Pending(check, 1, mode), None
    tries = list(TutorialTry.objects.filter(assignment_id=assignment.pk, item_id=item.pk)
                 .order_by("attempt").values_list("attempt", "answer"))
    limit = training.tries_allowed(options)
    attempt = len(tries) + 1
    if check.passed or attempt >= limit:
        return Pending(check, attempt, mode), None
    answer = _answer(fields)
    if not tries or tries[-1][1] != answer:  # the same wrong answer sent again (a network retry) is one try
        try:
            with transaction.atomic():
                TutorialTry.objects.create(campaign_id=assignment.campaign_id, assignment_id=assignment.pk,
                                           annotator_id=assignment.annotator_id, item_id=item.pk, attempt=attempt,
                                           mode=mode, passed=False, final=False, answer=answer, missed=check.missed)
        except IntegrityError:  # a parallel request stored this try first
            pass
    else:
        attempt -= 1
    state = state_of_item()
    columns = [c["key"] for c in item.payload.get("candidates", ())]
    state["feedback"] = training.feedback(item.payload["expected"], check, attempt, limit, columns)
    return None, state


def after_record(assignment: Assignment, item: HitItem, fields: dict, pending: Pending) -> None:
    """Store the final try beside its judgment (call inside the judgment's transaction); a failed one sends
    `training_failed` once committed."""
    TutorialTry.objects.create(campaign_id=assignment.campaign_id, assignment_id=assignment.pk,
                               annotator_id=assignment.annotator_id, item_id=item.pk, attempt=pending.attempt,
                               mode=pending.mode, passed=pending.check.passed, final=True, answer=_answer(fields),
                               missed=pending.check.missed)
    if not pending.check.passed:
        campaign_id, annotator_id = assignment.campaign_id, assignment.annotator_id
        transaction.on_commit(lambda: training_failed.send(sender=TutorialTry, campaign_id=campaign_id,
                                                           annotator_id=annotator_id), robust=True)


def outcome(pending: Pending) -> dict | None:
    """What the answer's response says of it: loud only (silent checks show nothing)."""
    if pending.mode != training.LOUD:
        return None
    if pending.check.passed:
        return {"passed": True, "message": "Right: that is the expected answer."}
    return {"passed": False, "stopped": True, "message": FAILED_TEXT}
