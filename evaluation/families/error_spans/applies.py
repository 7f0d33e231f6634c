"""Which of the error-span results apply to a campaign, from its settings alone (never its data): the review stage's
tables, the side-by-side tables and ESA^AI's. The results page shows their sections, and offers their downloads,
only where they apply (`Table.applies`), so an ESA campaign without a review stage offers no review table that
could only ever be a header. Each reads the task's first stage, where the results are stored."""
from __future__ import annotations

from annotation.services.stages import first_stage

from .ai_assist import rate_of


def review(campaign) -> bool:
    """The task has a review stage (option `review`: judges or prefilled; docs/methods.md#review-of-error-spans)."""
    return ((first_stage(campaign).options or {}).get("review") or "none") != "none"


def side_by_side(campaign) -> bool:
    """Several translations on one screen (contrastive ESA, MQM-SxS; docs/methods.md#side-by-side)."""
    return bool(first_stage(campaign).protocol_spec.contrastive)


def ai_assist(campaign) -> bool:
    """ESA^AI: AI-clean outputs sent at a rate below 1, on a one-translation screen (docs/methods.md#esa-ai)."""
    root = first_stage(campaign)
    return rate_of(root) < 1 and not root.protocol_spec.contrastive


def flags(campaign) -> dict[str, bool]:
    """All three, for the page's template."""
    return {"review": review(campaign), "side_by_side": side_by_side(campaign), "ai_assist": ai_assist(campaign)}
