"""Plans document-level Direct Assessment HITs (docs/methods.md §2.4; WMT20–23 document-level DA).

The unit of work is one system's translation of one whole document. A judge rates its segments in
document order, with the document in view, and then the whole document as one more item: a unit of n
segments is n + 1 items, the document item last. Every item of a unit carries, in its payload, the unit's
first position and its number of segments (`first`, `count`), so the screen can show the document; the
document item has `"unit": "document"`, its `segment` and `output` are those of the document's first
segment (so the DA statistics know its system and tell documents apart by that output).

Units (systems interleaved round by round, as in §2.2) are dealt into HITs whose genuine units hold at most
7·hit_size/10 segments (a longer document makes a HIT of its own). Quality control, at document granularity,
is DA's (§2.1) with one copy of each kind per HIT:

- a **bad reference document**: a copy of a unit in which every segment that can be degraded is degraded
  (§3); those segments are `bad_ref` items, the others `repeat` items, and the copy's document item is a
  `bad_ref` of the original's document item;
- an **exact repeat** of another unit (every item `repeat`);
- a **reference document**: the reference translation of one of the HIT's documents (items `reference`).

The originals of the bad and repeated copies are chosen among the first half of the HIT's units, and each
copy comes after at least one other unit. Each item's `partner_position` points at its counterpart in the
original. `set_index` is the number of the unit in the HIT. Everything is driven by one `random.Random`.
"""
from __future__ import annotations

import random
from collections.abc import Callable, Set

from annotation.building.degradation import CannotDegrade
from annotation.building.hit_layout import CampaignContent, HitPlanError, ItemPlan

Unit = tuple[list[int], int]  # (segment indices of the document, system index)


def _documents(content: CampaignContent, skip: Set[int]) -> list[list[int]]:
    documents: dict[int, list[int]] = {}
    for segment in content.segments:
        if segment.index not in skip:
            documents.setdefault(segment.doc, []).append(segment.index)
    return [documents[d] for d in sorted(documents)]


def _units(content: CampaignContent, rng: random.Random, skip: Set[int]) -> list[Unit]:
    """Every (document, system), systems interleaved round by round with their documents shuffled."""
    documents = _documents(content, skip)
    queues = []
    for system in range(len(content.system_names)):
        queue = [(doc, system) for doc in documents]
        rng.shuffle(queue)
        queues.append(queue)
    units: list[Unit] = []
    for round_index in range(len(documents)):
        order = list(range(len(queues)))
        rng.shuffle(order)
        units.extend(queues[i][round_index] for i in order)
    return units


def _deal(units: list[Unit], budget: int) -> list[list[Unit]]:
    groups: list[list[Unit]] = []
    filled = 0
    for unit in units:
        if not groups or filled + len(unit[0]) > budget:
            groups.append([])
            filled = 0
        groups[-1].append(unit)
        filled += len(unit[0])
    if len(groups) > 1 and len(groups[-1]) < 2:  # a lone last unit joins the HIT before it
        groups[-2].extend(groups.pop())
    return groups


def plan_document_hits(content: CampaignContent, degrade: Callable[[str, random.Random], str], hit_size: int,
                       rng: random.Random, skip: Set[int] = frozenset()) -> list[list[ItemPlan]]:
    """Every HIT of a document-level DA campaign (see the module's docstring), without the segments in `skip`
    (tutorial lines, placed by the strategy)."""
    units = _units(content, rng, skip)
    if not units:
        raise HitPlanError("the file has no segments")
    return [_plan_hit(content, group, degrade, rng) for group in _deal(units, max(1, hit_size * 7 // 10))]


def _degraded(content: CampaignContent, unit: Unit, degrade, rng: random.Random) -> list[str] | None:
    """The degraded text of each segment of `unit` ("" where it cannot be degraded); None if none can be."""
    texts = []
    for segment in unit[0]:
        try:
            texts.append(degrade(content.output_text(segment, unit[1]), rng))
        except CannotDegrade:
            texts.append("")
    return texts if any(texts) else None


def _plan_hit(content: CampaignContent, group: list[Unit], degrade, rng: random.Random) -> list[ItemPlan]:
    n = len(group)
    first_half = list(range((n + 1) // 2))
    rng.shuffle(first_half)
    rest = [i for i in range(n) if i not in first_half]
    rng.shuffle(rest)
    bad_of, bad_texts = None, None
    for index in first_half + rest:
        bad_texts = _degraded(content, group[index], degrade, rng)
        if bad_texts is not None:
            bad_of = index
            break
    if bad_of is None:
        raise HitPlanError("a HIT needs a document with a segment long enough to degrade into a bad reference "
                           "(texts of one or two words cannot be degraded)")
    others = [i for i in first_half + rest if i != bad_of]
    repeat_of = others[0] if others else bad_of
    reference_of = rng.randrange(n)
    # (kind, unit index, degraded texts) per slot: slot s goes before unit s; a copy comes after another unit.
    slots: dict[int, list[tuple[str, int, list[str] | None]]] = {}
    for kind, of, texts in (("bad_ref", bad_of, bad_texts), ("repeat", repeat_of, None)):
        slots.setdefault(rng.randint(min(of + 2, n), n), []).append((kind, of, texts))
    slots.setdefault(rng.randint(0, n), []).append(("reference", reference_of, None))
    blocks: list[tuple[str, int, list[str] | None]] = []
    for s in range(n + 1):
        copies = slots.get(s, [])
        rng.shuffle(copies)
        blocks.extend(copies)
        if s < n:
            blocks.append(("system", s, None))

    plans: list[ItemPlan] = []
    original_start: dict[int, int] = {}
    n_systems = len(content.system_names)
    for set_index, (kind, of, texts) in enumerate(blocks):
        segments, system = group[of]
        first = len(plans)
        meta = {"first": first, "count": len(segments)}
        if kind == "system":
            original_start[of] = first
        for k, segment in enumerate([*segments, None]):
            is_document = segment is None
            anchor = segments[0] if is_document else segment
            output = content.outputs[anchor * n_systems + system]
            item_type = kind
            text = ""
            if kind == "bad_ref" and not is_document:
                text = texts[k]
                item_type = "bad_ref" if text else "repeat"
            plans.append(ItemPlan(position=len(plans), set_index=set_index, item_type=item_type,
                                  segment_id=output.segment_id, output_id=None if kind == "reference" else output.id,
                                  text=text, payload={"unit": "document" if is_document else "segment", **meta}))
    for set_index, (kind, of, _) in enumerate(blocks):
        if kind == "system":
            continue
        copy_start = next(p.position for p in plans if p.set_index == set_index)
        for k in range(len(group[of][0]) + 1):
            copy, original = plans[copy_start + k], plans[original_start[of] + k]
            copy.partner_position = original.position
            if kind != "reference":  # a reference document points at its system's document, not back
                original.partner_position = copy.position
    return plans
