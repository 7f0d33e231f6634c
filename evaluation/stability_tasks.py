"""Ranking stability on Celery (docs/methods.md §12.4): the bootstrap split into subtasks, merged by a chord.

A run covers one worker filter and score of one campaign. Its resamples are split into shares of
`STABILITY_RESAMPLES_PER_TASK` (default 100: 10 subtasks for 1,000 resamples); each share reloads the judgments
the stored results cover and runs its resamples (each seeded by its own number, so the split does not change
the answer), and the chord's body adds the shares up and stores the figures (services/stability.py) — unless
newer results or a newer run of the same variant have come meanwhile, in which case it drops them. Without a
broker (tasks in-process: config/jobs.py `in_process`) the chord runs in the caller, share after share.

When: on request (`POST /api/campaigns/<slug>/stability/`, the results page's button) and after every results
run of a campaign whose family offers it (`after_results`; `STABILITY_AFTER_RESULTS`, unset: on where results
recompute by themselves and a broker's workers run tasks, off in-process, where the bootstrap would run in the
web processes beside the annotators). A results run replaces every stored table, so the stored stability is
stale exactly when it is gone.

Priority: this is work that must not hold up the work annotators wait on. Every share and merge is sent at
`BACKGROUND_PRIORITY` (9, the lowest); results runs and gates go at the default (0). On Redis (kombu keeps a list
per priority step and a worker pops the lists in order: 0 first) a worker takes any queued results run or gate
before the next share, on the same queue and with the same worker command.
"""
from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Mapping

from celery import chord, shared_task
from django.conf import settings
from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver

from annotation.models import Campaign
from config import jobs

from .families import family_of
from .families.base import BadQuery
from .families.common import stability as service
from .models import CampaignResults
from .stats import stability as core

log = logging.getLogger(__name__)

#: The last few inputs loaded by this process: shares of a run (and of its sibling runs, e.g. the other worker
#: filter) that land on the same worker process load the judgments once.
_loaded: OrderedDict[tuple, core.StabilityData] = OrderedDict()
LOADED_KEEP = 4
#: The priority of the bootstrap's tasks: Redis serves 0 (the default: results runs, gates) before 9.
BACKGROUND_PRIORITY = 9


def resamples_per_task() -> int:
    return max(1, int(getattr(settings, "STABILITY_RESAMPLES_PER_TASK", 100)))


def _data(campaign: Campaign, run: dict) -> core.StabilityData:
    key = (campaign.pk, run["workers"], run["score"], run["last_id"], run["results_run"], run.get("results_at"))
    if key in _loaded:
        _loaded.move_to_end(key)
    else:
        _loaded[key] = family_of(campaign).stability_data(campaign, run["workers"], run["score"], run["last_id"])
        while len(_loaded) > LOADED_KEEP:
            _loaded.popitem(last=False)
    return _loaded[key]


@shared_task(acks_late=True, reject_on_worker_lost=True)
def stability_share(campaign_id: int, run: dict, start: int, stop: int) -> dict | None:
    """Resamples start..stop-1 of a run, as counts (None when the results it started from are gone)."""
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None or not service.is_current(campaign_id, run):
        return None
    started = time.perf_counter()
    counts = core.resample_counts(_data(campaign, run), run["seed"], start, stop)
    return {"counts": counts.as_json(), "seconds": time.perf_counter() - started}


@shared_task(acks_late=True, reject_on_worker_lost=True)
def stability_merge(shares: list, campaign_id: int, run: dict) -> dict:
    """Add up a run's shares and store the figures."""
    if any(share is None for share in shares):
        return {"campaign": campaign_id, "variant": run["variant"], "status": "superseded"}
    counts = core.merge([core.StabilityCounts.from_json(share["counts"]) for share in shares])
    seconds = sum(share["seconds"] for share in shares)
    stored = service.store(campaign_id, run, counts, seconds)
    outcome = ("empty" if not counts.systems else "stored") if stored else "superseded"
    return {"campaign": campaign_id, "variant": run["variant"], "status": outcome, "resamples": counts.resamples}


@shared_task
def stability_failed(request, exc, traceback, campaign_id: int, run: dict) -> None:
    """The chord's error callback: the run is marked failed (a share raised)."""
    service.mark_failed(campaign_id, run, f"{exc.__class__.__name__}: {exc}")


def launch(campaign: Campaign, request: service.StabilityRequest, header: CampaignResults) -> dict:
    """Start one run: note it as running, then send its chord (in-process without a broker). What started."""
    run = service.new_run(request, header)
    service.mark_running(campaign, run)
    size = resamples_per_task()
    shares = [stability_share.s(campaign.pk, run, start, min(start + size, run["resamples"])).set(
        priority=BACKGROUND_PRIORITY) for start in range(0, run["resamples"], size)]
    body = stability_merge.s(campaign.pk, run).set(priority=BACKGROUND_PRIORITY)
    try:
        if jobs.in_process(stability_share):
            # In-process, possibly inside another eager task (a results run): the chord has already run here.
            outcome = chord(shares)(body).get(disable_sync_subtasks=False)
            return {"workers": run["workers"], "score": run["score"], "status": _eager_status(outcome)}
        task = chord(shares)(body.on_error(stability_failed.s(campaign.pk, run)))
    except Exception as exc:
        service.mark_failed(campaign.pk, run, f"{exc.__class__.__name__}: {exc}")
        raise
    return {"workers": run["workers"], "score": run["score"], "status": "running", "task": task.id}


def _eager_status(outcome: dict) -> str:
    return "done" if outcome.get("status") == "stored" else outcome.get("status", "done")


def start(campaign: Campaign, params: Mapping[str, str]) -> list[dict]:
    """Start the runs `params` ask for (services.stability.parse; BadQuery for bad values, or when the campaign
    has no results yet). In-process mode runs them here; a run that fails there is marked failed and raised."""
    family = family_of(campaign)
    requests = service.parse(family, params)
    header = CampaignResults.objects.filter(campaign=campaign).only("runs", "last_judgment_id", "judgments",
                                                                    "computed_at").first()
    if header is None or not header.judgments:
        raise BadQuery("this campaign has no results to resample yet: compute the results first")
    return [launch(campaign, request, header) for request in requests]


def after_results(campaign_id: int) -> None:
    """After a results run: start the default runs (every worker filter, z-scores, 1,000 resamples) for a
    campaign whose family offers ranking stability and that has judgments."""
    campaign = Campaign.objects.filter(pk=campaign_id).first()
    if campaign is None or not family_of(campaign).stability_filters:
        return
    try:
        start(campaign, {})
    except BadQuery:
        return  # no judgments
    except Exception:  # the results are stored; ranking stability can be asked for again
        log.exception("ranking stability after the results of campaign %s failed", campaign_id)


def _after_results_enabled() -> bool:
    """`STABILITY_AFTER_RESULTS`; unset: on where results recompute by themselves and tasks go to a broker."""
    setting = getattr(settings, "STABILITY_AFTER_RESULTS", None)
    if setting is None:
        return bool(settings.RESULTS_AUTO_RECOMPUTE) and not jobs.in_process(stability_share)
    return bool(setting)


@receiver(post_save, sender=CampaignResults, dispatch_uid="evaluation.stability_after_results")
def stability_after_results(sender, instance: CampaignResults, created: bool, update_fields=None, **kwargs):
    """A new results run (the header's `runs` changed) queues ranking stability once its transaction commits."""
    if not (created or (update_fields and "runs" in update_fields)) or not _after_results_enabled():
        return
    if not instance.judgments or not family_of(instance.campaign).stability_filters:
        return
    transaction.on_commit(lambda: after_results(instance.campaign_id))
