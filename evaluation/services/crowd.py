"""Crowd-market figures from stored results (docs/methods.md §10): the cost report and per-worker
approve/reject suggestions. Nothing here recomputes statistics; it reads the result tables."""
from __future__ import annotations

from decimal import Decimal

from django.db.models import Count

from annotation.models import Annotator, Assignment, Campaign, Judgment

from ..families import family_of
from ..models import WorkerResult

#: Reject only clear random clicking (the papers' practice): enough quality-control pairs and
#: bad references scored no lower than their originals on average (one-sided p ≥ 0.5), or no
#: spread at all in the scores. Missing the 0.05 threshold alone is not a reason to reject.
REJECT_MIN_PAIRS = 5
REJECT_P_VALUE = 0.5
REJECT_SPAM_MISS_RATE = 0.5


def cost_report(campaign: Campaign) -> dict:
    """Payment per HIT × HITs paid; per system; and the share spent on unreliable workers."""
    pay = campaign.payment_per_hit or Decimal(0)
    paid = Assignment.objects.filter(campaign=campaign, status=Assignment.Status.COMPLETED).count()
    workers = list(WorkerResult.objects.filter(campaign=campaign).values_list("reliable", "hits"))
    unreliable_hits = sum(hits for reliable, hits in workers if not reliable)
    systems = len(campaign.options.get("systems", [])) or campaign.systems.count()
    total = pay * paid
    return {
        "currency_per_hit": str(pay), "hits_paid": paid, "total": str(total),
        "systems": systems, "per_system": str((total / systems).quantize(Decimal("0.01"))) if systems else None,
        "hits_by_unreliable_workers": unreliable_hits,
        "spent_on_unreliable": str(pay * unreliable_hits),
        "share_on_unreliable": (unreliable_hits / paid) if paid else None,
    }


def approval_suggestions(campaign: Campaign) -> list[dict]:
    """One row per worker: approve or reject, and why."""
    rows = []
    spam_miss_rates = family_of(campaign).spam_miss_rates(campaign)
    for w in WorkerResult.objects.filter(campaign=campaign).order_by("worker"):
        if w.reliable:
            suggestion, reason = "approve", "passed quality control"
        elif w.constant:
            suggestion, reason = "reject", "gave every item the same score"
        elif w.test == "spam":
            suggestion, reason = "approve", "missed spam items, but not at random-clicking rate"
            if w.pairs:
                rate = spam_miss_rates.get(w.annotator_id)
                if rate is not None and rate >= REJECT_SPAM_MISS_RATE:
                    suggestion, reason = "reject", f"missed {rate:.0%} of spam items (random clicking)"
        elif w.p_value is not None and w.pairs >= REJECT_MIN_PAIRS and w.p_value >= REJECT_P_VALUE:
            suggestion, reason = "reject", (f"bad references not scored lower than their originals "
                                            f"(p = {w.p_value:.2f} over {w.pairs} pairs): random clicking")
        else:
            suggestion, reason = "approve", "below the reliability threshold, but no sign of random clicking"
        rows.append({"worker": w.worker, "hits": w.hits, "judgments": w.judgments, "pairs": w.pairs,
                     "p_value": w.p_value, "reliable": w.reliable, "suggestion": suggestion, "reason": reason})
    tested = {w.annotator_id for w in WorkerResult.objects.filter(campaign=campaign).only("annotator_id")}
    rows += _untested_finishers(campaign, tested)
    return sorted(rows, key=lambda r: r["worker"])


def _untested_finishers(campaign: Campaign, tested: set[int]) -> list[dict]:
    """Workers who finished a HIT but have no quality-control result (a family without a reliability test, such as
    constituent acceptance or a reading-comprehension stage, or results not computed yet): they are paid too, so
    the list to pay from names them, approved for their finished HITs."""
    finished = (Assignment.objects.filter(campaign=campaign, status=Assignment.Status.COMPLETED)
                .exclude(annotator_id__in=tested).values("annotator_id")
                .annotate(hits=Count("id")).values_list("annotator_id", "hits"))
    hits = dict(finished)
    if not hits:
        return []
    judgments = dict(Judgment.objects.filter(campaign=campaign, annotator_id__in=hits).values("annotator_id")
                     .annotate(n=Count("id")).values_list("annotator_id", "n"))
    annotators = Annotator.objects.filter(pk__in=hits).select_related("user")
    return [{"worker": a.label, "hits": hits[a.pk], "judgments": judgments.get(a.pk, 0), "pairs": 0, "p_value": None,
             "reliable": None, "suggestion": "approve",
             "reason": "finished the HIT; no quality-control test covers this worker's judgments"}
            for a in annotators]
