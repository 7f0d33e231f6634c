"""Ranking stability on the results page in a real browser (docs/methods.md §12.4): the researcher presses the
button, the bootstrap runs (in-process here), and the section shows the rank-probability chart with the
stable-ranking probability and its data table; photographed as docs/screenshots/stability-chart.png."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from annotation.services.judgment_import import import_judgments
from evaluation.analyses import compute_results

from .test_results_screens import _da_file, _login

pytestmark = [pytest.mark.browser, pytest.mark.urls("tests.test_results_pages")]
SHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "stability-chart.png"


def test_the_stability_chart_in_a_browser(live_server, browser, settings):
    settings.STABILITY_RESAMPLES_PER_TASK = 100
    user = get_user_model().objects.create_user("stability", password="pw", is_staff=True)
    campaign = import_judgments(_da_file(random.Random(2018)), fmt="wmt-da", owner=user,
                                name="WMT-style newstest, German→English adequacy").campaign
    compute_results(campaign)

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    _login(context, live_server, user)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{live_server.url}/results/{campaign.slug}/#stability")
    section = page.locator("#stability")
    assert "Not computed for these results yet" in section.inner_text()
    section.locator("input[name=resamples]").fill("300")
    section.get_by_role("button", name="Run ranking stability").click()
    page.wait_for_url("**/#stability")

    assert "Ranking stability computed." in page.locator(".notices").inner_text()
    charts = section.locator("svg.chart")
    assert charts.count() == 2
    assert "stable-ranking probability" in charts.first.get_attribute("aria-label")
    box = charts.first.bounding_box()
    assert box["width"] > 400 and box["height"] > 250
    text = section.inner_text()
    assert "Stable-ranking probability" in text and "300 resamples" in text
    cells = section.locator("#stability-reliable rect.cell")
    assert cells.count() == 64  # 8 systems × 8 ranks
    section.locator("#stability-reliable summary").click()
    assert section.locator("#stability-table-reliable tbody tr").count() == 8
    section.locator("#stability-reliable summary").click()
    SHOT.parent.mkdir(parents=True, exist_ok=True)
    section.screenshot(path=str(SHOT))
    assert not errors
    context.close()
