"""Result parts: sections of results that do not belong to one family but apply to a campaign of any family that
offers them (`Offers.parts`), such as instruction following (docs/methods.md#instruction-following) or the
Bradley–Terry leaderboard (§8.8). Each part says
itself whether it applies to a campaign (`applies`), computes after the family (`compute`, in
`analyses.compute_results`, so on the Celery workers like every result), and brings its tables (CSV, LaTeX), its API
answer (`GET /api/campaigns/<slug>/<part name>/`) and its section of the results page."""
from __future__ import annotations

from annotation.models import Campaign

from .families import family_of
from .families.common.bradley_terry import BRADLEY_TERRY
from .families.common.instructions import INSTRUCTION_FOLLOWING
from .families.common.media_split import MEDIA_SPLIT
from .families.common.training import TRAINING

#: Every part, by name.
PARTS = {part.name: part for part in (INSTRUCTION_FOLLOWING, MEDIA_SPLIT, TRAINING, BRADLEY_TERRY)}


def offered(family) -> list:
    """The parts `family` declares."""
    return [PARTS[name] for name in family.offers.parts if name in PARTS]


def parts_of(campaign: Campaign, header=None) -> list:
    """The parts that apply to `campaign`: those its family offers and whose condition the campaign meets; with its
    stored results `header`, those its last computation stored (`summary["parts"]`), without a query."""
    if header is not None:
        stored = set((header.summary or {}).get("parts") or ())
        return [part for part in offered(family_of(campaign)) if part.name in stored]
    return [part for part in offered(family_of(campaign)) if part.applies(campaign)]


def compute_parts(campaign: Campaign) -> list[str]:
    """Compute and store the parts that apply to `campaign`; their names (for `summary["parts"]`)."""
    parts = parts_of(campaign)
    for part in parts:
        part.compute(campaign)
    return [part.name for part in parts]
