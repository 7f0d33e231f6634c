"""Review (docs/api.md "Prolific"): Prolific's submissions beside the platform's verdicts, the researcher's
decisions (stored before any call, so a failed call never loses one: the next run carries it out), and places.

A submission is tied to its HIT by Prolific's SESSION_ID, which the start link carries into `Assignment.entry`."""
from __future__ import annotations

import hashlib

from django.db import transaction
from django.utils import timezone

from annotation.models import Assignment
from evaluation.models import WorkerGate
from evaluation.services.crowd import approval_suggestions

from ..actions import perform
from ..client import Client
from ..models import ProlificStudy, ProlificSubmission

AWAITING = "AWAITING REVIEW"
#: Prolific's statuses of a participant who left: their HIT's place is freed as the platform's timeout frees it.
LEFT = ("RETURNED", "TIMED-OUT")
#: Prolific's rejection categories (POST /submissions/{id}/transition/), with what each means.
REJECTION_CATEGORIES = {
    "TOO_QUICKLY": "Too quickly", "TOO_SLOWLY": "Too slowly", "FAILED_INSTRUCTIONS": "Failed instructions",
    "INCOMP_LONGITUDINAL": "Incomplete longitudinal", "FAILED_CHECK": "Failed attention checks",
    "LOW_EFFORT": "Low effort", "MALINGERING": "Malingering", "NO_CODE": "No code", "BAD_CODE": "Bad code",
    "NO_DATA": "No data", "UNSUPP_DEVICE": "Unsupported device", "OTHER": "Other",
}
#: Prolific requires a rejection message of at least this many characters.
MIN_REJECTION_MESSAGE = 100
CLOSING = (" Your answers were checked by the platform's quality control, which compares your scores on hidden "
           "control items with the scores the same items should get.")


class DecisionRefused(ValueError):
    """A decision that cannot be stored as given (a 400 in the admin; nothing changes)."""


def sync(study: ProlificStudy, client: Client) -> int:
    """Fetch the study's submissions into `ProlificSubmission` rows and free the places of those who left; how many
    submissions Prolific reported."""
    listing = client.call("GET", f"studies/{study.prolific_id}/submissions/")
    rows = listing.get("results", [])
    sessions = {sid: pk for pk, sid in Assignment.objects.filter(
        campaign=study.campaign, entry__session_id__in=[r["id"] for r in rows]).values_list("pk", "entry__session_id")}
    for r in rows:
        ProlificSubmission.objects.update_or_create(
            submission_id=r["id"], defaults={
                "study": study, "participant_id": r.get("participant_id", ""), "status": r.get("status", ""),
                "study_code": r.get("study_code") or "", "started_at": r.get("started_at") or "",
                "assignment_id": sessions.get(r["id"])})
    free_places(study)
    return len(rows)


def free_places(study: ProlificStudy) -> int:
    """End the unfinished HIT of every submission Prolific reports returned or timed out, as the platform's idle
    timeout does (the assignment is abandoned; `Hit.held` drops with it). A finished HIT is never freed, and one the
    platform's timeout freed already is not freed again; each submission is looked at until freed once."""
    freed = 0
    for submission in study.submissions.filter(status__in=LEFT, place_freed=False, assignment__isnull=False):
        with transaction.atomic():
            changed = Assignment.objects.select_for_update().filter(
                pk=submission.assignment_id, status=Assignment.Status.ACTIVE).update(status=Assignment.Status.ABANDONED)
            ProlificSubmission.objects.filter(pk=submission.pk).update(place_freed=True)
        freed += changed
    return freed


def review_rows(study: ProlificStudy) -> list[dict]:
    """One row per submission: Prolific's status, the platform's verdict, and the suggestion with its category and
    a default message for a rejection."""
    campaign = study.campaign
    suggestions = {row["worker"]: row for row in approval_suggestions(campaign)}
    gates = {g.annotator.external_id: g for g in WorkerGate.objects.filter(
        campaign=campaign, lifted_at__isnull=True).select_related("annotator")}
    rows = []
    for s in study.submissions.select_related("assignment").order_by("participant_id"):
        a, gate, quality = s.assignment, gates.get(s.participant_id), suggestions.get(s.participant_id)
        completed = a is not None and a.status == Assignment.Status.COMPLETED
        if a is None:
            verdict, suggestion, category, reason = "no HIT", "reject", "NO_DATA", "no HIT was taken in this session"
        elif gate is not None and not completed:
            verdict, suggestion, category = "gated", "reject", "FAILED_CHECK"
            reason = f"stopped by the gate: {gate.reason}"
        elif completed and quality is not None:
            verdict = "completed, unreliable" if quality["reliable"] is False else "completed"
            if gate is not None:
                verdict = "completed, then gated"
            suggestion, reason = quality["suggestion"], quality["reason"]
            category = "LOW_EFFORT" if suggestion == "reject" else ""
        elif completed:
            verdict, suggestion, category, reason = "completed", "approve", "", "finished the HIT"
        elif a.status == Assignment.Status.ABANDONED:
            verdict, suggestion, category, reason = "timed out", "", "", "idle past the HIT's timeout"
        else:
            verdict, suggestion, category, reason = "in progress", "", "", "the HIT is not finished"
        rows.append({"submission": s, "verdict": verdict, "suggestion": suggestion if s.status == AWAITING else "",
                     "category": category, "reason": reason, "message": default_message(reason),
                     "actionable": s.status == AWAITING})
    return rows


def default_message(reason: str) -> str:
    text = f"Your submission was rejected because {reason}." + CLOSING
    return text if len(text) >= MIN_REJECTION_MESSAGE else text + " Please contact us if you think this is wrong."


def decide(study: ProlificStudy, submission_ids: list[str], decision: str, user, *, category: str = "",
           message: str = "") -> int:
    """Store the researcher's decision on these submissions (those awaiting review); how many. Raises
    DecisionRefused for a rejection without Prolific's category or a message of 100 characters."""
    if decision not in (ProlificSubmission.Decision.APPROVE, ProlificSubmission.Decision.REJECT):
        raise DecisionRefused("Choose approve or reject.")
    message = (message or "").strip()
    if decision == ProlificSubmission.Decision.REJECT:
        if category not in REJECTION_CATEGORIES:
            raise DecisionRefused("A rejection needs one of Prolific's rejection categories.")
        if len(message) < MIN_REJECTION_MESSAGE:
            raise DecisionRefused(f"Prolific requires a rejection message of at least {MIN_REJECTION_MESSAGE} "
                                  f"characters (this one has {len(message)}).")
    else:
        category, message = "", ""
    return study.submissions.filter(submission_id__in=submission_ids, status=AWAITING).update(
        decision=decision, rejection_category=category, rejection_message=message, decided_by=user,
        decided_at=timezone.now())


def carry_out(study: ProlificStudy, client: Client) -> dict:
    """Carry out the stored decisions still awaiting review: approvals in one bulk approve, each rejection with its
    category and message. Each is an action done once; Prolific's transitions are idempotent."""
    pending = study.submissions.filter(status=AWAITING)
    approve = sorted(pending.filter(decision=ProlificSubmission.Decision.APPROVE)
                     .values_list("submission_id", flat=True))
    if approve:
        body = {"study_id": study.prolific_id, "submission_ids": approve}
        digest = hashlib.sha256(",".join(approve).encode()).hexdigest()[:16]
        perform(study, f"bulk-approve:{study.pk}:{digest}", "bulk-approve", body,
                lambda a: client.call("POST", "submissions/bulk-approve/", body, action=a))
        study.submissions.filter(submission_id__in=approve).update(status="APPROVED")
    rejected = 0
    for s in pending.filter(decision=ProlificSubmission.Decision.REJECT):
        body = {"action": "REJECT", "message": s.rejection_message, "rejection_category": s.rejection_category}
        perform(study, f"reject:{s.submission_id}", "reject", body,
                lambda a, sid=s.submission_id, b=body: client.call("POST", f"submissions/{sid}/transition/", b,
                                                                   action=a))
        ProlificSubmission.objects.filter(pk=s.pk).update(status="REJECTED")
        rejected += 1
    return {"approved": len(approve), "rejected": rejected}
