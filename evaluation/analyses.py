"""Computing a campaign's results: its family's analysis, then the progress timeline every family shows."""
from annotation.models import Campaign

from .families import family_of
from .services.progress import progress_timeline


def compute_results(campaign: Campaign):
    """Run the campaign's analysis and store its results with the progress timeline; None if there are none."""
    header = family_of(campaign).compute(campaign)
    if header is not None:
        header.progress = progress_timeline(campaign)
        header.save(update_fields=["progress"])
    return header
