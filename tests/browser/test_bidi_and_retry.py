"""Two things the annotator screens must survive (issue 22, 11f and 11g), in a real browser.

- A RIGHT-TO-LEFT OVERRIDE (U+202E) left open in a segment or a campaign name stays inside it: the text is
  bidi-isolated (static/css/base.css, <bdi> in the templates), so the label after it on the line keeps its place
  and its reading order.
- An answer whose POST fails with a 500 or a network error is sent again by itself (static/annotation/hit.js):
  the screen moves on without the judge pressing Submit again, and the judgment is stored once, also when the
  first POST was stored and only its answer was lost.
"""
from __future__ import annotations

import json

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from playwright.sync_api import Page, expect

from annotation.models import Judgment, Study
from annotation.services.campaign_import import import_campaign

from .screens import open_page, start_hit

pytestmark = pytest.mark.browser

RLO = "\u202e"


def _lines(candidate: str, n: int = 35) -> list[str]:
    return [json.dumps({"doc_id": "d1", "seg_id": i + 1, "source": f"Quelle {i}.", "reference": f"Reference {i}.",
                        "systems": {"sys-A": candidate if i == 0 else f"Translation {i} of A.",
                                    "sys-B": candidate if i == 0 else f"Translation {i} of B."}})
            for i in range(n)]


def _right_edge(page: Page, selector: str) -> float:
    """The right edge of the rightmost glyph box of `selector`'s text (an overridden run can end anywhere)."""
    return page.evaluate("""(selector) => {
        const el = document.querySelector(selector), range = document.createRange();
        const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
        let right = -Infinity, node;
        while ((node = walker.nextNode())) {
          range.selectNodeContents(node);
          for (const box of range.getClientRects()) { right = Math.max(right, box.right); }
        }
        return right;
    }""", selector)


def _bidi(page: Page, selector: str) -> str:
    return page.evaluate("(s) => getComputedStyle(document.querySelector(s)).unicodeBidi", selector)


def test_an_open_right_to_left_override_stays_inside_the_segment_and_the_campaign_name(live_server, browser):
    candidate = f"The museum{RLO} opens again"
    campaign = import_campaign(_lines(candidate), name=f"Museum{RLO} news", protocol="esa", seed=3,
                               instructions="Mark the errors, then score.").campaign
    with open_page(browser, 1100, 800) as page:
        _, state = start_hit(page, live_server, campaign.slug, "bidi-1")
        page.click("#begin")
        assert state["item"]["candidate"] == candidate
        text = page.locator(".es-text").first
        expect(text).to_have_text(candidate)
        # The segment's container is isolated, and the [missing] marker after it stays to its right, read LTR.
        assert _bidi(page, ".es-text") == "isolate"
        missing = page.locator(".es-missing").first.bounding_box()
        assert missing["x"] >= _right_edge(page, ".es-text") - 0.5
        # The campaign name in the header is a <bdi>: the Instructions button after it stays to its right.
        assert _bidi(page, ".campaign-name > bdi") == "isolate"
        assert page.locator("#show-instructions").bounding_box()["x"] >= _right_edge(page, ".campaign-name > bdi") - 0.5
        assert page.js_errors == []


def test_an_open_right_to_left_override_stays_inside_a_campaign_name_on_a_results_page(live_server, browser):
    """The study page lists each campaign's name with its protocol after it: the protocol stays after the name."""
    researcher = get_user_model().objects.create_user("bidi-researcher", is_staff=True)
    import_campaign(_lines("A translation."), name=f"Museum{RLO} news", protocol="adequacy", seed=3, owner=researcher,
                    study="Bidi study")
    client = Client()
    client.force_login(researcher)
    with open_page(browser, 1100, 800) as page:
        page.context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value,
                                   "url": live_server.url}])
        page.goto(f"{live_server.url}/results/study/{Study.objects.get(name='Bidi study').slug}/")
        name = "li a bdi"
        assert _bidi(page, name) == "isolate"
        assert page.locator("li .meta").first.bounding_box()["x"] >= _right_edge(page, name) - 0.5
        assert page.js_errors == []


@pytest.mark.parametrize("failure", ["500", "network", "stored-then-lost"])
def test_a_failed_submit_is_sent_again_by_itself_and_stored_once(live_server, browser, failure):
    """The first POST fails (a 500 page, a dropped connection, or stored on the server with the answer lost on the
    way back); the page sends it again after a short pause and moves on to item 2 by itself."""
    campaign = import_campaign(_lines("A plain translation."), name="Retry", protocol="adequacy", seed=5).campaign
    posts: list[str] = []

    def first_post_fails(route):
        if route.request.method != "POST":
            return route.continue_()
        posts.append(route.request.post_data)
        if len(posts) > 1:
            return route.continue_()
        if failure == "500":
            return route.fulfill(status=500, content_type="text/html", body="<h1>Server Error (500)</h1>")
        if failure == "stored-then-lost":
            route.fetch()  # the server stores the judgment; its answer never reaches the page
        return route.abort("connectionreset")

    with open_page(browser, 1100, 800) as page:
        page.route("**/api/hit/**", first_post_fails)
        _, state = start_hit(page, live_server, campaign.slug, f"retry-{failure}")
        total = state["total"]
        expect(page.locator("#progress-text")).to_have_text(f"1 / {total}")
        page.focus("#vas-track")
        page.keyboard.press("End")
        page.click("#submit")
        expect(page.locator("#progress-text")).to_have_text(f"2 / {total}", timeout=8_000)
        assert len(posts) == 2 and posts[0] == posts[1]  # one automatic retry, of the same answer
        assert page.locator("#status").inner_text() == ""
        assert page.js_errors == []
    stored = Judgment.objects.filter(annotator__external_id=f"retry-{failure}")
    assert [j.score for j in stored] == [100]
