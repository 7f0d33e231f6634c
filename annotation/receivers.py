"""The annotation app's own listeners: new judgments of a stage that feeds later stages build those stages'
HITs (annotation/services/stages.py), in a Celery task after the judgment's transaction commits."""
import logging

from django.dispatch import receiver

from .signals import judgments_recorded

log = logging.getLogger(__name__)


def feeds_stages(campaign_id: int, protocol: str | None, options: dict | None = None) -> bool:
    """Whether the campaign feeds a later stage; a one-stage protocol answers without a query (a middle stage is
    a stage-only protocol, whose followers its first stage declared), and so does one whose later stages its
    campaign's `options` do not ask for (an error-span campaign without a review stage)."""
    from .models import Campaign
    from .protocols import UnknownProtocol, get_protocol

    if protocol:
        try:
            spec = get_protocol(protocol)
        except UnknownProtocol:
            return False
        if not spec.stage_only and not spec.next_stages(options or {}):
            return False  # a one-stage protocol: no query on the judging path
    return Campaign.objects.filter(stage_input_id=campaign_id).exists()


@receiver(judgments_recorded, dispatch_uid="annotation.build_stages_on_judgments")
def build_stages_on_judgments(sender, campaign_id: int, protocol: str | None = None, options: dict | None = None,
                              **kwargs):
    if not feeds_stages(campaign_id, protocol, options):
        return
    from .tasks import build_stages

    try:
        build_stages.delay(campaign_id)
    except Exception as exc:  # the judgment is stored; the next one, or the researcher, builds the stage
        log.warning("could not queue building the stages of campaign %s (%s: %s)", campaign_id,
                    exc.__class__.__name__, exc)
