"""`manage.py load_demo`: each demo campaign serves at least 20 distinct workers at once, with short HITs."""
import io
import random

import pytest
from django.core.management import call_command
from django.test import Client

from annotation.management.commands.load_demo import DEMO_FILE, DEMO_WORKERS, DEMOS, MEDIA_DEMO, MEDIA_DIR
from annotation.models import Assignment, Campaign, MediaItem
from annotation.services.campaign_import import import_campaign

from .conftest import start
from .simulation import Behaviour, complete_hit

pytestmark = pytest.mark.django_db

QUALITY = {"online-A": 70.0, "neural-B": 55.0}
#: The default demo's slider (DA) campaigns and its error-span one, as the manifest declares them.
SLIDERS = [(name, options) for name, protocol, options in DEMOS if protocol in ("adequacy", "fluency")]
SPANS = next((name, options) for name, protocol, options in DEMOS if protocol == "esa")


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    """The media demo's files go to a temporary media storage, not the checkout's."""
    settings.STORAGES = {**settings.STORAGES, "media": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path / "media")}}}
    return tmp_path / "media"


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
    assert Campaign.objects.count() == len(DEMOS) + 1 == 4  # adequacy, fluency, ESA; media and instructions
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


def test_the_media_demo_ships_small_generated_files_and_holds_answers_to_the_required_share(media_root):
    """The media and instructions demo (issue 26): its files are in the repository and small; its campaign shows an
    image and a video beside the first document's source, an audio clip on one line, instructions on some lines,
    and takes an answer only with the video played to half."""
    shipped = {p.name: p.stat().st_size for p in MEDIA_DIR.iterdir() if p.suffix != ".py"}
    assert {"harbour.png", "market-sign.png", "harbour-walk.webm", "harbour-bell.wav",
            "media-demo.jsonl"} <= set(shipped)
    assert all(size < 100_000 for size in shipped.values())
    printed = load_demo()
    campaign = Campaign.objects.get(name=MEDIA_DEMO[0])
    assert f"/c/{campaign.slug}/start/" in printed
    assert campaign.protocol == "contrastive-esa" and campaign.options["require_media_played"] == 50
    assert sorted(MediaItem.objects.filter(campaign=campaign).values_list("kind", flat=True)) == [
        "audio", "image", "image", "video"]
    assert campaign.segments.exclude(reference="").count() == 6
    client = Client()
    for worker in range(1, 5):  # the HIT that starts with the harbour document
        token = start(client, campaign, f"demo-worker-{worker}")
        state = client.get(f"/api/hit/{token}/").json()
        if [m["kind"] for m in state["item"].get("media", [])] == ["image", "video"]:
            break
    assert [m["kind"] for m in state["item"]["media"]] == ["image", "video"]
    served = client.get(state["item"]["media"][1]["url"])
    assert served.status_code == 200 and b"".join(served.streaming_content)[:4] == b"\x1a\x45\xdf\xa3"  # WebM
    short = [{"media": 1, "played": 1.0, "duration": 4.0}]
    assert _post_ces(client, token, state, short).status_code == 400
    assert _post_ces(client, token, state, [{"media": 1, "played": 4.0, "duration": 4.0}]).status_code == 201


def _post_ces(client, token, state, seconds):
    item = state["item"]
    body = {"item": item["id"], "candidates": {c["key"]: {"spans": [], "score": 60} for c in item["candidates"]}}
    if seconds:
        body["media_seconds"] = seconds
    return client.post(f"/api/hit/{token}/", body, content_type="application/json")
