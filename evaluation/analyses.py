"""Computing results: the campaign's family's analysis (over its whole study when it has one), then the
progress timeline every family shows."""
from annotation.models import Campaign

from .families import family_of
from .services.progress import progress_timeline


def compute_results(campaign: Campaign):
    """Compute and store the campaign's results; when it belongs to a study, the results of every campaign of
    the study in the same family (a worker's reliability is judged over the study). The campaign's stored
    header, or None when there is nothing to analyse."""
    family = family_of(campaign)
    if campaign.study_id is None:
        headers = {campaign.pk: family.compute(campaign)}
    else:
        members = [c for c in Campaign.objects.filter(study_id=campaign.study_id).order_by("pk")
                   if family_of(c) is family]
        headers = family.compute_study(members)
    for header in headers.values():
        if header is not None:
            header.progress = progress_timeline(header.campaign)
            header.save(update_fields=["progress"])
    return headers.get(campaign.pk)
