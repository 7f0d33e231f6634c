"""Shared by the adaptive-allocation tests: a small adaptive campaign and a crowd that finishes a batch by writing
its judgments straight to the database (the annotator API is exercised by the end-to-end test)."""
from __future__ import annotations

import random

from django.utils import timezone

from annotation.models import Annotator, Assignment, Hit, HitItem, Judgment
from annotation.services.adaptive_batches import current_batch

from .simulation import BAD_REFERENCE_PENALTY, REFERENCE_QUALITY

SYSTEMS = ("sys-A", "sys-B", "sys-C")
#: HITs of 20 items (14 distinct system outputs), two workers each: 40 judgments per HIT.
ADAPTIVE = {"adaptive": True, "batch_hits": 2, "budget_judgments": 320}


def adaptive_campaign(make_campaign, n_segments: int = 20, *, fields: dict | None = None, **options):
    """An adaptive adequacy campaign of three systems (`fields`: Campaign fields, e.g. name, payment_per_hit)."""
    return make_campaign(n_segments=n_segments, systems=SYSTEMS, redundancy=2, hit_size=20,
                         options={**ADAPTIVE, **options}, **(fields or {}))


def _score(item: HitItem, quality: dict[str, float], rng: random.Random, noise: float) -> float:
    if item.item_type == "reference":
        true = REFERENCE_QUALITY
    else:
        true = quality[item.output.system.name] - (BAD_REFERENCE_PENALTY if item.item_type == "bad_ref" else 0)
    return round(min(100.0, max(0.0, true + rng.gauss(0, noise))), 2)


def finish_batch(campaign, quality: dict[str, float], rng: random.Random, workers=("w-1", "w-2"),
                 noise: float = 6.0) -> int:
    """Every HIT of the newest batch done by each of `workers` (diligent: true quality plus noise); the number of
    assignments written."""
    hits = list(Hit.objects.filter(campaign=campaign, batch=current_batch(campaign)))
    items = list(HitItem.objects.filter(hit__in=hits).select_related("output__system"))
    now = timezone.now()
    written = 0
    for worker in workers:
        annotator, _ = Annotator.objects.get_or_create(external_id=worker)
        for hit in hits:
            if Assignment.objects.filter(hit=hit, annotator=annotator).exists():
                continue
            assignment = Assignment.objects.create(campaign=campaign, hit=hit, annotator=annotator,
                                                   status=Assignment.Status.COMPLETED, completed_at=now,
                                                   position=hit.size)
            Judgment.objects.bulk_create([
                Judgment(campaign=campaign, assignment=assignment, annotator=annotator, item=item,
                         score=_score(item, quality, rng, noise), seconds=3.0)
                for item in items if item.hit_id == hit.pk])
            written += 1
    return written
