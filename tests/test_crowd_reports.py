"""Crowd-market operations through the researcher API: cost report, approve/reject suggestions,
blocking and publishing (docs/methods.md §10)."""
import csv
import io
import random

import pytest
from django.test import Client

from annotation.models import Assignment
from evaluation.analyses import compute_results
from evaluation.services.crowd import REJECT_MIN_PAIRS, REJECT_P_VALUE

from .conftest import start
from .simulation import Behaviour, complete_hit

pytestmark = pytest.mark.django_db
QUALITY = {"sys-A": 70, "sys-B": 45}


@pytest.fixture
def paid(make_campaign):
    campaign = make_campaign(redundancy=6, payment_per_hit="0.80")
    rng = random.Random(9)
    workers = {"good-1": Behaviour("diligent"), "good-2": Behaviour("diligent", bias=-8),
               "sloppy": Behaviour("diligent", noise=45), "clicker": Behaviour("random"),
               "flat": Behaviour("constant", constant=70)}
    for name, behaviour in workers.items():
        complete_hit(Client(), campaign.slug, name, behaviour, QUALITY, rng)
    compute_results(campaign)
    return campaign


def test_cost_report(api, paid):
    body = api.get(f"/api/campaigns/{paid.slug}/costs/").json()
    workers = {w["worker"]: w for w in api.get(f"/api/campaigns/{paid.slug}/workers/").json()["results"]}
    unreliable = sum(1 for w in workers.values() if not w["reliable"])
    assert body["hits_paid"] == 5 and body["total"] == "4.00" and body["systems"] == 2
    assert body["per_system"] == "2.00"
    assert body["hits_by_unreliable_workers"] == unreliable
    assert body["spent_on_unreliable"] == f"{0.80 * unreliable:.2f}"
    assert body["share_on_unreliable"] == pytest.approx(unreliable / 5)
    assert workers["flat"]["reliable"] is False and workers["good-1"]["reliable"] is True


def test_approvals_reject_only_clear_random_clicking(api, paid):
    rows = {r["worker"]: r for r in api.get(f"/api/campaigns/{paid.slug}/approvals/").json()["results"]}
    assert rows["good-1"]["suggestion"] == "approve" and rows["flat"]["suggestion"] == "reject"
    for row in rows.values():
        if row["reliable"] or row["worker"] == "flat":
            continue
        clear = row["p_value"] is not None and row["pairs"] >= REJECT_MIN_PAIRS and row["p_value"] >= REJECT_P_VALUE
        assert row["suggestion"] == ("reject" if clear else "approve"), row
    text = b"".join(api.get(f"/api/campaigns/{paid.slug}/approvals/", {"format": "csv"}).streaming_content)
    table = list(csv.DictReader(io.StringIO(text.decode())))
    assert {r["worker"] for r in table} == set(rows) and table[0]["suggestion"] in ("approve", "reject")


def test_block_and_unblock_through_the_api(api, campaign):
    token = start(Client(), campaign, "to-block")
    response = api.post(f"/api/campaigns/{campaign.slug}/block/", {"worker": "to-block"}, format="json")
    assert response.status_code == 200 and response.json()["hits_ended"] == 1
    assert Assignment.objects.get(token=token).status == "abandoned"
    assert Client().get(f"/c/{campaign.slug}/start/", {"worker_id": "to-block"}).status_code == 403
    api.post(f"/api/campaigns/{campaign.slug}/unblock/", {"worker": "to-block"}, format="json")
    assert Client().get(f"/c/{campaign.slug}/start/", {"worker_id": "to-block"}).status_code == 302
    assert api.post(f"/api/campaigns/{campaign.slug}/block/", {"worker": "nobody"}, format="json").status_code == 400


def test_publish_through_the_api(api, make_campaign):
    campaign = make_campaign(status="draft")
    assert Client().get(f"/c/{campaign.slug}/start/", {"worker_id": "w"}).status_code == 403
    response = api.post(f"/api/campaigns/{campaign.slug}/status/", {"status": "active"}, format="json")
    assert response.status_code == 200 and response.json()["status"] == "active"
    assert Client().get(f"/c/{campaign.slug}/start/", {"worker_id": "w"}).status_code == 302
    assert api.post(f"/api/campaigns/{campaign.slug}/status/", {"status": "draft"}, format="json").status_code == 400


def test_crowd_reports_need_a_researcher(client, paid):
    for path in ("costs", "approvals"):
        assert client.get(f"/api/campaigns/{paid.slug}/{path}/").status_code == 403
    assert client.post(f"/api/campaigns/{paid.slug}/block/", {"worker": "clicker"}).status_code == 403
