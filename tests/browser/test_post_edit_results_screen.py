"""The post-editing results page in a real browser: a whole HTER task (edits, the verify stage built by itself,
verdicts) judged through the annotator API, then the page with its HTER table, the editors curve, the stages
and the edits; photographed for docs/ (`SCREENSHOT_DIR=docs` refreshes docs/screenshots/results-hter.png)."""
from __future__ import annotations

import random

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Campaign
from evaluation.analyses import compute_results

from ..test_post_edit import edit_all, post_edit_campaign, verify_all
from .test_results_screens import DOCS, _login

pytestmark = [pytest.mark.browser, pytest.mark.urls("tests.test_results_pages")]


def test_hter_results_page(live_server, browser, django_capture_on_commit_callbacks):
    user = get_user_model().objects.create_user("hter-screens", password="pw", is_staff=True)
    campaign = post_edit_campaign()
    Campaign.objects.filter(pk=campaign.pk).update(owner=user, name="News de-en, HTER (post-editing)")
    Campaign.objects.filter(stage_input=campaign).update(owner=user)
    with django_capture_on_commit_callbacks(execute=True):
        edit_all(campaign, ["ed1", "ed2", "ed3", "ed4", "vandal1"], random.Random(3))
    verify_all(Campaign.objects.get(stage_input=campaign), ["v1", "v2", "v3"])
    compute_results(campaign)

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    _login(context, live_server, user)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    response = page.goto(f"{live_server.url}/results/{campaign.slug}/")
    assert response.status == 200
    rows = page.locator("#system-table tbody tr:not(.cluster-break) td.name")
    assert rows.all_text_contents() == ["good", "fair", "poor"]
    assert page.locator("#curve svg.chart").count() == 1
    assert page.locator("#stages li.stage").count() == 2  # the task as a pipeline: edit → verify
    assert page.locator("#stages .stage-waiting").all_text_contents()[0] == "complete"
    page.screenshot(path=str(DOCS / "screenshots" / "results-hter.png"), full_page=True)
    assert not errors
    context.close()
