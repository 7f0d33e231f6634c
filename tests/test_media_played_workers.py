"""The workers table flags judges who played less of the video and audio than the campaign requires (docs/api.md,
"Media actions"): a column and a flag on the results page, in `workers/` and in workers.csv."""
import csv
import io

import pytest

from annotation.models import Document
from evaluation.analyses import compute_results

from .conftest import post_answer, start
from .media_fixtures import attach_media

pytestmark = pytest.mark.django_db


def _judge(client, campaign, worker: str, played: float) -> None:
    """Do the worker's whole HIT, reporting `played` of each item's 4-second video."""
    token = start(client, campaign, worker)
    state = client.get(f"/api/hit/{token}/").json()
    k = 0
    while not state["done"]:
        body = {"item": state["item"]["id"], "score": 40 + (k * 7) % 50,
                "media_seconds": [{"media": 0, "played": played, "duration": 4.0}]}
        response = post_answer(client, token, body)
        assert response.status_code == 201, response.content
        state, k = response.json(), k + 1


def test_judges_who_played_too_little_are_flagged_on_the_page_in_the_api_and_the_csv(client, api, researcher,
                                                                                     make_campaign):
    campaign = make_campaign(n_segments=10, hit_size=20, redundancy=2)
    for doc in Document.objects.filter(campaign=campaign):
        attach_media(campaign, doc.doc_id, ["video"])
    _judge(client, campaign, "watcher", 4.0)
    _judge(client, campaign, "skipper", 1.0)
    campaign.options = {**campaign.options, "require_media_played": 80}  # raised after the judgments came in
    campaign.save(update_fields=["options"])
    compute_results(campaign)

    rows = {r["worker"]: r for r in api.get(f"/api/campaigns/{campaign.slug}/workers/").json()["results"]}
    assert (rows["watcher"]["media_played"], rows["watcher"]["media_flagged"]) == (100.0, False)
    assert rows["skipper"]["media_played"] == 25.0 and rows["skipper"]["media_flagged"] is True
    assert rows["skipper"]["media_short"] == rows["skipper"]["media_judgments"] == 20

    text = api.get(f"/api/campaigns/{campaign.slug}/tables/workers/?format=csv").content.decode()
    table = {r["worker"]: r for r in csv.DictReader(io.StringIO(text))}
    assert table["skipper"]["media_flagged"] == "True" and table["watcher"]["media_flagged"] == "False"

    client.force_login(researcher)
    page = client.get(f"/results/{campaign.slug}/").content.decode()
    section = page[page.index('id="media-played"'):]
    assert "required 80 %" in section, section[:700]
    skipper = section[section.index("skipper"):section.index("</tr>", section.index("skipper"))]
    assert "25 %" in skipper and "played too little" in skipper
    watcher = section[section.index("watcher"):section.index("</tr>", section.index("watcher"))]
    assert "100 %" in watcher and "played too little" not in watcher


def test_a_campaign_without_video_or_audio_has_no_media_columns(api, make_campaign):
    campaign = make_campaign(n_segments=10, hit_size=20)
    compute_results(campaign)
    text = api.get(f"/api/campaigns/{campaign.slug}/tables/workers/?format=csv").content.decode()
    assert "media_played" not in text.splitlines()[0]
