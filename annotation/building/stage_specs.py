"""Stage plumbing shared by the multi-stage protocols: what a protocol declares about its later stages and what it
plans for them (annotation/services/stages.py builds them); plain data, so that a protocol uses it without
importing the models or the services that store stages."""
from __future__ import annotations

from dataclasses import dataclass, field

from annotation.building.hit_layout import ItemPlan


@dataclass(frozen=True)
class StageSpec:
    """A later stage a protocol declares: its name, its protocol and its campaign settings."""

    name: str
    protocol: str
    redundancy: int
    hit_size: int
    payment_per_hit: object = 0
    options: dict = field(default_factory=dict)
    #: The name of the earlier stage whose output feeds this one; None: the first stage (the imported campaign).
    input: str | None = None
    #: The stage's own instructions to its workers (Markdown); empty: the researcher's, of the first stage.
    instructions: str = ""
    #: Build the stage's HITs as soon as it is created (its input exists at import: a file's automatic spans).
    build_at_once: bool = False


@dataclass
class StagePlan:
    """New HITs for a stage: each a list of items and its exposure (who must not get it)."""

    hits: list[tuple[list[ItemPlan], dict]]
