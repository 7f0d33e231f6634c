"""Celery tasks that turn stored judgments into stored results.

Debouncing (issue: at most one recompute per campaign in flight, and a burst of judgments
causes one more run, not hundreds): new judgments set a "queued" flag in the shared cache
and enqueue a run only if the flag was not already set. A run clears the flag as it
starts, so judgments arriving during it queue exactly one more run; a run that finds
another in flight retries later. A run is queued with the debounce delay, so it cannot start
sooner, and the flag holds that earliest start: until then, a process that set or read the
flag knows new judgments will be read by that run and skips the shared cache (no round trip
per judgment on the annotators' hot path). Results are written in one transaction, so a
worker killed mid-run leaves the old results in place; the task is then redelivered
(acks_late, reject on worker lost) and retries.
"""
import logging
import threading
import time

from celery import shared_task
from django.conf import settings
from django.core.cache import cache

from annotation.models import Campaign

from .analyses import compute_results

log = logging.getLogger(__name__)


def _queued_key(campaign_id: int) -> str:
    return f"results:{campaign_id}:queued"


def _running_key(campaign_id: int) -> str:
    return f"results:{campaign_id}:running"


@shared_task(bind=True, max_retries=None, acks_late=True, reject_on_worker_lost=True)
def compute_campaign_results(self, campaign_id: int) -> dict:
    """Compute and store one campaign's results; retries while another run for it is in flight."""
    if not cache.add(_running_key(campaign_id), self.request.id or "local", timeout=settings.RESULTS_LOCK_SECONDS):
        raise self.retry(countdown=settings.RESULTS_DEBOUNCE_SECONDS)
    try:
        cache.delete(_queued_key(campaign_id))
        campaign = Campaign.objects.filter(pk=campaign_id).first()
        if campaign is None:
            return {"campaign": campaign_id, "status": "gone"}
        results = compute_results(campaign)
        if results is None:
            return {"campaign": campaign.slug, "status": "nothing to compute"}
        return {"campaign": campaign.slug, "judgments": results.judgments, "seconds": results.seconds}
    finally:
        cache.delete(_running_key(campaign_id))


def claim_queued_run(campaign_id: int, starts_at: float) -> bool:
    """Set the campaign's "queued" flag to the queued run's earliest start (`time.time()` seconds);
    True if it was not set, i.e. this caller must queue the run."""
    return cache.add(_queued_key(campaign_id), starts_at, timeout=settings.RESULTS_DEBOUNCE_SECONDS * 20)


#: campaign id -> time.time() before which a queued run has certainly not started, so that it will read
#: every judgment committed now.
_covered_until: dict[int, float] = {}


def schedule_recompute(campaign_id: int) -> bool:
    """Queue one debounced recompute unless one is already queued; True if this call queued it."""
    now = time.time()
    if now < _covered_until.get(campaign_id, 0.0):
        return False
    delay = settings.RESULTS_DEBOUNCE_SECONDS
    # While the flag is set, the run it announces has not started, so it will read this judgment.
    starts_at = cache.get(_queued_key(campaign_id))
    queued = starts_at is None and claim_queued_run(campaign_id, now + delay)
    if queued:
        starts_at = now + delay
    if isinstance(starts_at, float):
        _covered_until[campaign_id] = starts_at - delay / 2  # half the delay: room for clocks that differ
    if not queued:
        return False
    if compute_campaign_results.app.conf.task_always_eager:
        # No broker (the newcomer's set-up): run in-process after the debounce delay, off the request.
        timer = threading.Timer(delay, _run_locally, args=(campaign_id,))
        timer.daemon = True
        timer.start()
    else:
        compute_campaign_results.apply_async((campaign_id,), countdown=delay)
    return True


def _run_locally(campaign_id: int):
    from django.db import connection

    try:
        compute_campaign_results.apply(args=(campaign_id,))
    except Exception:  # a background thread has no caller to tell
        log.exception("recomputing campaign %s failed", campaign_id)
    finally:
        connection.close()
