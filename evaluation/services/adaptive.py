"""Adaptive allocation with a stopping rule: one look between batches (docs/methods.md §12.2).

A look (`look`) runs under the lock of the campaign's `AdaptiveRun` row, so looks of one campaign run one at a
time:

1. the information fraction t = finished assignments / (budget_hits × redundancy), i.e. the judgments of the
   finished HITs over the judgments the budget buys; t must have grown since the last look (else nothing new
   is there to look at, and no look is recorded);
2. the family's adapter loads what counts (DA: reliable workers' z-scores of system items, with their
   segments and the batch of each judgment's HIT), and the core's `interim_look` (evaluation/stats/adaptive.py)
   ranks the systems by batch-adjusted mean and tests every adjacent pair (van Elteren's rank-sum z within
   batches, on per-translation means) against its boundary: Lan-DeMets alpha spending over the fractions of all
   looks so far, with the pair's own information history (the information matrix stored with every earlier
   look) so that a pair the batches favour keeps its error rate at α; pairs decided at an earlier look stay
   decided, and from half the budget on a pair unlikely to separate by the end is given up (`adaptive_futility`);
3. the look is stored, then the decision: every adjacent pair decided → stop; the newest batch finished and the
   budget built → stop (budget spent); the newest batch finished → build the next batch, min(batch_hits,
   HITs the budget has left) HITs favouring the systems by the look's weights; else (a researcher's look while
   a batch is out) → wait for the batch.

Stopping marks the run stopped with its reason; no batch is built after that. The campaign is closed as soon
as its newest batch is finished (at once when it is), so workers already given a HIT can finish it.

After every finished HIT the annotation app's `assignment_completed` signal queues `look_after_batch` on Celery
(evaluation/adaptive_tasks.py); it looks only when the newest batch is finished and has not been looked at
finished, so a burst of finished assignments gives one look per batch.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

import numpy as np
from django.db import transaction
from django.utils import timezone

from annotation.building.adaptive_rules import AdaptiveSettings, AdaptiveSettingsError, campaign_settings
from annotation.building.hit_layout import HitPlanError
from annotation.models import Campaign
from annotation.services.adaptive_batches import BatchProgress, batch_progress, build_batch

from ..families import family_of
from ..models import AdaptiveRun
from .storing import finite


class NotAdaptive(ValueError):
    """The campaign was not imported with `adaptive` (or its family cannot run adaptively); the message says
    which."""


def settings_of(campaign: Campaign) -> AdaptiveSettings:
    """The campaign's adaptive settings; NotAdaptive when it has none."""
    try:
        settings = campaign_settings(campaign)
    except AdaptiveSettingsError as exc:
        raise NotAdaptive(f"the campaign's adaptive options are not usable: {exc}") from None
    if settings is None:
        raise NotAdaptive("this campaign was not imported with adaptive allocation (option adaptive)")
    if family_of(campaign).adaptive() is None:
        raise NotAdaptive(f"a {family_of(campaign).label} campaign cannot run adaptively")
    return settings


def run_of(campaign: Campaign) -> AdaptiveRun:
    """The campaign's run, created with its budget when missing; NotAdaptive for a campaign that is not
    adaptive."""
    settings = settings_of(campaign)
    run, _ = AdaptiveRun.objects.get_or_create(campaign=campaign, defaults={
        "budget_hits": settings.budget_hits, "budget_judgments": settings.usable_judgments,
        "budget_money": settings.money_per_hit * settings.budget_hits if settings.payment_per_hit else None})
    return run


def spent(settings: AdaptiveSettings, progress: BatchProgress) -> tuple[int, Decimal]:
    """Judgments and money of the finished assignments (each is one worker's whole HIT, paid once)."""
    return progress.assignments_done * settings.hit_size, progress.assignments_done * settings.payment_per_hit


def fraction_of(settings: AdaptiveSettings, progress: BatchProgress) -> float:
    """The information fraction: finished assignments over the assignments the budget buys."""
    return min(1.0, progress.assignments_done / (settings.budget_hits * settings.redundancy))


@dataclass(frozen=True)
class LookOutcome:
    """What a call of `look` did: `looked` (a look was recorded: `entry`), `decision` (stop, next-batch, wait,
    stopped, nothing-new, not-due) and a sentence for people."""

    looked: bool
    decision: str
    message: str
    entry: dict | None = None
    built: int = 0


def look_after_batch(campaign: Campaign) -> LookOutcome:
    """The look after a finished batch (the Celery task's): only when the newest batch is finished and no look
    has yet seen it finished."""
    return look(campaign, trigger="batch")


def look(campaign: Campaign, trigger: str = "manual") -> LookOutcome:
    """One look now (see the module's docstring); `trigger` is "manual" (a researcher) or "batch" (a finished
    batch; does nothing unless that batch awaits its look). Raises NotAdaptive."""
    settings = settings_of(campaign)
    run_pk = run_of(campaign).pk
    with transaction.atomic():
        run = AdaptiveRun.objects.select_for_update().get(pk=run_pk)
        progress = batch_progress(campaign)
        if run.state == AdaptiveRun.State.STOPPED:
            _close_when_finished(campaign, progress)
            return LookOutcome(False, "stopped", f"the run has stopped: {run.reason}")
        if trigger == "batch" and (not progress.complete or _looked_finished(run, progress.batch)):
            return LookOutcome(False, "not-due", f"batch {progress.batch} is not finished or was looked at")
        fraction = fraction_of(settings, progress)
        fractions = [float(entry["fraction"]) for entry in run.looks]
        if fraction <= 0 or (fractions and fraction <= fractions[-1]):
            since = f"since look {len(fractions)}" if fractions else "yet"
            return LookOutcome(False, "nothing-new", f"no HIT has been finished {since}: nothing new to look at")
        entry = _take_look(run, campaign, settings, progress, [*fractions, fraction], trigger)
        outcome = _decide(run, campaign, settings, progress, entry)
        entry.update(decision=outcome.decision, decided=outcome.message, built=outcome.built)
        run.looks = [*run.looks, entry]
        run.spent_judgments, run.spent_money = spent(settings, progress)
        run.save()
        return LookOutcome(True, outcome.decision, outcome.message, entry, outcome.built)


def _looked_finished(run: AdaptiveRun, batch: int) -> bool:
    return any(entry.get("batch") == batch and entry.get("batch_complete") for entry in run.looks)


def _history(looks: list[dict], names: list[str]) -> dict:
    """Each pair's information at every earlier look, so that it is held to the boundary of its own history: the
    stored information matrices (in this look's system order), or for looks stored without them the per-system
    counts (an approximation the core accepts)."""
    if not looks:
        return {}
    if all((entry.get("pair_information") or {}).get("systems") == names for entry in looks):
        return {"earlier_information": np.asarray([entry["pair_information"]["matrix"] for entry in looks],
                                                  dtype=np.float64)}
    counts = [[(entry.get("counts") or {}).get(name, 0) for name in names] for entry in looks]
    return {"earlier_counts": np.asarray(counts, dtype=np.int64).reshape(-1, len(names))}


def _take_look(run: AdaptiveRun, campaign: Campaign, settings: AdaptiveSettings, progress: BatchProgress,
               fractions: list[float], trigger: str) -> dict:
    """Load, test, and the look's record (without its decision); updates `run.separated`."""
    from ..stats.adaptive import interim_look, spent_alpha

    data = family_of(campaign).adaptive().load(campaign)
    names = list(data.names)
    index = {name: i for i, name in enumerate(names)}
    before = frozenset((index[a], index[b]) for a, b in run.separated if a in index and b in index)
    futile = {tuple(pair) for entry in run.looks for pair in entry.get("futile", [])}
    given_up = frozenset((index[a], index[b]) for a, b in futile if a in index and b in index)
    result = interim_look(data.scores, data.systems, len(names), np.asarray(fractions), alpha=settings.alpha,
                          rule=settings.spending, separated_before=before, segments=data.segments,
                          strata=data.strata, futility=settings.futility, futile_before=given_up,
                          **_history(run.looks, names))
    pairs = [{"better": names[int(a)], "worse": names[int(b)], "z": finite(z), "boundary": finite(bound),
              "separated": bool(sep), "futile": bool(gave_up)}
             for (a, b), z, bound, sep, gave_up in zip(result.pairs, result.z, result.pair_boundaries, result.separated,
                                                       result.futile, strict=True)]
    decided = {(p["better"], p["worse"]) for p in pairs if p["separated"]}
    run.separated = sorted({*map(tuple, run.separated), *decided})
    judgments, money = spent(settings, progress)
    return {
        "number": len(run.looks) + 1, "at": timezone.now().isoformat(), "trigger": trigger,
        "batch": progress.batch, "batch_complete": progress.complete, "hits_built": progress.hits,
        "assignments_done": progress.assignments_done, "fraction": fractions[-1],
        "judgments_spent": judgments, "money_spent": str(money.quantize(Decimal("0.01"))),
        "alpha_spent": finite(spent_alpha(np.asarray(fractions), settings.alpha, settings.spending)[-1]),
        "boundary": finite(result.boundary),
        "workers": data.workers, "reliable_workers": data.reliable_workers,
        "order": [names[int(i)] for i in result.order], "pairs": pairs,
        "open": sum(not (p["separated"] or p["futile"]) for p in pairs), "done": bool(result.done),
        "futile": sorted({*futile, *((p["better"], p["worse"]) for p in pairs if p["futile"])}),
        "pair_information": {"systems": names, "matrix": np.asarray(result.pair_information).tolist()},
        "counts": {name: int(result.counts[i]) for i, name in enumerate(names)}, "judgments": int(data.scores.size),
        "means": {name: finite(result.means[i]) for i, name in enumerate(names)},
        "weights": {name: finite(result.weights[i]) or 0.0 for i, name in enumerate(names)},
    }


def _decide(run: AdaptiveRun, campaign: Campaign, settings: AdaptiveSettings, progress: BatchProgress,
            entry: dict) -> LookOutcome:
    if entry["done"]:
        return _stop(run, campaign, progress, "every adjacent pair of systems is separated")
    left = settings.budget_hits - progress.hits
    if not progress.complete:
        return LookOutcome(True, "wait", f"batch {progress.batch} is still out ({progress.batch_done} of "
                                         f"{progress.batch_hits} HITs finished): the next look follows it")
    if left <= 0:
        return _stop(run, campaign, progress, f"the budget is spent ({entry['judgments_spent']} judgments); "
                                              f"{entry['open']} adjacent pair(s) still open")
    hits = min(settings.batch_hits, left)
    try:
        built = build_batch(campaign, entry["weights"], hits, after=progress.batch)
    except HitPlanError as exc:
        return _stop(run, campaign, progress, f"the next batch could not be built: {exc}")
    return LookOutcome(True, "next-batch", f"batch {progress.batch + 1}: {built} HITs, favouring the systems of "
                                           f"the {entry['open']} open pair(s)", built=built)


def _stop(run: AdaptiveRun, campaign: Campaign, progress: BatchProgress, reason: str) -> LookOutcome:
    run.state, run.reason, run.stopped_at = AdaptiveRun.State.STOPPED, reason, timezone.now()
    _close_when_finished(campaign, progress)
    closing = "the campaign is closed" if progress.complete else \
        f"the campaign closes when batch {progress.batch}'s HITs are finished"
    return LookOutcome(True, "stop", f"stopped: {reason}; {closing}")


def _close_when_finished(campaign: Campaign, progress: BatchProgress) -> None:
    if progress.complete:
        Campaign.objects.filter(pk=campaign.pk).exclude(status=Campaign.Status.CLOSED).update(
            status=Campaign.Status.CLOSED)
