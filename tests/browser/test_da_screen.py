"""The Direct Assessment screen in a real browser (docs/methods.md §1-§2, docs/api.md §8).

A worker enters a campaign through the crowd link and rates a whole 100-item HIT with the
keyboard and the mouse; the test checks what the screen shows at every step (progress,
the disabled Submit, texts rendered as text and never as HTML) and what ends up in the
database. A second test takes the screenshots in docs/ on a clean campaign, and a third
checks right-to-left target languages.
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

from annotation.models import Assignment, HitItem, ItemType, Judgment
from annotation.services.campaign_import import import_campaign

pytestmark = pytest.mark.browser

# Screenshots go to a temporary folder; `SCREENSHOT_DIR=docs make test` refreshes the ones in docs/.
DOCS = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="mteval-shots-"))
HIT_SIZE = 100
XSS = "<script>window.__xss = 1</script>"
GRAY = "rgb(118, 118, 118)"
BLACK = "rgb(0, 0, 0)"

VOCABULARY = ("the committee said that new rules for small farms would start next spring after long talks "
              "with local groups about water prices and fair access to land near the river").split()


def _sentence(i: int, shift: int = 0, length: int = 10) -> str:
    words = [VOCABULARY[(i * 5 + shift + k * 3) % len(VOCABULARY)] for k in range(length)]
    return " ".join(words).capitalize() + "."


def _xss_campaign_lines() -> list[str]:
    """35 segments × 2 systems = the 70 outputs of exactly one 100-item HIT; segment 5 is hostile."""
    lines = []
    for i in range(35):
        record = {
            "doc_id": f"doc-{i // 7}", "seg_id": i % 7 + 1, "source": f"Quelle {i}.",
            "reference": _sentence(i),
            "systems": {"sys-A": _sentence(i, 1), "sys-B": _sentence(i, 2)},
        }
        if i == 5:
            record["reference"] = f'The council said {XSS} and <b>bold</b> claims were "false" & misleading.'
            record["systems"] = {
                "sys-A": f"The council said {XSS} that <b>bold</b> claims were false.",
                "sys-B": f'Council says <b>bold</b> claims <img src=x onerror="window.__xss = 2"> are {XSS} wrong.',
            }
        lines.append(json.dumps(record))
    return lines


def _start(page: Page, live_server, slug: str, worker: str) -> tuple[str, dict]:
    """Enter through the crowd link; returns the HIT token and the first state the page fetched."""
    with page.expect_response(lambda r: "/api/hit/" in r.url and r.request.method == "GET") as first:
        page.goto(f"{live_server.url}/c/{slug}/start/?worker_id={worker}")
    match = re.search(r"/hit/([^/]+)/$", page.url)
    assert match, page.url
    assert first.value.status == 200
    return match.group(1), first.value.json()


def _track_point(page: Page, fraction: float) -> tuple[float, float]:
    box = page.locator("#vas-track").bounding_box()
    return box["x"] + fraction * box["width"], box["y"] + box["height"] / 2


# What each item does: (kind, argument, expected score, tolerance). Keyboard scores are exact.
def _action(k: int):
    clicks = (0.25, 0.5, 0.75, 0.1, 0.9, 0.33, 0.02, 0.98, 0.6, 0.45)
    drags = ((0.2, 0.8), (0.7, 0.15), (0.4, 1.3), (0.6, -0.3), (0.05, 0.55))
    kind = ("end", "click", "home+3", "drag", "keys", "click+keys", "pagedown")[k % 7]
    if kind == "end":
        return kind, None, 100.0, 0
    if kind == "home+3":
        return kind, None, 3.0, 0
    if kind == "keys":  # from the untouched middle: +1, +10, +10, -1
        return kind, None, 70.0, 0
    if kind == "pagedown":  # -10, -1
        return kind, None, 39.0, 0
    if kind == "click":
        f = clicks[(k // 7) % len(clicks)]
        return kind, f, 100 * f, 2
    if kind == "click+keys":
        f = clicks[(k // 7 + 3) % len(clicks)]
        return kind, f, min(100.0, 100 * f + 2), 2
    start, end = drags[(k // 7) % len(drags)]
    if end > 1 or end < 0:  # dragged past an end: clamped exactly
        return kind, (start, end), 100.0 if end > 1 else 0.0, 0
    return kind, (start, end), 100 * end, 2


def _move(page: Page, kind: str, arg) -> None:
    keyboard = page.keyboard
    if kind == "end":
        keyboard.press("End")
    elif kind == "home+3":
        keyboard.press("Home")
        for _ in range(3):
            keyboard.press("ArrowRight")
    elif kind == "keys":
        for key in ("ArrowRight", "PageUp", "PageUp", "ArrowLeft"):
            keyboard.press(key)
    elif kind == "pagedown":
        keyboard.press("PageDown")
        keyboard.press("ArrowDown")
    elif kind in ("click", "click+keys"):
        page.mouse.click(*_track_point(page, arg))
        if kind == "click+keys":
            keyboard.press("ArrowRight")
            keyboard.press("ArrowUp")
    elif kind == "drag":
        (x0, y), (x1, _) = _track_point(page, arg[0]), _track_point(page, arg[1])
        page.mouse.move(x0, y)
        page.mouse.down()
        page.mouse.move((x0 + x1) / 2, y - 30, steps=4)  # wander off the track: the drag holds on
        page.mouse.move(x1, y, steps=6)
        page.mouse.up()
    else:
        raise AssertionError(kind)


def _check_texts(page: Page, item: dict) -> bool:
    """The texts are shown exactly as sent, as text; True if the item carried markup."""
    candidate, reference = item["candidate"], item["reference"]
    assert page.text_content("#candidate-text") == candidate
    assert page.text_content("#context-text") == reference
    assert page.is_visible("#context-text")
    if "<" not in candidate + reference:
        return False
    for selector, text in (("#candidate-text", candidate), ("#context-text", reference)):
        if "<script>" in text:
            assert "<script>" in page.inner_text(selector)
        if "<b>" in text:
            assert "<b>bold</b>" in page.inner_text(selector)
    assert page.evaluate("document.querySelectorAll('#screen script, #screen b, #screen img').length") == 0
    assert page.evaluate("typeof window.__xss") == "undefined"
    return True


def test_a_worker_rates_a_whole_hit_with_keyboard_and_mouse(live_server, desktop):
    page = desktop
    statement = ('Read the text below and rate it by how much you agree that: the <b>black</b> text adequately '
                 'expresses the meaning of the gray text. <script>window.__xss = 3</script>')
    campaign = import_campaign(_xss_campaign_lines(), name="Browser <i>DA</i> test", protocol="adequacy", seed=1,
                               statement=statement).campaign
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)

    token, state = _start(page, live_server, campaign.slug, "browser-1")
    progress, submit, track = page.locator("#progress-text"), page.locator("#submit"), page.locator("#vas-track")

    # The page around the items: markup in the statement and the name is text too.
    assert page.text_content("#statement") == statement
    assert page.get_attribute("#vas-track", "aria-label") == statement
    assert "<i>DA</i>" in page.inner_text(".campaign-name")
    assert page.title() == "Browser <i>DA</i> test"
    assert page.evaluate("document.querySelectorAll('#statement *, .hit-header i').length") == 0
    # Reference in gray, candidate in black; no numbers on the scale; anchors and quarter marks present.
    assert page.evaluate("getComputedStyle(document.getElementById('context-text')).color") == GRAY
    assert page.evaluate("getComputedStyle(document.getElementById('candidate-text')).color") == BLACK
    assert page.inner_text(".vas-anchors").split("\n") == ["strongly disagree", "strongly agree"]
    assert page.locator(".vas-tick").count() == 3
    assert not re.search(r"\d", page.inner_text(".vas"))

    # Nothing can be submitted before the slider moves: not with Enter, not with a click.
    expect(progress).to_have_text(f"1 / {HIT_SIZE}")
    page.keyboard.press("Enter")
    submit.click(force=True)
    page.wait_for_timeout(150)
    assert posts == []
    expect(progress).to_have_text(f"1 / {HIT_SIZE}")

    expected: dict[int, tuple[str, float, float]] = {}
    markup_items = 0
    for k in range(1, HIT_SIZE + 1):
        assert not state["done"] and state["position"] == k and state["total"] == HIT_SIZE
        item = state["item"]
        assert set(item) == {"id", "protocol", "candidate", "reference"}
        expect(progress).to_have_text(f"{k} / {HIT_SIZE}")
        assert submit.is_disabled()
        assert "untouched" in track.get_attribute("class")
        assert track.get_attribute("aria-valuenow") is None
        if k > 1:  # (on item 1 the click on the disabled Submit above took the focus away)
            assert page.evaluate("document.activeElement.id") == "vas-track"  # the keyboard works at once
        markup_items += _check_texts(page, item)

        kind, arg, score, tolerance = _action(k)
        _move(page, kind, arg)
        assert submit.is_enabled()
        shown = int(track.get_attribute("aria-valuenow"))
        assert abs(shown - score) <= tolerance + 0.5, (k, kind, arg, shown)
        assert not re.search(r"\d", page.inner_text(".vas"))
        expected[item["id"]] = (kind, score, tolerance)

        with page.expect_response(lambda r: "/api/hit/" in r.url and r.request.method == "POST") as answer:
            if k % 2:
                page.keyboard.press("Enter")
                if k == 51:
                    page.keyboard.press("Enter")  # a double press stores one answer and skips nothing
            else:
                submit.click()
        assert answer.value.status == 201
        state = answer.value.json()

    assert state["done"] is True
    expect(page.locator("#done")).to_be_visible()
    expect(page.locator("#screen")).to_be_hidden()
    expect(progress).to_have_text(f"{HIT_SIZE} / {HIT_SIZE}")
    code = page.text_content("#completion-code").strip()
    assert code and code == state["completion_code"]
    assert markup_items >= 2, "the hostile segment never came up"
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert len(posts) == HIT_SIZE
    assert page.js_errors == []

    assignment = Assignment.objects.get(token=token)
    assert assignment.status == Assignment.Status.COMPLETED and assignment.completion_code == code
    judgments = list(Judgment.objects.filter(assignment=assignment))
    assert len(judgments) == HIT_SIZE
    assert {j.item_id for j in judgments} == set(expected)
    for judgment in judgments:
        kind, score, tolerance = expected[judgment.item_id]
        if tolerance:
            assert abs(judgment.score - score) <= tolerance, (kind, score, judgment.score)
        else:
            assert judgment.score == score, (kind, score, judgment.score)
        assert judgment.seconds is not None and judgment.seconds >= 0
    kinds = {kind for kind, _, _ in expected.values()}
    assert kinds == {"end", "click", "home+3", "drag", "keys", "click+keys", "pagedown"}


# A clean campaign for the screenshots in docs/: plausible news text and the default statement.
NEWS = [
    ("The city council approved the new budget after a long debate on Tuesday evening.",
     "The city council approved the new budget on Tuesday evening after a long debate.",
     "City council has approved new budget after long debating Tuesday in the evening."),
    ("Heavy rain is expected across the north of the country until the end of the week.",
     "Heavy rain is expected in the north of the country until the end of the week.",
     "Strong rain expected over north of country until week end."),
    ("The museum will stay open late on Fridays to attract younger visitors.",
     "The museum will remain open longer on Fridays to attract young visitors.",
     "Museum stays open late Fridays for attracting more young visitor."),
    ("Researchers found that the drug reduced symptoms in two thirds of the patients.",
     "The researchers found that the medicine reduced the symptoms of two thirds of patients.",
     "Researchers discovered the drug lowered symptoms at two third of the patients."),
    ("Train services between the two cities will resume on Monday morning.",
     "Train connections between both cities will resume on Monday morning.",
     "The trains between two cities are resuming Monday in the morning."),
    ("The company said it would hire three hundred new workers by the end of the year.",
     "The company said it would employ three hundred new workers by the end of the year.",
     "Company says it will hire three hundreds new workers until end of year."),
    ("Local farmers are worried that the dry summer will ruin this year's harvest.",
     "Local farmers fear that the dry summer will destroy this year's harvest.",
     "Local farmer are worried the dry summer ruins the harvest of this year."),
]


def _news_lines() -> list[str]:
    lines = []
    for i in range(35):
        reference, a, b = NEWS[i % len(NEWS)]
        lines.append(json.dumps({"doc_id": f"news-{i // 7}", "seg_id": i % 7 + 1, "source": f"Quelle {i}.",
                                 "reference": reference, "systems": {"online-A": a, "uedin": b}}))
    return lines


def test_rating_screen_screenshots_desktop_and_phone(live_server, browser, desktop):
    campaign = import_campaign(_news_lines(), name="WMT news de-en, adequacy", protocol="adequacy",
                               seed=1).campaign
    client = Client()
    response = client.get(f"/c/{campaign.slug}/start/", {"worker_id": "screenshot-1"})
    assert response.status_code == 302
    token = response["Location"].rstrip("/").split("/")[-1]
    # Mid-HIT, on an ordinary system output (so the gray reference and the black candidate differ).
    hit_id = Assignment.objects.get(token=token).hit_id
    position = HitItem.objects.filter(hit_id=hit_id, position__gte=36, item_type=ItemType.SYSTEM).order_by(
        "position").values_list("position", flat=True).first()
    for _ in range(position):
        item = client.get(f"/api/hit/{token}/").json()["item"]
        answered = client.post(f"/api/hit/{token}/", {"item": item["id"], "score": 50},
                               content_type="application/json")
        assert answered.status_code == 201

    page = desktop
    page.goto(f"{live_server.url}/hit/{token}/")
    expect(page.locator("#progress-text")).to_have_text(f"{position + 1} / {HIT_SIZE}")
    assert page.text_content("#context-text") != page.text_content("#candidate-text")
    page.mouse.click(*_track_point(page, 0.68))
    assert abs(int(page.get_attribute("#vas-track", "aria-valuenow")) - 68) <= 1
    page.mouse.move(0, 0)  # no hover effects in the picture
    DOCS.mkdir(exist_ok=True)
    page.screenshot(path=str(DOCS / "rating-screen.png"))

    phone_context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    try:
        phone = phone_context.new_page()
        phone.goto(f"{live_server.url}/hit/{token}/")
        expect(phone.locator("#progress-text")).to_have_text(f"{position + 1} / {HIT_SIZE}")
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390  # nothing sticks out sideways
        expect(phone.locator("#submit")).to_be_disabled()
        phone.touchscreen.tap(*_track_point(phone, 0.4))
        assert abs(int(phone.get_attribute("#vas-track", "aria-valuenow")) - 40) <= 2
        expect(phone.locator("#submit")).to_be_enabled()
        phone.screenshot(path=str(DOCS / "rating-screen-phone.png"))
        with phone.expect_response(lambda r: "/api/hit/" in r.url and r.request.method == "POST") as answer:
            phone.tap("#submit")
        assert answer.value.status == 201
        expect(phone.locator("#progress-text")).to_have_text(f"{position + 2} / {HIT_SIZE}")
    finally:
        phone_context.close()
    judgment = Judgment.objects.get(assignment__token=token, item__position=position)
    assert abs(judgment.score - 40) <= 2


ARABIC = ("قال المجلس إن القواعد الجديدة للمزارع الصغيرة ستبدأ في الربيع المقبل بعد محادثات طويلة "
          "مع المجموعات المحلية حول أسعار المياه").split()


def test_right_to_left_target_language(live_server, desktop):
    def arabic(i: int, shift: int) -> str:
        return " ".join(ARABIC[(i + shift + k * 2) % len(ARABIC)] for k in range(8)) + "."

    lines = [json.dumps({"doc_id": "d1", "seg_id": i + 1, "source": f"Source {i}.", "reference": arabic(i, 0),
                         "systems": {"A": arabic(i, 1), "B": arabic(i, 2)}}) for i in range(7)]
    campaign = import_campaign(lines, name="English-Arabic", protocol="adequacy", seed=1, hit_size=20,
                               source_language="en", target_language="ar").campaign
    page = desktop
    _, state = _start(page, live_server, campaign.slug, "browser-rtl")
    expect(page.locator("#progress-text")).to_have_text("1 / 20")
    assert page.get_attribute("html", "lang") == "ar"
    assert page.get_attribute("#candidate-text", "dir") == "rtl"
    assert page.evaluate("document.getElementById('context-text').dir") == "rtl"  # the reference is Arabic too
    assert page.evaluate("getComputedStyle(document.getElementById('candidate-text')).direction") == "rtl"
    assert page.text_content("#candidate-text") == state["item"]["candidate"]
    # The scale itself stays left-to-right: the right arrow still means "more".
    assert page.evaluate("getComputedStyle(document.querySelector('.vas')).direction") == "ltr"
    page.keyboard.press("ArrowRight")
    assert page.get_attribute("#vas-track", "aria-valuenow") == "51"
    page.keyboard.press("Enter")
    expect(page.locator("#progress-text")).to_have_text("2 / 20")
    assert page.js_errors == []
