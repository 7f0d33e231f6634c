"""Document-level DA on one page (`document_page`, docs/methods.md §1.1): the segments of a document still to rate
and the document item, each with its own slider, answered in one batch (docs/api.md §8.3), as Appraise's
document-level DA (WMT20–23) shows them. The HITs are document mode's (planner.py); this module says which
options and files allow a page (the option is declared with DA's, in strategy.py), marks the items of a page at
planning, and builds `DirectAssessment.page`.

A page holds several items, so what asks something of one item at a time is refused with it: playing each item's
media to a percentage (`require_media_played`), the per-item instruction judgment (`instruction_judgment`), and
per-line media or instructions in the file (a document's own `doc_media` and `document_instructions` are shown
once, with the page)."""
from __future__ import annotations

from annotation.building.hit_layout import CampaignContent, HitPlanError, ItemPlan

OPTION = "document_page"
#: The flag on a page item's stored payload, set at planning as `sqm` is, so the screen needs no campaign read.
PAGED = "page"

#: The options a page of several items cannot honour, and why.
_CONFLICTS = (
    ("require_media_played", "asks each item's media to be played before its answer; a page answers its items "
                             "together"),
    ("instruction_judgment", "asks an instruction judgment of each item; a page answers its items together"),
)


def option_problems(values: dict) -> list[tuple[str, str]]:
    """Why these option values cannot have a document page, as (field name, reason); empty when they can."""
    if not values.get(OPTION):
        return []
    if not values.get("document_mode"):
        return [(OPTION, "needs document_mode: a page shows one document's segments and the document")]
    return [(OPTION, f"cannot go with {name}, which {why}") for name, why in _CONFLICTS if values.get(name)]


def check_file(content: CampaignContent) -> None:
    """Raise HitPlanError when a line of the file carries its own media or instructions (a page shows several)."""
    if content.record is None:
        return
    for segment in content.segments:
        record = content.record(segment.index)
        for key in ("media", "instructions"):
            if record.get(key):
                raise HitPlanError(f"a document page shows several segments at once, so a line cannot carry its own "
                                   f"{key} (doc {record.get('doc_id')!r}, seg {record.get('seg_id')!r} has "
                                   f"'{key}'); give the document's own (doc_media, document_instructions) or leave "
                                   f"{OPTION} off", field=OPTION, suggestion=False)


def mark_pages(plans: list[list[ItemPlan]]) -> None:
    """Flag every item of a document unit (segments and document item) as shown on a page."""
    for hit in plans:
        for plan in hit:
            if "unit" in plan.payload:
                plan.payload = {**plan.payload, PAGED: True}  # a new dict: the items of a unit may share one


def page(item, segments: list[dict], document_id: int) -> list[dict]:
    """The page of a flagged segment item, from it on: the unit's `segments` still to rate (as the strategy shows
    them, {"item", "candidate", and the protocol's context}) each as {"id", "unit", "candidate", context}, then the
    document item `document_id` as {"id", "unit"}."""
    stored = item.payload
    entries = [{"id": shown["item"], "unit": "segment", **{k: v for k, v in shown.items() if k != "item"}}
               for shown in segments[item.position - int(stored["first"]):]]
    return [*entries, {"id": document_id, "unit": "document"}]
