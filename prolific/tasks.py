"""Every call to Prolific runs here, in Celery tasks on config/jobs.py's mechanism, never in a request: the admin
stores what the researcher asked and dispatches one of these. One run per study at a time (a `jobs.Lease`); a run
that finds another in flight retries shortly. A refusal or an outage is kept in `ProlificStudy.problem`; an outage
(no answer after every retry) queues the study's review cycle again after PROLIFIC_RETRY_LATER_SECONDS, and a worker
that (re)connects queues one for every study with a pending action or an undelivered decision (`catch_up`), so a
stored decision is carried out in the end whatever failed on the way."""
import logging

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.db.models import Q

from config import jobs

from .client import ProlificError, ProlificUnavailable
from .models import ProlificAction, ProlificStudy
from .services import bonuses, review, screening
from .services import study as studies

log = logging.getLogger(__name__)
LEASE_SECONDS, BEAT_SECONDS, BUSY_RETRY_SECONDS = 30.0, 5.0, 5
#: The setting that runs these tasks in the caller when tasks run in-process (the tests).
INLINE = "PROLIFIC_INLINE_WHEN_EAGER"


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
            if isinstance(exc, ProlificUnavailable) and not jobs.in_process(task):
                jobs.dispatch(review_cycle, (study_id,), delay=settings.PROLIFIC_RETRY_LATER_SECONDS)
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
    transaction.on_commit(lambda: jobs.dispatch(task, (study.pk,), inline_setting=INLINE))


def unfinished_studies() -> list[int]:
    """Studies with an action still pending or a decision not yet carried out on Prolific."""
    pending = ProlificAction.objects.filter(state=ProlificAction.State.PENDING).values("study_id")
    return list(ProlificStudy.objects.exclude(status=ProlificStudy.Status.NEW).filter(
        Q(pk__in=pending) | Q(submissions__status=review.AWAITING, submissions__decision__in=("approve", "reject")))
        .distinct().values_list("pk", flat=True))


@jobs.catch_up
def catch_up() -> int:
    """Queue a review cycle for every unfinished study; how many. Run when a worker (re)connects."""
    studies_left = unfinished_studies()
    for study_id in studies_left:
        jobs.dispatch(review_cycle, (study_id,), inline_setting=INLINE)
    return len(studies_left)
