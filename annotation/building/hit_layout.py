"""What every HIT planner reads and writes, whatever its protocol: the campaign's content before anything is
stored (`CampaignContent` of `SegmentRef`s and `OutputRef`s), the planned items (`ItemPlan`), and the refusal of a
layout (`HitPlanError`). A building block below the protocol packages (their planner.py) and the import that stores
the plans (services/campaign_import.py)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class OutputRef:
    """What the builder needs of a system output."""

    id: int
    segment_id: int
    system_id: int
    text: str


@dataclass(frozen=True)
class SegmentRef:
    """What the builders need of a segment; `index` is its position in the campaign, `doc` its document's."""

    index: int
    doc: int
    doc_id: str
    seg_id: int
    source: str
    reference: str


@dataclass(frozen=True)
class CampaignContent:
    """A validated campaign file, before anything is stored: segments in document order, systems, outputs."""

    segments: list[SegmentRef]
    system_names: list[str]
    outputs: list[OutputRef]
    #: A segment's whole campaign-file line (by segment index), for the optional fields a protocol reads.
    record: Callable[[int], dict] | None = None

    def output_text(self, segment: int, system: int) -> str:
        return self.outputs[segment * len(self.system_names) + system].text


@dataclass
class ItemPlan:
    """One planned item of a HIT, ready to be stored as a `HitItem`."""

    position: int
    set_index: int
    item_type: str
    segment_id: int | None
    output_id: int | None
    text: str = ""
    partner_position: int | None = None
    payload: dict = field(default_factory=dict)


class HitPlanError(ValueError):
    """The campaign cannot be laid out into HITs; the message says why, `field` names the import option to
    change (None: the file itself) and `suggestion` a value of it that would fit."""

    def __init__(self, message: str, field: str | None = None, suggestion: object = None):
        super().__init__(message)
        self.field = field
        self.suggestion = suggestion

