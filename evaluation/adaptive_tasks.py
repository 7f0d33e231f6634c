"""Adaptive allocation on Celery (docs/methods.md §12.2): the look after a finished batch, and the receivers that
start a campaign's run and queue the look.

After each finished HIT of an adaptive campaign the annotation app's `assignment_completed` signal (sent after
the commit) queues `adaptive_look`, at most one queued per campaign at a time: a "queued" flag (config/jobs.py's
`Flag`) is set by whoever queues and cleared by the task as it starts, so a burst of finished HITs queues one task,
and any HIT finished after a task started queues the next. The task looks only when the newest batch is finished and
no look has seen it finished (checked under the run's row lock, evaluation/services/adaptive.py), so however many
tasks run, each batch gets one look. A look lost with the broker or a killed worker is queued again when a worker
(re)connects (`catch_up_looks`), and a researcher can always look (`POST /api/campaigns/<slug>/adaptive/look/`).
"""
from __future__ import annotations

import logging

from celery import shared_task
from django.db.models.signals import post_save
from django.dispatch import receiver

from annotation.models import Campaign
from annotation.signals import assignment_completed
from config import jobs

log = logging.getLogger(__name__)
#: How long a "queued" flag outlives a task that never ran (a broker lost its queue): then the next finished HIT
#: queues again.
QUEUED_SECONDS = 120
QUEUED = jobs.Flag("adaptive")


@shared_task(acks_late=True, reject_on_worker_lost=True)
def adaptive_look(campaign_id: int) -> dict:
    """The look after a finished batch of one campaign (services/adaptive.py `look_after_batch`)."""
    from .services.adaptive import NotAdaptive, look_after_batch

    QUEUED.clear(campaign_id)
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None:
        return {"campaign": campaign_id, "status": "gone"}
    try:
        outcome = look_after_batch(campaign)
    except NotAdaptive as exc:
        return {"campaign": campaign.slug, "status": str(exc)}
    return {"campaign": campaign.slug, "looked": outcome.looked, "decision": outcome.decision, "built": outcome.built}


def schedule_adaptive_look(campaign_id: int) -> bool:
    """Queue the look unless one is queued already; True if this call queued it. Without a broker (in-process
    mode) it runs in a thread, off the request; with `ADAPTIVE_INLINE_WHEN_EAGER` (tests) at once, in the caller."""
    return QUEUED.queue(campaign_id, adaptive_look, (campaign_id,), timeout=QUEUED_SECONDS,
                        inline_setting="ADAPTIVE_INLINE_WHEN_EAGER")


@jobs.catch_up
def catch_up_looks() -> int:
    """Queue the look of every adaptive campaign whose newest batch is finished but was not looked at finished
    (its task lost with a broker's queue or a killed worker: no HIT is left to finish, so no signal would come),
    and of every stopped run whose campaign is still open; how many were queued. Part of the worker's catch-up
    when it (re)connects (config/jobs.py)."""
    from annotation.services.adaptive_batches import batch_progress

    from .models import AdaptiveRun

    queued = 0
    for run in AdaptiveRun.objects.select_related("campaign"):
        if run.state == AdaptiveRun.State.STOPPED and run.campaign.status == Campaign.Status.CLOSED:
            continue
        progress = batch_progress(run.campaign)
        looked = any(e.get("batch") == progress.batch and e.get("batch_complete") for e in run.looks)
        if progress.complete and (run.state == AdaptiveRun.State.STOPPED or not looked):
            QUEUED.clear(run.campaign_id)  # a flag may outlive the message it announced
            queued += schedule_adaptive_look(run.campaign_id)
    return queued


@receiver(assignment_completed, dispatch_uid="evaluation.adaptive_on_completed_hit")
def adaptive_on_completed_hit(sender, campaign_id: int, options=None, **kwargs):
    """Queue the look of an adaptive campaign (the task decides whether its batch is finished)."""
    if not (options or {}).get("adaptive"):
        return
    try:
        schedule_adaptive_look(campaign_id)
    except Exception:  # the judgment is stored; the next finished HIT, or a researcher's look, catches up
        log.exception("could not queue the adaptive look of campaign %s", campaign_id)


@receiver(post_save, sender=Campaign, dispatch_uid="evaluation.adaptive_run_on_import")
def adaptive_run_on_import(sender, instance: Campaign, created: bool, raw: bool = False, **kwargs):
    """An adaptive campaign gets its run (with its budget) as it is imported."""
    if not created or raw or not (instance.options or {}).get("adaptive"):
        return
    from .services.adaptive import NotAdaptive, run_of

    try:
        run_of(instance)
    except NotAdaptive:  # options the import refuses never get here; others are shown by the API's 400
        log.warning("campaign %s has adaptive options that make no run", instance.slug)
