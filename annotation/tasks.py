"""Celery tasks of the annotation app: large imports in the background (`run_import`, defined with its service in
annotation/services/import_jobs.py and found here by the workers) and the later stages' builder."""
from celery import shared_task

from .services.import_jobs import run_import  # noqa: F401  (the workers' autodiscovery imports this module)


@shared_task(name="annotation.build_stages", acks_late=True, reject_on_worker_lost=True)
def build_stages(campaign_id: int) -> dict:
    """Build what the campaign's new output makes ready in its later stages (annotation/services/stages.py);
    idempotent, so a task delivered twice, or two racing, build each HIT once."""
    from .models import Campaign
    from .services import stages

    campaign = Campaign.objects.filter(pk=campaign_id).first()
    return stages.build_stages(campaign) if campaign is not None else {}
