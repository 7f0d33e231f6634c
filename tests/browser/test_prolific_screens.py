"""The Prolific admin in a real browser (docs/api.md §9), against the local fake Prolific: the researcher sets their
token (never shown again), adds the campaign's study and reads its payment check, creates the draft after the
confirmation page, publishes it, syncs two submissions and approves them from the review page after one
confirmation. A blocked worker's page shows the gated code (phone size: annotators' screen).

Screenshots go to SCREENSHOT_DIR (default: a temporary folder)."""
from __future__ import annotations

import os
import tempfile
from decimal import Decimal
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from annotation.models import Annotator
from annotation.services import assignment as assigning
from prolific.models import ProlificAccount, ProlificStudy

from ..conftest import as_bytes, campaign_lines
from ..prolific.fake import TOKEN, FakeProlific

pytestmark = pytest.mark.browser

SHOTS = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="mteval-shots-"))
USERNAME, PASSWORD = "prolific-researcher", "a-long-test-password-9"


def test_token_study_draft_publish_and_review(live_server, browser, transactional_db, settings):
    from annotation.services.campaign_import import import_campaign

    fake = FakeProlific(TOKEN).start()
    settings.PROLIFIC_API_BASE_URL = fake.url
    user = get_user_model().objects.create_user(USERNAME, password=PASSWORD, is_staff=True)
    campaign = import_campaign(as_bytes(campaign_lines()), name="News de-en", protocol="adequacy", redundancy=3,
                               seed=7, owner=user, payment_per_hit=Decimal("2.40")).campaign
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(10_000)
    page, base = context.new_page(), live_server.url
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(f"{base}/admin/")
        page.fill("#id_username", USERNAME)
        page.fill("#id_password", PASSWORD)
        page.click("input[type=submit]")
        page.goto(f"{base}/admin/prolific/prolificaccount/add/")
        page.fill("#id_token", TOKEN)
        page.screenshot(path=SHOTS / "prolific-token-form.png", full_page=True)
        page.click("input[name=_save]")
        expect(page.locator("#result_list")).to_contain_text("set")
        assert TOKEN not in page.content() and ProlificAccount.objects.get(user=user).token() == TOKEN

        page.goto(f"{base}/admin/prolific/prolificstudy/add/")
        page.select_option("#id_campaign", str(campaign.pk))
        page.fill("#id_name", "Rate news translations")
        page.fill("#id_description", "Rate 100 translations of news sentences from German into English.")
        page.fill("#id_estimated_minutes", "14")
        page.fill("#id_bonus_share", "0.20")
        page.click("input[name=_continue]")
        expect(page.locator(".field-payment_check")).to_contain_text("10.29 per hour")
        page.screenshot(path=SHOTS / "prolific-study-panel.png", full_page=True)

        page.goto(f"{base}/admin/prolific/prolificstudy/")
        page.check("input[name=_selected_action]")
        page.select_option("select[name=action]", "create_draft")
        page.click("button[name=index]")
        expect(page.locator("input[value='Yes, go on']")).to_be_visible()
        page.screenshot(path=SHOTS / "prolific-confirm-create.png", full_page=True)
        assert not fake.studies
        page.click("input[value='Yes, go on']")
        study = ProlificStudy.objects.get()
        assert study.status == "draft" and fake.studies[study.prolific_id]["total_available_places"] == 3
        page.check("input[name=_selected_action]")
        page.select_option("select[name=action]", "publish")
        page.click("button[name=index]")
        page.click("input[value='Yes, go on']")
        study.refresh_from_db()
        assert study.status == "published"

        for participant in ("5f1a2b3c4d5e6f7a8b9c0d1e", "60aa11bb22cc33dd44ee55ff"):
            submission = fake.start_submission(study.prolific_id, participant)
            fake.submit_code(submission["id"], study.codes["completed"])
        page.goto(f"{base}/admin/prolific/prolificstudy/{study.pk}/review/")
        page.click("input[name=sync]")
        expect(page.locator("#review-table tbody tr")).to_have_count(2)
        page.screenshot(path=SHOTS / "prolific-review.png", full_page=True)
        for box in page.locator("#review-table input[type=checkbox]").all():
            box.check()
        page.click("input[value='Review decision…']")
        expect(page.locator("#confirm-box")).to_contain_text("Approve 2 submission(s)?")
        page.screenshot(path=SHOTS / "prolific-review-confirm.png", full_page=True)
        page.click("input[value='Yes, approve']")
        expect(page.locator("#review-table")).to_contain_text("APPROVED")
        assert {s["status"] for s in fake.submissions.values()} == {"APPROVED"}
        page.screenshot(path=SHOTS / "prolific-review-done.png", full_page=True)

        worker = Annotator.objects.create(external_id="blocked-1", source="prolific")
        assigning.block(campaign, worker)
        phone = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
        phone.goto(f"{base}/c/{campaign.slug}/start/?PROLIFIC_PID=blocked-1&STUDY_ID={study.prolific_id}"
                   "&SESSION_ID=abc123")
        expect(phone.locator(".completion-code")).to_have_text(study.codes["gated"])
        phone.screenshot(path=SHOTS / "prolific-gated-code-phone.png", full_page=True)
        assert errors == []
    finally:
        context.close()
        fake.stop()
