"""The post-editing screens in a real browser: HTER's edit and verify stages (docs/methods.md §9).

Edit: the judge edits machine translations in text boxes beside their references with the keyboard only (the
cursor keys, Shift+arrows, typing, Enter to the next box, Ctrl+Enter to submit); the live diff under each box
shows what was deleted (struck through, <del>) and inserted (underlined, <ins>) against the machine translation;
Reset brings the machine translation back; a copied reference or an empty box is flagged and holds Submit back;
a refusal from the server (400) is shown under the box it names and the boxes stay editable; what the database
STORED is the edits (Judgment.answer). Verify: built from finished edits by the stage builder; the two yes/no
questions answered by keyboard (Y/N, arrows) and by mouse, stored as booleans. A phone (375 px) stacks the
columns without sideways scrolling. Screenshots docs/screenshots/post-edit.png, post-edit-phone.png and
post-edit-verify.png are written when SCREENSHOT_DIR=docs (else to a temporary folder).
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

from annotation.models import Judgment
from annotation.protocols import get_protocol
from annotation.services.campaign_import import import_campaign
from annotation.services.stages import build_stages, next_stages_of

from ..conftest import post_answer, start
from .screens import is_hit_api as _is_hit_api
from .screens import open_page as _page
from .screens import post_of
from .screens import start_hit as _start

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Screenshots go to a temporary folder; `SCREENSHOT_DIR=docs` (as for the other screens) refreshes
# docs/screenshots/post-edit*.png.
SHOTS = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="mteval-shots-")) / "screenshots"
XSS = "<img src=x onerror=\"window.__xss=1\">"

# A made-up German museum story, four sentences: the reference, and two systems' English output.
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
     f"The entrance is free in the first four weeks, then it costs eight euro {XSS}.",
     "Admission is free for the first four weeks, after which it costs eight euros."),
]
REFERENCES = [r for _, r, _, _ in MUSEUM]


def museum_lines(xss: bool = True) -> list[str]:
    return [json.dumps({"doc_id": "museum", "seg_id": n, "source": source, "reference": reference,
                        "systems": {"alpha": alpha if xss else alpha.replace(f" {XSS}", ""), "beta": beta}},
                       ensure_ascii=False)
            for n, (source, reference, alpha, beta) in enumerate(MUSEUM, 1)]


def post_edit_campaign(name: str, xss: bool = True, **options):
    """Two screens (one per system) of the four sentences, one screen per HIT; verify HITs of 4 edits."""
    parsed = get_protocol("post-edit").parse_options({
        "seed": 5, "source_language": "de", "target_language": "en", "screens_per_hit": 1,
        "verifiers": 2, "verify_items_per_hit": 4, **options})
    return import_campaign([(line + "\n").encode() for line in museum_lines(xss)], name=name,
                           protocol="post-edit", parsed=parsed).campaign


def _shots() -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS


def boxes(page: Page):
    return page.locator("textarea.pe-box")


def diff_of(page: Page, n: int) -> dict:
    """The nth box's live diff: its deleted and inserted pieces, and the text it shows."""
    return page.evaluate("""(n) => {
        const el = document.querySelectorAll('.pe-diff-text')[n];
        return {del: Array.from(el.querySelectorAll('del'), d => d.textContent),
                ins: Array.from(el.querySelectorAll('ins'), i => i.textContent),
                text: el.textContent};
    }""", n)


def focused_box(page: Page) -> int:
    return page.evaluate("Array.from(document.querySelectorAll('textarea.pe-box')).indexOf(document.activeElement)")


def type_over(page: Page, text: str, start: int, end: int, new: str) -> None:
    """In the focused box: Ctrl+Home, → to `end`, Shift+← back to `start` (selecting text[start:end]), type `new`."""
    keyboard = page.keyboard
    keyboard.press("Control+Home")
    for _ in range(end):
        keyboard.press("ArrowRight")
    for _ in range(end - start):
        keyboard.press("Shift+ArrowLeft")
    keyboard.type(new)


def answer_edits_through_api(campaign, worker: str, edit) -> None:
    """Enter as `worker` and answer every screen of their HIT with `edit(outputs, references)`."""
    client = Client()
    token = start(client, campaign, worker)
    while True:
        state = client.get(f"/api/hit/{token}/").json()
        if state.get("done"):
            return
        item = state["item"]
        response = post_answer(client, token, {"item": item["id"], "edits": edit(item["outputs"], item["reference"])})
        assert response.status_code == 201, response.content


def verify_stage(campaign, tail: str = ""):
    """Finish four edit HITs through the API (16 edited sentences, each ending in `tail`) and build the verify
    stage: four HITs of four."""
    def editor(change):
        return lambda outputs, refs: [change(o) + tail for o in outputs]
    answer_edits_through_api(campaign, "editor-1", editor(lambda o: o.replace("town", "city")))
    answer_edits_through_api(campaign, "editor-2", editor(lambda o: o.rstrip(".") + " ."))
    answer_edits_through_api(campaign, "editor-3", editor(lambda o: o))
    answer_edits_through_api(campaign, "editor-4", editor(lambda o: o))
    build_stages(campaign)
    (stage,) = next_stages_of(campaign)
    assert stage.protocol == "post-edit-verify" and stage.hits.exists()
    return stage


def test_edit_by_keyboard_with_live_diff_reset_and_the_reference_block(live_server, browser):
    campaign = post_edit_campaign("Museum news de-en, post-editing")
    with _page(browser, 1280, 900) as page:
        posts: list[str] = []
        page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
        _, state = _start(page, live_server, campaign.slug, "pe-keys")
        item = state["item"]
        outputs, references = item["outputs"], item["reference"]
        assert item["protocol"] == "post-edit" and references == REFERENCES and len(outputs) == 4
        # The screen: the reference beside a box holding the machine translation, numbered rows.
        expect(boxes(page)).to_have_count(4)
        assert [b.input_value() for b in boxes(page).all()] == outputs
        assert page.locator(".pe-ref").all_text_contents() == references
        assert page.locator(".pe-src-text").all_text_contents() == [s for s, *_ in MUSEUM]
        assert "is good English" in page.text_content("#statement")
        expect(page.locator("#pe-instruction")).to_be_hidden()  # the statement says it already
        assert page.text_content("#pe-reference-label") == "Reference (English)"
        assert [diff_of(page, n)["text"] for n in range(4)] == ["No changes yet"] * 4
        expect(page.locator(".pe-reset").first).to_be_disabled()
        expect(page.locator("#submit")).to_be_enabled()  # the machine translation as it is may be submitted
        assert page.evaluate("window.__xss") is None
        # The boxes grow with their text: no scroll bar inside.
        for b in boxes(page).all():
            assert b.evaluate("t => t.scrollHeight <= t.clientHeight + 1")

        # The focus starts in box 1. "town" -> "city" by the keyboard; the diff shows both at once.
        assert focused_box(page) == 0
        first = outputs[0]
        town = first.index("town") if "town" in first else None
        keyboard = page.keyboard
        if town is None:  # beta's sentence: "doors again" -> "doors"
            again = first.index(" again")
            type_over(page, first, again, again + len(" again"), "")
            expect(page.locator(".pe-diff-text").nth(0).locator("del")).to_have_text([" again"])
            edit1 = first.replace(" again", "")
        else:
            type_over(page, first, town, town + 4, "city")
            expect(page.locator(".pe-diff-text").nth(0).locator("ins")).to_have_text(["city"])
            assert diff_of(page, 0)["del"] == ["town"]
            edit1 = first.replace("town", "city")
        assert boxes(page).nth(0).input_value() == edit1
        expect(page.locator(".pe-reset").nth(0)).to_be_enabled()
        # Ctrl+End, Backspace over the final "." and a word, then typing: deleted and inserted characters.
        keyboard.press("Control+End")
        last_word = edit1.rstrip(".").split()[-1]
        for _ in range(len(last_word) + 1):
            keyboard.press("Backspace")
        keyboard.type("Saturday!")
        edit1 = edit1[: len(edit1) - len(last_word) - 1] + "Saturday!"
        shown = diff_of(page, 0)
        # The diff's kept and deleted text is the machine translation, its kept and inserted text the edit.
        assert "".join(shown["del"]) and "!" in "".join(shown["ins"])
        assert page.evaluate("""() => {
            const el = document.querySelectorAll('.pe-diff-text')[0];
            const keep = (skip) => Array.from(el.childNodes).filter(n => n.nodeName !== skip)
                                        .map(n => n.textContent).join('');
            return [keep('INS'), keep('DEL')];
        }""") == [first, edit1]

        # Enter moves to box 2 (no line break); an insertion before the full stop.
        keyboard.press("Enter")
        assert focused_box(page) == 1
        second = outputs[1]
        keyboard.press("Control+End")
        keyboard.press("ArrowLeft")
        keyboard.type(" in the museum")
        edit2 = second[:-1] + " in the museum" + second[-1]
        assert boxes(page).nth(1).input_value() == edit2
        expect(page.locator(".pe-diff-text").nth(1).locator("ins")).to_have_text([" in the museum"])
        assert diff_of(page, 1)["del"] == []

        # Box 3: the reference pasted over it is flagged and Submit waits (Ctrl+Enter sends nothing).
        keyboard.press("Enter")
        assert focused_box(page) == 2
        keyboard.press("Control+a")
        keyboard.type(references[2])
        warning = page.locator(".pe-warning").nth(2)
        expect(warning).to_be_visible()
        expect(warning).to_contain_text("reference")
        expect(page.locator("#submit")).to_be_disabled()
        expect(page.locator("#pe-remaining")).to_have_text("Sentence 3 needs fixing before you submit")
        assert boxes(page).nth(2).get_attribute("aria-invalid") == "true"
        keyboard.press("Control+Enter")
        page.wait_for_timeout(100)
        assert posts == []
        # Reset (Tab to it, Enter) brings the machine translation back; the warning goes.
        keyboard.press("Tab")
        assert page.evaluate("document.activeElement.classList.contains('pe-reset')")
        keyboard.press("Enter")
        assert boxes(page).nth(2).input_value() == outputs[2]
        assert focused_box(page) == 2
        expect(warning).to_be_hidden()
        assert diff_of(page, 2)["text"] == "No changes yet"
        expect(page.locator(".pe-reset").nth(2)).to_be_disabled()
        # An emptied box is flagged too; Reset by mouse.
        keyboard.press("Control+a")
        keyboard.press("Backspace")
        expect(warning).to_contain_text("empty")
        expect(page.locator("#submit")).to_be_disabled()
        page.locator(".pe-reset").nth(2).click()
        expect(warning).to_be_hidden()
        # Box 4: Shift+Tab from box... Tab from box 3 (nothing to reset) lands in box 4; a small edit.
        keyboard.press("Tab")
        assert focused_box(page) == 3
        fourth = outputs[3]
        comma = fourth.index(",")
        type_over(page, fourth, comma, comma + 1, ";")
        edit4 = fourth[:comma] + ";" + fourth[comma + 1:]
        assert diff_of(page, 3)["del"] == [","] and diff_of(page, 3)["ins"] == [";"]
        assert page.evaluate("window.__xss") is None

        expect(page.locator("#submit")).to_be_enabled()
        status, body, after = post_of(page, lambda: keyboard.press("Control+Enter"))
        assert status == 201
        assert body == {"item": item["id"], "edits": [edit1, edit2, outputs[2], edit4]}
        judgment = Judgment.objects.get(item_id=item["id"])
        assert judgment.answer == {"edits": [edit1, edit2, outputs[2], edit4]}
        # The HIT (one screen) is done: the completion code.
        expect(page.locator("#done")).to_be_visible()
        assert page.js_errors == [] and page.csp == []


def test_a_refusal_is_shown_under_its_box_and_the_form_stays_editable(live_server, browser):
    campaign = post_edit_campaign("Museum news de-en, post-editing refused")
    with _page(browser, 1280, 900) as page:
        _, state = _start(page, live_server, campaign.slug, "pe-400")
        item = state["item"]
        # 5,001 characters in box 2: the screen lets it through, the server refuses it (edit 2).
        long = ("word " * 1001)[:5001]
        boxes(page).nth(1).fill(long)
        assert diff_of(page, 1)["ins"]  # the word-level diff of a long text still shows
        status, body, answer = post_of(page, lambda: page.click("#submit"))
        assert status == 400 and "edit 2" in answer["error"]
        expect(page.locator("#status")).to_have_text(answer["error"])
        warning = page.locator(".pe-warning").nth(1)
        expect(warning).to_be_visible()
        expect(warning).to_have_text(answer["error"])
        assert focused_box(page) == 1
        assert Judgment.objects.filter(item_id=item["id"]).count() == 0
        # Still editable: the boxes are not read-only, Reset works, the answer goes through.
        assert not boxes(page).nth(1).evaluate("t => t.readOnly")
        expect(page.locator("#submit")).to_be_enabled()
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")  # Reset of box 2
        expect(warning).to_be_hidden()
        boxes(page).nth(0).click()
        page.keyboard.press("Control+End")
        page.keyboard.type(" Really.")
        status, body, _ = post_of(page, lambda: page.click("#submit"))
        assert status == 201
        edits = [item["outputs"][0] + " Really.", *item["outputs"][1:]]
        assert Judgment.objects.get(item_id=item["id"]).answer == {"edits": edits}
        assert page.js_errors == [] and page.csp == []


def test_edit_screenshot_desktop(live_server, browser):
    campaign = post_edit_campaign("Museum news de-en, post-editing (HTER)", xss=False)
    with _page(browser, 1280, 1000) as page:
        _, state = _start(page, live_server, campaign.slug, "pe-shot")
        outputs = state["item"]["outputs"]
        edits = {0: ("restoration", "renovation"), 1: ("lasting", "permanent"), 2: ("Especially", "Particularly")}
        for n, (old, new) in edits.items():
            if old in outputs[n]:
                boxes(page).nth(n).focus()
                at = outputs[n].index(old)
                type_over(page, outputs[n], at, at + len(old), new)
        boxes(page).nth(1).focus()
        page.keyboard.press("Control+End")
        page.mouse.move(0, 0)
        page.screenshot(path=str(_shots() / "post-edit.png"), full_page=True)
        assert page.js_errors == []


def test_edit_on_a_phone(live_server, browser):
    campaign = post_edit_campaign("Museum news de-en, post-editing on a phone", xss=False)
    with _page(browser, 375, 740, is_mobile=True, has_touch=True) as phone:
        _, state = _start(phone, live_server, campaign.slug, "pe-phone")
        item = state["item"]
        outputs = item["outputs"]
        assert phone.evaluate("document.documentElement.scrollWidth") <= 375  # no sideways scrolling
        # Stacked: the reference above its box, the labels shown; Reset large enough for a finger.
        ref, box = phone.locator(".pe-ref").nth(0).bounding_box(), boxes(phone).nth(0).bounding_box()
        assert box["y"] >= ref["y"] + ref["height"] - 1
        expect(phone.locator(".pe-box-label").nth(0)).to_be_visible()
        expect(phone.locator(".pe-head")).to_be_hidden()
        assert phone.locator(".pe-reset").nth(0).bounding_box()["height"] >= 44
        # The focus is not put in a box (no keyboard popping up before the judge reads).
        assert phone.evaluate("document.activeElement.tagName") != "TEXTAREA"
        # A tap in box 1, the end of the text, an extra word.
        boxes(phone).nth(0).tap()
        phone.keyboard.press("Control+End")
        phone.keyboard.press("ArrowLeft")
        phone.keyboard.type(" indeed")
        expect(phone.locator(".pe-diff-text").nth(0).locator("ins")).to_have_text([" indeed"])
        # The copied reference in box 2, then Reset by a tap.
        boxes(phone).nth(1).fill(item["reference"][1])
        expect(phone.locator(".pe-warning").nth(1)).to_be_visible()
        expect(phone.locator("#submit")).to_be_disabled()
        assert phone.evaluate("document.documentElement.scrollWidth") <= 375
        phone.evaluate("window.scrollTo(0, 0)")
        phone.wait_for_timeout(200)
        phone.screenshot(path=str(_shots() / "post-edit-phone.png"), full_page=True)
        phone.locator(".pe-reset").nth(1).tap()
        expect(phone.locator(".pe-warning").nth(1)).to_be_hidden()
        status, _, _ = post_of(phone, lambda: phone.tap("#submit"))
        assert status == 201
        edit1 = outputs[0][:-1] + " indeed" + outputs[0][-1]
        assert Judgment.objects.get(item_id=item["id"]).answer == {"edits": [edit1, *outputs[1:]]}
        assert phone.js_errors == []


def test_verify_by_keyboard_and_by_mouse(live_server, browser):
    campaign = post_edit_campaign("Museum news de-en, HTER", xss=False)
    stage = verify_stage(campaign)
    with _page(browser, 1100, 800) as page:
        _, state = _start(page, live_server, stage.slug, "verifier-1")
        item = state["item"]
        assert item["protocol"] == "post-edit-verify" and set(item) >= {"id", "reference", "candidate"}
        expect(page.locator("#pv-reference")).to_have_text(item["reference"])
        expect(page.locator("#pv-candidate")).to_have_text(item["candidate"])
        assert item["reference"] in REFERENCES
        assert page.locator(".pv-q-text").all_text_contents() == [
            "1. Does the edited translation mean the same as the reference?", "2. Is it acceptable English?"]
        expect(page.locator("#submit")).to_be_disabled()
        # The keyboard: the focus starts on question 1; Y answers it and moves to question 2; N answers that.
        assert page.evaluate("document.activeElement.closest('.pv-question').dataset.key") == "same_meaning"
        page.keyboard.press("y")
        assert page.evaluate("document.activeElement.closest('.pv-question').dataset.key") == "acceptable"
        expect(page.locator("#submit")).to_be_disabled()
        page.keyboard.press("n")
        expect(page.locator("#submit")).to_be_enabled()
        # ↑ back to question 1, N changes its answer; ↓ to question 2, Y; then ↑ and Y again.
        page.keyboard.press("ArrowUp")
        page.keyboard.press("n")
        page.keyboard.press("y")
        page.keyboard.press("ArrowUp")
        page.keyboard.press("y")
        assert page.locator(".pv-question input:checked").evaluate_all("xs => xs.map(x => x.value)") == ["yes", "yes"]
        # Tab, then ← → inside the radio group switch (a native radio group): question 2 to "no".
        page.keyboard.press("ArrowUp")
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.closest('.pv-question').dataset.key") == "acceptable"
        page.keyboard.press("ArrowRight")
        assert page.locator(".pv-question input:checked").evaluate_all("xs => xs.map(x => x.value)") == ["yes", "no"]
        page.mouse.move(0, 0)
        page.screenshot(path=str(_shots() / "post-edit-verify.png"), full_page=True)
        status, body, _ = post_of(page, lambda: page.keyboard.press("Enter"))
        assert status == 201
        assert body == {"item": item["id"], "same_meaning": "yes", "acceptable": "no"}
        assert Judgment.objects.get(item_id=item["id"]).answer == {"same_meaning": True, "acceptable": False}

        # The next item, by mouse: No, Yes; then Yes, Yes (the last click wins).
        expect(page.locator("#progress-text")).to_have_text(re.compile(r"^2 / "))
        expect(page.locator("#submit")).to_be_disabled()
        questions = page.locator(".pv-question")
        questions.nth(0).get_by_text("No", exact=True).click()
        questions.nth(1).get_by_text("Yes", exact=True).click()
        questions.nth(0).get_by_text("Yes", exact=True).click()
        expect(page.locator("#pv-remaining")).to_have_text("Both answered")
        with page.expect_response(_is_hit_api("POST")) as answer:
            page.click("#submit")
        assert answer.value.status == 201
        posted = json.loads(answer.value.request.post_data)
        assert posted["same_meaning"] == "yes" and posted["acceptable"] == "yes"
        assert Judgment.objects.get(item_id=posted["item"]).answer == {"same_meaning": True, "acceptable": True}
        assert page.js_errors == [] and page.csp == []


def test_verify_on_a_phone(live_server, browser):
    campaign = post_edit_campaign("Museum news de-en, HTER on a phone", xss=False)
    stage = verify_stage(campaign, tail=f" {XSS}")  # markup in an edit is shown as text
    with _page(browser, 375, 740, is_mobile=True, has_touch=True) as phone:
        _, state = _start(phone, live_server, stage.slug, "verifier-phone")
        item = state["item"]
        assert item["candidate"].endswith(XSS)
        expect(phone.locator("#pv-candidate")).to_have_text(item["candidate"])
        assert phone.evaluate("window.__xss") is None and phone.locator("#pv-candidate img").count() == 0
        assert phone.evaluate("document.documentElement.scrollWidth") <= 375
        for face in phone.locator(".ac-face").all():
            box = face.bounding_box()
            assert box["height"] >= 44 and box["width"] >= 120
        phone.locator(".pv-question").nth(0).get_by_text("No", exact=True).tap()
        phone.locator(".pv-question").nth(1).get_by_text("No", exact=True).tap()
        phone.wait_for_timeout(300)
        # (a look at the layout, not for docs/: the edit shows its markup)
        phone.screenshot(path=str(Path(tempfile.mkdtemp(prefix="mteval-shots-")) / "post-edit-verify-phone.png"),
                         full_page=True)
        status, _, _ = post_of(phone, lambda: phone.tap("#submit"))
        assert status == 201
        assert Judgment.objects.get(item_id=item["id"]).answer == {"same_meaning": False, "acceptable": False}
        assert phone.js_errors == []
