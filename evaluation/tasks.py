"""Celery tasks that turn stored judgments into stored results.

Debouncing (issue: at most one recompute per campaign in flight, and a burst of judgments
causes one more run, not hundreds): new judgments set a "queued" flag in the shared cache
and enqueue a run only if the flag was not already set. A run clears the flag as it
starts, so judgments arriving during it queue exactly one more run; a run that finds
another in flight retries later. A run is queued with the debounce delay, so it cannot start
sooner, and the flag holds that earliest start: until shortly before then (clocks may differ),
a process that set or read the flag knows new judgments will be read by that run and skips
the shared cache (no round trip per judgment on the annotators' hot path). Results are written in one transaction, so a
worker killed mid-run leaves the old results in place; the task is then redelivered
(acks_late, reject on worker lost) and retries.

Faults: the run lock lives only while its holder beats (`RunLock`, a few seconds' lease renewed
by a thread), so a killed run frees its campaign at once instead of after a long timeout; and
every time a worker (re)connects to the broker it queues a run for every stale campaign
(`catch_up_after_connect`), so runs lost with a broker's queue, or with a worker killed outright, are
made up without a person stepping in. A campaign is stale when its judgments are newer than its
results or when a compute was asked for (API, page, admin: `ResultsTask.apply_async` notes it in
`CampaignResults.requested_at`) that no finished run has covered yet. The catch-up first checks its
database connections (a PostgreSQL restart leaves the worker's kept connection dead) and tries
again on a new one, then again later. A "queued" flag lives until shortly after its run is due
(`QUEUED_MARGIN_SECONDS`; a run that waits for the lock renews it), so a flag whose run was lost
holds back no new run for long. The broker's visibility timeout (settings
`CELERY_BROKER_TRANSPORT_OPTIONS`) bounds when a killed worker's message comes back by itself.
"""
import logging
import threading
import time
import uuid
from contextlib import contextmanager

from celery import shared_task
from django.conf import settings
from django.core.cache import cache
from django.db import DatabaseError, close_old_connections, connections
from django.utils import timezone

from annotation.models import Campaign
from config.celery import GuardedTask

from .analyses import compute_results
from .models import CampaignResults
from .services.storing import covering_request

log = logging.getLogger(__name__)


def _queued_key(campaign_id: int) -> str:
    return f"results:{campaign_id}:queued"


def _running_key(campaign_id: int) -> str:
    return f"results:{campaign_id}:running"


#: How long a run's lock outlives its last heartbeat, and how often a running run renews it.
LOCK_LEASE_SECONDS = 6.0
LOCK_BEAT_SECONDS = 2.0


class RunLock:
    """A campaign's run lock held as a short lease in the shared cache and renewed by a thread while the run
    lives: a run that dies (killed worker) stops renewing, and the campaign is free within the lease."""

    def __init__(self, campaign_id: int, run_id: str):
        self.key, self.run_id = _running_key(campaign_id), run_id
        self._stop = threading.Event()

    def acquire(self) -> bool:
        if not cache.add(self.key, self.run_id, timeout=LOCK_LEASE_SECONDS):
            return False
        threading.Thread(target=self._beat, name=f"lock-{self.key}", daemon=True).start()
        return True

    def _beat(self):
        while not self._stop.wait(LOCK_BEAT_SECONDS):
            try:
                if cache.get(self.key) != self.run_id:
                    return  # lost the lease (e.g. a long pause): never take another run's lock
                cache.touch(self.key, LOCK_LEASE_SECONDS)
            except Exception:  # the broker's cache is down: the lease lapses, which is the safe side
                log.warning("could not renew %s", self.key)

    def release(self):
        self._stop.set()
        if cache.get(self.key) == self.run_id:  # only our own lock
            cache.delete(self.key)


@contextmanager
def campaign_lock(campaign_id: int, run_id: str):
    """Yield True when this run holds the campaign's lock (released on exit), False when another run does."""
    lock = RunLock(campaign_id, run_id)
    held = lock.acquire()
    try:
        yield held
    finally:
        if held:
            lock.release()


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
    with campaign_lock(campaign_id, run_id) as held:
        if not held:
            if self.request.is_eager:  # no broker to retry through (in-process mode): try again later here
                _run_later(campaign_id, settings.RESULTS_DEBOUNCE_SECONDS)
                return {"campaign": campaign_id, "status": "deferred: another run is in flight"}
            # This run is the queued one now: its flag lives on until shortly after the retry is due.
            countdown = settings.RESULTS_DEBOUNCE_SECONDS
            cache.set(_queued_key(campaign_id), time.time() + countdown, timeout=countdown + QUEUED_MARGIN_SECONDS)
            raise self.retry(countdown=countdown)
        cache.delete(_queued_key(campaign_id))
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
    from django.db.models import F, Max, Q

    return list(Campaign.objects.annotate(newest=Max("judgments__id"))
                .filter(Q(newest__isnull=False, results__isnull=True) | Q(newest__gt=F("results__last_judgment_id"))
                        | Q(results__requested_at__isnull=False))
                .values_list("pk", flat=True))


def catch_up() -> int:
    """Queue a (debounced) run for every stale campaign; how many were queued. Called when a worker (re)connects."""
    queued = 0
    for campaign_id in stale_campaigns():
        # A "queued" flag may outlive the message it announced (a broker restarted without its data).
        cache.delete(_queued_key(campaign_id))
        _covered_until.pop(campaign_id, None)
        queued += schedule_recompute(campaign_id)
    return queued + adaptive_tasks.catch_up_looks()  # adaptive looks lost the same way (docs/methods.md §12.2)


#: When a worker's catch-up fails twice (the database is still restarting), it tries again after this many
#: seconds, doubling up to CATCH_UP_RETRY_MAX_SECONDS, until it succeeds.
CATCH_UP_RETRY_SECONDS = 15.0
CATCH_UP_RETRY_MAX_SECONDS = 300.0
_later = {"timer": None}
_later_lock = threading.Lock()


def catch_up_after_connect(wait: float = CATCH_UP_RETRY_SECONDS) -> int | None:
    """`catch_up` for a worker that has just (re)connected to the broker; how many runs it queued, None if the
    database could not be reached (then it runs again in `wait` seconds, off the consumer's thread).

    The worker keeps its database connection between tasks, and nothing checks it outside a task: after a
    PostgreSQL restart the catch-up would fail on the dead connection. So stale connections are closed first
    (with CONN_HEALTH_CHECKS the next query pings and reconnects), and a failure is tried once more on a new
    connection."""
    for attempt in (1, 2):
        close_old_connections()
        try:
            queued = catch_up()
        except Exception:
            log.warning("catching up on stale results failed (attempt %d)", attempt, exc_info=True)
            _close_connections()
            continue
        _cancel_later()
        return queued
    _retry_later(wait)
    return None


def _close_connections() -> None:
    try:
        connections.close_all()
    except Exception:  # a dead connection may fail to close: it is dropped either way
        log.debug("closing database connections failed", exc_info=True)


def _retry_later(wait: float) -> None:
    def run():
        try:
            queued = catch_up_after_connect(min(2 * wait, CATCH_UP_RETRY_MAX_SECONDS))
            if queued is not None:
                log.info("catch-up: queued %d stale campaign(s)", queued)
        finally:
            _close_connections()  # this thread's own

    with _later_lock:
        if _later["timer"] is not None:
            _later["timer"].cancel()
        _later["timer"] = threading.Timer(wait, run)
        _later["timer"].daemon = True
        _later["timer"].start()
    log.error("catching up on stale results failed; trying again in %.0f s", wait)


def _cancel_later() -> None:
    with _later_lock:
        if _later["timer"] is not None and _later["timer"] is not threading.current_thread():
            _later["timer"].cancel()
        _later["timer"] = None


#: How long a "queued" flag outlives the time its run is due: a run delayed longer (a busy worker) may have one more
#: run queued beside it; a flag whose run was lost stops holding back new runs this soon after it was due.
QUEUED_MARGIN_SECONDS = 60


def claim_queued_run(campaign_id: int, starts_at: float) -> bool:
    """Set the campaign's "queued" flag to the queued run's earliest start (`time.time()` seconds), to live until
    `QUEUED_MARGIN_SECONDS` after it; True if it was not set, i.e. this caller must queue the run."""
    timeout = max(starts_at - time.time(), 0.0) + QUEUED_MARGIN_SECONDS
    return cache.add(_queued_key(campaign_id), starts_at, timeout=timeout)


#: campaign id -> time.time() before which a queued run will not start, so that it will read every judgment
#: committed now.
_covered_until: dict[int, float] = {}


#: How far the web processes' clocks may differ from the workers' (which start runs at their ETA). Half the
#: debounce delay used to be assumed (5 s of the default 10): judgments then paid a cache round trip for half of
#: every window. NTP keeps clocks within milliseconds; a second is plenty and leaves 9 s of 10 without one.
CLOCK_MARGIN_SECONDS = 1.0


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
    queued = starts_at is None and claim_queued_run(campaign_id, now + delay)
    if queued:
        try:
            _enqueue(campaign_id, delay)
        except Exception:
            cache.delete(_queued_key(campaign_id))  # no run behind the flag: let the next judgment try again
            raise
        starts_at = now + delay
    if isinstance(starts_at, float):
        _covered_until[campaign_id] = starts_at - CLOCK_MARGIN_SECONDS
    return queued


def _enqueue(campaign_id: int, delay: float) -> None:
    if compute_campaign_results.app.conf.task_always_eager:
        _run_later(campaign_id, delay)  # no broker (the newcomer's set-up): in-process, off the request
    else:
        compute_campaign_results.apply_async((campaign_id,), countdown=delay, debounced=True)


def _run_later(campaign_id: int, delay: float) -> None:
    timer = threading.Timer(delay, _run_locally, args=(campaign_id,))
    timer.daemon = True
    timer.start()


def _run_locally(campaign_id: int):
    from django.db import connection

    try:
        compute_campaign_results.apply(args=(campaign_id,))
    except Exception:  # a background thread has no caller to tell
        log.exception("recomputing campaign %s failed", campaign_id)
    finally:
        connection.close()


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
    if not run_gate.app.conf.task_always_eager:
        run_gate.apply_async((campaign_id, annotator_id))
    elif getattr(settings, "GATE_INLINE_WHEN_EAGER", False):
        run_gate.apply(args=(campaign_id, annotator_id))
    else:
        threading.Thread(target=_gate_locally, args=(campaign_id, annotator_id), daemon=True).start()


def _gate_locally(campaign_id: int, annotator_id: int) -> None:
    from django.db import connection

    try:
        run_gate.apply(args=(campaign_id, annotator_id))
    except Exception:  # a background thread has no caller to tell
        log.exception("the reliability gate on annotator %s of campaign %s failed", annotator_id, campaign_id)
    finally:
        connection.close()


# The tasks and receivers of adaptive allocation and of ranking stability (docs/methods.md §12.2, §12.4).
from . import adaptive_tasks, stability_tasks  # noqa: E402,F401
