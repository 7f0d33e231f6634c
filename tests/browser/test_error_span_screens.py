"""The error-span screens in a real browser: ESA, MQM and contrastive ESA (docs/methods.md §11, docs/api.md §8).

Each test marks errors the way a judge does — dragging the mouse over a word, the keyboard only (a cursor,
Shift+arrows, a severity key, the slider keys, Enter), a phone's touch selection and taps, the [missing]
marker — and checks what the database STORED: the spans as half-open [start, end) offsets in Unicode code
points of the translation (Python's indices: an emoji, a CJK extension B character and a letter count one
each, a combining accent one more), the severity, the MQM category, the score, per candidate for contrastive
ESA. Right-to-left Arabic, combining marks, CJK and emoji give the same offsets as Python. AI-suggested spans
are shown marked as suggested and can be kept, changed or deleted. A refused answer (400) shows the
server's reason. The screenshot tests write docs/screenshots/{esa,mqm,contrastive-esa}*.png when
SCREENSHOT_DIR=docs.
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
from annotation.services.campaign_import import CampaignFileError, import_campaign

from ..test_error_span_protocols import span_campaign
from .screens import open_page as _page
from .screens import post_of
from .screens import start_hit as _start

pytestmark = pytest.mark.browser

# Screenshots go to a temporary folder; `SCREENSHOT_DIR=docs` refreshes docs/screenshots/{esa,mqm,contrastive}-*.png.
DOCS = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="mteval-shots-"))
XSS = "<img src=x onerror=\"window.__xss=1\">"

# A made-up German museum story, five segments, two systems' English translations (alpha, beta).
MUSEUM = [
    ("Nach drei Jahren Sanierung öffnet das Stadtmuseum am Samstag wieder seine Türen.",
     "After three years of renovation, the city museum opens its doors again on Saturday.",
     "After three years of restoration, the town museum reopens its gates on the Saturday."),
    ("Die neue Dauerausstellung zeigt die Geschichte der Stadt vom Mittelalter bis heute.",
     "The new permanent exhibition shows the history of the city from the Middle Ages to today.",
     "The new lasting exhibition shows the story of the town from the middle age until today."),
    ("Besonders stolz ist das Museum auf ein restauriertes Modell der Altstadt aus dem Jahr 1850.",
     "The museum is particularly proud of a restored model of the old town.",
     "Especially proud is the museum on a restored model of the old city from the year 1850."),
    ("Der Eintritt ist in den ersten vier Wochen frei, danach kostet er acht Euro.",
     "Admission is free for the first four weeks, after which it costs eight euros.",
     "The entrance is free in the first four weeks, then it costs eight euro."),
    ("Schulklassen können Führungen ab sofort online buchen.",
     "School classes can book guided tours online from now on.",
     f"School classes can book tours {XSS} online immediately."),
]
ARABIC_DOC = [
    ("Das Museum ist montags geschlossen.", "المتحف مغلق أيام الاثنين."),
    ("Der Eintritt ist in den ersten vier Wochen frei.", "الدخول مجاني في الأسابيع الأربعة الأولى."),
    ("Schulklassen können Führungen online buchen.", "يمكن للمدارس حجز الجولات عبر الإنترنت."),
]
# Combining marks (e + U+0301), CJK, emoji and a CJK extension B character (U+2000B, two UTF-16 units).
MIXED = "Our cafe\u0301 serves 寿司 🍣🍣 and 𠀋 daily."


def museum_lines(prefill: dict | None = None, xss: bool = True) -> list[str]:
    lines = []
    for n, (source, alpha, beta) in enumerate(MUSEUM, 1):
        if not xss:
            beta = beta.replace(f" {XSS}", "")
        record = {"doc_id": "museum", "seg_id": n, "source": source, "systems": {"alpha": alpha, "beta": beta}}
        if prefill and n in prefill:
            record["error_spans"] = prefill[n]
        lines.append(json.dumps(record, ensure_ascii=False))
    return lines


def one_text_lines(texts: list[str], sources: list[str] | None = None) -> list[str]:
    """One document, both systems translating each segment the same (so the item shown is known)."""
    return [json.dumps({"doc_id": "d", "seg_id": n, "source": (sources or texts)[n - 1],
                        "systems": {"alpha": text, "beta": text}}, ensure_ascii=False)
            for n, text in enumerate(texts, 1)]


def campaign(protocol="esa", lines=None, name=None, **options):
    """A campaign of one document per HIT (test_error_span_protocols.span_campaign's settings), named `name`."""
    lines = lines or museum_lines()
    options = {"target_language": "en", "perturbation_rate": 0.0, "segments_per_hit": len(lines), **options}
    if name is None:
        return span_campaign(protocol, lines=lines, tutorial=0, **options)
    parsed = get_protocol(protocol).parse_options({"seed": 3, "source_language": "de", **options})
    return import_campaign([(line + "\n").encode() for line in lines], name=name, protocol=protocol,
                           parsed=parsed).campaign


def u16(text: str, cp: int) -> int:
    """The UTF-16 offset of code point `cp` (what a DOM selection counts)."""
    return len(text[:cp].encode("utf-16-le")) // 2


# Sets the browser's selection over UTF-16 offsets [a, b) of the nth translation on the page (as a finger
# or the mouse would), across the text nodes and marks inside it.
SELECT_JS = """([n, a, b]) => {
  const el = document.querySelectorAll('.es-text')[n];
  const point = (u) => {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let node, seen = 0, last = null;
    while ((node = walker.nextNode())) {
      if (u <= seen + node.data.length) return [node, u - seen];
      seen += node.data.length; last = node;
    }
    return [last, last.data.length];
  };
  const [s, so] = point(a), [e, eo] = point(b);
  const selection = window.getSelection();
  selection.removeAllRanges();
  const range = document.createRange();
  range.setStart(s, so); range.setEnd(e, eo);
  selection.addRange(range);
}"""

# The boxes of the first and the last character of UTF-16 offsets [a, b) of the nth translation.
BOXES_JS = """([n, a, b]) => {
  const el = document.querySelectorAll('.es-text')[n];
  const box = (u, v) => {
    const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    let node, seen = 0;
    while ((node = walker.nextNode())) {
      if (u < seen + node.data.length) {
        const range = document.createRange();
        range.setStart(node, u - seen); range.setEnd(node, v - seen);
        const r = range.getClientRects()[0];
        return {left: r.left, right: r.right, top: r.top, bottom: r.bottom};
      }
      seen += node.data.length;
    }
  };
  const text = el.textContent;
  const last = (b - 2 >= a && text.charCodeAt(b - 1) >= 0xDC00 && text.charCodeAt(b - 1) <= 0xDFFF) ? b - 2 : b - 1;
  return [box(a, a + 1), box(last, b)];
}"""


def select_range(page: Page, text: str, start: int, end: int, n: int = 0) -> None:
    """Select code points [start, end) of the nth translation through the selection API (a finger's long press)."""
    page.evaluate(SELECT_JS, [n, u16(text, start), u16(text, end)])


def drag_select(page: Page, text: str, start: int, end: int, n: int = 0, rtl: bool = False) -> None:
    """Drag the mouse from the start of code point `start` to the end of code point `end - 1`."""
    first, last = page.evaluate(BOXES_JS, [n, u16(text, start), u16(text, end)])
    y0, y1 = (first["top"] + first["bottom"]) / 2, (last["top"] + last["bottom"]) / 2
    x0 = first["right"] - 1 if rtl else first["left"] + 1
    x1 = last["left"] + 1 if rtl else last["right"] - 1
    page.mouse.move(x0, y0)
    page.mouse.down()
    page.mouse.move((x0 + x1) / 2, (y0 + y1) / 2, steps=3)
    page.mouse.move(x1, y1, steps=3)
    page.mouse.up()


def marks(page: Page, n: int = 0) -> list[dict]:
    """The marked errors of the nth translation: text, severity class, label, suggested."""
    return page.evaluate("""(n) => Array.from(document.querySelectorAll('.es-line')[n].querySelectorAll('mark.es-span'),
        m => ({text: m.textContent, severity: [...m.classList].find(c => c.startsWith('sev-')).slice(4),
               label: m.dataset.label || null, suggested: m.classList.contains('es-suggested'),
               title: m.title}))""", n)


def click_slider(page: Page, fraction: float, n: int = 0) -> None:
    box = page.locator(".vas-track").nth(n).bounding_box()
    page.mouse.click(box["x"] + fraction * box["width"], box["y"] + box["height"] / 2)


def tab_to(page: Page, selector: str, limit: int = 30) -> None:
    for _ in range(limit):
        if page.evaluate("(s) => document.activeElement.matches(s)", selector):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {selector}")


def _shots() -> Path:
    shots = DOCS / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    return shots


def judgment_of(item_id: int) -> Judgment:
    return Judgment.objects.get(item_id=item_id)


def test_esa_by_mouse(live_server, browser):
    campaign_ = campaign(source_language="de")
    with _page(browser, 1280, 900) as page:
        token, state = _start(page, live_server, campaign_.slug, "esa-mouse")
        item = state["item"]
        text = item["candidate"]
        assert item["document"]["current"] == 0 and item["protocol"] == "esa"
        # The screen: the source beside the translation, the next segment muted, the rest on request.
        expect(page.locator("#es-source")).to_have_text(MUSEUM[0][0])
        expect(page.locator("#es-target .es-text")).to_have_text(text)
        assert page.text_content("#es-source-label") == "Source (German)"
        assert page.text_content("#es-target-label") == "Translation (English)"
        after = page.locator("#es-after .es-row")
        expect(after).to_have_count(len(MUSEUM) - 1)
        expect(after.nth(0)).to_be_visible()
        expect(after.nth(1)).to_be_hidden()
        assert after.nth(0).locator(".es-tgt").text_content() == item["document"]["segments"][1]["candidate"]
        page.click("#es-expand")
        expect(after.nth(3)).to_be_visible()
        page.click("#es-expand")
        expect(after.nth(1)).to_be_hidden()
        expect(page.locator("#submit")).to_be_disabled()

        # Drag over "museum": a major error.
        start = text.index("museum")
        drag_select(page, text, start, start + len("museum"))
        expect(page.locator(".es-message")).to_contain_text("“museum”: now choose its severity")
        page.get_by_role("button", name="Major").click()
        assert marks(page) == [{"text": "museum", "severity": "major", "label": None, "suggested": False,
                                "title": "Major error"}]
        # A second drag over "city museum" / "town museum" overlaps it: refused, nothing added.
        other = text.index("museum") - 5
        drag_select(page, text, other, start + 3)
        page.get_by_role("button", name="Minor").click()
        expect(page.locator(".es-message")).to_contain_text("overlaps an error already marked")
        assert len(marks(page)) == 1
        # "After" (double click selects the word), minor; then it is clicked and changed to major and back.
        box = page.evaluate(BOXES_JS, [0, 0, 5])[0]
        page.mouse.dblclick(box["left"] + 3, (box["top"] + box["bottom"]) / 2)
        page.get_by_role("button", name="Minor").click()
        assert [m["text"] for m in marks(page)] == ["After", "museum"]
        page.locator("mark.es-span", has_text="After").click()
        expect(page.locator(".es-message")).to_contain_text("Selected: “After” — Minor")
        expect(page.locator(".es-remove")).to_be_visible()
        page.get_by_role("button", name="Remove").click()
        assert [m["text"] for m in marks(page)] == ["museum"]

        expect(page.locator("#submit")).to_be_disabled()  # not before the slider has been moved
        click_slider(page, 0.7)
        expect(page.locator("#submit")).to_be_enabled()
        status, body, after_state = post_of(page, lambda: page.click("#submit"))
        assert status == 201
        assert body["spans"] == [{"start": start, "end": start + 6, "severity": "major"}]
        judgment = judgment_of(item["id"])
        assert judgment.spans == [{"start": start, "end": start + 6, "severity": "major"}]
        assert abs(judgment.score - 70) <= 1.5 and judgment.score == body["score"]
        # The next item: a clean screen, the previous segment now above.
        expect(page.locator("#progress-text")).to_have_text(f"2 / {len(MUSEUM)}")
        assert marks(page) == []
        expect(page.locator("#es-before .es-row")).to_have_count(1)
        expect(page.locator("#submit")).to_be_disabled()
        assert page.js_errors == [] and page.csp == []


def _answer_through_api(slug: str, worker: str, count: int) -> str:
    """Enter as `worker` and answer the first `count` items through the API; returns the HIT token."""
    client = Client()
    response = client.get(f"/c/{slug}/start/", {"worker_id": worker})
    assert response.status_code == 302
    token = response["Location"].rstrip("/").split("/")[-1]
    for _ in range(count):
        item = client.get(f"/api/hit/{token}/").json()["item"]
        if "candidates" in item:
            body = {"item": item["id"], "candidates": {c["key"]: {"score": 50} for c in item["candidates"]}}
        else:
            body = {"item": item["id"], "score": 50}
        assert client.post(f"/api/hit/{token}/", body, content_type="application/json").status_code == 201
    return token


def _suggested(text: str, word: str, severity: str = "minor", **extra) -> dict:
    return {"start": text.index(word), "end": text.index(word) + len(word), "severity": severity, **extra}


def test_esa_screenshots_desktop_and_phone(live_server, browser):
    prefill = {3: {"alpha": [_suggested(MUSEUM[2][1], "particularly")],
                   "beta": [_suggested(MUSEUM[2][2], "Especially proud is the museum")]}}
    campaign_ = campaign(lines=museum_lines(prefill, xss=False), source_language="de",
                         name="Museum news de-en, ESA")
    token = _answer_through_api(campaign_.slug, "esa-shot", 2)
    shots = _shots()
    with _page(browser, 1280, 860) as page:
        page.goto(f"{live_server.url}/hit/{token}/")
        expect(page.locator("#progress-text")).to_have_text(f"3 / {len(MUSEUM)}")
        text = page.text_content("#es-target .es-text")
        expect(page.locator("mark.es-suggested")).to_have_count(1)
        word = "model" if "model" in text else "restored"
        select_range(page, text, text.index(word), text.index(word) + len(word))
        page.keyboard.press("2")
        click_slider(page, 0.62)
        page.mouse.move(0, 0)
        page.screenshot(path=str(shots / "esa-desktop.png"))
        assert page.js_errors == []
    with _page(browser, 375, 740, is_mobile=True, has_touch=True) as phone:
        phone.goto(f"{live_server.url}/hit/{token}/")
        expect(phone.locator("#progress-text")).to_have_text(f"3 / {len(MUSEUM)}")
        assert phone.evaluate("document.documentElement.scrollWidth") <= 375
        expect(phone.locator("mark.es-suggested")).to_have_count(1)
        select_range(phone, text, text.index(word), text.index(word) + len(word))
        phone.tap(".es-severity.sev-major")
        phone.tap(".es-missing")
        phone.tap(".es-severity.sev-minor")
        phone.locator(".vas-track").scroll_into_view_if_needed()
        box = phone.locator(".vas-track").bounding_box()
        phone.touchscreen.tap(box["x"] + box["width"] * 0.62, box["y"] + box["height"] / 2)
        assert [m["text"] for m in marks(phone)][-2:] == [word, "[missing]"]
        phone.evaluate("window.scrollTo(0, 0)")
        phone.wait_for_timeout(300)
        phone.screenshot(path=str(shots / "esa-phone.png"), full_page=True)
        assert phone.js_errors == []


def test_esa_by_keyboard_only(live_server, browser):
    campaign_ = campaign(source_language="de")
    with _page(browser, 1280, 900) as page:
        posts: list[str] = []
        page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
        _, state = _start(page, live_server, campaign_.slug, "esa-keys")
        item = state["item"]
        text = item["candidate"]
        n = len(text)
        # The focus starts in the translation; the keys are written under it.
        assert page.evaluate("document.activeElement.classList.contains('es-text')")
        assert "Shift+← → select" in page.text_content("#es-keys")
        expect(page.locator(".es-cursor")).to_be_visible()
        keyboard = page.keyboard
        # Ctrl+→ to the end of "After", → to the start of "three", Shift+Ctrl+→ selects "three": 2 = major.
        keyboard.press("Control+ArrowRight")
        keyboard.press("ArrowRight")
        keyboard.press("Shift+Control+ArrowRight")
        expect(page.locator(".es-message")).to_contain_text("“three”: now choose its severity")
        keyboard.press("2")
        # Home, Shift+→ seven times: "After t" overlaps "three", refused; two steps back: "After", 1 = minor.
        keyboard.press("Home")
        for _ in range(7):
            keyboard.press("Shift+ArrowRight")
        expect(page.locator(".es-message")).to_contain_text("overlaps")
        keyboard.press("1")
        expect(page.locator(".es-message")).to_contain_text("overlaps an error already marked")
        keyboard.press("Shift+ArrowLeft")
        keyboard.press("Shift+ArrowLeft")
        expect(page.locator(".es-message")).to_contain_text("“After”: now choose its severity")
        keyboard.press("1")
        assert [(m["text"], m["severity"]) for m in marks(page)] == [("After", "minor"), ("three", "major")]
        # The cursor into "three" selects it; 1 makes it minor, 2 major again. Escape lets go.
        keyboard.press("Home")
        for _ in range(7):
            keyboard.press("ArrowRight")
        expect(page.locator(".es-message")).to_contain_text("Selected: “three” — Major")
        keyboard.press("1")
        assert marks(page)[1]["severity"] == "minor"
        keyboard.press("2")
        keyboard.press("Escape")
        expect(page.locator("mark.es-active")).to_have_count(0)
        # End, → reaches [missing]: 1 records an omission (minor); Delete on it removes it, then major.
        keyboard.press("End")
        keyboard.press("ArrowRight")
        expect(page.locator(".es-missing")).to_have_attribute("aria-pressed", "true")
        keyboard.press("1")
        expect(page.locator("mark.es-omission")).to_have_count(1)
        keyboard.press("Delete")
        expect(page.locator("mark.es-omission")).to_have_count(0)
        keyboard.press("End")
        keyboard.press("ArrowRight")
        keyboard.press("2")
        expect(page.locator("mark.es-omission.sev-major")).to_have_count(1)
        # Enter does nothing before the slider moved; Tab to the slider, End, three steps back.
        keyboard.press("Enter")
        page.wait_for_timeout(50)
        assert posts == []
        tab_to(page, ".vas-track")
        keyboard.press("End")
        for _ in range(3):
            keyboard.press("ArrowLeft")
        keyboard.press("PageDown")
        status, body, _ = post_of(page, lambda: keyboard.press("Enter"))
        assert status == 201
        expected = [{"start": 0, "end": 5, "severity": "minor"}, {"start": 6, "end": 11, "severity": "major"},
                    {"start": n, "end": n, "severity": "major"}]
        assert text[6:11] == "three"
        judgment = judgment_of(item["id"])
        assert judgment.spans == expected and judgment.score == 87
        assert page.js_errors == [] and page.csp == []


def test_esa_on_a_phone_with_touch(live_server, browser):
    campaign_ = campaign(source_language="de", name="Museum news de-en, ESA on a phone")
    with _page(browser, 375, 740, is_mobile=True, has_touch=True) as phone:
        _, state = _start(phone, live_server, campaign_.slug, "esa-phone")
        item = state["item"]
        text = item["candidate"]
        assert phone.evaluate("document.documentElement.scrollWidth") <= 375  # no sideways scrolling
        # Stacked: the source above the translation; severity buttons large enough for a finger.
        src, tgt = phone.locator("#es-source").bounding_box(), phone.locator("#es-target").bounding_box()
        assert tgt["y"] >= src["y"] + src["height"] - 1
        for button in phone.locator(".es-severity").all():
            box = button.bounding_box()
            assert box["height"] >= 44 and box["width"] >= 100
        # A long press selects a word (the selection API stands in for the finger), a tap on Minor marks it.
        start = text.index("years")
        select_range(phone, text, start, start + 5)
        phone.tap(".es-severity.sev-minor")
        assert [(m["text"], m["severity"]) for m in marks(phone)] == [("years", "minor")]
        # [missing], then Major: an omission at the end.
        phone.tap(".es-missing")
        expect(phone.locator(".es-message")).to_contain_text("[missing]: now choose its severity")
        phone.tap(".es-severity.sev-major")
        expect(phone.locator("mark.es-omission.sev-major")).to_have_count(1)
        # A tap on the marked word selects it; Remove (a tap) removes it; marked again as major.
        phone.locator("mark.es-span", has_text="years").tap()
        phone.tap(".es-remove")
        select_range(phone, text, start, start + 5)
        phone.tap(".es-severity.sev-major")
        expect(phone.locator("#submit")).to_be_disabled()
        phone.locator(".vas-track").scroll_into_view_if_needed()
        box = phone.locator(".vas-track").bounding_box()
        phone.touchscreen.tap(box["x"] + box["width"] * 0.3, box["y"] + box["height"] / 2)
        expect(phone.locator("#submit")).to_be_enabled()
        assert phone.evaluate("document.documentElement.scrollWidth") <= 375
        status, body, _ = post_of(phone, lambda: phone.tap("#submit"))
        assert status == 201
        n = len(text)
        judgment = judgment_of(item["id"])
        assert judgment.spans == [{"start": start, "end": start + 5, "severity": "major"},
                                  {"start": n, "end": n, "severity": "major"}]
        assert abs(judgment.score - 30) <= 2
        assert phone.js_errors == []


def test_right_to_left_arabic_and_combining_cjk_emoji_offsets(live_server, browser):
    lines = one_text_lines([t for _, t in ARABIC_DOC], [s for s, _ in ARABIC_DOC])
    arabic = campaign(lines=lines, source_language="de", target_language="ar", name="Museum news de-ar, ESA")
    with _page(browser, 1280, 800) as page:
        _, state = _start(page, live_server, arabic.slug, "esa-rtl")
        item = state["item"]
        text = item["candidate"]
        assert text == ARABIC_DOC[0][1]
        editor_text = page.locator("#es-target .es-text")
        assert page.locator("#es-target .es-line").get_attribute("dir") == "rtl"
        assert editor_text.get_attribute("lang") == "ar"
        assert editor_text.evaluate("t => getComputedStyle(t).direction") == "rtl"
        assert page.get_attribute("#es-source", "dir") == "ltr"
        assert page.locator("#es-after .es-tgt").nth(0).get_attribute("dir") == "rtl"
        # The mouse over "مغلق" (right to left on the screen).
        word = "مغلق"
        start = text.index(word)
        drag_select(page, text, start, start + len(word), rtl=True)
        expect(page.locator(".es-message")).to_contain_text(f"“{word}”")
        page.keyboard.press("2")
        # The keyboard: in right-to-left text ← moves forwards. End, then Shift+← ← … selects backwards
        # from the end: "الاثنين." — the full stop too, as it is no white space.
        page.locator("#es-target .es-text").focus()
        page.keyboard.press("End")
        for _ in range(len("الاثنين.")):
            page.keyboard.press("Shift+ArrowRight")
        page.keyboard.press("1")
        assert [(m["text"], m["severity"]) for m in marks(page)] == [(word, "major"), ("الاثنين.", "minor")]
        click_slider(page, 0.4)
        page.mouse.move(0, 0)
        page.screenshot(path=str(_shots() / "esa-arabic.png"))
        status, _, _ = post_of(page, lambda: page.click("#submit"))
        assert status == 201
        n = len(text)
        assert judgment_of(item["id"]).spans == [
            {"start": start, "end": start + len(word), "severity": "major"},
            {"start": n - len("الاثنين."), "end": n, "severity": "minor"}]
        assert page.js_errors == []

    mixed = campaign(lines=one_text_lines([MIXED, "Second segment."]), source_language="de",
                     name="Mixed scripts")
    with _page(browser, 1280, 800) as page:
        _, state = _start(page, live_server, mixed.slug, "esa-mixed")
        item = state["item"]
        assert item["candidate"] == MIXED
        # A selection ending between "e" and its combining acute accent takes the whole "é" (5 code points).
        cafe = MIXED.index("cafe")
        page.evaluate(SELECT_JS, [0, u16(MIXED, cafe), u16(MIXED, cafe) + 4])
        expect(page.locator(".es-message")).to_contain_text("“cafe\u0301”")
        page.keyboard.press("1")
        # The keyboard over two emoji: each is one step (one code point, two UTF-16 units).
        sushi = MIXED.index("🍣")
        page.locator("#es-target .es-text").focus()
        page.keyboard.press("Home")
        for _ in range(sushi - 1):  # graphemes before the emoji: é is one
            page.keyboard.press("ArrowRight")
        page.keyboard.press("Shift+ArrowRight")
        page.keyboard.press("Shift+ArrowRight")
        expect(page.locator(".es-message")).to_contain_text("“🍣🍣”")
        page.keyboard.press("2")
        # "寿司" by the mouse; the CJK extension B character by the selection API, half of it: the whole one.
        kanji = MIXED.index("寿司")
        drag_select(page, MIXED, kanji, kanji + 2)
        page.keyboard.press("2")
        ext_b = MIXED.index("𠀋")
        page.evaluate(SELECT_JS, [0, u16(MIXED, ext_b), u16(MIXED, ext_b) + 1])
        expect(page.locator(".es-message")).to_contain_text("“𠀋”")
        page.keyboard.press("1")
        assert [m["text"] for m in marks(page)] == ["cafe\u0301", "寿司", "🍣🍣", "𠀋"]
        click_slider(page, 0.5)
        status, _, _ = post_of(page, lambda: page.keyboard.press("Enter"))
        assert status == 201
        assert judgment_of(item["id"]).spans == [
            {"start": cafe, "end": cafe + 5, "severity": "minor"},
            {"start": kanji, "end": kanji + 2, "severity": "major"},
            {"start": sushi, "end": sushi + 2, "severity": "major"},
            {"start": ext_b, "end": ext_b + 1, "severity": "minor"}]
        assert page.js_errors == []


def test_mqm_category_in_two_keystrokes(live_server, browser):
    campaign_ = campaign("mqm", source_language="de", critical=True, name="Museum news de-en, MQM")
    with _page(browser, 1280, 900) as page:
        _, state = _start(page, live_server, campaign_.slug, "mqm-keys")
        item = state["item"]
        text = item["candidate"]
        # The groups with their keys: Accuracy A, Fluency F, then the single categories.
        groups = page.locator(".es-group")
        assert [g.text_content() for g in groups.all()] == [
            "AAccuracy ▸", "FFluency ▸", "TTerminology", "SStyle", "LLocale convention", "OOther", "NNon-translation"]
        assert [b.text_content() for b in page.locator(".es-severity").all()] == ["1Minor", "2Major", "3Critical"]
        # "three" by keyboard, then A (Accuracy) 1 (Mistranslation), then 2 (major).
        page.keyboard.press("Control+ArrowRight")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("Shift+Control+ArrowRight")
        expect(page.locator(".es-message")).to_contain_text("“three”: now choose its category and its severity")
        page.keyboard.press("a")
        expect(page.locator(".es-children")).to_be_visible()
        assert [b.text_content() for b in page.locator(".es-child").all()] == [
            "1Mistranslation", "2Omission", "3Addition", "4Untranslated"]
        page.keyboard.press("1")
        expect(page.locator(".es-children")).to_be_hidden()
        expect(page.locator(".es-message")).to_contain_text("now choose its severity")
        page.keyboard.press("2")
        assert marks(page) == [{"text": "three", "severity": "major", "label": "Mistranslation", "suggested": False,
                                "title": "Major error (Accuracy/Mistranslation)"}]
        # Severity first, then a one-keystroke category: "doors"/"gates" is a Terminology error, minor.
        word = "doors" if "doors" in text else "gates"
        start = text.index(word)
        select_range(page, text, start, start + len(word))
        page.keyboard.press("1")
        expect(page.locator(".es-message")).to_contain_text("now choose its category")
        page.keyboard.press("t")
        # The mouse: [missing], Accuracy ▸ Omission, Critical.
        page.click(".es-missing")
        page.get_by_role("button", name="Accuracy").click()
        page.get_by_role("button", name="Omission", exact=True).click()
        page.get_by_role("button", name="Critical").click()
        # The first one's category changed: click it, F then 3 (Fluency/Punctuation)... then back to Grammar: F 1.
        page.locator("mark.es-span", has_text="three").click()
        page.keyboard.press("f")
        page.keyboard.press("1")
        assert marks(page)[0]["label"] == "Grammar"
        click_slider(page, 0.35)
        # A selection given a severity but no category is not dropped unsaid on Submit: the screen stops and says so.
        other = "museum" if "museum" in text else text.split()[-1]
        select_range(page, text, text.index(other), text.index(other) + len(other))
        page.keyboard.press("1")
        page.keyboard.press("Enter")
        expect(page.locator(".es-message")).to_contain_text("did not finish it")
        assert not Judgment.objects.filter(item_id=item["id"]).exists()
        page.keyboard.press("Escape")
        page.mouse.move(0, 0)
        page.screenshot(path=str(_shots() / "mqm-desktop.png"))
        status, _, _ = post_of(page, lambda: page.keyboard.press("Enter"))
        assert status == 201
        n = len(text)
        judgment = judgment_of(item["id"])
        assert judgment.spans == [
            {"start": 6, "end": 11, "severity": "major", "category": "Fluency/Grammar"},
            {"start": start, "end": start + len(word), "severity": "minor", "category": "Terminology"},
            {"start": n, "end": n, "severity": "critical", "category": "Accuracy/Omission"}]
        assert abs(judgment.score - 35) <= 1.5
        assert page.js_errors == []


def test_prefilled_spans_kept_changed_and_deleted(live_server, browser):
    text = MUSEUM[0][1]
    suggested = [_suggested(text, "After"), _suggested(text, "renovation", "major"), _suggested(text, "Saturday")]
    lines = one_text_lines([MUSEUM[0][1], MUSEUM[1][1]], [MUSEUM[0][0], MUSEUM[1][0]])
    first = json.loads(lines[0])
    first["error_spans"] = {"alpha": suggested, "beta": suggested}
    lines[0] = json.dumps(first, ensure_ascii=False)
    campaign_ = campaign(lines=lines, source_language="de", name="Prefilled")
    with _page(browser, 1280, 900) as page:
        _, state = _start(page, live_server, campaign_.slug, "esa-prefilled")
        item = state["item"]
        assert item["prefilled"] == suggested
        shown = marks(page)
        assert [(m["text"], m["severity"], m["suggested"], m["label"]) for m in shown] == [
            ("After", "minor", True, "suggested"), ("renovation", "major", True, "suggested"),
            ("Saturday", "minor", True, "suggested")]
        assert shown[1]["title"] == "Major error — suggested"
        # "After" deleted (Delete key), "renovation" changed to minor, "Saturday" kept as it is.
        page.locator("mark.es-span", has_text="After").click()
        expect(page.locator(".es-message")).to_contain_text("Selected: “After” — Minor (suggested)")
        page.keyboard.press("Delete")
        page.locator("mark.es-span", has_text="renovation").click()
        page.get_by_role("button", name="Minor").click()
        assert [(m["text"], m["severity"], m["suggested"]) for m in marks(page)] == [
            ("renovation", "minor", False), ("Saturday", "minor", True)]
        click_slider(page, 0.9)
        status, body, _ = post_of(page, lambda: page.click("#submit"))
        assert status == 201
        assert judgment_of(item["id"]).spans == [
            {"start": text.index("renovation"), "end": text.index("renovation") + 10, "severity": "minor"},
            {"start": text.index("Saturday"), "end": text.index("Saturday") + 8, "severity": "minor"}]
        assert page.js_errors == []


def test_mqm_suggested_span_is_recategorised_in_two_keystrokes(live_server, browser):
    """A suggestion must already fit the campaign (the import refuses one without a category or with a severity
    the campaign does not offer); the judge changes its severity and category by keyboard."""
    text = MUSEUM[0][1]
    lines = one_text_lines([text, MUSEUM[1][1]], [MUSEUM[0][0], MUSEUM[1][0]])
    first = json.loads(lines[0])
    suggestion = _suggested(text, "renovation", "critical", category="Accuracy/Mistranslation")
    first["error_spans"] = {"alpha": [suggestion], "beta": [suggestion]}
    lines[0] = json.dumps(first, ensure_ascii=False)
    with pytest.raises(CampaignFileError):  # the same file without `critical` on offer is refused
        campaign("mqm", lines=lines, source_language="de", name="MQM, critical not offered")
    campaign_ = campaign("mqm", lines=lines, source_language="de", critical=True, name="MQM, suggested")
    with _page(browser, 1280, 900) as page:
        _, state = _start(page, live_server, campaign_.slug, "mqm-prefilled")
        item = state["item"]
        assert item["prefilled"] == [suggestion]
        assert marks(page)[0]["suggested"] and marks(page)[0]["severity"] == "critical"
        page.locator("mark").first.click()
        expect(page.locator("mark.es-active")).to_have_text("renovation")
        page.keyboard.press("2")
        page.keyboard.press("s")  # Style
        click_slider(page, 0.5)
        status, _, _ = post_of(page, lambda: page.click("#submit"))
        assert status == 201
        start = text.index("renovation")
        assert judgment_of(item["id"]).spans == [{"start": start, "end": start + 10, "severity": "major",
                                                  "category": "Style"}]
        assert page.js_errors == []


def test_contrastive_esa_two_candidates(live_server, browser):
    campaign_ = campaign("contrastive-esa", lines=museum_lines(xss=True), source_language="de",
                         name="Museum news de-en, contrastive ESA")
    token = _answer_through_api(campaign_.slug, "ces", 4)  # the last segment: the hostile translation
    with _page(browser, 1280, 900) as page:
        page.goto(f"{live_server.url}/hit/{token}/")
        expect(page.locator("#progress-text")).to_have_text(f"5 / {len(MUSEUM)}")
        item = Client().get(f"/api/hit/{token}/").json()["item"]
        a, b = item["candidates"]
        expect(page.locator(".ces-col")).to_have_count(2)
        # Side by side, each with its own document; the source above; nothing shown as HTML.
        col_a, col_b = page.locator(".ces-col").nth(0).bounding_box(), page.locator(".ces-col").nth(1).bounding_box()
        assert abs(col_a["y"] - col_b["y"]) < 2 and col_b["x"] > col_a["x"] + col_a["width"]
        expect(page.locator("#ces-source")).to_have_text(MUSEUM[4][0])
        assert page.locator(".es-text").nth(0).text_content() == a["text"]
        assert page.locator(".es-text").nth(1).text_content() == b["text"]
        assert page.evaluate("typeof window.__xss") == "undefined"
        assert page.locator(".ces-col").nth(0).locator(".es-before .es-tgt").last.text_content() == a["document"][3]
        # A: "School" major; B: an omission minor. Then both sliders the same: a tie is marked on both.
        select_range(page, a["text"], 0, 6, n=0)
        page.locator(".ces-col").nth(0).get_by_role("button", name="Major").click()
        page.locator(".ces-col").nth(1).locator(".es-missing").click()
        page.keyboard.press("1")
        expect(page.locator("#ces-remaining")).to_have_text("2 translations still to score")
        page.locator(".vas-track").nth(0).focus()
        page.keyboard.press("PageUp")  # 60
        expect(page.locator(".ces-score").nth(0)).to_have_text("60")
        expect(page.locator("#submit")).to_be_disabled()
        page.locator(".vas-track").nth(1).focus()
        page.keyboard.press("PageUp")
        expect(page.locator(".ces-score").nth(1)).to_have_text("60")
        expect(page.locator(".ces-tie").nth(0)).to_have_text("= B")
        expect(page.locator(".ces-tie").nth(1)).to_have_text("= A")
        expect(page.locator(".ces-col.ces-tied")).to_have_count(2)
        expect(page.locator("#ces-remaining")).to_have_text("All scored")
        page.mouse.move(0, 0)
        page.screenshot(path=str(_shots() / "contrastive-esa.png"), full_page=True)
        for _ in range(15):
            page.keyboard.press("ArrowRight")
        expect(page.locator(".ces-tie").nth(0)).to_be_hidden()
        status, body, _ = post_of(page, lambda: page.keyboard.press("Enter"))
        assert status == 201
        n_b = len(b["text"])
        judgment = judgment_of(item["id"])
        assert judgment.scores == {a["key"]: 60.0, b["key"]: 75.0}
        assert judgment.spans == [{"start": 0, "end": 6, "severity": "major", "candidate": a["key"]},
                                  {"start": n_b, "end": n_b, "severity": "minor", "candidate": b["key"]}]
        assert page.js_errors == [] and page.csp == []


def test_contrastive_esa_stacks_on_a_phone(live_server, browser):
    campaign_ = campaign("contrastive-esa", source_language="de", name="Museum news, contrastive on a phone")
    with _page(browser, 375, 740, is_mobile=True, has_touch=True) as phone:
        _, state = _start(phone, live_server, campaign_.slug, "ces-phone")
        item = state["item"]
        assert phone.evaluate("document.documentElement.scrollWidth") <= 375
        col_a, col_b = phone.locator(".ces-col").nth(0).bounding_box(), phone.locator(".ces-col").nth(1).bounding_box()
        assert col_b["y"] >= col_a["y"] + col_a["height"]
        text = item["candidates"][1]["text"]
        select_range(phone, text, 0, 5, n=1)
        phone.locator(".ces-col").nth(1).locator(".es-severity.sev-minor").tap()
        for n, fraction in enumerate((0.8, 0.2)):
            phone.locator(".vas-track").nth(n).scroll_into_view_if_needed()
            box = phone.locator(".vas-track").nth(n).bounding_box()
            phone.touchscreen.tap(box["x"] + box["width"] * fraction, box["y"] + box["height"] / 2)
        phone.screenshot(path=str(_shots() / "contrastive-esa-phone.png"), full_page=True)
        status, _, _ = post_of(phone, lambda: phone.tap("#submit"))
        assert status == 201
        judgment = judgment_of(item["id"])
        keys = [c["key"] for c in item["candidates"]]
        assert judgment.spans == [{"start": 0, "end": 5, "severity": "minor", "candidate": keys[1]}]
        assert abs(judgment.scores[keys[0]] - 80) <= 2 and abs(judgment.scores[keys[1]] - 20) <= 2
        assert phone.js_errors == []


def test_a_refused_answer_shows_the_servers_reason(live_server, browser):
    campaign_ = campaign(source_language="de")
    with _page(browser, 1280, 900) as page:
        token, state = _start(page, live_server, campaign_.slug, "esa-400")
        item = state["item"]
        text = item["candidate"]
        select_range(page, text, 0, 5)
        page.keyboard.press("2")
        click_slider(page, 0.5)

        def corrupt(route):  # the real server sees a span past the end of the text
            body = json.loads(route.request.post_data)
            body["spans"][0]["end"] = 999
            route.continue_(post_data=json.dumps(body))
        page.route(f"**/api/hit/{token}/", lambda route: corrupt(route) if route.request.method == "POST"
                   else route.continue_())
        status, _, answer = post_of(page, lambda: page.click("#submit"))
        assert status == 400 and "out of bounds" in answer["error"]
        expect(page.locator("#status")).to_have_text(answer["error"])
        expect(page.locator("#status")).to_have_class(re.compile("error"))
        expect(page.locator("#submit")).to_be_enabled()  # the screen is as it was, to fix or send again
        assert [m["text"] for m in marks(page)] == ["After"]
        assert not Judgment.objects.exists()
        page.unroute(f"**/api/hit/{token}/")
        status, _, _ = post_of(page, lambda: page.click("#submit"))
        assert status == 201
        assert judgment_of(item["id"]).spans == [{"start": 0, "end": 5, "severity": "major"}]
        assert len(text) > 5 and page.js_errors == []
