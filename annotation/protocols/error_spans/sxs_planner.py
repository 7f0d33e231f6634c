"""Plans MQM-SxS HITs (docs/methods.md#side-by-side): each document with a group of systems side by side.

The systems of each document are shuffled (seeded) and cut into groups of `columns`; a last group smaller
than that is filled up with other systems drawn at random, so every screen has the same number of columns.
A unit is one document with one group, its columns in that group's random order; every item (one segment of
the unit) records that order in its payload (`candidates`), so the order is random per item, recorded, and
the same down one document (column B stays one system's document, as the context shown beside it is). Units
are shuffled and dealt into HITs of about `hit_size` segments, as for contrastive ESA (planner.py), with its
tutorial screens and its degraded extra column at `perturbation_rate`.
"""
from __future__ import annotations

import random

from annotation.building.candidates import new_key
from annotation.building.hit_layout import CampaignContent, HitPlanError, ItemPlan

from .planner import _add_bad_column, _deal, _documents, _perturbed_count


def system_groups(n_systems: int, columns: int, rng: random.Random) -> list[list[int]]:
    """The systems (indices) in random groups of `columns` (all of them when fewer), the last one filled up."""
    columns = min(columns, n_systems)
    order = rng.sample(range(n_systems), n_systems)
    groups = [order[i:i + columns] for i in range(0, n_systems, columns)]
    last = groups[-1]
    if len(last) < columns:
        others = [s for s in order if s not in last]
        last.extend(rng.sample(others, columns - len(last)))
    return groups


def plan_sxs_hits(content: CampaignContent, hit_size: int, columns: int, perturbation_rate: float,
                  rng: random.Random) -> list[list[ItemPlan]]:
    """HITs of (document, system group) units, one item per segment with its group's candidates."""
    documents, tutorial = _documents(content)
    if not documents:
        raise HitPlanError("the file has no segments to judge (every line is a tutorial line)")
    names = content.system_names
    if len(names) < 2:
        raise HitPlanError("MQM side by side needs at least two systems in the file")
    units = [[(segment, group) for segment in doc] for doc in documents
             for group in system_groups(len(names), columns, rng)]
    rng.shuffle(units)
    hits = []
    for runs in _deal(units, hit_size):
        tutorial_group = system_groups(len(names), columns, rng)[0]
        screens = [("tutorial", [(s, tutorial_group) for s in tutorial])] + [("system", run) for run in runs]
        n_segments = sum(len(run) for run in runs)
        perturbed = set(rng.sample(range(n_segments), _perturbed_count(n_segments, perturbation_rate)))
        plans: list[ItemPlan] = []
        counter = 0
        for item_type, run in screens:
            for segment, group in run:
                taken: set[str] = set()
                candidates = [{"key": new_key(taken), "kind": "system", "system": s, "name": names[s]} for s in group]
                if item_type == "system":
                    if counter in perturbed:
                        _add_bad_column(candidates, content, segment, taken, rng)
                    counter += 1
                plans.append(ItemPlan(position=len(plans), set_index=len(plans) // 10, item_type=item_type,
                                      segment_id=segment, output_id=None, payload={"candidates": candidates}))
        hits.append(plans)
    return hits
