"""Listens to the annotation app's signals (annotation never imports evaluation)."""
import logging
import threading
import time

from django.conf import settings
from django.dispatch import receiver

from annotation.signals import assignment_completed, judgments_recorded, training_failed

from .tasks import schedule_gate, schedule_recompute

log = logging.getLogger(__name__)
#: While the broker is down every judgment would fail to queue its run: say so once a minute, not each time.
FAILURE_LOG_SECONDS = 60.0
_failures = {"logged_at": 0.0, "since": 0}
_failures_lock = threading.Lock()


def results_campaign(campaign_id: int, protocol: str | None) -> int:
    """The campaign whose results a judgment changes: a later stage's are its task's, stored on the first stage
    (docs/methods.md §9), so the debounced run and its lock are the task's. No query for a one-stage protocol."""
    from annotation.models import Campaign
    from annotation.protocols import UnknownProtocol, get_protocol
    from annotation.services.stages import first_stage

    try:
        if not protocol or not get_protocol(protocol).stage_only:
            return campaign_id
    except UnknownProtocol:
        return campaign_id
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    return first_stage(campaign).pk if campaign is not None else campaign_id


@receiver(judgments_recorded, dispatch_uid="evaluation.recompute_on_judgments")
def recompute_on_judgments(sender, campaign_id: int, protocol: str | None = None, **kwargs):
    if not settings.RESULTS_AUTO_RECOMPUTE:
        return
    try:
        schedule_recompute(results_campaign(campaign_id, protocol))
    except Exception as exc:  # the judgment is stored; the worker's catch-up queues the run when the broker is back
        _note_failure(exc)


@receiver(assignment_completed, dispatch_uid="evaluation.gate_on_completed_hit")
def gate_on_completed_hit(sender, campaign_id: int, annotator_id: int, options=None, **kwargs):
    """The live reliability gate (docs/methods.md §12.1), queued only for campaigns that asked for it."""
    if not (options or {}).get("gate"):
        return
    try:
        schedule_gate(campaign_id, annotator_id)
    except Exception as exc:  # the judgment is stored; the next finished HIT runs the gate again
        _note_failure(exc)


@receiver(training_failed, dispatch_uid="evaluation.gate_on_failed_training")
def gate_on_failed_training(sender, campaign_id: int, annotator_id: int, **kwargs):
    """A failed tutorial or attention check: the gate decides at once whether the worker is kept out (§12.5)."""
    try:
        schedule_gate(campaign_id, annotator_id)
    except Exception as exc:  # the try is stored; the worker's next failed check runs the gate again
        _note_failure(exc)


def _note_failure(exc: Exception) -> None:
    now = time.monotonic()
    with _failures_lock:
        _failures["since"] += 1
        if now - _failures["logged_at"] < FAILURE_LOG_SECONDS:
            return
        count, _failures["since"], _failures["logged_at"] = _failures["since"], 0, now
    log.warning("could not queue a results run (%s: %s); %d judgment(s) affected since the last message. "
                "Results catch up when the workers reconnect.", exc.__class__.__name__, exc, count)
