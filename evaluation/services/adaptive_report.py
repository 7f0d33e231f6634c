"""What the API and the admin show of an adaptive campaign: budget, spend, open pairs, projected spend, looks
(docs/methods.md §12.2).

The projected spend is a forecast, not a promise. From the last look, each open adjacent pair's z is carried
forward as if its effect stayed as estimated and its z grew as √n, n growing with the judgments, so
z(t') = z(t)·√(t'/t) (a negative z counts as 0: a pair is separated only when the better system by mean also
ranks higher). The looks still to come are taken at the ends of the batches the budget has
left (the current batch's end, then every batch_hits HITs, the last at t' = 1), each with its boundary by the
campaign's alpha-spending rule given all the looks before it (the boundary for information in proportion to the
fractions, not each pair's own); the run is projected to stop at the first of those
looks where every open pair's carried-forward |z| reaches the boundary, and the spend is that look's share of the
budget. When no such look comes (a pair's z is near 0, say), the projection is the whole budget. The next
batches give the open pairs' systems more than their share, so their z grows faster than this assumes: the
forecast errs on the side of spending more.
"""
from __future__ import annotations

import math
from decimal import Decimal

import numpy as np

from annotation.building.adaptive_rules import AdaptiveSettings
from annotation.models import Campaign
from annotation.services.adaptive_batches import batch_progress

from ..models import AdaptiveRun
from .adaptive import fraction_of, run_of, settings_of, spent


def future_fractions(settings: AdaptiveSettings, hits_built: int, batch_complete: bool) -> list[float]:
    """The information fractions of the looks still to come if every batch runs to its end: the current batch's
    end (unless it is finished and looked at), then one per batch the budget has left."""
    ends = [] if batch_complete else [hits_built]
    built = hits_built
    while built < settings.budget_hits:
        built = min(settings.budget_hits, built + settings.batch_hits)
        ends.append(built)
    return [end / settings.budget_hits for end in ends]


def projected_stop(z_open: list[float], fraction: float, past: list[float], future: list[float], alpha: float,
                   rule: str) -> float | None:
    """The information fraction at which the run is projected to stop (see the module's docstring): the first
    future look whose boundary (for information in proportion to the fractions) every open pair's z·√(t'/t)
    reaches; None when no look within the budget does."""
    from ..stats.adaptive import boundaries

    future = [t for t in future if t > fraction]
    if not z_open:
        return fraction
    if not future:
        return None
    bounds = boundaries(np.asarray([*past, *future]), alpha=alpha, rule=rule)[len(past):]
    smallest = min(max(z, 0.0) for z in z_open)  # a pair is separated when z (not |z|) reaches the boundary
    for t, bound in zip(future, bounds, strict=True):
        if smallest * math.sqrt(t / fraction) >= bound:
            return t
    return None


def _projection(run: AdaptiveRun, settings: AdaptiveSettings, progress, open_pairs: list[dict]) -> tuple[float, str]:
    """(projected fraction of the budget spent, how it was projected)."""
    if run.state == AdaptiveRun.State.STOPPED:
        return progress.hits / settings.budget_hits, "stopped: the HITs built, once finished"
    if not run.looks:
        return 1.0, "no look yet: the whole budget"
    last = run.looks[-1]
    stop = projected_stop([p["z"] or 0.0 for p in open_pairs], float(last["fraction"]),
                          [float(e["fraction"]) for e in run.looks],
                          future_fractions(settings, progress.hits, _looked_at_end(run, progress)), settings.alpha,
                          settings.spending)
    if stop is None:
        return 1.0, "an open pair is not projected to separate within the budget: the whole budget"
    if stop >= 1.0:
        return 1.0, "the open pairs are projected to separate only at the last look: the whole budget"
    return stop, (f"the open pairs are projected to separate at the look at {stop:.0%} of the budget (each z "
                  "carried forward as √judgments)")


def status(campaign: Campaign) -> dict:
    """The adaptive campaign's state for the API and the admin; raises NotAdaptive."""
    settings = settings_of(campaign)
    run = run_of(campaign)
    progress = batch_progress(campaign)
    judgments, money = spent(settings, progress)
    open_pairs = [p for p in (run.looks[-1]["pairs"] if run.looks else []) if not (p["separated"] or p.get("futile"))]
    projected, how = _projection(run, settings, progress, open_pairs)
    projected_hits = projected * settings.budget_hits
    return {
        "campaign": campaign.slug, "state": run.state, "reason": run.reason, "stopped_at": run.stopped_at,
        "campaign_status": campaign.status,
        "settings": {"batch_hits": settings.batch_hits, "alpha": settings.alpha, "alpha_spending": settings.spending,
                     "hit_size": settings.hit_size, "redundancy": settings.redundancy,
                     "payment_per_hit": str(settings.payment_per_hit)},
        "budget": {"hits": settings.budget_hits, "judgments": settings.usable_judgments,
                   "money": _money(settings.money_per_hit * settings.budget_hits),
                   "budget_judgments": settings.budget_judgments,
                   "budget_money": None if settings.budget_money is None else str(settings.budget_money)},
        "spent": {"judgments": judgments, "money": _money(money), "assignments": progress.assignments_done,
                  "hits_built": progress.hits, "fraction": fraction_of(settings, progress)},
        "projected": {"judgments": round(projected_hits * settings.judgments_per_hit), "hits": round(projected_hits),
                      "money": _money(settings.money_per_hit * Decimal(str(projected_hits))), "fraction": projected,
                      "how": how},
        "batch": {"number": progress.batch, "hits": progress.batch_hits, "hits_finished": progress.batch_done,
                  "complete": progress.complete},
        "open_pairs": open_pairs,
        "separated": [list(p) for p in run.separated],
        "looks": run.looks,
    }


def _looked_at_end(run: AdaptiveRun, progress) -> bool:
    """Whether the newest batch is finished and a look saw it finished (its end is then no longer to come)."""
    return progress.complete and any(e.get("batch") == progress.batch and e.get("batch_complete") for e in run.looks)


def _money(value: Decimal) -> str:
    return str(Decimal(value).quantize(Decimal("0.01")))
