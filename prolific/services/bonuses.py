"""Bonuses from the study's rule (docs/methods.md §10): each approved submission of a worker the results judge
reliable earns `bonus_share` × the campaign's payment per HIT (one submission is one HIT), rounded to the cent.
Paid through Prolific's two steps, each an action done once: set up the bulk bonus payment (POST
/submissions/bonus-payments/, harmless if repeated: nothing is paid), then pay that one (POST
/bulk-bonus-payments/{id}/pay/, not idempotent: before a repeat, the submissions are read to see whether it paid)."""
from __future__ import annotations

import hashlib
from decimal import ROUND_HALF_UP, Decimal

from evaluation.models import WorkerResult

from ..actions import perform
from ..client import Client
from ..models import ProlificStudy


def bonus_amounts(study: ProlificStudy) -> dict[str, Decimal]:
    """Participant id -> bonus still to pay, by the rule, for approved submissions without a bonus."""
    share = Decimal(study.bonus_share or 0)
    amount = (Decimal(study.campaign.payment_per_hit or 0) * share).quantize(Decimal("0.01"), ROUND_HALF_UP)
    if amount <= 0:
        return {}
    reliable = set(WorkerResult.objects.filter(campaign=study.campaign, reliable=True)
                   .values_list("annotator__external_id", flat=True))
    owed: dict[str, Decimal] = {}
    for pid in study.submissions.filter(status="APPROVED", bonus__isnull=True, participant_id__in=reliable,
                                        assignment__status="completed").values_list("participant_id", flat=True):
        owed[pid] = owed.get(pid, Decimal(0)) + amount
    return owed


def pay_bonuses(study: ProlificStudy, client: Client) -> dict[str, Decimal]:
    """Pay what `bonus_amounts` owes; the amounts paid, by participant."""
    owed = bonus_amounts(study)
    if not owed:
        return {}
    csv = "\n".join(f"{pid},{amount}" for pid, amount in sorted(owed.items()))
    digest = hashlib.sha256(csv.encode()).hexdigest()[:16]
    setup_body = {"study_id": study.prolific_id, "csv_bonuses": csv}
    setup = perform(study, f"bonus-setup:{study.pk}:{digest}", "bonus-setup", setup_body,
                    lambda a: client.call("POST", "submissions/bonus-payments/", setup_body, action=a))
    bulk = setup.result["id"]

    def paid() -> dict | None:
        listing = client.call("GET", f"studies/{study.prolific_id}/submissions/")
        bonused = {r["participant_id"] for r in listing.get("results", []) if r.get("bonus_payments")}
        return {"checked": "paid"} if set(owed) <= bonused else None

    perform(study, f"bonus-pay:{bulk}", "bonus-pay", {},
            lambda a: client.call("POST", f"bulk-bonus-payments/{bulk}/pay/", None, action=a, idempotent=False,
                                  already_done=paid))
    for pid, amount in owed.items():
        study.submissions.filter(participant_id=pid, status="APPROVED", bonus__isnull=True).update(bonus=amount)
    return owed
