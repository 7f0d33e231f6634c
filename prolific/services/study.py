"""A campaign's draft study on Prolific, and publishing it (docs/api.md "Prolific", docs/methods.md §10).

Places are HITs × redundancy: one Prolific submission is one HIT. The reward is the campaign's `payment_per_hit` in
the minor unit (pence/cents), refused when it pays less per hour than Prolific's minimum at the campaign's median
seconds per finished HIT (before any: the study's estimate, or HIT size × PROLIFIC_SECONDS_PER_ITEM_ESTIMATE), and
warned about below Prolific's recommended rate. Three completion codes, one per outcome, each mapped to Prolific's
actions: completed (manual review), stopped by the live gate (manual review, and into the exclusion group) and timed
out (Prolific asks the participant to return the submission)."""
from __future__ import annotations

import math
import secrets
import statistics
from dataclasses import dataclass
from decimal import Decimal
from urllib.parse import urlencode

from django.conf import settings
from django.db.models import F
from django.utils import timezone

from annotation.models import Assignment, Campaign

from ..actions import perform
from ..client import Client, ProlificError
from ..models import ProlificAccount, ProlificStudy
from .screening import ensure_exclusion_group

#: Where Prolific sends a participant who has a code (the campaign's completion URL when it has none).
COMPLETION_URL = "https://app.prolific.com/submissions/complete?cc={code}"
#: The outcomes a worker can end with, and their codes' type on Prolific.
CODE_TYPES = {"completed": "COMPLETED", "gated": "FAILED_ATTENTION_CHECK", "timed_out": "OTHER"}
TIMED_OUT_RETURN_REASON = "You were idle longer than the HIT's time limit, so the HIT went to someone else."


class StudyRefused(Exception):
    """The study cannot be created or published as it stands; the message says why and what to change."""


@dataclass(frozen=True)
class Payment:
    reward: int  # per place, pence/cents
    seconds: float  # per HIT
    measured: bool  # the median of finished HITs (else an estimate)
    hourly: float  # pence/cents per hour
    warning: str = ""


def median_seconds(campaign: Campaign) -> float | None:
    """The median seconds from taking a HIT to finishing it over the campaign's finished HITs; None if none."""
    spans = list(Assignment.objects.filter(campaign=campaign, status=Assignment.Status.COMPLETED,
                                           completed_at__isnull=False)
                 .annotate(span=F("completed_at") - F("started_at")).values_list("span", flat=True))
    return statistics.median(s.total_seconds() for s in spans) if spans else None


def payment(study: ProlificStudy) -> Payment:
    """The reward per place and its hourly rate; raises StudyRefused below Prolific's minimum hourly reward."""
    campaign = study.campaign
    reward = int((Decimal(campaign.payment_per_hit or 0) * 100).to_integral_value())
    measured = median_seconds(campaign)
    if measured is not None:
        seconds = measured
    elif study.estimated_minutes:
        seconds = study.estimated_minutes * 60.0
    else:
        seconds = campaign.hit_size * settings.PROLIFIC_SECONDS_PER_ITEM_ESTIMATE
    seconds = max(seconds, 1.0)
    hourly = reward * 3600.0 / seconds
    basis = (f"the median of finished HITs, {seconds / 60:.1f} min" if measured is not None
             else f"an estimate of {seconds / 60:.1f} min per HIT")
    if reward <= 0:
        raise StudyRefused("The campaign's payment per HIT is 0: set it before creating a Prolific study.")
    if hourly < settings.PROLIFIC_MIN_HOURLY_REWARD:
        needed = math.ceil(settings.PROLIFIC_MIN_HOURLY_REWARD * seconds / 3600.0)
        raise StudyRefused(f"A payment of {reward / 100:.2f} per HIT is {hourly / 100:.2f} per hour at {basis}, "
                           f"below Prolific's minimum of {settings.PROLIFIC_MIN_HOURLY_REWARD / 100:.2f} per hour: pay "
                           f"at least {needed / 100:.2f} per HIT.")
    warning = ""
    if hourly < settings.PROLIFIC_RECOMMENDED_HOURLY_REWARD:
        warning = (f"{hourly / 100:.2f} per hour at {basis} is below Prolific's recommended "
                   f"{settings.PROLIFIC_RECOMMENDED_HOURLY_REWARD / 100:.2f}.")
    return Payment(reward, seconds, measured is not None, hourly, warning)


def entry_url(base: str) -> str:
    """The crowd link with Prolific's placeholders, which Prolific fills in per participant."""
    query = urlencode({"PROLIFIC_PID": "{{%PROLIFIC_PID%}}", "STUDY_ID": "{{%STUDY_ID%}}",
                       "SESSION_ID": "{{%SESSION_ID%}}"}, safe="{}%")
    return f"{base}?{query}"


def new_codes(campaign: Campaign) -> dict:
    """A code per outcome; the completed one is the campaign's fixed completion code when it has one."""
    codes = {outcome: "C" + secrets.token_hex(4).upper() for outcome in CODE_TYPES}
    codes["completed"] = campaign.completion_code or codes["completed"]
    return codes


def completion_codes(codes: dict, exclusion_group: str) -> list[dict]:
    """Prolific's `completion_codes`: the code per outcome with its actions."""
    gated = [{"action": "MANUALLY_REVIEW"}]
    if exclusion_group:
        gated.append({"action": "ADD_TO_PARTICIPANT_GROUP", "participant_group": exclusion_group})
    actions = {"completed": [{"action": "MANUALLY_REVIEW"}], "gated": gated,
               "timed_out": [{"action": "REQUEST_RETURN", "return_reason": TIMED_OUT_RETURN_REASON}]}
    return [{"code": codes[o], "code_type": CODE_TYPES[o], "actor": "participant", "actions": actions[o]}
            for o in CODE_TYPES]


def study_body(study: ProlificStudy, pay: Payment, exclusion_group: str) -> dict:
    """The body of POST /studies/ (docs/api.md lists each field)."""
    campaign = study.campaign
    body = {
        "name": study.name,
        "internal_name": internal_name(study),
        "description": study.description,
        "external_study_url": study.entry_url,
        "prolific_id_option": "url_parameters",
        "completion_codes": completion_codes(study.codes, exclusion_group),
        "total_available_places": campaign.hits.count() * campaign.redundancy,
        "estimated_completion_time": max(1, math.ceil(pay.seconds / 60)),
        "maximum_allowed_time": max(campaign.hit_timeout_minutes, math.ceil(pay.seconds / 60) * 3),
        "reward": pay.reward,
        "device_compatibility": list(study.devices) or ["desktop"],
        "filters": [],
    }
    if exclusion_group:
        body["filters"].append({"filter_id": "participant_group_blocklist", "selected_values": [exclusion_group]})
    return body


def internal_name(study: ProlificStudy) -> str:
    """Names the study on Prolific after this record, so a create whose answer was lost is found, not repeated."""
    return f"mteval:{study.campaign.slug}:{study.pk}"


def client_for(study: ProlificStudy) -> Client:
    account = ProlificAccount.objects.filter(user=study.owner).first()
    token = account.token() if account else None
    if not token:
        raise StudyRefused(f"{study.owner} has no Prolific API token set (Prolific accounts in the admin).")
    return Client(token)


def create_draft(study: ProlificStudy) -> ProlificStudy:
    """Create the draft study on Prolific (once: action "create:<study>"), and point the campaign's completion code
    and URL at it."""
    if study.status != ProlificStudy.Status.NEW:
        return study
    campaign = study.campaign
    if not campaign.hits.exists():
        raise StudyRefused("The campaign has no HITs to offer.")
    pay = payment(study)
    client = client_for(study)
    if not study.codes:
        study.codes = new_codes(campaign)
        study.save(update_fields=["codes"])
    body = study_body(study, pay, ensure_exclusion_group(study, client))

    def find_created() -> dict | None:
        listing = client.call("GET", "studies/")
        return next((s for s in listing.get("results", []) if s.get("internal_name") == body["internal_name"]), None)

    action = perform(study, f"create:{study.pk}", "create-study", body,
                     lambda a: client.call("POST", "studies/", body, action=a, idempotent=False,
                                           already_done=find_created))
    study.prolific_id = action.result["id"]
    study.status, study.reward, study.places = ProlificStudy.Status.DRAFT, pay.reward, body["total_available_places"]
    study.problem = pay.warning
    study.save(update_fields=["prolific_id", "status", "reward", "places", "problem"])
    campaign.completion_code = study.codes["completed"]
    campaign.completion_url = campaign.completion_url or COMPLETION_URL
    campaign.save(update_fields=["completion_code", "completion_url"])
    return study


def publish(study: ProlificStudy) -> ProlificStudy:
    """Publish the draft (once: action "publish:<study>"); Prolific's transition is idempotent."""
    if study.status == ProlificStudy.Status.PUBLISHED:
        return study
    if study.status != ProlificStudy.Status.DRAFT:
        raise StudyRefused("Create the draft study first.")
    client = client_for(study)
    body = {"action": "PUBLISH"}
    perform(study, f"publish:{study.pk}", "publish-study", body,
            lambda a: client.call("POST", f"studies/{study.prolific_id}/transition/", body, action=a))
    study.status, study.published_at, study.problem = ProlificStudy.Status.PUBLISHED, timezone.now(), ""
    study.save(update_fields=["status", "published_at", "problem"])
    return study


def record_problem(study: ProlificStudy, exc: Exception) -> None:
    """Keep why a step failed, for the admin page."""
    study.problem = str(exc)[:2000] if not isinstance(exc, ProlificError) else f"Prolific refused: {exc}"
    ProlificStudy.objects.filter(pk=study.pk).update(problem=study.problem)
