"""A multi-stage task's pipeline in a real browser (docs/methods.md §9): the admin page of a later stage shows every
stage in order with its status and progress, and Publish there opens the whole task. Saves
docs/screenshots/stage-pipeline.png."""
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from annotation.models import Campaign

from ..test_reading_comprehension import work, write
from ..test_stage_lifecycle import draft_task

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "screenshots" / "stage-pipeline.png"


def test_the_pipeline_of_a_reading_comprehension_task(live_server, browser):
    boss = get_user_model().objects.create_superuser("boss", password="pw-boss")
    stages = draft_task("reading-comprehension", boss)
    first, vote = stages[0], stages[1]

    context = browser.new_context(viewport={"width": 1280, "height": 1000})
    context.set_default_timeout(10_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"{live_server.url}/admin/login/?next=/admin/annotation/campaign/{vote.pk}/change/")
        page.fill("#id_username", "boss")
        page.fill("#id_password", "pw-boss")
        page.click("input[type=submit]")
        pipeline = page.locator("#campaign-stages .stage-pipeline li.stage")
        expect(pipeline).to_have_count(4)
        expect(page.locator("#campaign-stages .stage-status")).to_have_text(["draft"] * 4)
        page.click("#publish")  # on the vote stage: the whole task opens
        expect(page.locator("ul.messagelist")).to_contain_text("with every stage of its task")
        expect(page.locator("#campaign-stages .stage-status")).to_have_text(["active"] * 4)
        assert set(Campaign.objects.filter(pk__in=[s.pk for s in stages]).values_list("status", flat=True)) == {
            "active"}

        work(first, ["w1", "w2"], write)  # the write stage done: the vote stage's HITs are built from it
        assert vote.hits.exists()
        page.reload()
        expect(pipeline.nth(0).locator(".stage-waiting")).to_have_text("complete")
        expect(pipeline.nth(1).locator(".stage-hits")).to_contain_text(f"0 / {vote.hits.count()} HITs done")
        expect(pipeline.nth(2).locator(".stage-waiting")).to_have_text("waiting for output of vote")
        places = first.hits.count() * first.redundancy  # the write stage done: every place of it (docs/api.md)
        expect(pipeline.nth(0).locator(".stage-places")).to_contain_text(f"{places} / {places} places done")
        expect(page.locator("#campaign-stages li.stage.current")).to_have_attribute("data-stage", "vote")
        SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
        page.locator("#campaign-overview").screenshot(path=str(SCREENSHOT))
        assert errors == []
    finally:
        context.close()
