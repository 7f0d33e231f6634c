"""The review stage of MQM in Chromium (docs/methods.md "Review of error spans", docs/api.md "Review of error
spans"): a reviewer sees another judge's spans marked "first pass", keeps one, changes one's extent, deletes one
and adds a missing one, and the stored answer says so; on a phone, the Keep buttons and the slider are enough to
submit. Screenshots: docs/screenshots/mqm-review.png and mqm-review-phone.png when SCREENSHOT_DIR=docs."""
from __future__ import annotations

import pytest
from django.test import Client
from playwright.sync_api import expect

from annotation.models import Campaign, Judgment

from ..test_span_review import FIRST, TEXTS, first_pass, review_campaign, span
from .screens import open_page, post_of, start_hit
from .test_error_span_screens import _shots, click_slider, marks, select_range

pytestmark = pytest.mark.browser


def _keep_all(page) -> None:
    for button in page.locator(".sr-keep").all():
        button.click()


def test_a_review_keeps_changes_deletes_and_adds(live_server, browser):
    campaign = review_campaign(reviewers=2)
    first_pass(campaign)  # the finished HIT builds the review stage (eager Celery in the tests)
    stage = Campaign.objects.get(stage_input=campaign)
    text = TEXTS[0]
    with open_page(browser, 1200, 900) as page:
        _, state = start_hit(page, live_server, stage.slug, "reviewer-1")
        if state["item"]["candidate"] != text:  # the short text first: its one span kept
            expect(page.locator(".sr-item")).to_have_count(1)
            _keep_all(page)
            click_slider(page, 0.7)
            assert post_of(page, lambda: page.click("#submit"))[0] == 201
        expect(page.locator(".sr-item")).to_have_count(3)
        assert [(m["text"], m["label"]) for m in marks(page)] == [
            ("old", "first pass · Mistranslation"), ("bridge", "first pass · Mistranslation"),
            ("cars", "first pass · Style")]
        expect(page.locator("#submit")).to_be_disabled()
        expect(page.locator("#sr-waiting")).to_contain_text("3 errors of the first pass to keep, edit or delete")
        rows = page.locator(".sr-item")
        rows.nth(2).locator(".sr-keep").click()                      # "cars": kept
        rows.nth(1).locator(".sr-delete").click()                    # "bridge": deleted
        expect(rows.nth(1)).to_have_class("sr-item sr-deleted")
        rows.nth(0).locator(".sr-edit").click()                      # "old": its extent becomes "old bridge"
        select_range(page, text, text.index("old"), text.index("bridge") + len("bridge"))
        page.locator(".sr-bounds").click()
        expect(rows.nth(0)).to_contain_text("changed to “old bridge” — Major")
        select_range(page, text, text.index("spring"), text.index("spring") + len("spring"))  # added
        page.locator(".es-group", has_text="Accuracy").click()
        page.locator(".es-child", has_text="Omission").click()
        page.locator(".es-severity", has_text="Major").click()
        expect(page.locator("#sr-waiting")).to_have_text("Still to do: the score.")
        click_slider(page, 0.4)
        page.mouse.move(0, 0)
        page.screenshot(path=str(_shots() / "mqm-review.png"), full_page=True)
        status, body, _ = post_of(page, lambda: page.click("#submit"))
        assert status == 201, body
        judgment = Judgment.objects.get(campaign=stage, annotator__external_id="reviewer-1",
                                        answer__first_pass=FIRST[text])
        assert [e["action"] for e in judgment.answer["review"]] == ["changed", "deleted", "kept"]
        assert judgment.answer["review"][0]["to"] == span(text, "old bridge", "major")
        assert judgment.answer["added"] == [span(text, "spring", "major", "Accuracy/Omission")]
        assert [s["origin"] for s in judgment.spans] == ["changed", "kept", "added"]
        assert page.js_errors == [] and page.csp == []

    # A phone: a second reviewer keeps every span with taps and scores with the slider.
    with open_page(browser, 390, 844, is_mobile=True, has_touch=True, device_scale_factor=2) as page:
        start_hit(page, live_server, stage.slug, "reviewer-phone")
        expect(page.locator(".sr-item").first).to_be_visible()
        _keep_all(page)
        click_slider(page, 0.8)
        page.evaluate("window.scrollTo(0, 0)")
        page.screenshot(path=str(_shots() / "mqm-review-phone.png"), full_page=True)
        assert post_of(page, lambda: page.locator("#submit").tap())[0] == 201
        assert page.js_errors == [] and page.csp == []
    phone = Judgment.objects.filter(campaign=stage, annotator__external_id="reviewer-phone").first()
    assert {e["action"] for e in phone.answer["review"]} == {"kept"} and phone.answer["added"] == []
    assert Client().get(f"/c/{stage.slug}/start/", {"worker_id": "judge-1"}).status_code != 302


def _review_anthea_item(page, shot: str) -> dict:
    """Review the item shown: over the prior pass, restore the deleted error (then marked in the text, noted
    "restored"; taking it out there un-restores it, and Restore brings it back); elsewhere keep Anthea's
    Style/Awkward, a category the default taxonomy lacks. The posted answer."""
    box = page.locator("#sr-deleted-box")
    if box.is_visible():
        expect(box.locator(".sr-item")).to_have_count(1)
        expect(box.locator(".sr-item s")).to_have_text("“saß” — Minor, Fluency/Grammar")
        box.locator(".sr-restore").click()
        expect(box.locator(".sr-item")).to_have_class("sr-item sr-restored")
        assert [(m["text"], m["label"]) for m in marks(page)] == [
            ("Katze", "first pass · Mistranslation"), ("saß", "restored · Grammar")]
        page.locator("mark.es-span", has_text="saß").click()  # taken out in the text: no longer restored
        page.keyboard.press("Delete")
        expect(box.locator(".sr-item")).to_have_class("sr-item sr-deleted")
        assert [m["text"] for m in marks(page)] == ["Katze"]
        box.locator(".sr-restore").click()
        expect(page.locator("mark.es-span", has_text="saß")).to_have_count(1)
    else:
        assert [(m["text"], m["label"]) for m in marks(page)] == [("laut", "first pass · Awkward")]
    _keep_all(page)
    page.locator(".vas-track").scroll_into_view_if_needed()
    click_slider(page, 0.6)
    page.mouse.move(0, 0)
    page.screenshot(path=str(_shots() / shot), full_page=True)
    status, body, _ = post_of(page, lambda: page.click("#submit"))
    assert status == 201, body
    return body


def test_a_review_of_an_anthea_pass_restores_an_error_it_deleted(live_server, browser):
    """An imported Anthea judgment made over a prior rater's pass: its review lists the deleted error struck through,
    Restore brings it back and marks it in the translation, and the answer says which (docs/methods.md §9.4); the
    other judgment's Style/Awkward is kept. Desktop and phone screenshots: mqm-review-anthea(-2).png,
    mqm-review-anthea-phone(-2).png."""
    import io
    import json

    from annotation.services.judgment_import import import_judgments
    from annotation.services.stages import add_stages

    from ..test_anthea_format import evaluation

    record = evaluation(errors=[
        {"location": "translation", "prefix": "Die ", "selected": "Katze", "type": "Accuracy",
         "subtype": "Mistranslation", "severity": "major"},
        {"location": "translation", "prefix": "Die Katze ", "selected": "saß", "type": "Fluency",
         "subtype": "Grammar", "severity": "minor", "marked_deleted": True}])
    campaign = import_judgments(io.BytesIO(json.dumps(record).encode()), fmt="anthea", name="Anthea").campaign
    [stage] = add_stages(campaign, {"review": "judges", "reviewers": 2})  # one on a desktop, one on a phone
    phone = {"is_mobile": True, "has_touch": True, "device_scale_factor": 2}
    for width, height, shot, options in ((1200, 900, "mqm-review-anthea", {}),
                                         (390, 844, "mqm-review-anthea-phone", phone)):
        with open_page(browser, width, height, **options) as page:
            start_hit(page, live_server, stage.slug, f"reviewer-{width}")
            answers = [_review_anthea_item(page, f"{shot}.png")]
            expect(page.locator(".sr-item").first).to_be_visible()
            answers.append(_review_anthea_item(page, f"{shot}-2.png"))
            assert sorted(len(a.get("restored", [])) for a in answers) == [0, 1], answers
            assert not page.js_errors
    origins = sorted(tuple(s["origin"] for s in j.spans) for j in Judgment.objects.filter(campaign=stage))
    assert origins == [("kept",), ("kept",), ("kept", "restored"), ("kept", "restored")]
