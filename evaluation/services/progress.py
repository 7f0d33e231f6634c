"""Progress over time of a campaign, two grouped queries (counts per campaign: annotation.services.progress)."""
from django.db.models import Count, Max, Min
from django.db.models.functions import TruncDay, TruncHour

from annotation.models import Assignment, Campaign, Judgment


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
