"""The constituent screens in a real browser (docs/methods.md §8.6, WMT08).

`ranking-constituent` is the ranking screen with one phrase highlighted in the source and in each
translation; `constituent-acceptance` asks Yes / No for each highlighted phrase. The campaign file
gives the phrases as [start, end) spans in Unicode code points; one line puts emoji (outside the BMP,
two UTF-16 units each), a flag, a skin-tone modifier and combining marks before and inside the spans,
so a screen that counted UTF-16 units (as JS strings do) would highlight the wrong characters. At
every screen the tests check that the highlighted text is exactly the phrase of the file, that the
text around it is the rest of the output and that text never turns into HTML; then the answers
stored (acceptance: the WMT08 codes, 1 yes and 2 no). Whole HITs by keyboard and by mouse, a refused
answer and a paused campaign, a right-to-left target, and the screenshots (desktop 1280×800, phone).
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from django.test import Client
from playwright.sync_api import Page, expect

from annotation.models import Assignment, HitItem, Judgment
from annotation.services.campaign_import import import_campaign

from .screens import is_hit_api as _is_hit_api
from .screens import open_page as _page
from .screens import start_hit as _start

pytestmark = pytest.mark.browser

# Screenshots go to a temporary folder; `SCREENSHOT_DIR=docs` refreshes docs/screenshots/constituent-*.png.
DOCS = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="mteval-shots-"))
XSS = "<script>window.__xss=1</script>"
ACCENT = "rgb(31, 95, 191)"
SYSTEMS = ("online-A", "uedin", "limsi")

# Made-up German news: (source, its highlighted phrase), the reference, and for each system (SYSTEMS order)
# its output and the phrase aligned to the source's. Every phrase occurs once in its text.
NEWS = [
    (("Der Stadtrat hat am Dienstag den Bau von zwölf Kilometern neuer Radwege beschlossen.",
      "zwölf Kilometern neuer Radwege"),
     "On Tuesday the city council approved the construction of twelve kilometres of new cycle lanes.",
     (("On Tuesday, the city council approved building twelve kilometres of new cycle paths.",
       "twelve kilometres of new cycle paths"),
      ("The city council decided on Tuesday the building of twelve kilometers new bike paths.",
       "twelve kilometers new bike paths"),
      ("The town council has Tuesday the construction of twelve kilometres new cycle ways decided.",
       "twelve kilometres new cycle ways"))),
    # Characters outside the BMP and combining marks (o + U+0308, u + U+0308) before and inside the spans.
    (("🚲🚲 Ko\u0308ln: Der Stadtrat öffnet am Samstag die neue Fahrradbru\u0308cke über den Rhein 🌉.",
      "die neue Fahrradbru\u0308cke"),
     "🚲🚲 Cologne: the city council opens the new cycle bridge over the Rhine 🌉 on Saturday.",
     (("🚲🚲 Cologne: on Saturday the city council opens the new bicycle bridge over the Rhine 🌉.",
       "the new bicycle bridge"),
      ("👍🏽 Ko\u0308ln: The city council opens on Saturday the new bike bridge 🌉 over the Rhine.",
       "the new bike bridge 🌉"),
      ("🇩🇪 Cologne: The town council opens Saturday the new Fahrradbru\u0308cke over the Rhine.",
       "the new Fahrradbru\u0308cke"))),
    # Text that looks like HTML stays text, inside the highlight too; a phrase may end the output.
    (("Ein Student hatte bemerkt, dass das Namensfeld eingegebenen Code ungeprüft ausführt.",
      "eingegebenen Code ungeprüft ausführt"),
     "A student had noticed that the name field runs any code typed into it without checking it.",
     (("A student had noticed that the name field executes entered code without checking it.",
       "executes entered code without checking it."),
      (f"A student had noticed that the name field executes entered code {XSS} unchecked.",
       f"executes entered code {XSS} unchecked"),
      ("A student had noticed <b>that</b> the name field executes code without checking.",
       "executes code without checking"))),
]

ARABIC = [
    (("Das Museum ist montags geschlossen.", "montags"), "المتحف مغلق أيام الاثنين.",
     (("المتحف مغلق يوم الاثنين.", "يوم الاثنين"), ("يغلق المتحف أيام الاثنين.", "أيام الاثنين"),
      ("المتحف مغلق الاثنين.", "الاثنين"))),
]


def _span(text: str, phrase: str) -> list[int]:
    """[start, end) of the phrase in code points (a Python str counts code points)."""
    assert text.count(phrase) == 1, (text, phrase)
    start = text.index(phrase)
    return [start, start + len(phrase)]


def _lines(news=NEWS, systems=SYSTEMS) -> list[str]:
    lines = []
    for n, ((source, source_phrase), reference, outputs) in enumerate(news, 1):
        lines.append(json.dumps({
            "doc_id": "news", "seg_id": n, "source": source, "reference": reference,
            "systems": {name: text for name, (text, _) in zip(systems, outputs, strict=True)},
            "constituent": {"source": _span(source, source_phrase),
                            "systems": {name: _span(text, phrase)
                                        for name, (text, phrase) in zip(systems, outputs, strict=True)}},
        }, ensure_ascii=False))
    return lines


#: Every text of the campaigns -> the phrase highlighted in it.
PHRASES = {text: phrase for (source, reference, outputs) in NEWS + ARABIC for text, phrase in (source, *outputs)}


def _campaign(name: str, protocol: str, seed: int = 3, news=NEWS, **settings):
    settings.setdefault("source_language", "de")
    settings.setdefault("target_language", "en")
    return import_campaign(_lines(news), name=name, protocol=protocol, seed=seed, hit_size=len(news),
                           options={"screen_size": 3}, **settings).campaign


# What a text element shows: the visible text (without the words for screen readers), the text before the
# highlight, the highlight itself, what a screen reader hears just before it, and how many marks there are.
READ_TEXT = """el => {
    const visible = node => Array.from(node.childNodes, c => c.nodeType === Node.TEXT_NODE ? c.data :
        (c.classList.contains('visually-hidden') ? '' : visible(c))).join('');
    const mark = el.querySelector('mark.hl');
    let before = '';
    for (let c = el.firstChild; c && c !== mark; c = c.nextSibling) {
        if (c.nodeType === Node.TEXT_NODE) { before += c.data; }
    }
    const style = mark ? getComputedStyle(mark) : null;
    return {text: visible(el), before: mark ? before : null, mark: mark ? mark.textContent : null,
            marks: el.querySelectorAll('mark').length, elements: el.querySelectorAll('*:not(mark):not(span)').length,
            announced: mark && mark.previousSibling ? mark.previousSibling.textContent : null,
            background: style ? style.backgroundColor : null,
            width: mark ? mark.getBoundingClientRect().width : 0}
}"""


def _check_highlight(shown: dict, text: str, span: list[int]) -> None:
    """The element shows `text` whole, with exactly its code points [start, end) highlighted."""
    assert shown["text"] == text
    assert shown["marks"] == 1 and shown["elements"] == 0  # text nodes, one <mark>, the hidden words
    assert shown["mark"] == text[span[0]:span[1]] == PHRASES[text]
    assert shown["before"] == text[:span[0]]
    assert shown["announced"] == "highlighted: "
    assert shown["background"] == "rgb(255, 226, 122)" and shown["width"] > 10


def _check_screen(page: Page, item: dict, stored: HitItem, prefix: str) -> None:
    """The item carries the spans of the file; the screen highlights exactly those code points."""
    assert set(item) == {"id", "protocol", "source", "source_span", "reference", "candidates"}
    assert [c["key"] for c in item["candidates"]] == [c["key"] for c in stored.payload["candidates"]]
    assert all(set(c) == {"key", "text", "span"} for c in item["candidates"])
    assert item["source"] == stored.segment.source and item["reference"] == stored.segment.reference
    _check_highlight(page.locator(f"#{prefix}-source").evaluate(READ_TEXT), item["source"], item["source_span"])
    assert page.text_content(f"#{prefix}-source-label") == "Source (German)"
    expect(page.locator(f"#{prefix}-reference")).to_have_text(item["reference"])
    assert page.locator(f"#{prefix}-reference mark").count() == 0
    texts = page.locator(f"#{prefix}-rows .rk-text")
    expect(texts).to_have_count(len(item["candidates"]))
    for i, candidate in enumerate(item["candidates"]):
        _check_highlight(texts.nth(i).evaluate(READ_TEXT), candidate["text"], candidate["span"])
    assert page.evaluate("document.querySelectorAll('#screen script, #screen .rk-text b').length") == 0
    assert page.evaluate("typeof window.__xss") == "undefined"


def _focused_row(page: Page, rows: str) -> int:
    return page.evaluate(f"""() => Array.from(document.querySelectorAll('{rows} > .rk-row'))
        .indexOf(document.activeElement.closest('.rk-row'))""")


def _shown_ranks(page: Page) -> list[int | None]:
    return page.evaluate("""() => Array.from(document.querySelectorAll('#rk-rows > .rk-row'), row => {
        const checked = row.querySelector('input[type=radio]:checked');
        return checked ? Number(checked.value) : null; })""")


def _shown_answers(page: Page) -> list[str | None]:
    return page.evaluate("""() => Array.from(document.querySelectorAll('#ac-rows > .rk-row'), row => {
        const checked = row.querySelector('input[type=radio]:checked');
        return checked ? checked.value : null; })""")


def _expect_unanswered(page: Page, left: int, posts: list[str]) -> None:
    """Submit is disabled, the hint says how many rows are left, Enter posts nothing."""
    expect(page.locator("#submit")).to_be_disabled()
    expect(page.locator("#ac-remaining")).to_have_text(
        f"{left} translation{'s' if left > 1 else ''} still to answer")
    before = len(posts)
    page.keyboard.press("Enter")
    page.wait_for_timeout(50)
    assert len(posts) == before


def test_constituent_ranking_a_whole_hit_with_the_keyboard(live_server, desktop):
    page = desktop
    campaign = _campaign("News de-en, constituent ranking", "ranking-constituent")
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    csp: list[str] = []
    page.on("console", lambda m: csp.append(m.text) if "Content Security Policy" in m.text else None)
    token, state = _start(page, live_server, campaign.slug, "constituent-keyboard")
    hit_id = Assignment.objects.get(token=token).hit_id
    assert HitItem.objects.filter(hit_id=hit_id).count() == len(NEWS)
    assert page.text_content("#statement").startswith("Rank the highlighted phrases from best (1) to worst")
    plans = ("213", "111", "321")
    expected, seen = {}, set()
    for k, plan in enumerate(plans):
        assert not state["done"] and state["position"] == k + 1
        item = state["item"]
        assert item["protocol"] == "ranking-constituent"
        stored = HitItem.objects.select_related("segment").get(pk=item["id"], hit_id=hit_id)
        seen.add(stored.segment.seg_id)
        expect(page.locator("#progress-text")).to_have_text(f"{k + 1} / {len(NEWS)}")
        _check_screen(page, item, stored, "rk")
        assert _focused_row(page, "#rk-rows") == 0
        assert page.locator(".rk-row").nth(0).evaluate("r => getComputedStyle(r).borderLeftColor") == ACCENT
        expect(page.locator("#rk-remaining")).to_have_text("3 translations still to rank")
        for i, digit in enumerate(plan):
            expect(page.locator("#submit")).to_be_disabled()
            page.keyboard.press(digit)
            assert _focused_row(page, "#rk-rows") == min(i + 1, 2)
        ranks = [int(d) for d in plan]
        assert _shown_ranks(page) == ranks
        expect(page.locator("#rk-remaining")).to_have_text("All ranked")
        expected[item["id"]] = {c["key"]: r for c, r in zip(item["candidates"], ranks, strict=True)}
        with page.expect_response(_is_hit_api("POST")) as answer:
            page.keyboard.press("Enter")
        assert answer.value.status == 201
        assert json.loads(answer.value.request.post_data) == {"item": item["id"], "ranks": expected[item["id"]]}
        state = answer.value.json()
    assert seen == set(range(1, len(NEWS) + 1))  # the emoji line was among them
    assert state["done"] is True
    expect(page.locator("#done")).to_be_visible()
    assert page.js_errors == [] and csp == [] and len(posts) == len(NEWS)
    assert page.evaluate("typeof window.__xss") == "undefined"
    judgments = Judgment.objects.filter(assignment__token=token)
    assert {j.item_id: j.ranks for j in judgments} == expected
    assert all(j.score is None for j in judgments)


def test_constituent_acceptance_a_whole_hit_with_the_mouse(live_server, desktop):
    page = desktop
    campaign = _campaign("News de-en, constituent acceptance", "constituent-acceptance", seed=5)
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    csp: list[str] = []
    page.on("console", lambda m: csp.append(m.text) if "Content Security Policy" in m.text else None)
    token, state = _start(page, live_server, campaign.slug, "acceptance-mouse")
    hit_id = Assignment.objects.get(token=token).hit_id
    assert page.text_content("#statement") == (
        "Is each highlighted phrase an acceptable translation of the highlighted source phrase?")
    plans = (("yes", "no", "yes"), ("no", "no", "no"), ("yes", "yes", "no"))
    expected, seen = {}, set()
    for k, plan in enumerate(plans):
        item = state["item"]
        assert item["protocol"] == "constituent-acceptance"
        stored = HitItem.objects.select_related("segment").get(pk=item["id"], hit_id=hit_id)
        seen.add(stored.segment.seg_id)
        expect(page.locator("#progress-text")).to_have_text(f"{k + 1} / {len(NEWS)}")
        _check_screen(page, item, stored, "ac")
        rows = page.locator("#ac-rows > .rk-row")
        for i in range(3):  # a Yes / No radio group per row, named for screen readers, Yes first
            assert rows.nth(i).locator("legend").text_content() == (
                f"Is the highlighted phrase of translation {'ABC'[i]} acceptable?")
            assert [r.get_attribute("value") for r in rows.nth(i).locator("input[type=radio]").all()] == ["yes", "no"]
            assert rows.nth(i).locator("label.ac-choice").all_text_contents() == ["Yes", "No"]
        assert _shown_answers(page) == [None] * 3
        for i, answer in enumerate(plan):
            _expect_unanswered(page, 3 - i, posts)
            rows.nth(i).get_by_text("Yes" if answer == "yes" else "No", exact=True).click()
        if k == 0:  # a change of mind: the second row from No to Yes, then back
            rows.nth(1).get_by_text("Yes", exact=True).click()
            assert _shown_answers(page) == ["yes", "yes", "yes"]
            rows.nth(1).get_by_text("No", exact=True).click()
        assert _shown_answers(page) == list(plan)
        expect(page.locator("#ac-remaining")).to_have_text("All answered")
        expect(page.locator("#submit")).to_be_enabled()
        # The answers show: Yes green, No red, each filled when chosen.
        faces = [rows.nth(i).locator("input:checked + .ac-face") for i in range(3)]
        colours = [f.evaluate("f => getComputedStyle(f).backgroundColor") for f in faces]
        assert colours == [{"yes": "rgb(0, 112, 79)", "no": "rgb(176, 0, 32)"}[a] for a in plan]
        unchosen = page.locator("#ac-rows input:not(:checked) + .ac-face")
        assert {f.evaluate("f => getComputedStyle(f).color") for f in unchosen.all()} == {"rgb(17, 17, 17)"}
        expected[item["id"]] = {c["key"]: a for c, a in zip(item["candidates"], plan, strict=True)}
        with page.expect_response(_is_hit_api("POST")) as answer:
            page.click("#submit")
        assert answer.value.status == 201
        assert json.loads(answer.value.request.post_data) == {"item": item["id"], "accept": expected[item["id"]]}
        state = answer.value.json()
    assert seen == set(range(1, len(NEWS) + 1))
    assert state["done"] is True
    expect(page.locator("#done")).to_be_visible()
    assert page.js_errors == [] and csp == [] and len(posts) == len(NEWS)
    assignment = Assignment.objects.get(token=token)
    assert assignment.status == Assignment.Status.COMPLETED
    codes = {"yes": 1, "no": 2}  # WMT08's CONSTITUENT_ACCEPT codes
    assert {j.item_id: j.ranks for j in Judgment.objects.filter(assignment=assignment)} == {
        item: {key: codes[a] for key, a in answers.items()} for item, answers in expected.items()}


def test_constituent_acceptance_a_whole_hit_with_the_keyboard(live_server, desktop):
    """Y / N and 1 / 2 answer the focused row and move on; ↑ ↓ move between rows; ← → switch Yes / No
    like any radio group; Enter (or Space on Submit) submits."""
    page = desktop
    campaign = _campaign("News de-en, acceptance by keyboard", "constituent-acceptance", seed=9)
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    token, state = _start(page, live_server, campaign.slug, "acceptance-keyboard")
    expected = {}
    for k in range(len(NEWS)):
        item = state["item"]
        expect(page.locator("#progress-text")).to_have_text(f"{k + 1} / {len(NEWS)}")
        assert _focused_row(page, "#ac-rows") == 0  # the keys work at once
        assert page.locator(".rk-row").nth(0).evaluate("r => getComputedStyle(r).borderLeftColor") == ACCENT
        _expect_unanswered(page, 3, posts)
        if k == 0:
            page.keyboard.press("y")
            assert _focused_row(page, "#ac-rows") == 1
            _expect_unanswered(page, 2, posts)
            page.keyboard.press("N")  # Shift does not matter
            assert _focused_row(page, "#ac-rows") == 2
            page.keyboard.press("n")
            assert _focused_row(page, "#ac-rows") == 2  # the last row keeps the focus
            page.keyboard.press("y")  # and a second key corrects it
            answers = ["yes", "no", "yes"]
        elif k == 1:
            page.keyboard.press("ArrowDown")
            page.keyboard.press("ArrowDown")
            assert _focused_row(page, "#ac-rows") == 2
            page.keyboard.press("2")
            assert _shown_answers(page) == [None, None, "no"]
            for _ in range(3):
                page.keyboard.press("ArrowUp")  # stops at the top
            assert _focused_row(page, "#ac-rows") == 0
            page.keyboard.press("1")
            _expect_unanswered(page, 1, posts)
            page.keyboard.press("1")
            answers = ["yes", "yes", "no"]
        else:
            page.keyboard.press("Space")  # the focused radio: Yes
            page.keyboard.press("ArrowRight")  # → No
            assert _shown_answers(page)[0] == "no"
            page.keyboard.press("Tab")  # one Tab stop per row
            assert _focused_row(page, "#ac-rows") == 1
            page.keyboard.press("n")
            page.keyboard.press("x")  # other keys do nothing
            page.keyboard.press("n")
            answers = ["no", "no", "no"]
        assert _shown_answers(page) == answers
        expect(page.locator("#ac-remaining")).to_have_text("All answered")
        expected[item["id"]] = {c["key"]: a for c, a in zip(item["candidates"], answers, strict=True)}
        with page.expect_response(_is_hit_api("POST")) as answer:
            if k == len(NEWS) - 1:
                page.keyboard.press("Tab")  # from the last row to Submit
                assert page.evaluate("document.activeElement.id") == "submit"
                page.keyboard.press("Space")
            else:
                page.keyboard.press("Enter")
                if k == 0:
                    page.keyboard.press("Enter")  # a double press stores one answer and skips nothing
        assert answer.value.status == 201
        assert json.loads(answer.value.request.post_data) == {"item": item["id"], "accept": expected[item["id"]]}
        state = answer.value.json()
    assert state["done"] is True
    assert len(posts) == len(NEWS) and page.js_errors == []
    codes = {"yes": 1, "no": 2}
    assert {j.item_id: j.ranks for j in Judgment.objects.filter(assignment__token=token)} == {
        item: {key: codes[a] for key, a in answers.items()} for item, answers in expected.items()}


def test_a_refused_acceptance_leaves_the_screen_to_fix(live_server, desktop):
    """A 400 shows the server's reason and gives Submit back; a paused campaign (423) says so."""
    page = desktop
    campaign = _campaign("News de-en, acceptance refused", "constituent-acceptance")
    token, _ = _start(page, live_server, campaign.slug, "acceptance-refused")
    page.route(f"**/api/hit/{token}/", lambda route: route.fulfill(
        status=400, content_type="application/json", body=json.dumps({"error": "every candidate needs an answer"}))
        if route.request.method == "POST" else route.continue_())
    for key in "yny":
        page.keyboard.press(key)
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_have_text("every candidate needs an answer")
    expect(page.locator("#submit")).to_be_enabled()
    assert _shown_answers(page) == ["yes", "no", "yes"]
    page.unroute(f"**/api/hit/{token}/")
    campaign.status = "paused"
    campaign.save(update_fields=["status"])
    with page.expect_response(_is_hit_api("POST")) as answer:
        page.click("#submit")
    assert answer.value.status == 423
    expect(page.locator("#halted")).to_be_visible()
    expect(page.locator("#screen")).to_be_hidden()
    page.keyboard.press("n")  # keys do nothing while the screen is hidden
    assert _shown_answers(page) == ["yes", "no", "yes"]
    assert not Judgment.objects.exists()
    assert page.js_errors == []


def test_right_to_left_target_language(live_server, desktop):
    page = desktop
    campaign = _campaign("German-Arabic constituent acceptance", "constituent-acceptance", news=ARABIC,
                         target_language="ar")
    _, state = _start(page, live_server, campaign.slug, "acceptance-rtl")
    item = state["item"]
    assert page.get_attribute("html", "lang") == "ar"
    texts = page.locator("#ac-rows .rk-text")
    expect(texts).to_have_count(3)
    for i, candidate in enumerate(item["candidates"]):
        assert texts.nth(i).get_attribute("dir") == "rtl" and texts.nth(i).get_attribute("lang") == "ar"
        assert texts.nth(i).evaluate("t => getComputedStyle(t).direction") == "rtl"
        _check_highlight(texts.nth(i).evaluate(READ_TEXT), candidate["text"], candidate["span"])
    assert page.get_attribute("#ac-reference", "dir") == "rtl"
    assert page.get_attribute("#ac-source", "dir") == "ltr"  # the German source stays left-to-right
    assert page.text_content("#ac-source mark") == "montags"
    faces = page.locator(".rk-row").nth(0).locator(".ac-face")  # Yes stays left of No
    assert faces.nth(0).bounding_box()["x"] < faces.nth(1).bounding_box()["x"]
    for key in "nyy":
        page.keyboard.press(key)
    with page.expect_response(_is_hit_api("POST")) as answer:
        page.keyboard.press("Enter")
    assert answer.value.status == 201
    assert Judgment.objects.get().ranks == {c["key"]: code for c, code in zip(item["candidates"], (2, 1, 1),
                                                                                strict=True)}
    assert page.js_errors == []


def _answered_up_to_segment(campaign, worker: str, seg_id: int, answer) -> tuple[str, int]:
    """A worker's HIT with every screen before the segment's answered through the API; returns the token
    and the segment's position."""
    client = Client()
    response = client.get(f"/c/{campaign.slug}/start/", {"worker_id": worker})
    assert response.status_code == 302
    token = response["Location"].rstrip("/").split("/")[-1]
    hit_id = Assignment.objects.get(token=token).hit_id
    position = HitItem.objects.get(hit_id=hit_id, segment__seg_id=seg_id).position
    for _ in range(position):
        item = client.get(f"/api/hit/{token}/").json()["item"]
        body = {"item": item["id"], **answer(item)}
        assert client.post(f"/api/hit/{token}/", body, content_type="application/json").status_code == 201
    return token, position


def test_constituent_screenshots(live_server, browser):
    shots = DOCS / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)

    ranking = _campaign("WMT08-style news de-en, constituent ranking", "ranking-constituent", seed=11)
    token, position = _answered_up_to_segment(ranking, "constituent-shot", 1,
                                              lambda item: {"ranks": {c["key"]: 1 for c in item["candidates"]}})
    with _page(browser, 1280, 800) as page:
        page.goto(f"{live_server.url}/hit/{token}/")
        expect(page.locator("#progress-text")).to_have_text(f"{position + 1} / {len(NEWS)}")
        expect(page.locator("#rk-source mark")).to_have_text(NEWS[0][0][1])
        assert page.locator("#submit").bounding_box()["y"] + 40 <= 800  # the whole screen fits
        page.keyboard.press("2")  # a screen half done: one ranked, the second focused
        page.mouse.move(0, 0)
        page.screenshot(path=str(shots / "constituent-ranking.png"))
        assert page.js_errors == []

    acceptance = _campaign("WMT08-style news de-en, constituent acceptance", "constituent-acceptance", seed=11)
    token, position = _answered_up_to_segment(acceptance, "acceptance-shot", 1,
                                              lambda item: {"accept": {c["key"]: "yes" for c in item["candidates"]}})
    with _page(browser, 1280, 800) as page:
        page.goto(f"{live_server.url}/hit/{token}/")
        expect(page.locator("#progress-text")).to_have_text(f"{position + 1} / {len(NEWS)}")
        expect(page.locator("#ac-source mark")).to_have_text(NEWS[0][0][1])
        # A translation's text and its Yes / No on one line; the whole screen fits without scrolling.
        row = page.locator(".rk-row").nth(0)
        text_box, choices_box = row.locator(".rk-text").bounding_box(), row.locator(".ac-choices").bounding_box()
        assert choices_box["x"] > text_box["x"] + text_box["width"]
        assert page.locator("#submit").bounding_box()["y"] + 40 <= 800
        page.keyboard.press("y")
        page.keyboard.press("n")  # two answered, the third focused
        page.mouse.move(0, 0)
        page.screenshot(path=str(shots / "constituent-acceptance.png"))
        assert page.js_errors == []

    with _page(browser, 375, 812, is_mobile=True, has_touch=True) as phone:
        phone.goto(f"{live_server.url}/hit/{token}/")
        expect(phone.locator("#progress-text")).to_have_text(f"{position + 1} / {len(NEWS)}")
        assert phone.evaluate("document.documentElement.scrollWidth") <= 375  # nothing sticks out sideways
        # Stacked: Yes / No under the text, across the row, each large enough for a finger.
        row = phone.locator(".rk-row").nth(0)
        text_box, choices_box = row.locator(".rk-text").bounding_box(), row.locator(".ac-choices").bounding_box()
        assert choices_box["y"] >= text_box["y"] + text_box["height"]
        assert choices_box["width"] >= 300
        for face in row.locator(".ac-face").all():
            box = face.bounding_box()
            assert box["height"] >= 44 and box["width"] >= 120
        for i, answer in enumerate(("Yes", "No")):
            phone.locator(".rk-row").nth(i).get_by_text(answer, exact=True).tap()
        expect(phone.locator("#ac-remaining")).to_have_text("1 translation still to answer")
        expect(phone.locator("#submit")).to_be_disabled()
        phone.wait_for_timeout(400)  # let the tap highlight fade, for the same picture every time
        phone.screenshot(path=str(shots / "constituent-acceptance-phone.png"), full_page=True)
        phone.locator(".rk-row").nth(2).get_by_text("Yes", exact=True).tap()
        with phone.expect_response(_is_hit_api("POST")) as answer:
            phone.tap("#submit")
        assert answer.value.status == 201
        assert phone.js_errors == []
    judgment = Judgment.objects.get(assignment__token=token, item__position=position)
    assert sorted(judgment.ranks.values()) == [1, 1, 2]
