"""The instructions box and the instruction judgment in Chromium (issue 26, docs/api.md#instructions): a contrastive
ESA item whose line carries instructions (with markup, shown as text) shows them in a labelled box apart from the
source, and one yes / partly / no row per translation above Submit; Submit without them says what is missing and
posts nothing; answered, the judgment is stored with the screen's own answer. One page load; the screenshot goes to
docs/screenshots/instructions-contrastive-esa.png."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotation.models import Judgment
from annotation.protocols import get_protocol
from annotation.services.campaign_import import import_campaign

from .screens import is_hit_api, post_of
from .screens import open_page as _page
from .screens import start_hit as _start

pytestmark = pytest.mark.browser
SHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
RULES = "Register: formal. Keep <b>product names</b> in English. At most 25 words."
LINES = [
    {"doc_id": "shop", "seg_id": 1, "source": "Der neue Akku hält zwei Tage durch.", "instructions": RULES,
     "systems": {"alpha": "The new battery lasts two days.", "beta": "Ur new battery lasts like 2 days lol."}},
    {"doc_id": "shop", "seg_id": 2, "source": "Laden Sie ihn über USB-C auf.",
     "systems": {"alpha": "Charge it over USB-C.", "beta": "Charge it via USB-C."}},
]


def test_instructions_box_and_judgment_on_contrastive_esa(live_server, browser):
    parsed = get_protocol("contrastive-esa").parse_options({
        "seed": 3, "source_language": "de", "target_language": "en", "perturbation_rate": 0.0,
        "segments_per_hit": 2, "instruction_judgment": "true"})
    campaign = import_campaign([(json.dumps(line) + "\n").encode() for line in LINES], name="Shop texts, instructions",
                               protocol="contrastive-esa", parsed=parsed).campaign
    with _page(browser, 1280, 900) as page:
        _, state = _start(page, live_server, campaign.slug, "ij-desktop")
        item = state["item"]
        assert item["instructions"] == RULES
        box = page.locator("#item-instructions")
        expect(box).to_be_visible()
        expect(box.locator("h2")).to_have_text("Instructions the translation had to follow")
        expect(page.locator("#item-instructions-text")).to_have_text(RULES)  # as text: the markup is not HTML
        assert page.locator("#item-instructions-text b").count() == 0
        source = page.locator("#ces-source").bounding_box()
        assert box.bounding_box()["y"] + box.bounding_box()["height"] <= source["y"]  # apart from the source
        rows = page.locator(".ij-row")
        expect(rows).to_have_count(2)
        expect(rows.nth(0).locator(".ij-label")).to_have_text("Translation A")
        fieldset = page.locator("#instruction-judgment").bounding_box()
        assert fieldset["y"] + fieldset["height"] <= page.locator("#submit").bounding_box()["y"]  # above Submit
        for n in (0, 1):  # the screen's own answer: both sliders to 60
            page.locator(".vas-track").nth(n).focus()
            page.keyboard.press("PageUp")
        posted = []
        page.on("request", lambda r: posted.append(r) if is_hit_api("POST")(r) else None)
        page.locator("#submit").click()
        expect(page.locator("#status")).to_have_text("Say whether Translation A followed the instructions: yes, partly "
                                                     "or no.")
        assert posted == []
        sloppy = next(n for n, c in enumerate(item["candidates"]) if "lol" in c["text"])
        rows.nth(1 - sloppy).get_by_label("Yes", exact=True).check()
        rows.nth(sloppy).get_by_label("No", exact=True).check()
        rows.nth(sloppy).locator(".ij-note").press_sequentially("informal 2x, uses 'lol'")  # "2" is no severity key
        page.mouse.move(0, 0)
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / "instructions-contrastive-esa.png"), full_page=True)
        status, body, _ = post_of(page, lambda: page.locator("#submit").click())
        assert status == 201
        good, bad = item["candidates"][1 - sloppy]["key"], item["candidates"][sloppy]["key"]
        note = "informal 2x, uses 'lol'"
        assert body["instruction"] == {good: {"answer": "yes"}, bad: {"answer": "no", "note": note}}
        judgment = Judgment.objects.get(item_id=item["id"])
        assert judgment.instruction == {good: {"answer": "yes", "note": ""},
                                        bad: {"answer": "no", "note": note}}
        a, b = (c["key"] for c in item["candidates"])
        assert judgment.scores == {a: 60.0, b: 60.0} and not judgment.spans
        assert page.js_errors == [] and page.csp == []
