"""The crowd reference-translation screens in a real browser (docs/methods.md §9; Callison-Burch 2009 §5.1).

Translate: the first screen asks the language background once (native language, years of the target language,
country); the judge types translations into the boxes, one box gets pasted text (a `paste` event), which is
marked on the screen and sent as pasted=true; Submit waits for every box and field; what the database STORED
is the translations, the pasted flags and the background (Judgment.answer). Detect: built from finished
translations by the stage builder; candidates are toggled machine-made by click and by the number keys, Enter
submits; the marked keys are stored. Markup in a source or a candidate is shown as text. Screenshots
docs/screenshots/reference-translation.png and reference-translation-detect.png are written when
SCREENSHOT_DIR=docs/screenshots (else to a temporary folder).
"""
from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import pytest
from django.test import Client
from playwright.sync_api import Page, expect

import annotation.protocols.reference_translation  # noqa: F401  (registers the protocols)
from annotation.models import HitItem, Judgment
from annotation.protocols import get_protocol
from annotation.services.campaign_import import import_campaign
from annotation.services.stages import build_stages, next_stages_of

from ..conftest import post_answer, start
from .screens import open_page as _page
from .screens import post_of, start_hit


def _start(page: Page, live_server, slug: str, worker: str) -> dict:
    return start_hit(page, live_server, slug, worker)[1]


pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="mteval-shots-"))
XSS = "<img src=x onerror=\"window.__xss=1\">"

# A made-up German museum story: source, professional reference, two systems' English output.
MUSEUM = [
    ("Nach drei Jahren Sanierung öffnet das Stadtmuseum am Samstag wieder seine Türen.",
     "After three years of renovation, the city museum opens its doors again on Saturday.",
     "After three years of restoration, the town museum reopens its gates on the Saturday.",
     "After three years of renovation the city museum opens its doors again on Saturday."),
    ("Die neue Dauerausstellung zeigt die Geschichte der Stadt vom Mittelalter bis heute.",
     "The new permanent exhibition shows the history of the city from the Middle Ages to the present day.",
     "The new lasting exhibition shows the story of the town until today.",
     "The new permanent exhibition shows the city's history from the Middle Ages to today."),
    ("Besonders stolz ist das Museum auf ein restauriertes Modell der Altstadt aus dem Jahr 1850.",
     "The museum is particularly proud of a restored model of the old town dating from 1850.",
     "Especially proud is the museum on a restored model of the old city from the year 1850.",
     "The museum is especially proud of a restored model of the old town from 1850."),
    ("Der Eintritt ist in den ersten vier Wochen frei, danach kostet er acht Euro.",
     "Admission is free for the first four weeks; after that it costs eight euros.",
     "The entrance is free in the first four weeks, then it costs eight euro.",
     "Admission is free for the first four weeks, after which it costs eight euros."),
]
TRANSLATIONS = [
    "After three years of refurbishment the municipal museum will open its doors again on Saturday.",
    "The new permanent exhibition tells the history of the city from the Middle Ages until today.",
    "The museum is especially proud of a restored model of the old town made in 1850.",
    "Entry is free for the first four weeks; afterwards it costs eight euros.",
]


def lines(xss: bool = False) -> list[str]:
    return [json.dumps({"doc_id": "museum", "seg_id": n, "source": source + (f" {XSS}" if xss and n == 4 else ""),
                        "reference": reference, "systems": {"alpha": alpha, "beta": beta}}, ensure_ascii=False)
            for n, (source, reference, alpha, beta) in enumerate(MUSEUM, 1)]


def rt_campaign(name: str, xss: bool = False, **options):
    parsed = get_protocol("reference-translation").parse_options({
        "seed": 5, "source_language": "de", "target_language": "en", "screens_per_hit": 1, "detectors": 1,
        "detect_items_per_hit": 4, **options})
    return import_campaign([(line + "\n").encode() for line in lines(xss)], name=name,
                           protocol="reference-translation", parsed=parsed).campaign


def _shots() -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS


def paste(page: Page, n: int, text: str) -> None:
    """Paste `text` into box n: the browser's paste event (as Ctrl+V fires it), then the text inserted."""
    box = page.locator("textarea.rt-box").nth(n)
    box.focus()
    box.evaluate("""(el, text) => {
        const data = new DataTransfer();
        data.setData('text/plain', text);
        el.dispatchEvent(new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true}));
    }""", text)
    page.keyboard.insert_text(text)


def test_translate_with_background_and_a_paste(live_server, browser):
    campaign = rt_campaign("Museum news de-en, crowd reference translations")
    with _page(browser, 1200, 1000) as page:
        state = _start(page, live_server, campaign.slug, "translator-1")
        item = state["item"]
        assert item["protocol"] == "reference-translation" and item["ask_background"] is True
        assert set(item) == {"id", "protocol", "source", "ask_background"}
        boxes = page.locator("textarea.rt-box")
        expect(boxes).to_have_count(4)
        assert page.locator(".rt-source").all_text_contents() == item["source"]
        expect(page.locator("#rt-background")).to_be_visible()
        assert "Do not use machine translation" in page.text_content("#statement")
        expect(page.locator("#submit")).to_be_disabled()
        # the background, by keyboard
        page.locator("#rt-native").fill("German")
        page.locator("#rt-years").fill("12")
        page.locator("#rt-country").fill("Austria")
        # boxes 1, 2 and 4 typed; Enter moves on to the next box
        boxes.nth(0).click()
        page.keyboard.type(TRANSLATIONS[0])
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.id") == boxes.nth(1).get_attribute("id")
        page.keyboard.type(TRANSLATIONS[1])
        boxes.nth(3).click()
        page.keyboard.type(TRANSLATIONS[3])
        expect(page.locator("#submit")).to_be_disabled()
        expect(page.locator("#rt-remaining")).to_have_text("1 sentence to translate")
        # box 3 pasted: marked on the screen
        paste(page, 2, MUSEUM[2][3])
        expect(page.locator(".rt-row").nth(2)).to_have_class(re.compile(r"\brt-pasted\b"))
        expect(page.locator(".rt-warning").nth(2)).to_be_visible()
        expect(page.locator(".rt-warning").nth(0)).to_be_hidden()
        expect(page.locator("#submit")).to_be_enabled()
        page.mouse.move(0, 0)
        page.screenshot(path=str(_shots() / "reference-translation.png"), full_page=True)
        status, body, _ = post_of(page, lambda: page.keyboard.press("Control+Enter"))
        assert status == 201, body
        assert body["pasted"] == [False, False, True, False]
        answer = Judgment.objects.get(item_id=item["id"]).answer
        assert answer["translations"] == [TRANSLATIONS[0], TRANSLATIONS[1], MUSEUM[2][3], TRANSLATIONS[3]]
        assert answer["pasted"] == [False, False, True, False]
        assert answer["mt_copy"] == [None, None, "beta", None]  # the paste was a system's output
        assert answer["background"] == {"native_language": "German", "target_language_years": 12,
                                        "country": "Austria"}
        assert page.js_errors == [] and page.csp == []


def test_the_background_is_filled_in_from_the_last_time(live_server, browser):
    campaign = rt_campaign("Museum news, background remembered")
    other = rt_campaign("Museum news, another task")
    with _page(browser, 1100, 900) as page:
        _start(page, live_server, campaign.slug, "translator-2")
        page.locator("#rt-native").fill("Dutch")
        page.locator("#rt-years").fill("7")
        page.locator("#rt-country").fill("Belgium")
        for n in range(4):
            page.locator("textarea.rt-box").nth(n).fill(TRANSLATIONS[n])
        status, _, _ = post_of(page, lambda: page.click("#submit"))
        assert status == 201
        _start(page, live_server, other.slug, "translator-2")
        expect(page.locator("#rt-native")).to_have_value("Dutch")
        expect(page.locator("#rt-country")).to_have_value("Belgium")
        assert page.js_errors == []


def test_detect_by_click_and_by_keys(live_server, browser):
    campaign = rt_campaign("Museum news de-en, crowd references", redundancy=2)
    for worker, change in (("t-1", lambda s: s), ("t-2", lambda s: s.replace("museum", "Museum"))):
        client = Client()
        token = start(client, campaign, worker)
        item = client.get(f"/api/hit/{token}/").json()["item"]
        texts = [change(t) for t in TRANSLATIONS]
        texts[3] += f" {XSS}" if worker == "t-2" else ""
        response = post_answer(client, token, {"item": item["id"], "translations": texts, "pasted": [False] * 4,
                                               "background": {"native_language": "English",
                                                              "target_language_years": 20, "country": "UK"}})
        assert response.status_code == 201, response.content
    build_stages(campaign)
    (stage,) = next_stages_of(campaign)
    assert stage.protocol == "reference-translation-detect" and stage.hits.count() == 1
    with _page(browser, 1100, 900) as page:
        state = _start(page, live_server, stage.slug, "detector-1")
        item = state["item"]
        assert item["protocol"] == "reference-translation-detect" and len(item["candidates"]) == 4
        assert set(item) == {"id", "protocol", "source", "candidates"}
        expect(page.locator("#rd-source")).to_have_text(item["source"])
        texts = page.locator(".rd-text").all_text_contents()
        assert texts == [c["text"] for c in item["candidates"]]
        assert page.evaluate("window.__xss") is None and page.locator(".rd-text img").count() == 0
        payload = HitItem.objects.get(pk=item["id"]).payload["candidates"]
        machine = [n for n, c in enumerate(payload) if "system" in c]
        assert len(machine) == 2
        expect(page.locator("#rd-count")).to_have_text("None marked machine-made")
        # one by click, one by its number key; a wrong one marked and unmarked again by click
        page.locator("button.rd-toggle").nth(machine[0]).click()
        page.keyboard.press(str(machine[1] + 1))
        human = next(n for n in range(4) if n not in machine)
        page.locator("button.rd-toggle").nth(human).click()
        expect(page.locator("button.rd-toggle").nth(human)).to_have_attribute("aria-pressed", "true")
        page.locator("button.rd-toggle").nth(human).click()
        pressed = page.locator("button.rd-toggle").evaluate_all("bs => bs.map(b => b.getAttribute('aria-pressed'))")
        assert pressed == ["true" if n in machine else "false" for n in range(4)]
        expect(page.locator("#rd-count")).to_have_text("2 marked machine-made")
        page.mouse.move(0, 0)
        page.locator("#rd-source").click()  # the focus off the buttons: Enter submits
        page.screenshot(path=str(_shots() / "reference-translation-detect.png"), full_page=True)
        status, body, _ = post_of(page, lambda: page.keyboard.press("Enter"))
        assert status == 201
        assert sorted(body["machine"]) == sorted(payload[n]["key"] for n in machine)
        assert Judgment.objects.get(item_id=item["id"]).answer == {"machine": sorted(body["machine"])}
        # the next sentence by the keys alone, as the hint says: a number marks, Enter submits (the screen's own
        # focus was on translation 1, where Enter unmarked it again and nothing was sent; found in the walk)
        expect(page.locator("#progress-text")).to_have_text(re.compile(r"^2 / "))
        expect(page.locator("#rd-count")).to_have_text("None marked machine-made")
        second = page.locator("button.rd-toggle").count()
        page.keyboard.press("1")
        expect(page.locator("#rd-count")).to_have_text("1 marked machine-made")
        status, body, answer = post_of(page, lambda: page.keyboard.press("Enter"))
        assert status == 201 and len(body["machine"]) == 1 and second >= 1
        # the next sentence: nothing marked, submitted by the button
        expect(page.locator("#progress-text")).to_have_text(re.compile(r"^3 / "))
        expect(page.locator("#rd-count")).to_have_text("None marked machine-made")
        status, body, _ = post_of(page, lambda: page.click("#submit"))
        assert status == 201 and body["machine"] == []
        assert page.js_errors == [] and page.csp == []


def test_translate_on_a_phone(live_server, browser):
    campaign = rt_campaign("Museum news on a phone", xss=True)  # markup in a source is shown as text
    with _page(browser, 375, 740, is_mobile=True, has_touch=True) as phone:
        item = _start(phone, live_server, campaign.slug, "translator-phone")["item"]
        assert item["source"][3].endswith(XSS)
        expect(phone.locator(".rt-source").nth(3)).to_have_text(item["source"][3])
        assert phone.evaluate("window.__xss") is None and phone.locator(".rt-source img").count() == 0
        assert phone.evaluate("document.documentElement.scrollWidth") <= 375
        expect(phone.locator("#rt-background")).to_be_visible()
        assert phone.evaluate("document.activeElement.tagName") not in ("TEXTAREA", "INPUT")
        phone.locator("textarea.rt-box").nth(0).tap()
        paste(phone, 0, "pasted on a phone")
        expect(phone.locator(".rt-warning").nth(0)).to_be_visible()
        assert phone.evaluate("document.documentElement.scrollWidth") <= 375
        phone.screenshot(path=str(Path(tempfile.mkdtemp(prefix="mteval-shots-")) / "reference-translation-phone.png"),
                         full_page=True)
        assert phone.js_errors == []
