"""Celery tasks that turn stored judgments into stored results, and the live gate, on config/jobs.py's mechanism.

Debouncing: new judgments queue a run through the campaign's "queued" flag (`jobs.Flag`), so a burst causes one
run and judgments during a run one more; a run that finds another in flight (its `jobs.Lease`) retries later. A
run is queued with the debounce delay and the flag holds its earliest start: until shortly before then (clocks may
differ) a process that set or read the flag knows the run will read new judgments and skips the shared cache (no
round trip per judgment on the annotators' hot path). A "queued" flag lives until `QUEUED_MARGIN_SECONDS` after
its run is due (a run that waits for the lock renews it), so a flag whose run was lost holds back none for long.

Faults: results are written in one transaction, so a worker killed mid-run leaves the old results, frees the run
lock within its lease, and its task is redelivered (acks_late, reject on worker lost; the broker's visibility
timeout bounds when). A worker that (re)connects to the broker queues a run for every stale campaign (`catch_up`):
its judgments are newer than its results, or a compute was asked for (API, page, admin: `ResultsTask.apply_async`
notes it in `CampaignResults.requested_at`) that no finished run has covered yet.
"""
import logging
import time
import uuid

from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError
from django.db.models import F, Max, Q
from django.utils import timezone

from annotation.models import Campaign
from config import jobs
from config.celery import GuardedTask

from . import adaptive_tasks, stability_tasks  # noqa: F401  (their tasks, receivers and catch-up)
from .analyses import compute_results
from .models import CampaignResults
from .services.storing import covering_request

log = logging.getLogger(__name__)
QUEUED = jobs.Flag("results")
#: How long a run's lock outlives its last renewal, and how often a running run renews it.
LOCK_LEASE_SECONDS = 6.0
LOCK_BEAT_SECONDS = 2.0
#: How long a "queued" flag outlives the time its run is due: a run delayed longer (a busy worker) may have one more
#: run queued beside it; a flag whose run was lost stops holding back new runs this soon after it was due.
QUEUED_MARGIN_SECONDS = 60
#: How far the web processes' clocks may differ from the workers' (which start runs at their ETA). NTP keeps clocks
#: within milliseconds; a second is plenty and leaves 9 s of the default 10 without a cache round trip.
CLOCK_MARGIN_SECONDS = 1.0
#: campaign id -> time.time() before which a queued run will not start, so that it will read every judgment
#: committed now.
_covered_until: dict[int, float] = {}


def _queued_key(campaign_id: int) -> str:
    return QUEUED.key(campaign_id)


def _running_key(campaign_id: int) -> str:
    return f"results:{campaign_id}:running"


class ResultsTask(GuardedTask):
    """The results task's class: asking for a run through `apply_async` (the API's and the page's Recompute, the
    admin, a reference-ranking change) first notes the request on the results row, so that the results count as
    stale until a run covers it, whatever happens to the message. The debounced runs after new judgments
    (`debounced=True`: the judgments already say it, and that path is the annotators') and retries don't."""

    def apply_async(self, args=None, kwargs=None, **options):
        if not options.pop("debounced", False) and not options.get("retries"):
            note_requested(args[0] if args else (kwargs or {}).get("campaign_id"))
        return super().apply_async(args, kwargs, **options)


def note_requested(campaign_id) -> None:
    """Mark the campaign's stored results as asked to be recomputed (nothing to mark before its first results:
    its judgments make it stale then)."""
    if campaign_id is None:
        return
    try:
        CampaignResults.objects.filter(campaign_id=campaign_id).update(requested_at=timezone.now())
    except DatabaseError:  # the run itself may still come: queue it, as without the note
        log.warning("could not note the compute asked for campaign %s", campaign_id, exc_info=True)


@shared_task(bind=True, base=ResultsTask, max_retries=None, acks_late=True, reject_on_worker_lost=True)
def compute_campaign_results(self, campaign_id: int) -> dict:
    """Compute and store one campaign's results; retries while another run for it is in flight."""
    run_id = self.request.id or uuid.uuid4().hex
    with jobs.Lease(_running_key(campaign_id), LOCK_LEASE_SECONDS, LOCK_BEAT_SECONDS, token=run_id) as held:
        if not held:
            countdown = settings.RESULTS_DEBOUNCE_SECONDS
            if self.request.is_eager:  # no broker to retry through (in-process mode): try again later here
                jobs.dispatch(compute_campaign_results, (campaign_id,), delay=countdown)
                return {"campaign": campaign_id, "status": "deferred: another run is in flight"}
            # This run is the queued one now: its flag lives on until shortly after the retry is due.
            cache.set(_queued_key(campaign_id), time.time() + countdown, timeout=countdown + QUEUED_MARGIN_SECONDS)
            raise self.retry(countdown=countdown)
        QUEUED.clear(campaign_id)
        campaign = Campaign.objects.filter(pk=campaign_id).first()
        if campaign is None:
            return {"campaign": campaign_id, "status": "gone"}
        # The request this run covers: read before the judgments and options are, cleared with the results' store (in
        # its transaction) unless a newer request came meanwhile (its own run clears that one).
        requested = CampaignResults.objects.filter(campaign=campaign).values_list("requested_at", flat=True).first()
        with covering_request(requested):
            results = compute_results(campaign)
        if requested is not None:
            CampaignResults.objects.filter(campaign=campaign, requested_at=requested).update(requested_at=None)
        if results is None:
            return {"campaign": campaign.slug, "status": "nothing to compute"}
        return {"campaign": campaign.slug, "judgments": results.judgments, "seconds": results.seconds}


def stale_campaigns() -> list[int]:
    """Campaigns whose newest judgment is newer than their stored results (or that have none yet), and campaigns
    with a requested compute that no finished run has covered."""
    return list(Campaign.objects.annotate(newest=Max("judgments__id"))
                .filter(Q(newest__isnull=False, results__isnull=True) | Q(newest__gt=F("results__last_judgment_id"))
                        | Q(results__requested_at__isnull=False))
                .values_list("pk", flat=True))


@jobs.catch_up
def catch_up() -> int:
    """Queue a (debounced) run for every stale campaign; how many were queued. Run when a worker (re)connects."""
    queued = 0
    for campaign_id in stale_campaigns():
        QUEUED.clear(campaign_id)  # a "queued" flag may outlive the message it announced (a broker lost its data)
        _covered_until.pop(campaign_id, None)
        queued += schedule_recompute(campaign_id)
    return queued


def claim_queued_run(campaign_id: int, starts_at: float) -> bool:
    """Set the campaign's "queued" flag to the queued run's earliest start (`time.time()` seconds), to live until
    `QUEUED_MARGIN_SECONDS` after it; True if it was not set, i.e. this caller must queue the run."""
    return QUEUED.claim(campaign_id, max(starts_at - time.time(), 0.0) + QUEUED_MARGIN_SECONDS, starts_at)


def schedule_recompute(campaign_id: int) -> bool:
    """Queue one debounced recompute unless one is already queued; True if this call queued it.

    Assumes the clocks of web processes and workers agree within `CLOCK_MARGIN_SECONDS` (NTP does far better).
    """
    now = time.time()
    if now < _covered_until.get(campaign_id, 0.0):
        return False
    delay = settings.RESULTS_DEBOUNCE_SECONDS
    # While the flag is set, the run it announces has not started, so it will read this judgment.
    starts_at = cache.get(_queued_key(campaign_id))
    queued = starts_at is None and QUEUED.queue(campaign_id, compute_campaign_results, (campaign_id,), delay=delay,
                                                value=now + delay, timeout=delay + QUEUED_MARGIN_SECONDS,
                                                debounced=True)
    if queued:
        starts_at = now + delay
    if isinstance(starts_at, float):
        _covered_until[campaign_id] = starts_at - CLOCK_MARGIN_SECONDS
    return queued


@shared_task(acks_late=True, reject_on_worker_lost=True)
def run_gate(campaign_id: int, annotator_id: int) -> dict:
    """The live reliability gate on one worker who has just finished a HIT (services/gates.py)."""
    from annotation.models import Annotator

    from .services.gates import check_worker

    campaign = Campaign.objects.filter(pk=campaign_id).first()
    annotator = Annotator.objects.filter(pk=annotator_id).first()
    if campaign is None or annotator is None:
        return {"campaign": campaign_id, "status": "gone"}
    gate = check_worker(campaign, annotator)
    return {"campaign": campaign.slug, "annotator": annotator_id, "gated": gate is not None}


def schedule_gate(campaign_id: int, annotator_id: int) -> None:
    """Queue the gate for a worker. Without a broker (in-process mode) it runs in a thread, off the request;
    with `GATE_INLINE_WHEN_EAGER` (the test suite) at once, in the caller."""
    jobs.dispatch(run_gate, (campaign_id, annotator_id), inline_setting="GATE_INLINE_WHEN_EAGER")
