"""How far campaigns have got: HITs, assignments and judgments, in three grouped queries for any number of
campaigns (the admin's campaign list and campaign page)."""
from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count, Q

from ..models import Assignment, Campaign, Hit, Judgment

EMPTY = {"hits_total": 0, "hits_assigned": 0, "hits_done": 0, "assignments_active": 0, "assignments_done": 0,
         "places_done": 0, "places_total": 0, "judgments": 0}


def campaign_counts(campaigns: Iterable[Campaign]) -> dict[int, dict]:
    """Per campaign id: HITs in total, with a worker on them now (`hits_assigned`) and done by as many workers
    as the redundancy asks (`hits_done`); active and completed assignments; places (HITs × redundancy: one
    place is one worker finishing a HIT), in all and done (a HIT's finished assignments up to the redundancy, so
    a HIT done by more workers than asked makes up for no other); judgments."""
    campaigns = list(campaigns)
    ids = [c.pk for c in campaigns]
    redundancy = {c.pk: c.redundancy for c in campaigns}
    counts = {pk: dict(EMPTY) for pk in ids}
    if not ids:
        return counts
    for row in Hit.objects.filter(campaign_id__in=ids).values("campaign_id").annotate(n=Count("pk")).order_by():
        counts[row["campaign_id"]]["hits_total"] = row["n"]
        counts[row["campaign_id"]]["places_total"] = row["n"] * redundancy[row["campaign_id"]]
    per_hit = (
        Assignment.objects.filter(campaign_id__in=ids)
        .values("campaign_id", "hit_id")
        .annotate(active=Count("pk", filter=Q(status=Assignment.Status.ACTIVE)),
                  done=Count("pk", filter=Q(status=Assignment.Status.COMPLETED)))
        .order_by()
    )
    for row in per_hit:
        entry = counts[row["campaign_id"]]
        entry["assignments_active"] += row["active"]
        entry["assignments_done"] += row["done"]
        entry["hits_assigned"] += row["active"] > 0
        entry["hits_done"] += row["done"] >= redundancy[row["campaign_id"]]
        entry["places_done"] += min(row["done"], redundancy[row["campaign_id"]])
    for row in Judgment.objects.filter(campaign_id__in=ids).values("campaign_id").annotate(n=Count("pk")).order_by():
        counts[row["campaign_id"]]["judgments"] = row["n"]
    return counts
