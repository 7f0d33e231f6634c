"""The admin's page of an adaptive campaign in a real browser (docs/methods.md §12.2): budget, spend and projected
spend, the pairs still open with z against the boundary, the looks, and "Run a look now". Saves
docs/screenshots/adaptive-admin.png."""
import random
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from evaluation.models import AdaptiveRun
from evaluation.services.adaptive import look_after_batch

from ..adaptive_helpers import adaptive_campaign, finish_batch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "adaptive-admin.png"
#: sys-B and sys-C close: their pair stays open while sys-A is clear of sys-B.
QUALITY = {"sys-A": 88.0, "sys-B": 55.0, "sys-C": 52.0}


def test_the_adaptive_admin_page(live_server, browser, make_campaign):
    # futility off: the close pair stays open for the page to show (with it, it may be given up at half the budget)
    campaign = adaptive_campaign(make_campaign, n_segments=30, adaptive_futility=0,
                                 fields={"name": "News de-en (adaptive)", "payment_per_hit": Decimal("0.50")})
    rng = random.Random(2)
    for _ in range(2):
        finish_batch(campaign, QUALITY, rng, noise=12.0)
        assert look_after_batch(campaign).decision == "next-batch"
    finish_batch(campaign, QUALITY, rng, workers=("w-1",), noise=12.0)  # batch 3 half done
    run = AdaptiveRun.objects.get(campaign=campaign)
    get_user_model().objects.create_superuser("boss", password="pw-boss")

    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    context.set_default_timeout(10_000)
    page = context.new_page()
    errors, csp = [], []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda m: csp.append(m.text) if "Content Security Policy" in m.text else None)
    try:
        page.goto(f"{live_server.url}/admin/login/?next=/admin/evaluation/adaptiverun/")
        page.fill("#id_username", "boss")
        page.fill("#id_password", "pw-boss")
        page.click("input[type=submit]")
        page.click(f"text={campaign.name}")
        assert page.url.endswith(f"/admin/evaluation/adaptiverun/{run.pk}/change/")
        expect(page.locator("#adaptive-state")).to_have_text("running")
        expect(page.locator("#adaptive-looks tr")).to_have_count(3)  # header and two looks
        page.click("#run-look")
        expect(page.locator(".messagelist")).to_contain_text("batch 3 is still out")
        expect(page.locator("#adaptive-looks tr")).to_have_count(4)
        budget = page.locator("#adaptive-budget")
        expect(budget).to_contain_text("Projected spend")
        expect(budget).to_contain_text("320")
        expect(budget).to_contain_text("8.00")  # 8 HITs × 2 workers × 0.50
        expect(page.locator("#adaptive-open-pairs")).to_contain_text("sys-C")
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOT), full_page=True)
    finally:
        context.close()
    assert errors == [] and csp == []
    assert len(AdaptiveRun.objects.get(pk=run.pk).looks) == 3
