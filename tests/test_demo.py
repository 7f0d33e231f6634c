"""`manage.py load_demo`: each demo campaign serves at least 20 distinct workers at once, with short HITs."""
import io
import random

import pytest
from django.core.management import call_command
from django.test import Client

from annotation.management.commands.load_demo import DEMO_FILE, DEMO_WORKERS, DEMOS
from annotation.models import Assignment, Campaign
from annotation.services.campaign_import import import_campaign

from .conftest import start
from .simulation import Behaviour, complete_hit

pytestmark = pytest.mark.django_db

QUALITY = {"online-A": 70.0, "neural-B": 55.0}
#: The default demo's slider (DA) campaigns and its error-span one, as the manifest declares them.
SLIDERS = [(name, options) for name, protocol, options in DEMOS if protocol in ("adequacy", "fluency")]
SPANS = next((name, options) for name, protocol, options in DEMOS if protocol == "esa")


def load_demo() -> str:
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    return out.getvalue()


def test_twenty_workers_each_get_a_hit_in_each_demo_campaign():
    printed = load_demo()
    assert f"up to {DEMO_WORKERS} workers" in printed
    assert DEMO_WORKERS >= 20
    rng = random.Random(1)
    assert len(SLIDERS) == 2
    for name, options in SLIDERS:
        campaign = Campaign.objects.get(name=name)
        assert campaign.hits.count() * campaign.redundancy >= 20
        assert set(campaign.hits.values_list("size", flat=True)) == {options["hit_size"]}
        client = Client()
        tokens = [start(client, campaign, f"demo-worker-{i}") for i in range(1, 21)]  # all hold a HIT at once
        assert len(set(tokens)) == 20
        codes = [complete_hit(client, campaign.slug, f"demo-worker-{i}", Behaviour("diligent"), QUALITY, rng)
                 for i in range(1, 21)]
        assert all(codes) and len(set(codes)) == 20
        assert Assignment.objects.filter(campaign=campaign, status=Assignment.Status.COMPLETED).count() == 20
        for hit in campaign.hits.all():
            assert hit.assignments.count() <= campaign.redundancy


def test_load_demo_twice_and_an_older_demo_database():
    with DEMO_FILE.open("rb") as handle:  # a demo loaded before: one 100-item HIT for three workers
        old = import_campaign(handle, name=DEMOS[0][0], protocol=DEMOS[0][1], redundancy=3, seed=2026,
                              source_language="de", target_language="en").campaign
    load_demo()
    load_demo()
    assert Campaign.objects.count() == len(DEMOS) == 3  # adequacy, fluency and ESA
    old.refresh_from_db()
    assert old.hits.count() == 1 and old.redundancy == DEMO_WORKERS
    client = Client()
    assert len({start(client, old, f"w{i}") for i in range(20)}) == 20


def test_the_esa_demo_takes_a_worker_through_a_hit_of_whole_documents():
    load_demo()
    campaign = Campaign.objects.get(name=SPANS[0])
    assert campaign.protocol == "esa" and campaign.hits.count() * campaign.redundancy >= 20
    client = Client()
    token = start(client, campaign, "demo-worker-1")
    answered = 0
    while not (state := client.get(f"/api/hit/{token}/").json()).get("done"):
        item = state["item"]
        assert item["document"]["segments"][item["document"]["current"]]["candidate"] == item["candidate"]
        response = client.post(f"/api/hit/{token}/", {"item": item["id"], "score": 70, "spans": [
            {"start": 0, "end": min(3, len(item["candidate"])), "severity": "minor"}]}, content_type="application/json")
        assert response.status_code == 201, response.content
        answered += 1
    hit = Assignment.objects.get(token=token).hit
    assert state["completion_code"] and answered == hit.size == hit.items.count()
    assert max(campaign.hits.values_list("size", flat=True)) <= SPANS[1]["segments_per_hit"] + 3  # with perturbed
