"""The Prolific cycle end to end against the local fake server (tests/prolific/fake.py; docs/api.md "Prolific"):
create → publish → ten workers arrive with Prolific's parameters and do the HIT through the annotator API (one
clicks at random and is gated, one times out) → sync → bulk approve / reject with reasons → bonuses → the gated
worker in the exclusion group → every call and retry logged → a 429 and a 500 in the middle survived with no
duplicate action. Tasks run in the caller (settings_test: PROLIFIC_INLINE_WHEN_EAGER)."""
import json
import random
from decimal import Decimal

import pytest
from django.test import Client

from annotation.models import Annotator, Assignment, HitItem
from annotation.services import assignment as assigning
from evaluation.analyses import compute_results
from evaluation.models import WorkerGate
from prolific import tasks
from prolific.models import ProlificAccount, ProlificAction, ProlificCall, ProlificStudy, ProlificSubmission
from prolific.services import review
from prolific.services.study import StudyRefused, payment

from ..simulation import Behaviour, score_for, true_quality
from .fake import TOKEN

QUALITY = {"sys-A": 78.0, "sys-B": 70.0, "sys-C": 62.0}


@pytest.fixture
def study(make_campaign, researcher):
    campaign = make_campaign(n_segments=35, systems=("sys-A", "sys-B"), redundancy=10, payment_per_hit=Decimal("2.50"),
                             options={"gate": True, "gate_min_pairs": 5})
    account = ProlificAccount(user=researcher)
    account.set_token(TOKEN)
    account.save()
    return ProlificStudy.objects.create(
        campaign=campaign, owner=researcher, name="Rate translations", description="Rate 100 translations.",
        entry_url=f"https://eval.example.org/c/{campaign.slug}/start/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
                  "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}",
        devices=["desktop"], estimated_minutes=12, bonus_share=Decimal("0.20"))


def run(task, study):
    return task.apply(args=(study.pk,)).get()


def arrive(fake, study, participant: str):
    """A participant opens the study on Prolific and follows its link: (browser, submission id, HIT token)."""
    submission = fake.start_submission(study.prolific_id, participant)
    browser = Client()
    response = browser.get(f"/c/{study.campaign.slug}/start/", {
        "PROLIFIC_PID": participant, "STUDY_ID": study.prolific_id, "SESSION_ID": submission["id"]})
    assert response.status_code == 302, response.content
    return browser, submission["id"], response["Location"].rstrip("/").split("/")[-1]


def answer(browser, token: str, behaviour: Behaviour, rng, limit: int | None = None) -> dict:
    state = browser.get(f"/api/hit/{token}/").json()
    items = {i.id: i for i in HitItem.objects.filter(hit__assignments__token=token).select_related("output__system")}
    done = 0
    while not state["done"] and (limit is None or done < limit):
        item = items[state["item"]["id"]]
        response = browser.post(f"/api/hit/{token}/", json.dumps(
            {"item": item.id, "score": score_for(behaviour, true_quality(item, QUALITY), rng)}),
            content_type="application/json")
        assert response.status_code == 201, response.content
        state, done = response.json(), done + 1
    return state


def test_the_whole_cycle(fake, study, django_capture_on_commit_callbacks):
    campaign, rng = study.campaign, random.Random(3)
    # Create: places are HITs × redundancy, the reward is the payment per HIT, three codes with their actions.
    assert "problem" not in run(tasks.create_draft, study)
    study.refresh_from_db()
    sent = fake.studies[study.prolific_id]
    assert study.status == "draft" and sent["status"] == "UNPUBLISHED"
    assert sent["total_available_places"] == campaign.hits.count() * 10 == 10
    assert sent["reward"] == 250 and sent["estimated_completion_time"] == 12
    assert {c["code_type"] for c in sent["completion_codes"]} == {"COMPLETED", "FAILED_ATTENTION_CHECK", "OTHER"}
    group = ProlificAccount.objects.get(user=study.owner).exclusion_group
    assert sent["filters"] == [{"filter_id": "participant_group_blocklist", "selected_values": [group]}]
    campaign.refresh_from_db()
    assert campaign.completion_code == study.codes["completed"]
    run(tasks.publish, study)
    study.refresh_from_db()
    assert study.status == "published" and fake.studies[study.prolific_id]["status"] == "ACTIVE"

    # Ten workers: eight careful, one who gives every item the same score (gated after the HIT), one who leaves mid-HIT.
    careful = [f"pid{n:02d}" for n in range(8)]
    sessions = {}
    for pid in careful + ["clicker"]:
        browser, sid, token = arrive(fake, study, pid)
        behaviour = Behaviour("constant") if pid == "clicker" else Behaviour("diligent", noise=4)
        with django_capture_on_commit_callbacks(execute=True):
            state = answer(browser, token, behaviour, rng)
        assert state["done"] and state["completion_code"] == study.codes["completed"]
        assert state["completion_url"] == f"https://app.prolific.com/submissions/complete?cc={study.codes['completed']}"
        fake.submit_code(sid, state["completion_code"])
        sessions[pid] = sid
    assert WorkerGate.objects.filter(campaign=campaign, annotator__external_id="clicker").exists()
    _, sessions["leaver"], leaver_token = arrive(fake, study, "leaver")
    leaver = Assignment.objects.get(token=leaver_token)
    fake.set_status(sessions["leaver"], "TIMED-OUT")
    compute_results(campaign)

    # Sync, with a 429 then a 500 on the way: the listing is retried after the wait Prolific asks for.
    fake.fail("GET", r"^studies/\w+/submissions/$", 429, retry_after=1)
    fake.fail("GET", r"^studies/\w+/submissions/$", 500)
    run(tasks.review_cycle, study)
    assert ProlificSubmission.objects.filter(study=study).count() == 10
    leaver.refresh_from_db()
    assert leaver.status == Assignment.Status.ABANDONED  # the timed-out submission freed its place
    rows = {r["submission"].participant_id: r for r in review.review_rows(study)}
    assert rows["clicker"]["verdict"] == "completed, then gated" and rows["clicker"]["suggestion"] == "reject"
    assert all(rows[p]["suggestion"] == "approve" for p in careful)
    assert rows["leaver"]["actionable"] is False and rows["leaver"]["verdict"] == "timed out"

    # The researcher decides in bulk; a rejection needs Prolific's category and 100 characters.
    with pytest.raises(review.DecisionRefused):
        review.decide(study, [sessions["clicker"]], "reject", study.owner, category="LOW_EFFORT", message="bad")
    assert review.decide(study, [sessions[p] for p in careful], "approve", study.owner) == 8
    assert review.decide(study, [sessions["clicker"]], "reject", study.owner, category="FAILED_CHECK",
                         message=rows["clicker"]["message"]) == 1
    # The bulk approve's answer is lost (done, then 500), and the bonus payment meets a 429 then a 500.
    fake.fail("POST", r"^submissions/bulk-approve/$", 500, after=True)
    fake.fail("POST", r"^bulk-bonus-payments/\w+/pay/$", 429, retry_after=1)
    fake.fail("POST", r"^bulk-bonus-payments/\w+/pay/$", 500, after=True)
    run(tasks.review_cycle, study)
    statuses = {s["participant_id"]: s["status"] for s in fake.submissions.values()}
    assert all(statuses[p] == "APPROVED" for p in careful) and statuses["clicker"] == "REJECTED"
    assert statuses["leaver"] == "TIMED-OUT"
    # Bonuses: 20 % of 2.50 to each reliable approved worker, paid once although the pay's answer was lost.
    assert {p: s["bonus_payments"] for p, s in ((s["participant_id"], s) for s in fake.submissions.values())
            if s["bonus_payments"]} == {p: [50] for p in careful}
    # Screening: the gated worker is in the exclusion group that the next study excludes.
    assert "clicker" in fake.groups[group]["members"] and not set(careful) & fake.groups[group]["members"]

    # A second run repeats nothing.
    run(tasks.review_cycle, study)
    assert max(fake.done.values()) == 1, fake.done
    assert sum(1 for k in fake.done if k[0] == "approve") == 8 and sum(1 for k in fake.done if k[0] == "bonus") == 8
    # Every call and its retries are in the log.
    calls = ProlificCall.objects.all()
    assert calls.count() == len(fake.requests)
    assert calls.filter(status=429).count() == 2 and calls.filter(status=500).count() == 3
    assert calls.filter(path="submissions/bulk-approve/", attempt=2, status=200).exists()
    assert not ProlificAction.objects.exclude(state="done").exists()


def test_the_payment_is_checked_against_prolifics_minimum(study):
    study.estimated_minutes = 60
    with pytest.raises(StudyRefused, match="below Prolific's minimum of 6.00 per hour: pay at least 6.00 per HIT"):
        payment(study)
    study.estimated_minutes = 20
    assert payment(study).warning.startswith("7.50 per hour")  # under the recommended 9.00


def test_a_wrong_token_is_refused_once_and_kept_as_the_problem(fake, study):
    account = ProlificAccount.objects.get(user=study.owner)
    account.set_token("wrong")
    account.save()
    assert run(tasks.create_draft, study).startswith("problem")
    study.refresh_from_db()
    assert study.status == "new" and "401" in study.problem and not fake.studies
    assert ProlificCall.objects.filter(status=401).count() == 1  # not retried


def test_a_lost_create_is_found_not_repeated(fake, study, settings):
    settings.PROLIFIC_TIMEOUT_SECONDS = 0.5
    fake.fail("POST", r"^studies/$", 500, after=True)
    run(tasks.create_draft, study)
    study.refresh_from_db()
    assert study.status == "draft" and len(fake.studies) == 1 and study.prolific_id in fake.studies
    fake.fail("POST", r"^studies/\w+/transition/$", 0, hang=1.0)
    run(tasks.publish, study)
    study.refresh_from_db()
    assert study.status == "published"
    assert ProlificCall.objects.filter(path__endswith="transition/", status__isnull=True).count() == 1


def test_a_blocked_worker_gets_the_gated_code(fake, study):
    run(tasks.create_draft, study)
    study.refresh_from_db()
    worker = Annotator.objects.create(external_id="blocked-one", source="prolific")
    assigning.block(study.campaign, worker)
    page = Client().get(f"/c/{study.campaign.slug}/start/", {"PROLIFIC_PID": "blocked-one", "STUDY_ID": "s",
                                                             "SESSION_ID": "x1"})
    assert page.status_code == 403 and study.codes["gated"].encode() in page.content
    assert f"cc={study.codes['gated']}".encode() in page.content
    # A worker whose HIT went to another after the idle timeout gets the timed-out code on the HIT's page.
    _, _, token = arrive(fake, study, "idle-one")
    Assignment.objects.filter(token=token).update(status=Assignment.Status.ABANDONED)
    page = Client().get(f"/hit/{token}/")
    assert page.status_code == 410 and f"cc={study.codes['timed_out']}".encode() in page.content


def test_places_are_freed_once_and_never_from_a_finished_hit(fake, study, django_capture_on_commit_callbacks):
    run(tasks.create_draft, study)
    run(tasks.publish, study)
    study.refresh_from_db()
    rng = random.Random(4)
    browser, finished_sid, token = arrive(fake, study, "finisher")
    with django_capture_on_commit_callbacks(execute=True):
        assert answer(browser, token, Behaviour("diligent"), rng)["done"]
    _, returned_sid, returned_token = arrive(fake, study, "returner")
    _, idle_sid, idle_token = arrive(fake, study, "idler")
    Assignment.objects.filter(token=idle_token).update(status=Assignment.Status.ABANDONED)  # the platform's timeout
    for sid in (finished_sid, returned_sid):
        fake.set_status(sid, "RETURNED")
    fake.set_status(idle_sid, "TIMED-OUT")
    hit = Assignment.objects.get(token=token).hit
    held_before = type(hit).objects.get(pk=hit.pk).held
    run(tasks.review_cycle, study)
    run(tasks.review_cycle, study)
    assert Assignment.objects.get(token=token).status == Assignment.Status.COMPLETED  # a finished HIT stays
    assert Assignment.objects.get(token=returned_token).status == Assignment.Status.ABANDONED
    assert Assignment.objects.get(token=idle_token).status == Assignment.Status.ABANDONED
    assert type(hit).objects.get(pk=hit.pk).held == held_before - 1  # only the returner's place, once
    assert set(ProlificSubmission.objects.filter(place_freed=True).values_list("submission_id", flat=True)) == {
        finished_sid, returned_sid, idle_sid}


def test_an_outage_keeps_the_decision_and_the_next_run_carries_it_out(fake, study, settings):
    settings.PROLIFIC_ATTEMPTS = 2
    run(tasks.create_draft, study)
    run(tasks.publish, study)
    study.refresh_from_db()
    submission = fake.start_submission(study.prolific_id, "p1")
    fake.submit_code(submission["id"], study.codes["completed"])
    run(tasks.review_cycle, study)
    review.decide(study, [submission["id"]], "approve", study.owner)
    fake.fail("POST", r"^submissions/bulk-approve/$", 503, times=2)
    assert run(tasks.review_cycle, study).startswith("problem")
    assert ProlificSubmission.objects.get(submission_id=submission["id"]).decision == "approve"
    assert tasks.unfinished_studies() == [study.pk]
    assert tasks.catch_up() == 1  # a reconnecting worker queues it; here it runs at once
    assert fake.submissions[submission["id"]]["status"] == "APPROVED" and tasks.unfinished_studies() == []
