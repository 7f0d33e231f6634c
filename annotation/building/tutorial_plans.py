"""Where tutorial items go in a HIT, for every protocol that has them (docs/methods.md §12.5): the campaign file's
lines marked `"tutorial": true` (`tutorial_segments`), one output of each chosen for the HIT (`tutorial_items`), and
their places among a planned HIT's items (`place_tutorials`): loud tutorials open every HIT, silent attention checks
go at random places between its units (sets, documents) so that a judge cannot tell them from the work.
A building block below the protocol packages; pure functions over plans, driven by the planner's `random.Random`.
"""
from __future__ import annotations

import random

from .hit_layout import CampaignContent, ItemPlan


def tutorial_segments(content: CampaignContent) -> list[int]:
    """The indices of the segments whose line says `"tutorial": true`, in document order."""
    if content.record is None:
        return []
    return [s.index for s in content.segments if content.record(s.index).get("tutorial")]


def tutorial_items(content: CampaignContent, tutorial: list[int], expected: dict, rng: random.Random) -> list[dict]:
    """One output per tutorial segment, its system drawn at random (among those with an expected answer, when the
    line has any: the answer is then kept in the item's payload, which no screen is sent; building/training.py).
    Each as `{"item_type": "tutorial", "output", "payload"?}`."""
    n_systems = len(content.system_names)
    items = []
    for s in tutorial:
        answers = expected.get(s)
        if not answers:
            items.append({"item_type": "tutorial", "output": content.outputs[s * n_systems + rng.randrange(n_systems)]})
            continue
        system = sorted(answers)[rng.randrange(len(answers))]
        items.append({"item_type": "tutorial", "output": content.outputs[s * n_systems + system],
                      "payload": {"expected": answers[system]}})
    return items


def tutorial_plans(items: list[dict]) -> list[ItemPlan]:
    """`tutorial_items` as plans (positions are given when placed)."""
    return [ItemPlan(position=0, set_index=0, item_type="tutorial", segment_id=i["output"].segment_id,
                     output_id=i["output"].id, payload=dict(i.get("payload") or {})) for i in items]


def place_tutorials(plans: list[ItemPlan], tutorials: list[ItemPlan], scatter: bool, rng: random.Random
                    ) -> list[ItemPlan]:
    """The HIT's `plans` with copies of the `tutorials` put in: all first (loud), or each at a random boundary
    between the HIT's units (`scatter`, silent checks: a unit is a run of one `set_index`). Positions are
    renumbered from 0, and what points at a position follows its item: `partner_position`, and a document unit's
    first position (`payload["first"]`, document-level DA). A tutorial takes the set index of the unit after it."""
    boundaries = [0, *(p for p in range(1, len(plans)) if plans[p].set_index != plans[p - 1].set_index), len(plans)]
    spots = sorted(rng.choice(boundaries) if scatter else 0 for _ in tutorials)
    placed: list[ItemPlan] = []
    moved: dict[int, int] = {}
    queue = list(zip(spots, tutorials, strict=True))
    for old, plan in enumerate([*plans, None]):
        while queue and queue[0][0] == old:
            tutorial = queue.pop(0)[1]
            set_index = plan.set_index if plan is not None else (plans[-1].set_index if plans else 0)
            placed.append(ItemPlan(position=0, set_index=set_index, item_type=tutorial.item_type,
                                   segment_id=tutorial.segment_id, output_id=tutorial.output_id,
                                   payload=dict(tutorial.payload)))
        if plan is not None:
            moved[old] = len(placed)
            placed.append(plan)
    for position, plan in enumerate(placed):
        plan.position = position
        if plan.item_type == "tutorial":
            continue
        if plan.partner_position is not None:
            plan.partner_position = moved[plan.partner_position]
        if "first" in plan.payload:  # a new dict: the items of a unit may share one
            plan.payload = {**plan.payload, "first": moved[plan.payload["first"]]}
    return placed
