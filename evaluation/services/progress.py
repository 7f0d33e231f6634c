"""Progress counts of campaigns, a fixed number of grouped queries for any number of campaigns."""
from django.db.models import Count, Max, Min, Q
from django.db.models.functions import TruncDay, TruncHour

from annotation.models import Assignment, Campaign, Hit, Judgment


def campaign_counts(campaigns: list[Campaign]) -> dict[int, dict]:
    """Per campaign id: HITs total / with an active worker / done by all their workers, assignments, judgments."""
    ids = [c.pk for c in campaigns]
    redundancy = {c.pk: c.redundancy for c in campaigns}
    counts = {pk: {"hits_total": 0, "hits_assigned": 0, "hits_done": 0, "assignments_active": 0,
                   "assignments_done": 0, "judgments": 0} for pk in ids}
    for row in Hit.objects.filter(campaign_id__in=ids).values("campaign_id").annotate(n=Count("pk")):
        counts[row["campaign_id"]]["hits_total"] = row["n"]
    per_hit = (
        Assignment.objects.filter(campaign_id__in=ids)
        .values("campaign_id", "hit_id")
        .annotate(active=Count("pk", filter=Q(status=Assignment.Status.ACTIVE)),
                  done=Count("pk", filter=Q(status=Assignment.Status.COMPLETED)))
    )
    for row in per_hit:
        entry = counts[row["campaign_id"]]
        entry["assignments_active"] += row["active"]
        entry["assignments_done"] += row["done"]
        entry["hits_assigned"] += row["active"] > 0
        entry["hits_done"] += row["done"] >= redundancy[row["campaign_id"]]
    for row in Judgment.objects.filter(campaign_id__in=ids).values("campaign_id").annotate(n=Count("pk")):
        counts[row["campaign_id"]]["judgments"] = row["n"]
    return counts


def progress_timeline(campaign: Campaign) -> dict:
    """Cumulative judgments and finished assignments per hour (per day past two days), two grouped queries."""
    judgments = Judgment.objects.filter(campaign=campaign)
    span = judgments.aggregate(first=Min("created_at"), last=Max("created_at"))
    if span["first"] is None:
        return {"bucket": "hour", "times": [], "judgments": [], "hits_done": []}
    daily = (span["last"] - span["first"]).total_seconds() > 2 * 86400
    trunc, bucket = (TruncDay, "day") if daily else (TruncHour, "hour")
    made = dict(judgments.annotate(t=trunc("created_at")).values("t").annotate(n=Count("pk")).values_list("t", "n"))
    done = dict(Assignment.objects.filter(campaign=campaign, status=Assignment.Status.COMPLETED,
                                          completed_at__isnull=False)
                .annotate(t=trunc("completed_at")).values("t").annotate(n=Count("pk")).values_list("t", "n"))
    times = sorted(set(made) | set(done))
    cumulative_judgments, cumulative_done, j, d = [], [], 0, 0
    for t in times:
        j += made.get(t, 0)
        d += done.get(t, 0)
        cumulative_judgments.append(j)
        cumulative_done.append(d)
    return {"bucket": bucket, "times": [t.isoformat() for t in times], "judgments": cumulative_judgments,
            "hits_done": cumulative_done}
