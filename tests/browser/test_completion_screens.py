"""The rating page when a campaign is paused or closed under an open HIT, the done screen's copy button and
completion redirect, a returning worker's codes, and the untouched slider's hint, in a real browser
(docs/api.md §8)."""
from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from playwright.sync_api import Page, expect

from annotation.models import Assignment, Campaign, Judgment
from annotation.services.campaign_import import import_campaign
from annotation.services.judging import CLOSED_TEXT, PAUSED_TEXT

pytestmark = pytest.mark.browser

PROLIFIC = "https://app.prolific.com/submissions/complete?cc={code}"


def _campaign(name: str, **settings) -> Campaign:
    """One 20-item HIT (7 segments, 2 systems), for two workers unless `redundancy` says otherwise."""
    lines = [json.dumps({"doc_id": f"doc-{i // 4}", "seg_id": i % 4 + 1, "source": f"Quelle {i}.",
                         "reference": f"Reference sentence number {i}.",
                         "systems": {"sys-A": f"System A says {i}.", "sys-B": f"System B says {i}."}})
             for i in range(7)]
    settings = {"redundancy": 2, **settings}
    return import_campaign(lines, name=name, protocol="adequacy", seed=5, hit_size=20, **settings).campaign


def _enter(page: Page, live_server, campaign: Campaign, query: str) -> str:
    with page.expect_response(lambda r: "/api/hit/" in r.url and r.request.method == "GET"):
        page.goto(f"{live_server.url}/c/{campaign.slug}/start/?{query}")
    match = re.search(r"/hit/([^/]+)/$", page.url)
    assert match, page.url
    expect(page.locator("#screen")).to_be_visible()
    return match.group(1)


def _rate(page: Page, fraction: float = 0.6):
    box = page.locator("#vas-track").bounding_box()
    page.mouse.click(box["x"] + fraction * box["width"], box["y"] + box["height"] / 2)


def _submit(page: Page) -> int:
    with page.expect_response(lambda r: "/api/hit/" in r.url and r.request.method == "POST") as answer:
        page.locator("#submit").click()
    return answer.value.status


def _answer_by_api(token: str, count: int) -> dict:
    client = Client()
    state = client.get(f"/api/hit/{token}/").json()
    for _ in range(count):
        state = client.post(f"/api/hit/{token}/", json.dumps({"item": state["item"]["id"], "score": 50}),
                            content_type="application/json").json()
    return state


def test_pause_and_close_reach_the_open_page(live_server, desktop):
    page = desktop
    campaign = _campaign("Pause me")
    token = _enter(page, live_server, campaign, "worker_id=pw")
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    _rate(page)
    assert _submit(page) == 201
    expect(page.locator("#progress-text")).to_have_text("2 / 20")

    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.PAUSED)
    _rate(page, 0.3)
    assert _submit(page) == 423
    halted = page.locator("#halted")
    expect(halted).to_be_visible()
    expect(page.locator("#halted-title")).to_have_text("Paused")
    expect(page.locator("#halted-text")).to_have_text(PAUSED_TEXT)
    expect(page.locator("#screen")).to_be_hidden()
    expect(page.locator("#check-again")).to_be_visible()
    page.keyboard.press("Enter")  # nothing to submit while paused
    page.wait_for_timeout(300)
    assert len(posts) == 2 and Judgment.objects.count() == 1
    assert Assignment.objects.get(token=token).status == Assignment.Status.ACTIVE

    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.ACTIVE)
    page.locator("#check-again").click()
    expect(page.locator("#screen")).to_be_visible()
    expect(halted).to_be_hidden()
    expect(page.locator("#progress-text")).to_have_text("2 / 20")
    expect(page.locator("#submit")).to_be_disabled()  # the item starts untouched again
    _rate(page, 0.3)
    assert _submit(page) == 201
    assert Judgment.objects.count() == 2

    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.CLOSED)
    _rate(page, 0.8)
    assert _submit(page) == 410
    expect(page.locator("#halted-title")).to_have_text("Campaign closed")
    expect(page.locator("#halted-text")).to_have_text(CLOSED_TEXT)
    expect(page.locator("#check-again")).to_be_hidden()
    expect(page.locator("#screen")).to_be_hidden()
    assert Judgment.objects.count() == 2
    page.reload()
    expect(page.locator("body")).to_contain_text(CLOSED_TEXT)
    assert page.js_errors == []


def test_done_screen_copies_the_code_then_goes_to_the_completion_url(live_server, browser):
    campaign = _campaign("Prolific", completion_url=PROLIFIC)
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    context.set_default_timeout(10_000)
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    context.route("https://app.prolific.com/**", lambda route: route.fulfill(
        status=200, content_type="text/html", body="<p id='prolific'>Submission complete</p>"))
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        token = _enter(page, live_server, campaign, "PROLIFIC_PID=P-1&STUDY_ID=S1&SESSION_ID=X1")
        _answer_by_api(token, 19)
        with page.expect_response(lambda r: "/api/hit/" in r.url and r.request.method == "GET"):
            page.reload()
        expect(page.locator("#progress-text")).to_have_text("20 / 20")
        _rate(page)
        assert _submit(page) == 201
        code = Assignment.objects.get(token=token).completion_code
        url = PROLIFIC.format(code=code)
        expect(page.locator("#done")).to_be_visible()
        expect(page.locator("#completion-code")).to_have_text(code)
        expect(page.locator("#closed-note")).to_be_hidden()
        expect(page.locator("#completion-next")).to_be_visible()
        expect(page.locator("#completion-link")).to_have_attribute("href", url)
        copy = page.locator("#copy-code")
        expect(copy).to_be_visible()
        copy.click()
        expect(copy).to_have_text("Copied")
        assert page.evaluate("navigator.clipboard.readText()") == code
        page.wait_for_url(url)  # after a moment on the code, the page goes on to Prolific with it
        expect(page.locator("#prolific")).to_be_visible()
    finally:
        context.close()
    assert errors == []


def test_a_returning_worker_sees_and_copies_their_code_with_or_without_javascript(live_server, browser, desktop):
    campaign = _campaign("Return", redundancy=1)
    token = _enter(desktop, live_server, campaign, "worker_id=back")
    code = _answer_by_api(token, 20)["completion_code"]

    desktop.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    desktop.goto(f"{live_server.url}/c/{campaign.slug}/start/?worker_id=back")
    expect(desktop.locator("#finished")).to_contain_text("You have finished your work in this campaign")
    expect(desktop.locator("#completion-code-1")).to_have_text(code)
    desktop.locator("button[data-copy]").click()
    expect(desktop.locator("button[data-copy]")).to_have_text("Copied")
    assert desktop.evaluate("navigator.clipboard.readText()") == code

    # Closed since: the rating page still shows the code, and says the campaign closed.
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.CLOSED)
    desktop.goto(f"{live_server.url}/hit/{token}/")
    expect(desktop.locator("#done")).to_be_visible()
    expect(desktop.locator("#closed-note")).to_have_text(CLOSED_TEXT)
    expect(desktop.locator("#completion-code")).to_have_text(code)
    expect(desktop.locator("#completion-next")).to_be_hidden()  # no completion URL: nowhere to go
    assert desktop.js_errors == []

    # The same browser (its cookies) with JavaScript off; codes are shown only where they were earned.
    context = browser.new_context(java_script_enabled=False, storage_state=desktop.context.storage_state())
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/c/{campaign.slug}/start/?worker_id=back")
        expect(page.locator("#completion-code-1")).to_have_text(code)  # plain text to select
        expect(page.locator("button[data-copy]")).to_be_hidden()  # no button that cannot work
        assert page.locator("#completion-code-1").evaluate("e => getComputedStyle(e).userSelect") == "all"
    finally:
        context.close()


def test_the_untouched_slider_says_how_to_rate(live_server, desktop):
    page = desktop
    campaign = _campaign("Hint")
    _enter(page, live_server, campaign, "worker_id=hint")
    hint, ghost, thumb = page.locator("#vas-hint"), page.locator("#vas-ghost"), page.locator("#vas-thumb")
    expect(hint).to_be_visible()
    expect(hint).to_contain_text("Click or drag")
    expect(thumb).to_be_hidden()  # no position is suggested
    expect(ghost).to_be_hidden()
    box = page.locator("#vas-track").bounding_box()
    page.mouse.move(box["x"] + 0.3 * box["width"], box["y"] + box["height"] / 2)
    expect(ghost).to_be_visible()  # a faint handle where a click would put it
    left = ghost.evaluate("e => parseFloat(e.style.left)")
    assert abs(left - 30) < 2
    page.mouse.move(box["x"] + 0.3 * box["width"], box["y"] + 200)
    expect(ghost).to_be_hidden()
    _rate(page, 0.6)
    expect(thumb).to_be_visible()
    expect(hint).to_be_hidden()
    expect(ghost).to_be_hidden()
    assert _submit(page) == 201
    expect(hint).to_be_visible()  # the next item starts untouched
    expect(thumb).to_be_hidden()
    assert page.js_errors == []
