"""Progress over time of a campaign, two grouped queries (counts per campaign: annotation.services.progress)."""
from django.db.models import Count, Max, Min
from django.db.models.functions import TruncDay, TruncHour

from annotation.models import Assignment, Campaign, Judgment
from annotation.services.stages import task_campaign_ids


def progress_timeline(campaign: Campaign, last_judgment_id: int | None = None) -> dict:
    """Cumulative judgments and finished assignments per hour (per day past two days), two grouped queries: every
    judgment stored (quality-control items and unfinished HITs included) up to `last_judgment_id`, the one the
    results cover, so that the chart ends where the page's "over N judgments" does; for a multi-stage task, every
    stage's judgments and assignments."""
    ids = task_campaign_ids(campaign)
    judgments = Judgment.objects.filter(campaign_id__in=ids)
    if last_judgment_id is not None:
        judgments = judgments.filter(id__lte=last_judgment_id)
    span = judgments.aggregate(first=Min("created_at"), last=Max("created_at"))
    if span["first"] is None:
        return {"bucket": "hour", "times": [], "judgments": [], "hits_done": []}
    daily = (span["last"] - span["first"]).total_seconds() > 2 * 86400
    trunc, bucket = (TruncDay, "day") if daily else (TruncHour, "hour")
    made = dict(judgments.annotate(t=trunc("created_at")).values("t").annotate(n=Count("pk")).values_list("t", "n"))
    done = dict(Assignment.objects.filter(campaign_id__in=ids,
                                          status=Assignment.Status.COMPLETED,
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
