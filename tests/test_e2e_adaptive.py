"""End to end, adaptive allocation (docs/methods.md §12.2): simulated workers judge a small adaptive campaign
through the annotator API; each finished batch sends `assignment_completed`, and a real Celery worker process,
through the Redis broker, takes the look, builds the next batch, and finally stops the campaign with a reason.

Needs CELERY_BROKER_URL (Redis), as tests/test_e2e_celery.py: skipped locally without it, a failure in CI."""
import random

import pytest
from django.test import Client

from annotation.models import Campaign, Hit
from evaluation.models import AdaptiveRun

from .adaptive_helpers import SYSTEMS, adaptive_campaign
from .simulation import Behaviour, complete_hit
from .test_e2e_celery import running_worker, wait_for

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]
QUALITY = {"sys-A": 80.0, "sys-B": 58.0, "sys-C": 36.0}


@pytest.fixture
def adaptive_worker(transactional_db, tmp_path):
    log = tmp_path / "celery-worker.log"
    with running_worker("adaptive", log, "the adaptive end-to-end test") as worker:
        worker.log_path = log
        yield worker


def test_the_adaptive_loop_runs_on_a_real_worker(adaptive_worker, make_campaign, api):
    campaign = adaptive_campaign(make_campaign)  # 8 HITs of budget, batches of 2, 2 workers per HIT
    assert list(campaign.hits.values_list("batch", flat=True)) == [1, 1]
    client, rng = Client(), random.Random(11)
    crowd = {f"judge-{i}": Behaviour("diligent", bias=rng.uniform(-5, 5), noise=18.0) for i in range(2)}

    def settled(hits_before: int):
        run = AdaptiveRun.objects.get(campaign=campaign)
        return run.state == "stopped" or Hit.objects.filter(campaign=campaign).count() > hits_before

    for _ in range(8):  # at most as many batches as the budget has HITs
        hits_before = campaign.hits.count()
        for worker, behaviour in crowd.items():  # each judge does every HIT of the batch
            while complete_hit(client, campaign.slug, worker, behaviour, QUALITY, rng):
                pass
        wait_for(lambda hits_before=hits_before: settled(hits_before), timeout=60)
        if AdaptiveRun.objects.get(campaign=campaign).state == "stopped":
            break

    run = AdaptiveRun.objects.get(campaign=campaign)
    assert run.state == "stopped" and run.reason, run.looks
    assert run.reason.startswith(("every adjacent pair", "the budget is spent"))
    batches = [look["batch"] for look in run.looks]
    assert batches == list(range(1, len(batches) + 1))  # one look per finished batch, each by the worker
    assert all(look["trigger"] == "batch" and look["batch_complete"] for look in run.looks)
    assert run.looks[-1]["decision"] == "stop" and all(look["decision"] == "next-batch" for look in run.looks[:-1])
    assert len(run.looks) >= 2  # at least one batch was steered by a look
    hits = campaign.hits.count()
    assert hits == 2 * len(run.looks) <= run.budget_hits
    assert Campaign.objects.get(pk=campaign.pk).status == "closed"
    assert client.get(f"/c/{campaign.slug}/start/", {"worker_id": "late"}).status_code != 302
    assert run.spent_judgments == hits * 40 <= run.budget_judgments

    body = api.get(f"/api/campaigns/{campaign.slug}/adaptive/").json()
    assert body["state"] == "stopped" and len(body["looks"]) == len(run.looks)
    assert set(body["looks"][-1]["order"]) == set(SYSTEMS)
    log = adaptive_worker.log_path.read_text()
    assert "evaluation.adaptive_tasks.adaptive_look" in log and "succeeded" in log
