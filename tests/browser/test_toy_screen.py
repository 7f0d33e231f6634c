"""The toy protocol's screen (tests/toy/), defined only in the tests and registered through the settings alone,
rated in Chromium: the HIT page loads the screen its package ships, and the answers it posts are stored
(docs/architecture.md). Here beside the other browser tests, so that the run's one Chromium serves it."""
from __future__ import annotations

import io
import json

import pytest
from django.test import override_settings

from annotation.models import Campaign, HitItem, Judgment

from ..toy.fixtures import STATEMENT, TOY_SETTINGS, thumbs_lines
from .screens import open_page, post_of, start_hit

pytestmark = pytest.mark.browser


@pytest.fixture(autouse=True)
def toy_registered():
    with override_settings(**TOY_SETTINGS):
        yield


def test_a_hit_is_rated_in_chromium(browser, live_server, api):
    upload = io.BytesIO(b"".join(thumbs_lines(2)))
    upload.name = "thumbs.jsonl"
    response = api.post("/api/campaigns/", {"file": upload, "name": "Toy screen", "protocol": "toy-thumbs",
                                            "thumbs_per_hit": "4"}, format="multipart")
    assert response.status_code == 201, response.content
    campaign = Campaign.objects.get(slug=response.json()["campaign"])
    with open_page(browser, 1000, 800) as page:
        start_hit(page, live_server, campaign.slug, "w-browser")
        for position in range(4):
            thumb = "up" if position % 2 == 0 else "down"
            shown = page.locator("#thumbs-candidate").inner_text()
            stored = HitItem.objects.get(hit__campaign=campaign, output__text=shown)
            assert page.locator("#thumbs-source").inner_text() == stored.segment.source
            assert page.locator("#statement").inner_text() == stored.payload.get("question", STATEMENT)
            assert page.locator("#thumbs-confidence button").count() == 3
            assert page.locator("#submit").is_disabled()
            page.click(f'[data-thumb="{thumb}"]')
            page.click('#thumbs-confidence [data-level="3"]')
            status, body, _answer = post_of(page, lambda: page.click("#submit"))
            assert status == 201 and body == {"item": stored.pk, "thumb": thumb, "confidence": 3}
            if position < 3:
                page.wait_for_function("document.getElementById('thumbs-candidate').textContent !== "
                                       f"{json.dumps(shown)}")
        page.locator("#done").wait_for(state="visible")
        assert page.js_errors == []
    judgments = Judgment.objects.filter(campaign=campaign).order_by("pk")
    assert [(j.choice, j.score) for j in judgments] == [("up", 3.0), ("down", 3.0)] * 2
