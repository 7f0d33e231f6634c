"""The admin's campaign list fits a 1280 px screen (issue 23): no horizontal scrolling, and a protocol's long label
does not wrap each row tall (the column shows the protocol's short name, its label as a tooltip)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from annotation.management.commands.load_demo import load_sample

pytestmark = pytest.mark.browser

SHOTS = Path(os.environ.get("SHOTS_DIR", "/tmp/shots-r23"))
USERNAME, PASSWORD = "list-researcher", "a-long-test-password-8"
PROTOCOLS = ("constituent-acceptance", "reference-translation", "mqm-sxs", "pairwise-adequacy", "source-adequacy")


def test_the_campaign_list_fits_1280_pixels(live_server, browser, db):
    get_user_model().objects.create_superuser(USERNAME, "list@example.org", PASSWORD)
    for name in PROTOCOLS:
        load_sample(name)
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.goto(f"{live_server.url}/admin/login/?next=/admin/annotation/campaign/")
    page.fill("#id_username", USERNAME)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page.locator("#result_list")).to_be_visible()
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "admin-campaign-list-1280.png"), full_page=True)
    widths = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.clientWidth, "
                           "document.querySelector('.results').scrollWidth, "
                           "document.querySelector('.results').clientWidth]")
    assert widths[0] <= widths[1] and widths[2] <= widths[3], f"the list scrolls sideways: {widths}"
    heights = page.locator("#result_list tbody tr").evaluate_all(
        "rows => rows.map(r => r.getBoundingClientRect().height)")
    # one row each (and reference translation's detect stage), none wrapped tall (a protocol label made 161 px)
    assert len(heights) == len(PROTOCOLS) + 1 and max(heights) < 90, heights
    label = page.locator("#result_list tbody td.field-protocol_name span").first
    assert ":" in label.get_attribute("title") or "(" in label.get_attribute("title")  # the full label on hover
    context.close()
