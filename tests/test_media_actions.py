"""The judge's media actions (docs/api.md, "Media actions"): sent with any protocol's answer, checked for shape and
against the item's media and the campaign's require_media_played (400, nothing stored), stored with the judgment
and present in the judgment export, JSON and CSV."""
import csv
import io
import json

import pytest

from annotation.models import Document, Judgment

from .conftest import post_answer, start
from .media_fixtures import attach_media

pytestmark = pytest.mark.django_db

PLAY = [{"media": 1, "event": "play", "t": 0, "at": 1.5}, {"media": 1, "event": "seek", "t": 2.0, "at": 2.0},
        {"media": 1, "event": "ended", "t": 4.0, "at": 4.1}]


@pytest.fixture
def media_campaign(make_campaign):
    """An adequacy campaign whose every document shows an image and a video (indices 0, 1 of `media`), and whose
    segments each add an audio clip (index 2); judges must play 50 %."""
    campaign = make_campaign(n_segments=10, hit_size=20, options={"require_media_played": 50})
    for doc in Document.objects.filter(campaign=campaign):
        seg_ids = doc.segments.values_list("seg_id", flat=True)
        attach_media(campaign, doc.doc_id, ["image", "video"], {s: ["audio"] for s in seg_ids})
    return campaign


def first_item(client, token) -> dict:
    return client.get(f"/api/hit/{token}/").json()["item"]


def played(video=4.0, audio=3.0) -> list[dict]:
    return [{"media": 1, "played": video, "duration": 4.0}, {"media": 2, "played": audio, "duration": 3.0}]


def test_the_item_carries_its_media_and_the_page_its_requirement(client, media_campaign):
    token = start(client, media_campaign, "w1")
    item = first_item(client, token)
    assert [m["kind"] for m in item["media"]] == ["image", "video", "audio"]
    assert all(m["url"].startswith(f"/api/hit/{token}/media/") for m in item["media"])
    page = client.get(f"/hit/{token}/").content.decode()
    assert '"require_media_played": 50' in page and "annotation/media.js" in page and "data-media" in page


def test_media_actions_are_stored_with_the_judgment_and_exported(client, api, media_campaign):
    token = start(client, media_campaign, "w1")
    item = first_item(client, token)
    body = {"item": item["id"], "score": 70, "media_actions": PLAY, "media_seconds": played(2.5, 3.0)}
    response = post_answer(client, token, body)
    assert response.status_code == 201, response.content
    assert post_answer(client, token, body).status_code == 201  # a replay: stored once
    stored = Judgment.objects.get()
    assert stored.score == 70
    assert stored.media == {"clips": [1, 2], "actions": PLAY, "seconds": played(2.5, 3.0)}
    rows = json.loads(b"".join(api.get(f"/api/campaigns/{media_campaign.slug}/judgments/?format=json")
                               .streaming_content))
    assert rows[0]["media_actions"] == PLAY and rows[0]["media_seconds"] == played(2.5, 3.0)
    text = b"".join(api.get(f"/api/campaigns/{media_campaign.slug}/judgments/?format=csv").streaming_content)
    row = next(csv.DictReader(io.StringIO(text.decode())))
    assert json.loads(row["media_actions"]) == PLAY and json.loads(row["media_seconds"]) == played(2.5, 3.0)


BAD = [
    ({"media_actions": {"media": 1}}, "'media_actions' must be a list"),
    ({"media_actions": [{"media": 1, "event": "play", "t": 0}]}, "exactly media, event, t, at"),
    ({"media_actions": [{**PLAY[0], "extra": 1}]}, "exactly media, event, t, at"),
    ({"media_actions": [{**PLAY[0], "event": "rewind"}]}, "'media_actions/0/event' must be one of"),
    ({"media_actions": [{**PLAY[0], "t": -1}]}, "'media_actions/0/t' must be a number"),
    ({"media_actions": [{**PLAY[0], "at": "soon"}]}, "'media_actions/0/at' must be a number"),
    ({"media_actions": [{**PLAY[0], "media": True}]}, "'media_actions/0/media' must be the index"),
    ({"media_actions": [PLAY[0]] * 501}, "at most 500 entries"),
    ({"media_actions": [{**PLAY[0], "media": 0}]}, "must be the index of a video or audio of the item (1, 2)"),
    ({"media_actions": [{**PLAY[0], "media": 7}]}, "must be the index of a video or audio of the item"),
    ({"media_seconds": [{"media": 1, "played": 2}]}, "exactly media, played, duration"),
    ({"media_seconds": played() + [{"media": 1, "played": 1, "duration": 4}]}, "reports medium 1 twice"),
    ({"media_seconds": [{"media": 1, "played": 9, "duration": 4.0}]}, "longer than the medium's duration"),
    ({"media_seconds": [{"media": 1, "played": float("nan"), "duration": 4.0}]}, "the body must be JSON"),
    ({"media_seconds": played(1.0, 3.0)}, "at least 50 %"),
    ({"media_seconds": played()[:1]}, "medium 2 was not"),
    ({}, "at least 50 %"),  # nothing reported at all
]


@pytest.mark.parametrize("extra,reason", BAD)
def test_bad_media_reports_are_refused_and_nothing_is_stored(client, media_campaign, extra, reason):
    token = start(client, media_campaign, "w1")
    item = first_item(client, token)
    body = {"item": item["id"], "score": 70, "media_seconds": played(), **extra}
    if not extra:
        body = {"item": item["id"], "score": 70}
    raw = json.dumps(body).replace("NaN", "nan")  # json.dumps writes NaN, which is not JSON either way
    response = post_answer(client, token, raw)
    assert response.status_code == 400, response.content
    assert reason in response.json()["error"]
    assert not Judgment.objects.exists()


def test_an_item_without_video_or_audio_takes_no_media_report(client, make_campaign):
    campaign = make_campaign(n_segments=10, hit_size=20)
    for doc in Document.objects.filter(campaign=campaign):
        attach_media(campaign, doc.doc_id, ["image"])
    token = start(client, campaign, "w1")
    item = first_item(client, token)
    refused = post_answer(client, token, {"item": item["id"], "score": 5, "media_actions": PLAY})
    assert refused.status_code == 400 and "has none" in refused.json()["error"]
    assert post_answer(client, token, {"item": item["id"], "score": 5}).status_code == 201
    assert Judgment.objects.get().media is None


def test_without_a_requirement_a_short_play_is_stored_as_reported(client, make_campaign):
    campaign = make_campaign(n_segments=10, hit_size=20)
    for doc in Document.objects.filter(campaign=campaign):
        attach_media(campaign, doc.doc_id, ["video"])
    token = start(client, campaign, "w1")
    item = first_item(client, token)
    response = post_answer(client, token, {"item": item["id"], "score": 5})
    assert response.status_code == 201
    assert Judgment.objects.get().media == {"clips": [0], "actions": [], "seconds": []}


def test_the_option_is_validated_like_every_option(make_campaign):
    from annotation.protocols import get_protocol
    from annotation.protocols.options import OptionError

    spec = get_protocol("adequacy")
    assert spec.parse_options({"require_media_played": "80"}).options["require_media_played"] == 80
    with pytest.raises(OptionError, match="require_media_played"):
        spec.parse_options({"require_media_played": "101"})


def test_a_paused_campaign_answers_423_before_the_media_report_is_read(client, media_campaign):
    token = start(client, media_campaign, "w1")
    item = first_item(client, token)
    media_campaign.status = "paused"
    media_campaign.save(update_fields=["status"])
    response = post_answer(client, token, {"item": item["id"], "score": 70, "media_actions": "junk"})
    assert response.status_code == 423 and not Judgment.objects.exists()
