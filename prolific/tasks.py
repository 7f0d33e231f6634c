"""Every call to Prolific runs here, in Celery tasks on config/jobs.py's mechanism, never in a request: the admin
stores what the researcher asked and dispatches one of these. One run per study at a time (a `jobs.Lease`); a run
that finds another in flight retries shortly. A refusal or an outage is kept in `ProlificStudy.problem`, and the
actions left pending are carried out by the next run (the admin's "Sync and carry out" or any later step)."""
import logging

from celery import shared_task
from django.db import transaction

from config import jobs

from .client import ProlificError, ProlificUnavailable
from .models import ProlificStudy
from .services import bonuses, review, screening
from .services import study as studies

log = logging.getLogger(__name__)
LEASE_SECONDS, BEAT_SECONDS, BUSY_RETRY_SECONDS = 30.0, 5.0, 5


def _run(task, study_id: int, step) -> str:
    study = ProlificStudy.objects.select_related("campaign", "owner").get(pk=study_id)
    with jobs.Lease(f"prolific:{study_id}", LEASE_SECONDS, BEAT_SECONDS) as held:
        if held is False:
            raise task.retry(countdown=BUSY_RETRY_SECONDS, max_retries=20)
        try:
            outcome = step(study)
        except (studies.StudyRefused, review.DecisionRefused, ProlificError, ProlificUnavailable) as exc:
            studies.record_problem(study, exc)
            log.warning("Prolific step on study %s: %s", study_id, exc)
            return f"problem: {exc}"
        return str(outcome)


def _cycle(study: ProlificStudy) -> dict:
    """Sync, then carry out stored decisions, screen and pay bonuses: what a review needs, in order."""
    client = studies.client_for(study)
    found = review.sync(study, client)
    done = review.carry_out(study, client)
    excluded = screening.screen(study, client)
    paid = bonuses.pay_bonuses(study, client)
    ProlificStudy.objects.filter(pk=study.pk).update(problem="")
    return {"submissions": found, **done, "excluded": len(excluded), "bonuses": len(paid)}


@shared_task(bind=True, acks_late=True)
def create_draft(self, study_id: int) -> str:
    return _run(self, study_id, studies.create_draft)


@shared_task(bind=True, acks_late=True)
def publish(self, study_id: int) -> str:
    return _run(self, study_id, studies.publish)


@shared_task(bind=True, acks_late=True)
def review_cycle(self, study_id: int) -> str:
    return _run(self, study_id, _cycle)


def queue(task, study: ProlificStudy) -> None:
    """Dispatch `task` for the study after the current transaction commits (in the caller in the tests)."""
    transaction.on_commit(lambda: jobs.dispatch(task, (study.pk,), inline_setting="PROLIFIC_INLINE_WHEN_EAGER"))
