"""The power-and-cost page in a real browser (docs/methods.md §12.3): from a campaign's results, the link to the
form, a bad δ shown as an error, then an estimate with its plan and power curve; photographed for docs/
(`SCREENSHOT_DIR=docs` refreshes docs/screenshots/power-form.png)."""
from __future__ import annotations

import random

import pytest
from django.contrib.auth import get_user_model

from annotation.services.judgment_import import import_judgments
from evaluation.analyses import compute_results

from .screens import open_page
from .test_results_screens import DOCS, _da_file, _login

pytestmark = [pytest.mark.browser, pytest.mark.urls("tests.test_results_pages")]


def test_power_page(live_server, browser):
    user = get_user_model().objects.create_user("power-screens", password="pw", is_staff=True)
    campaign = import_judgments(_da_file(random.Random(2018)), fmt="wmt-da",
                                name="WMT-style newstest, German→English adequacy (pilot)", owner=user).campaign
    campaign.payment_per_hit, campaign.redundancy = "1.50", 2
    campaign.save(update_fields=["payment_per_hit", "redundancy"])
    compute_results(campaign)

    with open_page(browser, 1280, 900) as page:
        page.set_default_navigation_timeout(60_000)
        _login(page.context, live_server, user)
        page.goto(f"{live_server.url}/results/{campaign.slug}/")
        page.get_by_role("link", name="Power and cost").click()
        page.wait_for_url(f"**/results/{campaign.slug}/power/")
        assert page.locator("#power-answer").count() == 0

        page.fill("#id_delta", "five")
        page.get_by_role("button", name="Estimate").click()
        page.wait_for_load_state()
        assert "delta must be a number" in page.locator("#power-error").inner_text()

        page.fill("#id_delta", "5")
        page.fill("#id_power", "0.8")
        page.select_option("#id_scale", "raw")
        page.get_by_role("button", name="Estimate").click()
        page.wait_for_selector("#power-answer", timeout=60_000)  # the simulation runs in the request
        assert page.locator("#power-error").count() == 0
        heading = page.locator("#power-answer h2").inner_text()
        assert heading.endswith("translations per system") and int(heading.split()[0]) > 10
        plan = dict(zip(page.locator("#power-plan th").all_inner_texts(), page.locator("#power-plan td")
                        .all_inner_texts(), strict=True))
        hits = int(plan["HITs (70 system outputs each)"].replace(",", ""))
        assert int(plan["Assignments paid (HITs × 2)"].replace(",", "")) == 2 * hits
        assert plan["Money (1.50 per assignment)"] == f"{3 * hits:.2f}"
        chart = page.locator("#power-answer svg.chart")
        assert chart.count() == 1 and chart.bounding_box()["width"] > 500
        assert chart.locator("circle.mark").count() >= 8
        page.screenshot(path=str(DOCS / "screenshots" / "power-form.png"), full_page=True)
        assert not page.js_errors and not page.csp
