"""Screening (docs/api.md "Prolific"): workers stopped by the live gate, or judged unreliable, join the researcher's
exclusion participant group on Prolific, which every study created later excludes (a `participant_group_blocklist`
filter), and which the gated completion code also adds to."""
from __future__ import annotations

import hashlib

from annotation.models import Annotator
from evaluation.models import WorkerGate, WorkerResult

from ..actions import perform
from ..client import Client
from ..models import ProlificAccount, ProlificStudy


def ensure_exclusion_group(study: ProlificStudy, client: Client) -> str:
    """The owner's exclusion group on Prolific, created once (action "group:<user>")."""
    account, _ = ProlificAccount.objects.get_or_create(user=study.owner)
    if account.exclusion_group:
        return account.exclusion_group
    name = f"mteval exclusions ({study.owner.get_username()})"
    body = {"name": name, "description": "Workers stopped by the reliability gate or judged unreliable."}

    def find() -> dict | None:
        listing = client.call("GET", "participant-groups/")
        return next((g for g in listing.get("results", []) if g.get("name") == name), None)

    action = perform(study, f"group:{study.owner_id}", "create-group", body,
                     lambda a: client.call("POST", "participant-groups/", body, action=a, idempotent=False,
                                           already_done=find))
    account.exclusion_group = action.result["id"]
    account.save(update_fields=["exclusion_group"])
    return account.exclusion_group


def excluded_participants(study: ProlificStudy) -> list[str]:
    """Prolific ids of the study's workers who were gated (gate not lifted) or judged unreliable, sorted."""
    campaign = study.campaign
    ids = set(study.submissions.values_list("participant_id", flat=True))
    gated = WorkerGate.objects.filter(campaign=campaign, lifted_at__isnull=True).values_list("annotator_id", flat=True)
    unreliable = WorkerResult.objects.filter(campaign=campaign, reliable=False).values_list("annotator_id", flat=True)
    workers = Annotator.objects.filter(pk__in=[*gated, *unreliable], external_id__in=ids)
    return sorted(workers.values_list("external_id", flat=True))


def screen(study: ProlificStudy, client: Client) -> list[str]:
    """Add the excluded workers to the exclusion group (once per list: action "exclude:<group>:<hash>")."""
    participants = excluded_participants(study)
    if not participants:
        return []
    group = ensure_exclusion_group(study, client)
    body = {"participant_ids": participants}
    digest = hashlib.sha256(",".join(participants).encode()).hexdigest()[:16]
    perform(study, f"exclude:{group}:{digest}", "exclude", body,
            lambda a: client.call("POST", f"participant-groups/{group}/participants/", body, action=a))
    return participants
