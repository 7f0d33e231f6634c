"""The HITs of an adaptive Direct Assessment campaign, built batch by batch (docs/methods.md §12.2).

An adaptive campaign is imported with its first batch only (`first_batch`): the first `batch_hits` HITs of the
campaign's usual plan (§2.2), which deals the systems' outputs round by round, so each of those HITs holds
about equal numbers of outputs per system. Each later batch is built by `build_batch` when the evaluation app's
look (evaluation/services/adaptive.py) asks for it, with a weight per system: the batch's distinct system outputs
(7/10 of its items) are shared out in proportion to the weights, outputs never shown in the campaign first, then
the least shown; every HIT is laid out by `plan_da_hit`, so it keeps the whole quality-control structure (bad
references, repeats, references, pairs 40+ items apart) whatever outputs it holds. `Hit.batch` numbers the batches
from 1; `batch_complete` says whether the newest batch has been done by `redundancy` workers per HIT.

The builder holds the campaign's row lock while it reads, plans and stores, and builds only when the newest batch
is still the one the caller saw (`after`), so two looks racing to build the same batch build it once.
"""
from __future__ import annotations

import math
import random
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Max, Q

from ..building.adaptive_rules import AdaptiveSettings
from ..building.bulk import insert
from ..building.hit_layout import ItemPlan, OutputRef
from ..building.qc_hits import distinct_outputs_per_hit, plan_da_hit
from ..models import Assignment, Campaign, Hit, HitItem, ItemType, SystemOutput


def first_batch(plans: Sequence[list[ItemPlan]], settings: AdaptiveSettings) -> list[list[ItemPlan]]:
    """The HITs an adaptive campaign is imported with: the plan's first `batch_hits` (fewer when the file gives
    fewer)."""
    return list(plans[:min(settings.batch_hits, settings.budget_hits)])


def current_batch(campaign: Campaign) -> int:
    """The newest batch's number (0 when the campaign has no batched HIT)."""
    return Hit.objects.filter(campaign=campaign).aggregate(m=Max("batch"))["m"] or 0


@dataclass(frozen=True)
class BatchProgress:
    """Where an adaptive campaign stands: its newest batch, HITs built in all, and the finished assignments."""

    batch: int
    batch_hits: int
    batch_done: int
    hits: int
    assignments_done: int
    redundancy: int

    @property
    def complete(self) -> bool:
        """Every HIT of the newest batch done by `redundancy` workers."""
        return self.batch_hits > 0 and self.batch_done == self.batch_hits


def batch_progress(campaign: Campaign) -> BatchProgress:
    batch = current_batch(campaign)
    finished = Count("assignments", filter=Q(assignments__status=Assignment.Status.COMPLETED))
    counts = list(Hit.objects.filter(campaign=campaign, batch=batch).annotate(done=finished)
                  .values_list("done", flat=True)) if batch else []
    return BatchProgress(
        batch=batch, batch_hits=len(counts), batch_done=sum(done >= campaign.redundancy for done in counts),
        hits=Hit.objects.filter(campaign=campaign).count(),
        assignments_done=Assignment.objects.filter(campaign=campaign, status=Assignment.Status.COMPLETED).count(),
        redundancy=campaign.redundancy)


def batch_complete(campaign: Campaign) -> bool:
    """Whether every HIT of the newest batch has been done by as many workers as the redundancy asks."""
    return batch_progress(campaign).complete


def output_quota(weights: Sequence[float], available: Sequence[int], total: int) -> list[int]:
    """How many system outputs each system gets out of `total`, in proportion to `weights` (largest remainders),
    at most `available[s]` each; what a capped system cannot take goes to the others by their weights (evenly
    when every other weight is 0)."""
    n = len(weights)
    counts = [0] * n
    open_ = [s for s in range(n) if available[s] > 0]
    left = min(total, sum(available))
    while left > 0 and open_:
        share = [max(float(weights[s]), 0.0) for s in open_]
        if sum(share) <= 0:
            share = [1.0] * len(open_)
        exact = [left * w / sum(share) for w in share]
        whole = [math.floor(x) for x in exact]
        by_remainder = sorted(range(len(open_)), key=lambda i: (whole[i] - exact[i], open_[i]))
        for i in by_remainder[:left - sum(whole)]:
            whole[i] += 1
        for i, s in enumerate(open_):
            take = min(whole[i], available[s] - counts[s])
            counts[s] += take
            left -= take
        open_ = [s for s in open_ if counts[s] < available[s]]
    return counts


def spread_over_hits(counts: Sequence[int], hits: int) -> list[list[int]]:
    """counts[s] outputs of each system dealt to `hits` HITs of equal size: HIT h gets ⌊counts[s]/hits⌋ or one
    more of system s, the extra ones handed round the HITs in turn, so every HIT gets the same number of outputs
    (sum(counts) must be a multiple of `hits`)."""
    table = [[c // hits] * hits for c in counts]
    turn = 0
    for s, c in enumerate(counts):
        for _ in range(c % hits):
            table[s][turn % hits] += 1
            turn += 1
    return [[table[s][h] for s in range(len(counts))] for h in range(hits)]


def _queues(campaign: Campaign, system_ids: list[int], rng: random.Random) -> list[deque[OutputRef]]:
    """Per system its outputs, never shown (as a system item) in the campaign first, then by how often shown;
    ties in random order."""
    shown = dict(HitItem.objects.filter(hit__campaign=campaign, item_type=ItemType.SYSTEM)
                 .values("output_id").annotate(n=Count("id")).values_list("output_id", "n"))
    by_system: dict[int, list[tuple[int, float, OutputRef]]] = {s: [] for s in system_ids}
    for pk, segment, system, text in (SystemOutput.objects.filter(campaign=campaign).order_by("pk")
                                      .values_list("pk", "segment_id", "system_id", "text")):
        by_system[system].append((shown.get(pk, 0), rng.random(), OutputRef(pk, segment, system, text)))
    return [deque(ref for _, _, ref in sorted(by_system[s], key=lambda e: e[:2])) for s in system_ids]


def _take(queue: deque[OutputRef], n: int) -> list[OutputRef]:
    """The next n outputs of a system, put back at the end of its queue (so the least shown come next)."""
    taken = [queue.popleft() for _ in range(n)]
    queue.extend(taken)
    return taken


def build_batch(campaign: Campaign, system_weights: Mapping[str, float], hits: int, *,
                after: int | None = None) -> int:
    """Build the next batch of `hits` HITs, its system outputs shared out by `system_weights` (system name →
    weight ≥ 0; systems not named get 0; all 0 means evenly), each HIT with the full quality-control structure;
    the number of HITs built. With `after`, builds nothing (returns 0) unless the newest batch is still number
    `after`, so that racing callers build the batch once. Raises ValueError for unknown systems or bad weights,
    and hit_layout.HitPlanError when a HIT cannot be laid out."""
    if hits < 1:
        return 0
    with transaction.atomic():
        campaign = Campaign.objects.select_for_update().get(pk=campaign.pk)
        batch = current_batch(campaign)
        if after is not None and batch != after:
            return 0
        systems = dict(campaign.systems.values_list("name", "pk"))
        unknown = sorted(set(system_weights) - set(systems))
        if unknown:
            raise ValueError(f"no system called {', '.join(unknown)} in this campaign")
        if any(not math.isfinite(w) or w < 0 for w in map(float, system_weights.values())):
            raise ValueError("system weights must be finite and not negative")
        names = sorted(systems)
        rng = random.Random(f"{campaign.seed}:batch:{batch + 1}")
        queues = _queues(campaign, [systems[name] for name in names], rng)
        per_hit = distinct_outputs_per_hit(campaign.hit_size)
        # a HIT holds distinct outputs, so a system gives a HIT at most as many as it has
        counts = output_quota([system_weights.get(name, 0.0) for name in names],
                              [len(q) * hits for q in queues], per_hit * hits)
        degrade = campaign.protocol_spec.degrade
        plans = []
        for quota in spread_over_hits(counts, hits):
            outputs = [o for s, n in enumerate(quota) for o in _take(queues[s], n)]
            plans.append(plan_da_hit(outputs, degrade, campaign.hit_size, rng))
        first = (Hit.objects.filter(campaign=campaign).aggregate(m=Max("number"))["m"] or 0) + 1
        hit_pks = insert(Hit, ["campaign_id", "number", "size", "batch"],
                         [(campaign.pk, first + n, len(items), batch + 1) for n, items in enumerate(plans)])
        insert(HitItem, ["hit_id", "position", "set_index", "item_type", "segment_id", "output_id", "text",
                         "partner_position", "payload"],
               [(hit, p.position, p.set_index, p.item_type, p.segment_id, p.output_id, p.text, p.partner_position,
                 p.payload) for hit, items in zip(hit_pks, plans, strict=True) for p in items], return_ids=False)
        return len(plans)
