"""The live reliability gate (docs/methods.md §12.1): after a worker finishes a HIT, their family's test runs over
their pairs so far (`Family.gate`); a worker who fails is blocked from the campaign through the annotation
app's `block` (no further HIT; their unfinished HIT is released to others), and a `WorkerGate` records why.
Their judgments stay; the results flag them as unreliable. A researcher can lift a gate (`lift`): the worker
is unblocked, and the gate is not applied to them again in that campaign.

A worker who failed the training (a loud tutorial, or too many silent checks) is stopped by the same gate
(services/training_gate.py), whether or not the reliability gate is on.

Runs in a Celery task (evaluation/tasks.py `run_gate`), never on the annotators' request path.
"""
from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from annotation.models import Annotator, Campaign
from annotation.services import assignment as assigning

from ..families import family_of
from ..models import WorkerGate
from .training_gate import training_verdict


def gate_enabled(options) -> bool:
    return bool((options or {}).get("gate"))


def check_worker(campaign: Campaign, annotator: Annotator) -> WorkerGate | None:
    """Run the gate on one worker; the new `WorkerGate` when it stops them, else None (also when the campaign's
    gate is off and the worker's training did not fail, or the worker already has a gate here, lifted or not)."""
    if WorkerGate.objects.filter(campaign=campaign, annotator=annotator).exists():
        return None
    verdict = training_verdict(campaign, annotator)
    if verdict is None and gate_enabled(campaign.options):
        verdict = family_of(campaign).gate(campaign, annotator)
    if verdict is None:
        return None
    try:
        with transaction.atomic():
            gate = WorkerGate.objects.create(
                campaign=campaign, annotator=annotator, reason=verdict.reason, rule=verdict.rule, test=verdict.test,
                p_value=verdict.p_value, pairs=verdict.pairs, missed_share=verdict.missed_share)
            assigning.block(campaign, annotator)
    except IntegrityError:  # a parallel run gated them first
        return None
    return gate


def lift(campaign: Campaign, gate: WorkerGate, user=None) -> WorkerGate:
    """Let a gated worker back in: unblock them and mark the gate lifted (kept, so it is not applied again)."""
    with transaction.atomic():
        assigning.unblock(campaign, gate.annotator)
        gate.lifted_at, gate.lifted_by = timezone.now(), user
        gate.save(update_fields=["lifted_at", "lifted_by"])
    return gate


def active_gate(campaign: Campaign, external_id: str) -> WorkerGate | None:
    """The campaign's gate, not yet lifted, on the worker with this external id (crowd id or user name)."""
    gates = WorkerGate.objects.filter(campaign=campaign, lifted_at__isnull=True).select_related("annotator__user")
    return next((g for g in gates.filter(annotator__external_id=external_id)), None) or next(
        (g for g in gates.filter(annotator__user__username=external_id)), None)
