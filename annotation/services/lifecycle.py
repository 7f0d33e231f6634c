"""A campaign's lifecycle (draft → active ⇄ paused → closed) in one place, used by the admin's buttons and actions
and the API's status action (docs/api.md §9). A multi-stage task is one unit: publishing, pausing or closing any
of its stages does the same to every stage, so a later stage opens with its first stage and accepts workers as soon
as its input has built HITs (services/stages.py); until then its crowd link says it waits for the earlier stage."""
from __future__ import annotations

from django.db import transaction

from ..models import Campaign
from .stages import task_stages


class AnalysisOnly(ValueError):
    """An analysis-only campaign (imported judgments) has no lifecycle: it stays closed."""


def set_status(campaign: Campaign, status: str) -> list[Campaign]:
    """Give `status` to the campaign's whole task (the campaign itself when it is one stage); the stages changed,
    first stage first. Raises AnalysisOnly for an analysis-only campaign and ValueError for an unknown status."""
    if status not in Campaign.Status.values:
        raise ValueError(f"unknown status {status!r}")
    if campaign.analysis_only:
        raise AnalysisOnly(f"{campaign.name} holds imported judgments only; its status stays as it is")
    stages = task_stages(campaign)
    with transaction.atomic():
        Campaign.objects.filter(pk__in=[s.pk for s in stages]).update(status=status)
    for stage in stages:
        stage.status = status
    if campaign.pk in {s.pk for s in stages}:
        campaign.status = status
    return stages


def set_status_of_many(campaigns, status: str) -> tuple[list[Campaign], int]:
    """`set_status` for each task among `campaigns` once (a task named by several of its stages counts once); the
    stages changed and how many analysis-only campaigns were left as they were."""
    changed, seen, skipped = [], set(), 0
    for campaign in campaigns:
        if campaign.analysis_only:
            skipped += 1
        elif campaign.pk not in seen:
            stages = set_status(campaign, status)
            seen.update(s.pk for s in stages)
            changed += stages
    return changed, skipped


def status_message(campaign: Campaign, stages: list[Campaign]) -> str:
    """'<name> is now active.', naming the later stages that changed with it."""
    label = Campaign.Status(campaign.status).label.lower()
    others = [s.stage_name or s.name for s in stages if s.pk != campaign.pk]
    if not others:
        return f"{campaign.name} is now {label}."
    return f"{campaign.name} is now {label}, with every stage of its task ({', '.join(others)})."
