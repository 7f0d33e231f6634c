"""Results tasks: debouncing, one transaction per run, freshness, the compute endpoint (in-process)."""
import random
import time

import numpy as np
import pytest
from django.db import IntegrityError
from django.test import Client

from evaluation.families.direct_assessment.analysis import analyse
from evaluation.families.direct_assessment.storage import compute_da, load_judgments, store
from evaluation.models import CampaignResults, WorkerResult
from evaluation.tasks import _queued_key, claim_queued_run

from .simulation import Behaviour, complete_hit

pytestmark = pytest.mark.django_db
QUALITY = {"sys-A": 70, "sys-B": 50}


@pytest.fixture
def judged(make_campaign):
    campaign = make_campaign(redundancy=3)
    rng = random.Random(4)
    client = Client()
    complete_hit(client, campaign.slug, "careful", Behaviour("diligent"), QUALITY, rng)
    complete_hit(client, campaign.slug, "clicker", Behaviour("random"), QUALITY, rng)
    return campaign


def test_a_burst_of_judgments_claims_one_run(judged):
    from django.core.cache import cache

    cache.delete(_queued_key(judged.pk))
    claims = [claim_queued_run(judged.pk, time.time() + 10) for _ in range(300)]
    assert claims.count(True) == 1 and claims[0] is True
    cache.delete(_queued_key(judged.pk))  # a run starting clears the flag...
    assert claim_queued_run(judged.pk, time.time() + 10) is True  # ...so judgments arriving during it queue one more
    cache.delete(_queued_key(judged.pk))


def test_until_a_queued_run_can_start_judgments_skip_the_cache(judged, settings):
    from django.core.cache import cache

    from evaluation import tasks

    settings.RESULTS_DEBOUNCE_SECONDS = 3600  # the queued run (a timer thread here) stays far off
    key = _queued_key(judged.pk)
    cache.delete(key)
    assert tasks.schedule_recompute(judged.pk) is True
    assert time.time() + 3500 < cache.get(key) <= time.time() + 3600  # the run's earliest start
    cache.delete(key)
    # The run queued above cannot have started, so it will read these judgments: no cache round trip.
    assert [tasks.schedule_recompute(judged.pk) for _ in range(50)] == [False] * 50
    assert cache.get(key) is None

    tasks._covered_until.clear()  # another process, which finds the run queued by someone else...
    cache.set(key, time.time() + 3600)
    assert tasks.schedule_recompute(judged.pk) is False
    cache.delete(key)  # ...learns its earliest start from the flag, and skips the cache too
    assert tasks.schedule_recompute(judged.pk) is False and cache.get(key) is None

    tasks._covered_until.clear()  # a run queued to start soon covers nothing for long: ask again
    cache.set(key, time.time() + 1)
    assert tasks.schedule_recompute(judged.pk) is False
    cache.delete(key)
    assert tasks.schedule_recompute(judged.pk) is True
    cache.delete(key)


def test_a_queued_run_covers_all_but_the_last_second_of_its_wait(judged, settings):
    """The web processes' clocks are assumed within CLOCK_MARGIN_SECONDS of the workers' (not half the delay), so
    a run due in 4 s still covers the judgments of the next 3 s without a cache round trip."""
    from django.core.cache import cache

    from evaluation import tasks

    settings.RESULTS_DEBOUNCE_SECONDS = 10
    key = _queued_key(judged.pk)
    tasks._covered_until.clear()
    cache.set(key, time.time() + 4)  # queued by another process 6 s ago
    assert tasks.schedule_recompute(judged.pk) is False
    cache.delete(key)  # the flag's run cannot start for 4 s more, and will read these judgments
    assert [tasks.schedule_recompute(judged.pk) for _ in range(20)] == [False] * 20
    assert cache.get(key) is None


@pytest.mark.django_db(transaction=True)  # the deferred run reads from another thread
def test_in_process_a_run_that_finds_another_in_flight_runs_later(judged, settings):
    from django.core.cache import cache

    from evaluation.tasks import _running_key, compute_campaign_results

    settings.RESULTS_DEBOUNCE_SECONDS = 1
    cache.set(_running_key(judged.pk), "another run", 60)
    outcome = compute_campaign_results.apply(args=(judged.pk,)).get()
    assert outcome["status"].startswith("deferred") and not CampaignResults.objects.filter(campaign=judged).exists()
    cache.delete(_running_key(judged.pk))  # the other run ends; the deferred one follows within a second
    deadline = time.monotonic() + 30
    while not CampaignResults.objects.filter(campaign=judged).exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert CampaignResults.objects.get(campaign=judged).judgments == 200


def test_compute_endpoint_and_freshness(api, judged):
    before = api.get(f"/api/campaigns/{judged.slug}/workers/").json()
    assert before["computed_at"] is None and before["stale"] is True and before["results"] == []
    response = api.post(f"/api/campaigns/{judged.slug}/compute/")
    assert response.status_code == 202 and response.json()["task"]
    after = api.get(f"/api/campaigns/{judged.slug}/workers/").json()
    assert after["computed_at"] is not None and after["stale"] is False and after["judgments_covered"] == 200
    assert {w["worker"] for w in after["results"]} == {"careful", "clicker"}
    assert api.get(f"/api/campaigns/{judged.slug}/").json()["results_computed_at"] is not None
    client = Client()
    complete_hit(client, judged.slug, "late", Behaviour("diligent"), QUALITY, random.Random(1))
    assert api.get(f"/api/campaigns/{judged.slug}/workers/").json()["stale"] is True


def test_a_failed_run_leaves_the_old_results(judged):
    compute_da(judged)
    old = list(WorkerResult.objects.filter(campaign=judged).values_list("worker", "p_value"))
    header = CampaignResults.objects.get(campaign=judged)
    analysis = analyse(load_judgments(judged))
    first = analysis.annotator_ids[0]
    analysis.annotator_ids = np.array([first, first])  # one worker twice: the unique constraint stops the insert
    with pytest.raises(IntegrityError):
        store(judged, analysis, 1, 1, 0.0)
    assert list(WorkerResult.objects.filter(campaign=judged).values_list("worker", "p_value")) == old
    assert CampaignResults.objects.get(campaign=judged).computed_at == header.computed_at


def test_endpoints_refuse_unknown_filters(api, judged):
    assert api.get(f"/api/campaigns/{judged.slug}/systems/", {"workers": "some"}).status_code == 400
    assert api.get(f"/api/campaigns/{judged.slug}/significance/", {"workers": "x"}).status_code == 400


def test_results_need_a_researcher(client, judged):
    for path in ("workers", "systems", "significance", "agreement"):
        assert client.get(f"/api/campaigns/{judged.slug}/{path}/").status_code == 403
    assert client.post(f"/api/campaigns/{judged.slug}/compute/").status_code == 403


@pytest.mark.parametrize("test", ["paired-t", "wilcoxon", "welch", "mann-whitney", "appraise"])
def test_every_reliability_test_runs_from_the_campaign_setting(api, judged, test):
    judged.qc_test = test
    judged.save()
    compute_da(judged)
    workers = {w["worker"]: w for w in api.get(f"/api/campaigns/{judged.slug}/workers/").json()["results"]}
    assert workers["careful"]["test"] == test and workers["careful"]["reliable"] is True
    assert workers["clicker"]["reliable"] is False


def test_calibration_between_two_campaigns(api, make_campaign):
    old = make_campaign(name="Old test set", redundancy=2)
    new = make_campaign(name="New test set", redundancy=2, seed=8)
    rng = random.Random(2)
    for campaign, quality in ((old, {"sys-A": 60, "sys-B": 40}), (new, {"sys-A": 50, "sys-B": 45})):
        for i in range(2):
            complete_hit(Client(), campaign.slug, f"{campaign.slug}-{i}", Behaviour("diligent", noise=3), quality,
                         rng)
        compute_da(campaign)
    response = api.get(f"/api/campaigns/{new.slug}/calibration/", {"against": old.slug, "benchmark": "sys-A",
                                                                    "system": "sys-B", "against_system": "sys-B"})
    assert response.status_code == 200, response.content
    raw = response.json()["raw"]
    assert raw["delta"] == pytest.approx(raw["curr_old"] - raw["curr_new"])
    assert raw["gain"] == pytest.approx(raw["best_new"] - raw["best_old"] + raw["delta"])
    assert raw["delta"] > 0  # the new test set is harder for the benchmark system
    bad = api.get(f"/api/campaigns/{new.slug}/calibration/", {"against": old.slug, "benchmark": "nope"})
    assert bad.status_code == 400 and "nope" in bad.json()["detail"]
