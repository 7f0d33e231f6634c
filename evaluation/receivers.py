"""Listens to the annotation app's signals (annotation never imports evaluation)."""
from django.conf import settings
from django.dispatch import receiver

from annotation.signals import judgments_recorded

from .tasks import schedule_recompute


@receiver(judgments_recorded, dispatch_uid="evaluation.recompute_on_judgments")
def recompute_on_judgments(sender, campaign_id: int, **kwargs):
    if settings.RESULTS_AUTO_RECOMPUTE:
        schedule_recompute(campaign_id)
