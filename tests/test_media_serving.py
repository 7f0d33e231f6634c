"""`GET /api/hit/<token>/media/<id>/` (docs/api.md §8.5): served only to the HIT that shows the medium (another
worker's HIT, a forged token, a HIT that went to someone else: 404), with its type, length, single-range requests
for seeking (206, 416) and `Cache-Control: private`; behind nginx or Apache the view answers with the header only.
The annotator's GET and POST keep their one and two statements on a media campaign."""
import io

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.models import Annotator, Assignment, MediaItem
from annotation.services.campaign_import import import_campaign
from config.checks import media_serving

from .conftest import post_answer, start
from .media_files import bundle, good_bundle, media_lines, png, wav

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.STORAGES = {**settings.STORAGES, "media": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path / "media")}}}
    settings.MEDIA_SERVE = "django"
    return tmp_path / "media"


def _campaign(name="Media"):
    return import_campaign(io.BytesIO(good_bundle()), name=name, protocol="adequacy", seed=1, hit_size=20).campaign


def _media_item(client, token) -> dict:
    """The first item of the HIT that shows media (answering the ones before it)."""
    item = client.get(f"/api/hit/{token}/").json()["item"]
    while "media" not in item:
        item = post_answer(client, token, {"item": item["id"], "score": 50}).json()["item"]
    return item


def _body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def test_the_hits_worker_gets_the_file_with_its_type_length_and_ranges():
    client = Client()
    token = start(client, _campaign(), "w1")
    item = _media_item(client, token)
    audio = item["media"][0]["url"]
    whole = client.get(audio)
    assert whole.status_code == 200 and _body(whole) == wav()
    assert (whole["Content-Type"], whole["Content-Length"], whole["Cache-Control"], whole["Accept-Ranges"]) == (
        "audio/wav", str(len(wav())), "private, max-age=3600", "bytes")
    part = client.get(audio, HTTP_RANGE="bytes=4-11")
    assert part.status_code == 206 and _body(part) == wav()[4:12]
    assert (part["Content-Range"], part["Content-Length"]) == (f"bytes 4-11/{len(wav())}", "8")
    tail = client.get(audio, HTTP_RANGE="bytes=-6")
    assert tail.status_code == 206 and _body(tail) == wav()[-6:]
    beyond = client.get(audio, HTTP_RANGE=f"bytes={len(wav())}-")
    assert beyond.status_code == 416 and beyond["Content-Range"] == f"bytes */{len(wav())}"
    assert "document_media" not in item  # a one-sentence screen: its own segment's media are in `media`


def test_a_document_view_lists_every_segments_media_in_document_order():
    client = Client()
    campaign = import_campaign(io.BytesIO(good_bundle()), name="ESA", protocol="esa", seed=1, hit_size=20,
                               options={"tutorial": 0}).campaign
    token = start(client, campaign, "w1")
    state = client.get(f"/api/hit/{token}/").json()
    while "media" not in state["item"]:
        state = post_answer(client, token, {"item": state["item"]["id"], "score": 50, "spans": []}).json()
    item = state["item"]
    # one list per sentence of the document view; the image is on the first (seg_id 1) of five
    assert len(item["document_media"]) == len(item["document"]["segments"]) == 5
    assert [len(entries) for entries in item["document_media"]] == [1, 0, 0, 0, 0]
    image = item["document_media"][0][0]
    assert (image["kind"], image["alt"], image["caption"]) == ("image", "A sign", "Figure 1")
    assert _body(client.get(image["url"])) == png()


def test_another_hit_a_forged_token_or_a_lost_hit_gets_404():
    client = Client()
    token = start(client, _campaign(), "w1")
    url = _media_item(client, token)["media"][0]["url"]
    key = url.rstrip("/").rsplit("/", 1)[1]
    other = start(Client(), _campaign("Other"), "w2")  # another campaign's worker, whose HIT shows other documents
    assert Client().get(f"/api/hit/{other}/media/{key}/").status_code == 404
    assert Client().get(f"/api/hit/{token[:-2]}xx/media/{key}/").status_code == 404
    assert Client().get(f"/api/hit/{token}/media/{key[:-2]}xx/").status_code == 404
    assert Client().get(url).status_code == 200  # the URL alone is the key: no cookie is needed
    Assignment.objects.filter(token=token).update(status=Assignment.Status.ABANDONED)
    assert Client().get(url).status_code == 404


@pytest.mark.parametrize("mode, header", [("x-accel-redirect", "X-Accel-Redirect"), ("x-sendfile", "X-Sendfile")])
def test_behind_a_web_server_the_view_answers_with_the_header_and_no_body(settings, media_root, mode, header):
    client = Client()
    token = start(client, _campaign(), "w1")
    url = _media_item(client, token)["media"][0]["url"]
    settings.MEDIA_SERVE = mode
    response = client.get(url)
    assert response.status_code == 200 and response.content == b"" and response["Cache-Control"].startswith("private")
    assert response["Content-Type"] == "audio/wav"
    name = response[header].rsplit("/", 2)
    assert response[header].endswith(".wav") and len(name[-1]) == 64 + 4
    if mode == "x-accel-redirect":
        assert response[header].startswith("/protected-media/")
    else:
        assert response[header].startswith(str(media_root))


def test_a_media_campaign_keeps_one_statement_per_get_and_two_per_post():
    client = Client()
    token = start(client, _campaign(), "w1")
    item = _media_item(client, token)
    with CaptureQueriesContext(connection) as got:
        shown = client.get(f"/api/hit/{token}/").json()["item"]
    assert shown["media"] == item["media"] and len(got) == 1
    post_answer(client, token, {"item": shown["id"], "score": 40})
    state = client.get(f"/api/hit/{token}/").json()
    with CaptureQueriesContext(connection) as posted:
        assert post_answer(client, token, {"item": state["item"]["id"], "score": 60}).status_code == 201
    if connection.vendor == "postgresql":
        assert len(posted) == 2


def test_a_media_serving_mode_the_storage_cannot_offer_stops_the_checks(settings):
    assert media_serving() == []
    settings.MEDIA_SERVE = "signed-url"
    assert [e.id for e in media_serving()] == ["project.E002"]
    settings.MEDIA_SERVE = "nginx"
    assert "must be one of" in media_serving()[0].msg


def test_a_worker_of_the_same_campaign_whose_hit_does_not_show_the_document_gets_404():
    lines = media_lines(n_segments=40, docs=20)  # the image is on doc-0's first line; doc-0 has 4 outputs of 80
    campaign = import_campaign(io.BytesIO(bundle(lines, {"media/sign.png": png()})), name="Many HITs",
                               protocol="adequacy", seed=3, hit_size=20).campaign
    shows = {hit.pk: hit.items.filter(segment__document__doc_id="doc-0").exists() for hit in campaign.hits.all()}
    showing, hiding = [pk for pk, yes in shows.items() if yes], [pk for pk, yes in shows.items() if not yes]
    assert showing and hiding, shows
    mine = Assignment.objects.create(campaign=campaign, hit_id=showing[0],
                                     annotator=Annotator.objects.create(external_id="w1"))
    other = Assignment.objects.create(campaign=campaign, hit_id=hiding[0],
                                      annotator=Annotator.objects.create(external_id="w2"))
    key = MediaItem.objects.get(campaign=campaign).key
    assert Client().get(f"/api/hit/{mine.token}/media/{key}/").status_code == 200
    assert Client().get(f"/api/hit/{other.token}/media/{key}/").status_code == 404
