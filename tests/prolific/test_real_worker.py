"""The Prolific tasks through a real Celery worker process and the Redis broker (tests/test_e2e_celery.py's
`running_worker`): the admin's queued draft is created on the fake Prolific by the worker, not in this process."""
from decimal import Decimal

import pytest

from prolific import tasks
from prolific.models import ProlificAccount, ProlificCall, ProlificStudy

from ..test_e2e_celery import running_worker, wait_for
from .fake import TOKEN

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]


def test_a_draft_is_created_and_published_by_the_worker(fake, monkeypatch, make_campaign, researcher, tmp_path):
    monkeypatch.setenv("PROLIFIC_API_BASE_URL", fake.url)  # the worker process reads it at start
    campaign = make_campaign(redundancy=2, payment_per_hit=Decimal("3.00"))
    account = ProlificAccount(user=researcher)
    account.set_token(TOKEN)
    account.save()
    study = ProlificStudy.objects.create(campaign=campaign, owner=researcher, name="Rate", description="Rate them.",
                                         entry_url="https://eval.example.org/c/x/start/?PROLIFIC_PID="
                                                   "{{%PROLIFIC_PID%}}", devices=["desktop"], estimated_minutes=15)
    fake.fail("POST", r"^studies/$", 500, after=True)  # the worker must find the study, not create a second
    with running_worker("prolific", tmp_path / "worker.log", "the Prolific worker test"):
        tasks.queue(tasks.create_draft, study)
        wait_for(lambda: ProlificStudy.objects.get(pk=study.pk).status == "draft", timeout=60)
        tasks.queue(tasks.publish, study)
        wait_for(lambda: ProlificStudy.objects.get(pk=study.pk).status == "published", timeout=60)
    assert len(fake.studies) == 1 and next(iter(fake.studies.values()))["status"] == "ACTIVE"
    assert ProlificCall.objects.filter(path="studies/", method="POST").count() == 1
