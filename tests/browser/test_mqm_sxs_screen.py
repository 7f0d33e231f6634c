"""MQM side by side in Chromium (docs/methods.md#side-by-side, docs/api.md §8.3): three columns; marking
"museum" in one column makes that column say the same words in the other two are unmarked; "Mark in … too"
marks them there (and that column then points at the third), "Dismiss" hides a hint; what is stored: the spans
per column and each hint shown with its action. On a phone the columns stack and a hint appears under the
column marked. `SCREENSHOT_DIR=docs` writes docs/screenshots/mqm-sxs.png and mqm-sxs-phone.png."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotation.models import Judgment

from ..test_mqm_sxs import sxs_campaign
from .screens import open_page, post_of, start_hit
from .test_error_span_screens import select_range

pytestmark = pytest.mark.browser

SHOTS = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="mteval-shots-")) / "screenshots"


def _columns(item) -> dict[str, tuple[int, dict]]:
    """System (found by its text) -> (column index, candidate)."""
    names = {"The museum opens its doors on Saturday.": "alpha", "The museum opens its gates on Saturday.": "beta",
             "A museum reopens on Saturday.": "gamma"}
    return {names[c["text"]]: (n, c) for n, c in enumerate(item["candidates"])}


def test_three_columns_a_hint_marked_too_dismissed_and_recorded_on_desktop_and_phone(live_server, browser):
    campaign = sxs_campaign(redundancy=2)
    SHOTS.mkdir(parents=True, exist_ok=True)
    with open_page(browser, 1280, 900) as page:
        _, state = start_hit(page, live_server, campaign.slug, "sxs-desktop")
        item = state["item"]
        cols = _columns(item)
        expect(page.locator(".ces-col")).to_have_count(3)
        boxes = [page.locator(".ces-col").nth(n).bounding_box() for n in range(3)]
        assert abs(boxes[0]["y"] - boxes[2]["y"]) < 2 and boxes[2]["x"] > boxes[0]["x"] + boxes[0]["width"]
        (a, alpha), (b, beta), (g, gamma) = cols["alpha"], cols["beta"], cols["gamma"]
        letter = "ABC"
        # "museum" in alpha: minor, Style; alpha's column now points at beta and gamma
        select_range(page, alpha["text"], 4, 10, n=a)
        column = page.locator(".ces-col").nth(a)
        column.get_by_role("button", name="Minor").click()
        column.get_by_role("button", name="Style").click()
        hints = column.locator(".sxs-hint")
        expect(hints).to_have_count(2)
        expect(hints.nth(0)).to_contain_text("“museum” is marked here; the same words in")
        assert sorted(h.text_content().split(" in ")[1][0] for h in hints.all()) == sorted(letter[b] + letter[g])
        # Mark it in beta too: beta's column then points at gamma; dismiss alpha's hint about gamma
        column.get_by_role("button", name=f"Mark in {letter[b]} too").click()
        expect(hints).to_have_count(1)
        beta_hints = page.locator(".ces-col").nth(b).locator(".sxs-hint")
        expect(beta_hints).to_have_count(1)
        expect(beta_hints).to_contain_text(f"the same words in {letter[g]} are unmarked")
        page.mouse.move(0, 0)
        page.screenshot(path=str(SHOTS / "mqm-sxs.png"), full_page=True)
        hints.get_by_role("button", name="Dismiss").click()
        expect(hints).to_have_count(0)
        status, body, _ = post_of(page, lambda: page.click("#submit"))
        assert status == 201, body
        judgment = Judgment.objects.get(item_id=item["id"], annotator__external_id="sxs-desktop")
        museum = {"severity": "minor", "category": "Style"}
        assert sorted(judgment.spans, key=lambda s: s["candidate"]) == sorted(
            [{"start": 4, "end": 10, **museum, "candidate": alpha["key"]},
             {"start": 4, "end": 10, **museum, "candidate": beta["key"]}], key=lambda s: s["candidate"])
        recorded = {(h["from"], h["column"], h["text"], h["start"], h["action"]) for h in judgment.answer["hints"]}
        assert recorded == {(alpha["key"], beta["key"], "museum", 4, "marked"),
                            (alpha["key"], gamma["key"], "museum", 2, "dismissed"),
                            (beta["key"], gamma["key"], "museum", 2, "none")}
        assert all(h["shown"] >= 0 for h in judgment.answer["hints"])
        assert page.js_errors == [] and page.csp == []
    with open_page(browser, 375, 740, is_mobile=True, has_touch=True) as phone:
        _, state = start_hit(phone, live_server, campaign.slug, "sxs-phone")
        item = state["item"]
        (g, gamma) = _columns(item)["gamma"]
        assert phone.evaluate("document.documentElement.scrollWidth") <= 375
        first, last = phone.locator(".ces-col").nth(0).bounding_box(), phone.locator(".ces-col").nth(2).bounding_box()
        assert last["y"] >= first["y"] + first["height"]
        start = gamma["text"].index("Saturday")
        select_range(phone, gamma["text"], start, start + 8, n=g)
        column = phone.locator(".ces-col").nth(g)
        column.locator(".es-severity.sev-major").tap()
        column.get_by_role("button", name="Style").tap()
        expect(column.locator(".sxs-hint")).to_have_count(2)
        column.locator(".sxs-hint").first.scroll_into_view_if_needed()
        phone.screenshot(path=str(SHOTS / "mqm-sxs-phone.png"), full_page=True)
        status, _, _ = post_of(phone, lambda: phone.tap("#submit"))
        assert status == 201
        judgment = Judgment.objects.get(item_id=item["id"], annotator__external_id="sxs-phone")
        assert judgment.spans == [{"start": start, "end": start + 8, "severity": "major", "category": "Style",
                                   "candidate": gamma["key"]}]
        assert sorted((h["from"], h["action"]) for h in judgment.answer["hints"]) == [(gamma["key"], "none")] * 2
        assert phone.js_errors == []
