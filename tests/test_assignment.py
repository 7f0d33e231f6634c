"""Handing out HITs: redundancy, distinct workers, market ids, in-house annotators."""
import pytest
from django.contrib.auth import get_user_model

from annotation.models import Annotator, Assignment

from .conftest import start

pytestmark = pytest.mark.django_db


def test_each_hit_goes_to_k_distinct_workers(client, make_campaign):
    campaign = make_campaign(n_segments=105, redundancy=3)  # 210 outputs: 3 HITs × 3 workers
    tokens = [start(client, campaign, f"w{i}") for i in range(9)]
    hits = [Assignment.objects.get(token=t).hit_id for t in tokens]
    assert sorted(hits.count(h) for h in set(hits)) == [3, 3, 3]
    for hit in set(hits):
        workers = Assignment.objects.filter(hit_id=hit).values_list("annotator", flat=True)
        assert len(set(workers)) == 3
    response = client.get(f"/c/{campaign.slug}/start/", {"worker_id": "w9"})
    assert response.status_code == 200 and b"no more work" in response.content


def test_a_worker_never_gets_the_same_hit_twice(client, make_campaign):
    campaign = make_campaign(n_segments=70, redundancy=2)  # 2 HITs
    seen = []
    for _ in range(2):
        token = start(client, campaign, "busy")
        assignment = Assignment.objects.get(token=token)
        seen.append(assignment.hit_id)
        Assignment.objects.filter(pk=assignment.pk).update(status="completed", position=100)
    assert len(set(seen)) == 2
    assert b"no more work" in client.get(f"/c/{campaign.slug}/start/", {"worker_id": "busy"}).content


@pytest.mark.parametrize("param,market", [("worker_id", "crowd"), ("PROLIFIC_PID", "prolific"),
                                          ("workerId", "mturk")])
def test_market_parameters(client, campaign, param, market):
    response = client.get(f"/c/{campaign.slug}/start/", {param: "ABC123"})
    assert response.status_code == 302 and response["Location"].startswith("/hit/")
    annotator = Annotator.objects.get(external_id="ABC123")
    assert annotator.source == market


@pytest.mark.parametrize("worker", ["", "a b", "<script>", "x" * 300])
def test_invalid_worker_ids_are_refused(client, campaign, worker):
    response = client.get(f"/c/{campaign.slug}/start/", {"worker_id": worker})
    assert response.status_code == 400
    assert b"<script>" not in response.content
    assert Annotator.objects.count() == 0


def test_start_without_a_worker_id_asks_for_one(client, campaign):
    response = client.get(f"/c/{campaign.slug}/start/")
    assert response.status_code == 200 and b'name="worker_id"' in response.content


def test_paused_and_analysis_only_campaigns_hand_out_nothing(client, campaign):
    campaign.status = "paused"
    campaign.save()
    assert client.get(f"/c/{campaign.slug}/start/", {"worker_id": "w"}).status_code == 403
    campaign.status, campaign.analysis_only = "active", True
    campaign.save()
    assert client.get(f"/c/{campaign.slug}/start/", {"worker_id": "w"}).status_code == 404
    assert Assignment.objects.count() == 0


def test_in_house_annotators_log_in_and_start(client, make_campaign):
    open_campaign = make_campaign(name="Open to all")
    restricted = make_campaign(name="Restricted")
    judge = get_user_model().objects.create_user("judge", password="pw")
    restricted.in_house_annotators.add(get_user_model().objects.create_user("other", password="pw"))
    assert client.get("/annotate/").status_code == 302  # login first
    client.force_login(judge)
    page = client.get("/annotate/")
    assert b"Open to all" in page.content and b"Restricted" not in page.content
    response = client.post(f"/annotate/{open_campaign.slug}/start/")
    assert response.status_code == 302 and response["Location"].startswith("/hit/")
    assert Assignment.objects.get().annotator.user == judge
    assert client.post(f"/annotate/{restricted.slug}/start/").status_code == 404
    assert b"Continue" in client.get("/annotate/").content
