"""Document-level DA on one page (`document_page`, docs/methods.md §1.1) in a real browser: every segment of the
document has its scale and the document's comes last, Submit waits until all are moved (by pointer or keyboard),
and the page goes in one POST of a batch, sent again by itself after a 5xx (static/annotation/hit.js submitBatch)
and stored once. The screenshot goes to a temporary folder; `SCREENSHOT_DIR=docs` refreshes
docs/screenshots/da-document-page.png."""
from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotation.models import HitItem, Judgment
from annotation.services.campaign_import import import_campaign

from .screens import open_page, start_hit
from .test_document_da_screen import _lines

pytestmark = pytest.mark.browser

DOCS = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="mteval-shots-")) / "screenshots"


def test_a_worker_rates_a_whole_document_on_one_page_sent_as_one_batch(live_server, browser):
    campaign = import_campaign(_lines(), name="WMT news de-en, document pages", protocol="adequacy", seed=2,
                               hit_size=40, options={"document_mode": True, "document_page": True}).campaign
    posts: list[str] = []

    def first_post_fails(route):
        if route.request.method != "POST":
            return route.continue_()
        posts.append(route.request.post_data)
        if len(posts) == 1:
            return route.fulfill(status=502, content_type="text/html", body="<h1>Bad gateway</h1>")
        return route.continue_()

    with open_page(browser, 1100, 900) as page:
        page.route("**/api/hit/**", first_post_fails)
        token, state = start_hit(page, live_server, campaign.slug, "page-1")
        items = list(HitItem.objects.filter(hit__assignments__token=token).order_by("position"))
        assert [entry["id"] for entry in state["page"]] == [i.id for i in items[:5]]
        rows = page.locator("#da-page .da-page-row")
        expect(rows).to_have_count(4)
        expect(page.locator("#da-one")).to_be_hidden()
        expect(page.locator("#da-page .vas-track")).to_have_count(5)  # four segments, then the document
        expect(page.locator(".da-page-whole .vas-track")).to_have_count(1)
        expect(rows.nth(0).locator(".da-black")).to_have_text(state["page"][0]["candidate"])
        expect(rows.nth(0).locator(".da-gray")).to_have_text(state["page"][0]["reference"])
        assert page.evaluate("getComputedStyle(document.querySelector('.da-page-row .da-black')).unicodeBidi") \
            == "isolate"
        hints = page.locator("#da-page .vas-hint")
        expect(hints).to_have_count(5)
        expect(hints.nth(0)).to_be_visible()  # the hint once, under the first scale, not under every one
        assert [hints.nth(k).is_visible() for k in range(5)] == [True, False, False, False, False]
        submit = page.locator("#submit")
        expect(submit).to_be_disabled()
        fractions = (0.8, 0.55, 0.3)
        for k, fraction in enumerate(fractions):  # three by pointer
            box = rows.nth(k).locator(".vas-track").bounding_box()
            page.mouse.click(box["x"] + fraction * box["width"], box["y"] + box["height"] / 2)
            expect(submit).to_be_disabled()
        page.keyboard.press("Tab")  # the fourth by keyboard, from the third's focus
        page.keyboard.press("End")
        expect(submit).to_be_disabled()
        page.keyboard.press("Tab")  # the document's scale
        page.keyboard.press("Home")
        for _ in range(3):
            page.keyboard.press("PageUp")
        expect(submit).to_be_enabled()
        page.mouse.move(0, 0)
        DOCS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS / "da-document-page.png"), full_page=True)
        page.keyboard.press("Enter")
        expect(page.locator("#progress-text")).to_have_text(re.compile(r"^6 / "), timeout=8_000)
        assert len(posts) == 2 and posts[0] == posts[1]  # one automatic retry, of the same batch
        batch = json.loads(posts[0])["batch"]
        assert [a["item"] for a in batch] == [i.id for i in items[:5]]
        # the next document's page, untouched
        expect(page.locator("#da-page .da-page-row")).to_have_count(4)
        expect(submit).to_be_disabled()
        assert page.locator("#status").inner_text() == ""
        assert page.js_errors == [] and page.csp == []
    scores = list(Judgment.objects.filter(assignment__token=token).order_by("item__position")
                  .values_list("score", flat=True))
    assert scores[:3] == pytest.approx([100 * f for f in fractions], abs=2)
    assert scores[3:] == [100, 30]


ARABIC = ("وافق مجلس المدينة على الميزانية الجديدة مساء الثلاثاء.", "سيذهب معظم المال إلى المدارس والجسور.",
          "قال بعض الأعضاء إن الخطة لا تكفي للنقل العام.", "وعد العمدة بحزمة ثانية من الإجراءات قبل الصيف.")


def test_a_right_to_left_document_page_on_a_phone(live_server, browser):
    lines = [json.dumps({"doc_id": f"news-{d}", "seg_id": k + 1, "source": f"Quelle {d}.{k}.", "reference": text,
                         "systems": {"online-A": text + " أ", "uedin": text + " ب"}})
             for d in range(8) for k, text in enumerate(ARABIC)]
    campaign = import_campaign(lines, name="WMT news de-ar, document pages", protocol="adequacy", seed=2,
                               hit_size=40, target_language="ar",
                               options={"document_mode": True, "document_page": True, "sqm_labels": True}).campaign
    with open_page(browser, 390, 844, is_mobile=True, has_touch=True) as page:
        start_hit(page, live_server, campaign.slug, "page-ar")
        rows = page.locator("#da-page .da-page-row")
        expect(rows).to_have_count(4)
        assert rows.nth(0).locator(".da-black").get_attribute("dir") == "rtl"
        assert rows.nth(0).locator(".da-gray").get_attribute("dir") == "rtl"
        expect(page.locator("#da-page .vas-sqm")).to_have_count(5)  # SQM's marks on every scale
        assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
        for k in range(5):
            page.locator("#da-page .vas-track").nth(k).focus()
            page.keyboard.press("End")
        expect(page.locator("#submit")).to_be_enabled()
        DOCS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(DOCS / "da-document-page-phone.png"), full_page=True)
        assert page.js_errors == []
