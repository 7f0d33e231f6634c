"""Computing results: the campaign's family's analysis (over its whole study when it has one), then the
progress timeline every family shows."""
from annotation.models import Campaign

from .families import family_of
from .families.base import scope_campaigns
from .services.progress import progress_timeline


def compute_results(campaign: Campaign):
    """Compute and store the campaign's results; when it belongs to a study, the results of every campaign of
    the study in the same family (a worker's reliability is judged over the study). The campaign's stored
    header, or None when there is nothing to analyse."""
    family = family_of(campaign)
    if campaign.study_id is None:
        headers = {campaign.pk: family.compute(campaign)}
    else:
        headers = family.compute_study(scope_campaigns(campaign, "study"))
    for header in headers.values():
        if header is not None:
            header.progress = progress_timeline(header.campaign)
            header.save(update_fields=["progress"])
    return headers.get(campaign.pk)
