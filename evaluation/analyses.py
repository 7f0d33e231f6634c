"""Which computation applies to which protocol family (the protocol registry names the family)."""
from collections.abc import Callable

from annotation.models import Campaign

from .services.da_results import compute_da
from .services.pairwise_results import compute_pairwise

ANALYSES: dict[str, Callable[[Campaign], object]] = {
    "direct-assessment": compute_da,
    "pairwise": compute_pairwise,
}


def compute_results(campaign: Campaign):
    """Run the campaign's analysis and store its results; None if its family has none."""
    analysis = ANALYSES.get(campaign.protocol_spec.family)
    return analysis(campaign) if analysis else None
