"""Celery tasks of the annotation app: large imports in the background (annotation/services/import_jobs.py)."""
from celery import shared_task

from .services import import_jobs


@shared_task(bind=True, name="annotation.run_import", max_retries=None, acks_late=True, reject_on_worker_lost=True)
def run_import(self, job_id: str) -> dict:
    """Run import job `job_id` once. While another worker holds the job (a task delivered twice), try again
    after the lease: by then that worker has finished it, or died and left it to this one."""
    outcome = import_jobs.run(job_id)
    if outcome["status"] == "busy" and not self.request.is_eager:
        raise self.retry(countdown=import_jobs.LEASE_SECONDS)
    return outcome


@shared_task(name="annotation.build_stages", acks_late=True, reject_on_worker_lost=True)
def build_stages(campaign_id: int) -> dict:
    """Build what the campaign's new output makes ready in its later stages (annotation/services/stages.py);
    idempotent, so a task delivered twice, or two racing, build each HIT once."""
    from .models import Campaign
    from .services import stages

    campaign = Campaign.objects.filter(pk=campaign_id).first()
    return stages.build_stages(campaign) if campaign is not None else {}
