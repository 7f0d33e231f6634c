"""Which computation applies to which protocol family (the protocol registry names the family)."""
from collections.abc import Callable

from annotation.models import Campaign

from .services.da_results import compute_da
from .services.pairwise_results import compute_pairwise
from .services.progress import progress_timeline

ANALYSES: dict[str, Callable[[Campaign], object]] = {
    "direct-assessment": compute_da,
    "pairwise": compute_pairwise,
}


def compute_results(campaign: Campaign):
    """Run the campaign's analysis and store its results with the progress timeline; None if there are none."""
    analysis = ANALYSES.get(campaign.protocol_spec.family)
    header = analysis(campaign) if analysis else None
    if header is not None:
        header.progress = progress_timeline(campaign)
        header.save(update_fields=["progress"])
    return header
