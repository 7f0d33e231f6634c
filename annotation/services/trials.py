"""A researcher trying their own campaign as a worker ("Try as a worker" on the admin's campaign page; docs/api.md
§8.1). Each try enters with a fresh test worker id, `trial-<user id>-<8 hex>` (`Annotator.source` "trial"), so a lone
researcher is never stopped by the crowd protections meant for many workers: no per-address limits, no browser
binding, no entry rate limit, no qualification question, and a draft campaign can be tried before Publish. The
crowd link keeps every limit. A trial's judgments are stored like any worker's (the HIT screen, its checks and its
completion are the real ones); the results page names the trial workers and what they judged, so the researcher
can tell them apart, and a trial never redirects to the campaign's completion URL (it carries no market entry)."""
from __future__ import annotations

import secrets

from django.db.models import Count

from ..models import Annotator, Campaign, Judgment
from ..ownership import is_owner, is_superuser

TRIAL_SOURCE = "trial"
TRIAL_PREFIX = "trial-"


def may_try(user, campaign: Campaign) -> bool:
    """The campaign's owner (or a superuser) may try it; a researcher it is only shared with may not, since a trial
    stores judgments in it."""
    return not campaign.analysis_only and (is_owner(user, campaign) or is_superuser(user))


def triable(campaign: Campaign) -> bool:
    """A draft (before Publish) or an open campaign; a paused or closed one hands out nothing, trials included."""
    return campaign.status in (Campaign.Status.DRAFT, Campaign.Status.ACTIVE)


def works_in_draft(assignment) -> bool:
    """Whether the HIT is a trial's in a draft campaign, which it may work in before Publish (no crowd HIT exists
    in a draft). One query, asked only of a draft campaign's HIT."""
    return (assignment.campaign.status == Campaign.Status.DRAFT
            and Annotator.objects.filter(pk=assignment.annotator_id, source=TRIAL_SOURCE).exists())


def trial_worker(user, campaign: Campaign) -> Annotator:
    """A new, unsaved test worker for `user` (saved with the HIT it is given), who qualifies for the campaign."""
    return Annotator(external_id=f"{TRIAL_PREFIX}{user.pk}-{secrets.token_hex(4)}", source=TRIAL_SOURCE,
                     native_language=campaign.required_native_language or "")


def trial_summary(campaign_ids: list[int]) -> dict:
    """The trial workers of the given campaigns (a task's stages) and their judgments, for the results page."""
    workers = dict(Judgment.objects.filter(campaign_id__in=campaign_ids, annotator__source=TRIAL_SOURCE)
                   .values("annotator__external_id").annotate(n=Count("pk")).order_by()
                   .values_list("annotator__external_id", "n"))
    return {"workers": sorted(workers), "judgments": sum(workers.values())}
