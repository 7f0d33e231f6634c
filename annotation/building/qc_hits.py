"""Plans the items of Direct Assessment HITs with their quality-control pairs (docs/methods.md §2).

A HIT of `hit_size` items has `hit_size / 10` sets of 10, shown in set order and shuffled
within each set. Set Si is paired with set Si+h (h = half the sets), so at least
10·(h−1) items separate the members of a quality-control pair. For each pair of sets the
HIT holds, in either direction, one bad reference with its original, one system output
with its exact repeat, one reference translation with the system output of the same
segment, and four plain system outputs on each side: 70 % distinct system outputs,
10 % bad references, 10 % repeats, 10 % references (for 100 items).

Outputs are dealt out so that every system output appears in exactly one HIT (the last
HIT is topped up with outputs drawn from the others) and each HIT holds roughly equal
numbers of outputs per system. Everything here is plain Python driven by one
`random.Random`, so a campaign's seed reproduces its HITs.

A building block, not part of a protocol package: the Direct Assessment protocols plan their HITs with it, and so
do the adaptive batches (services/adaptive_batches.py) and the DA family's power analysis, which must not name a
protocol package.
"""
from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from .degradation import CannotDegrade
from .hit_layout import HitPlanError, ItemPlan, OutputRef

SET_SIZE = 10
OUTPUTS_PER_SET_PAIR = 14
MIN_HIT_SIZE, MAX_HIT_SIZE = 2 * SET_SIZE, 200


def check_hit_size(hit_size: int) -> None:
    if hit_size % (2 * SET_SIZE) or not MIN_HIT_SIZE <= hit_size <= MAX_HIT_SIZE:
        raise HitPlanError(f"HIT size must be a multiple of 20 between 20 and 200, not {hit_size}", "hit_size")


def largest_hit_size(n_outputs: int) -> int | None:
    """The largest HIT size whose distinct system outputs a file of `n_outputs` fills; None if not even the
    smallest HIT (20 items, 14 outputs)."""
    pairs_of_sets = min(n_outputs // OUTPUTS_PER_SET_PAIR, MAX_HIT_SIZE // (2 * SET_SIZE))
    return pairs_of_sets * 2 * SET_SIZE or None


def too_few_outputs(outputs: Sequence[OutputRef], hit_size: int) -> str:
    """Why `outputs` cannot fill a HIT of `hit_size`, and the HIT size that fits them."""
    segments, systems = len({o.segment_id for o in outputs}), len({o.system_id for o in outputs})
    reason = (f"a HIT of {hit_size} items needs at least {distinct_outputs_per_hit(hit_size)} system outputs "
              f"(segments × systems); the file has {len(outputs)} ({segments} segment{'s' * (segments != 1)} × "
              f"{systems} system{'s' * (systems != 1)})")
    fits = largest_hit_size(len(outputs))
    if fits is None:
        return (f"{reason}, too few for any HIT: the smallest, {MIN_HIT_SIZE} items, needs "
                f"{OUTPUTS_PER_SET_PAIR}. Add segments or systems.")
    return f"{reason}. The largest HIT size this file fills is {fits}."


def distinct_outputs_per_hit(hit_size: int) -> int:
    check_hit_size(hit_size)
    return hit_size // (2 * SET_SIZE) * OUTPUTS_PER_SET_PAIR


def deal_outputs(outputs: Sequence[OutputRef], per_hit: int, rng: random.Random) -> list[list[OutputRef]]:
    """Split outputs into HIT-sized groups, systems interleaved so each group is balanced."""
    if len(outputs) < per_hit:
        raise HitPlanError(
            f"a HIT of this size needs at least {per_hit} system outputs (segments × systems); "
            f"the campaign has {len(outputs)}", "hit_size"
        )
    by_system: dict[int, list[OutputRef]] = {}
    for output in outputs:
        by_system.setdefault(output.system_id, []).append(output)
    queues = [by_system[key] for key in sorted(by_system)]
    for queue in queues:
        rng.shuffle(queue)
    dealt: list[OutputRef] = []
    for round_index in range(max(len(q) for q in queues)):
        order = list(range(len(queues)))
        rng.shuffle(order)
        dealt.extend(queues[i][round_index] for i in order if round_index < len(queues[i]))
    groups = [dealt[i:i + per_hit] for i in range(0, len(dealt), per_hit)]
    last = groups[-1]
    if len(last) < per_hit:
        in_last = {o.id for o in last}
        others = [o for o in dealt if o.id not in in_last]
        last.extend(rng.sample(others, per_hit - len(last)))
    return groups


def _pick_degradable(
    outputs: list[OutputRef], count: int, degrade: Callable[[str, random.Random], str], rng: random.Random
) -> tuple[list[tuple[OutputRef, str]], list[OutputRef]]:
    """Take `count` outputs that can be degraded; return them with their degraded text, and the rest."""
    chosen: list[tuple[OutputRef, str]] = []
    rest: list[OutputRef] = []
    for output in outputs:
        if len(chosen) < count:
            try:
                chosen.append((output, degrade(output.text, rng)))
                continue
            except CannotDegrade:
                pass
        rest.append(output)
    if len(chosen) < count:
        raise HitPlanError(
            f"a HIT needs {count} outputs long enough to degrade into bad references; only {len(chosen)} of its "
            f"{len(outputs)} are (texts of one or two words cannot be degraded)"
        )
    return chosen, rest


def plan_da_hit(
    outputs: Sequence[OutputRef],
    degrade: Callable[[str, random.Random], str],
    hit_size: int,
    rng: random.Random,
) -> list[ItemPlan]:
    """Lay out one HIT from its distinct outputs (docs/methods.md §2, Graham et al. 2014 Table 2)."""
    half = hit_size // SET_SIZE // 2
    if len(outputs) != half * OUTPUTS_PER_SET_PAIR:
        raise HitPlanError(f"a {hit_size}-item HIT takes {half * OUTPUTS_PER_SET_PAIR} outputs, not {len(outputs)}")
    pool = list(outputs)
    rng.shuffle(pool)
    bad, rest = _pick_degradable(pool, 2 * half, degrade, rng)
    sets: list[list[dict]] = [[] for _ in range(2 * half)]

    def pair(first_set: int, second_set: int, first: dict, second: dict) -> None:
        key = object()
        sets[first_set].append({**first, "key": key})
        sets[second_set].append({**second, "key": key})

    def system_item(o: OutputRef) -> dict:
        return {"item_type": "system", "segment_id": o.segment_id, "output_id": o.id}

    for i in range(half):
        low, high = i, i + half
        for (original, degraded), (a, b) in zip(bad[2 * i:2 * i + 2], ((low, high), (high, low)), strict=False):
            bad_item = {"item_type": "bad_ref", "segment_id": original.segment_id, "output_id": original.id,
                        "text": degraded}
            pair(a, b, bad_item, system_item(original))
        chunk = rest[12 * i:12 * i + 12]
        for o, (a, b) in zip(chunk[0:2], ((low, high), (high, low)), strict=False):
            pair(a, b, system_item(o), {**system_item(o), "item_type": "repeat"})
        for o, (a, b) in zip(chunk[2:4], ((low, high), (high, low)), strict=False):
            pair(a, b, {"item_type": "reference", "segment_id": o.segment_id, "output_id": None}, system_item(o))
        for j, o in enumerate(chunk[4:12]):
            sets[low if j < 4 else high].append(system_item(o))

    plans: list[ItemPlan] = []
    position_of_key: dict[object, list[int]] = {}
    for set_index, contents in enumerate(sets):
        rng.shuffle(contents)
        for entry in contents:
            position = len(plans)
            key = entry.pop("key", None)
            if key is not None:
                position_of_key.setdefault(key, []).append(position)
            plans.append(ItemPlan(position=position, set_index=set_index, **entry))
    for first, second in position_of_key.values():
        plans[first].partner_position = second
        plans[second].partner_position = first
    return plans


def plan_da_hits(
    outputs: Sequence[OutputRef],
    degrade: Callable[[str, random.Random], str],
    hit_size: int,
    rng: random.Random,
) -> list[list[ItemPlan]]:
    """Plan every HIT of a campaign; each output appears in exactly one HIT where the pool allows."""
    per_hit = distinct_outputs_per_hit(hit_size)
    if len(outputs) < per_hit:
        raise HitPlanError(too_few_outputs(outputs, hit_size), "hit_size", largest_hit_size(len(outputs)))
    return [plan_da_hit(group, degrade, hit_size, rng) for group in deal_outputs(outputs, per_hit, rng)]
