"""The Prolific admin (prolific/admin.py): the token is write-only and stored encrypted; create and publish ask for
a confirmation and run as tasks; the review page stores a bulk decision after one confirmation, and refuses a
rejection without Prolific's category or 100 characters with a 400 and nothing stored."""
from decimal import Decimal

import pytest
from django.test import Client

from prolific.models import ProlificAccount, ProlificStudy, ProlificSubmission

from .fake import TOKEN


@pytest.fixture
def browser(researcher):
    return signed_in(researcher)


def signed_in(user) -> Client:
    """A browser session of `user` in the admin."""
    session = Client()
    session.force_login(user)
    return session


def test_the_token_is_write_only_and_encrypted(browser, researcher):
    response = browser.post("/admin/prolific/prolificaccount/add/", {"token": TOKEN})
    assert response.status_code == 302
    account = ProlificAccount.objects.get(user=researcher)
    assert account.token() == TOKEN and TOKEN not in account.token_encrypted
    page = browser.get(f"/admin/prolific/prolificaccount/{account.pk}/change/")
    assert TOKEN.encode() not in page.content and b"set" in page.content
    browser.post(f"/admin/prolific/prolificaccount/{account.pk}/change/", {"token": ""})
    account.refresh_from_db()
    assert account.token() == TOKEN  # blank keeps it


def test_create_publish_and_review_from_the_admin(fake, browser, researcher, make_campaign,
                                                   django_capture_on_commit_callbacks):
    def post(url, data):  # the tasks the admin queues after its commit run at once here
        with django_capture_on_commit_callbacks(execute=True):
            return browser.post(url, data)

    campaign = make_campaign(redundancy=3, payment_per_hit=Decimal("3.00"))
    browser.post("/admin/prolific/prolificaccount/add/", {"token": TOKEN})
    response = browser.post("/admin/prolific/prolificstudy/add/", {
        "campaign": campaign.pk, "name": "Rate translations", "description": "Rate 100 translations.",
        "devices": ["desktop", "tablet"], "estimated_minutes": "15", "bonus_share": "0.10"})
    assert response.status_code == 302, response.content
    study = ProlificStudy.objects.get(campaign=campaign)
    assert study.entry_url.startswith(f"http://testserver/c/{campaign.slug}/start/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}")
    changelist = "/admin/prolific/prolificstudy/"
    confirm = browser.post(changelist, {"action": "create_draft", "_selected_action": [study.pk]})
    assert confirm.status_code == 200 and b"Yes, go on" in confirm.content and not fake.studies
    post(changelist, {"action": "create_draft", "_selected_action": [study.pk], "confirmed": "yes"})
    study.refresh_from_db()
    assert study.status == "draft" and fake.studies[study.prolific_id]["device_compatibility"] == ["desktop", "tablet"]
    post(changelist, {"action": "publish", "_selected_action": [study.pk], "confirmed": "yes"})
    study.refresh_from_db()
    assert study.status == "published"

    subs = [fake.start_submission(study.prolific_id, f"p{n}") for n in range(2)]
    for s in subs:
        fake.submit_code(s["id"], study.codes["completed"])
    review = f"/admin/prolific/prolificstudy/{study.pk}/review/"
    post(review, {"sync": "1"})
    assert ProlificSubmission.objects.filter(study=study).count() == 2
    ids = [s["id"] for s in subs]
    short = browser.post(review, {"submission": ids, "decision": "reject", "category": "LOW_EFFORT",
                                  "message": "too short", "confirmed": "yes"})
    assert short.status_code == 400 and b"at least 100 characters" in short.content
    assert not ProlificSubmission.objects.exclude(decision="").exists()
    asked = browser.post(review, {"submission": ids, "decision": "approve"})
    assert asked.status_code == 200 and b"Yes, approve" in asked.content
    assert not ProlificSubmission.objects.exclude(decision="").exists()
    done = post(review, {"submission": ids, "decision": "approve", "confirmed": "yes"})
    assert done.status_code == 302
    assert {s["status"] for s in fake.submissions.values()} == {"APPROVED"}
    page = browser.get(review)
    assert page.status_code == 200 and b"p0" in page.content and b"Approve" in page.content


def test_another_researchers_study_is_not_reviewable(fake, make_campaign, researcher, django_user_model):
    campaign = make_campaign()
    study = ProlificStudy.objects.create(campaign=campaign, owner=researcher, name="x", description="y",
                                         status="draft", prolific_id="abc")
    other = django_user_model.objects.create_user("other", password="pw", is_staff=True)
    response = signed_in(other).get(f"/admin/prolific/prolificstudy/{study.pk}/review/")
    assert response.status_code in (302, 403)


def test_a_researcher_the_campaign_is_shared_with_neither_sees_the_owners_study_nor_makes_one(
        fake, make_campaign, researcher, django_user_model):
    """A study spends its owner's Prolific account and sets the campaign's completion codes: sharing the campaign
    shares its results, not the study."""
    campaign = make_campaign()
    study = ProlificStudy.objects.create(campaign=campaign, owner=researcher, name="x", description="y",
                                         status="draft", prolific_id="abc")
    colleague = django_user_model.objects.create_user("colleague", password="pw", is_staff=True)
    campaign.shared_with.add(colleague)
    session = signed_in(colleague)
    assert session.get(f"/admin/prolific/prolificstudy/{study.pk}/review/").status_code in (302, 403)
    assert f"/prolificstudy/{study.pk}/change/" not in session.get("/admin/prolific/prolificstudy/").content.decode()
    assert session.get(f"/admin/prolific/prolificstudy/{study.pk}/change/").status_code in (302, 403, 404)
    form = session.get("/admin/prolific/prolificstudy/add/")
    assert form.status_code == 200 and f'value="{campaign.pk}"' not in form.content.decode()
    assert signed_in(researcher).get(f"/admin/prolific/prolificstudy/{study.pk}/review/").status_code == 200


@pytest.mark.parametrize("superuser", [False, True])
def test_a_second_account_of_the_same_user_is_refused_not_a_500(django_user_model, superuser):
    """One account per user (its token is the user's): a second add, from a stale form or by a superuser, is a 403
    and keeps the token set, never an IntegrityError."""
    user = django_user_model.objects.create_user("r2", password="pw", is_staff=True, is_superuser=superuser)
    session = signed_in(user)
    assert session.post("/admin/prolific/prolificaccount/add/", {"token": TOKEN}).status_code == 302
    again = session.post("/admin/prolific/prolificaccount/add/", {"token": "another"})
    assert again.status_code == 403
    assert ProlificAccount.objects.get(user=user).token() == TOKEN
