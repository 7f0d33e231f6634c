"""Computing results: the campaign's family's analysis (over its whole study when it has one), then the
progress timeline every family shows, and the results' data state.

Too little data is a state, not a failure (docs/api.md §6.1): what a family raises for a pilot's data
(`TOO_LITTLE_DATA`: NotEnoughData, BadQuery such as error spans' NothingRanked) is caught here, once for every
family, and stored as `summary["data_state"]` = {"status": "not_enough_data", "missing": [{"what", "text"}]}; a
run that stored results asks the family what they still lack (`Family.missing`) and stores "ready" when nothing.
Any other exception is a real failure and propagates (the task fails, `manage.py compute_results` exits 1)."""
from django.db import transaction
from django.db.models import Max

from annotation.models import Campaign, Judgment
from annotation.services.stages import task_campaign_ids
from annotation.services.trials import trial_summary

from .families import NO_FAMILY, TOO_LITTLE_DATA, family_of
from .families.base import scope_campaigns
from .models import CampaignResults
from .parts import compute_parts
from .services.progress import progress_timeline
from .services.storing import replace_results

READY, NOT_ENOUGH_DATA = "ready", "not_enough_data"
NOTHING_COUNTED = ("no judgment the analysis counts yet (some protocols count finished HITs, or a later stage's "
                   "answers, only): finish a HIT")


def compute_results(campaign: Campaign):
    """Compute and store the campaign's results; when it belongs to a study, the results of every campaign of
    the study in the same family (a worker's reliability is judged over the study). The campaign's stored
    header, or None when there is nothing to analyse."""
    family = family_of(campaign)
    try:
        if campaign.study_id is None:
            headers = {campaign.pk: family.compute(campaign)}
        else:
            headers = family.compute_study(scope_campaigns(campaign, "study"))
    except TOO_LITTLE_DATA as exc:
        headers, reason = {campaign.pk: _store_too_little(campaign)}, str(exc).strip() or "too little data"
    else:
        reason = None
        if headers.get(campaign.pk) is None and family is not NO_FAMILY and campaign.stage_input_id is None:
            # Judgments, but none the analysis counts yet (e.g. no finished HIT of a staged protocol): a state too.
            headers[campaign.pk] = _store_too_little(campaign)
            reason = NOTHING_COUNTED
    for pk, header in headers.items():
        if header is not None:
            parts = compute_parts(header.campaign)  # after the family, whose run replaced every stored table
            progress = progress_timeline(header.campaign, header.last_judgment_id)
            state = ({"status": NOT_ENOUGH_DATA, "missing": [{"what": "data", "text": reason}]} if reason
                     else data_state(family, header))
            headers[pk] = _note(header, progress, state, parts)
    return headers.get(campaign.pk)


def _note(header: CampaignResults, progress: dict, state: dict, parts: list[str]) -> CampaignResults:
    """Store the progress, the data state and the result parts computed (evaluation/parts.py) on the header, merged
    into the summary as it is now in the database (a task the analysis started, such as ranking's TrueSkill
    bootstrap, may have written to it meanwhile). The header's `judgments` become the progress chart's last count:
    every judgment stored up to the one the results cover, of every stage of a multi-stage task, so the page's
    "over N judgments" and its chart count the same thing (each family's own notes say which of them it counts)."""
    with transaction.atomic():
        fresh = CampaignResults.objects.select_for_update().get(pk=header.pk)
        trials = trial_summary(task_campaign_ids(fresh.campaign))  # "Try as a worker" work counted, for the page
        fresh.progress, fresh.summary = progress, {**fresh.summary, "data_state": state, "parts": parts,
                                                   "trials": trials}
        fresh.judgments = progress["judgments"][-1] if progress["judgments"] else 0
        fresh.save(update_fields=["progress", "summary", "judgments"])
    return fresh


def data_state(family, header: CampaignResults) -> dict:
    """"ready", or "not_enough_data" with what the stored results still lack."""
    missing = family.missing(header.campaign, header)
    return {"status": NOT_ENOUGH_DATA if missing else READY, "missing": missing}


def _store_too_little(campaign: Campaign) -> CampaignResults | None:
    """A run whose family found too little data: its earlier tables go (they described other data), and the header
    records the judgments seen; None when there is no judgment at all."""
    seen = Judgment.objects.filter(campaign=campaign).aggregate(n=Max("id"))["n"]
    if seen is None:
        return None
    judgments = Judgment.objects.filter(campaign=campaign, id__lte=seen).count()
    return replace_results(campaign, {}, {"seconds": 0.0, "judgments": judgments, "last_judgment_id": seen,
                                          "summary": {}, "agreement": {}})
