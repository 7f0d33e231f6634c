"""The relative-ranking screen in a real browser (docs/methods.md §8.1, docs/api.md §8).

One worker ranks a whole HIT with the keyboard only (digits rank the focused translation and move
on, ↑ ↓ and Tab move between translations, ← → change a rank like any radio group, Enter submits),
another with the mouse; at every screen the test checks what is shown against the item stored (the
source with its language, the reference, the translations as text and never as HTML), the disabled
Submit and the hint of translations left, the visible focus; then the judgments stored. Right-to-left
targets render right-to-left. The last test takes the desktop and phone screenshots.
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

# Screenshots go to a temporary folder; `SCREENSHOT_DIR=docs` refreshes docs/screenshots/ranking-*.png.
DOCS = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="mteval-shots-"))
XSS = "<script>window.__xss=1</script>"
ACCENT = "rgb(31, 95, 191)"
SYSTEMS = ("online-A", "online-B", "uedin", "cmu", "limsi")

# Made-up German news, each with a reference and five English versions of varying quality (SYSTEMS order).
NEWS = [
    ("Der Stadtrat hat am Dienstag den Bau von zwölf Kilometern neuer Radwege beschlossen.",
     "On Tuesday the city council approved the construction of twelve kilometres of new cycle lanes.",
     ("On Tuesday, the city council approved building twelve kilometres of new cycle paths.",
      "The city council decided on Tuesday the building of twelve kilometers new bike paths.",
      "The city council has decided on Tuesday to build twelve kilometres of new cycle lanes.",
      "The town council has Tuesday the construction of twelve kilometres new cycle ways decided.",
      "City council Tuesday twelve kilometres new cycle paths decided.")),
    ("Heftige Regenfälle haben in der Nacht zum Sonntag mehrere Keller im Süden der Region überflutet.",
     "Heavy rain flooded several basements in the south of the region overnight into Sunday.",
     ("Heavy rainfall flooded several basements in the south of the region on Saturday night.",
      "Violent rainfalls have flooded in the night to Sunday several cellars in the south of the region.",
      "Heavy rains flooded several cellars in the south of the region overnight on Sunday.",
      "Heavy rain has several cellars in the south flooded.",
      "In the night to Sunday, heavy rainfalls have flooded several basements in the region's south.")),
    ("Ein Student hatte bemerkt, dass das Namensfeld eingegebenen Code ungeprüft ausführt.",
     "A student had noticed that the name field runs any code typed into it without checking it.",
     ("A student had noticed that the name field executes entered code without checking it.",
      f"A student had noticed that the name field executes entered code {XSS} unchecked.",
      "A student noticed that the name field runs code that is entered, unchecked.",
      "A student had remarked that the name field carries out input code unexamined.",
      "A student had noticed <b>that</b> the name field executes code without checking.")),
    ("Nach drei Jahren Sanierung öffnet das Stadtmuseum am Samstag wieder seine Türen.",
     "After three years of renovation, the city museum reopens its doors on Saturday.",
     ("After three years of renovation, the city museum will reopen its doors on Saturday.",
      "After three years of renovation the city museum opens again its doors on Saturday.",
      "After three years of restoration, the municipal museum reopens on Saturday.",
      "After three years renovation opens the town museum on Saturday again its doors.",
      "The city museum opens its doors on Saturday after three years.")),
]

ARABIC = (
    ("Das Museum ist montags geschlossen.", "المتحف مغلق أيام الاثنين.",
     ("المتحف مغلق يوم الاثنين.", "يغلق المتحف أيام الاثنين.", "المتحف مغلق الاثنين.")),
    ("Der Eintritt ist in den ersten vier Wochen frei.", "الدخول مجاني في الأسابيع الأربعة الأولى.",
     ("الدخول مجاني خلال الأسابيع الأربعة الأولى.", "الدخول حر في أول أربعة أسابيع.",
      "في الأسابيع الأربعة الأولى الدخول مجاني.")),
)


def _lines(news=NEWS, systems=SYSTEMS) -> list[str]:
    return [json.dumps({"doc_id": "news", "seg_id": n, "source": source, "reference": reference,
                        "systems": dict(zip(systems, outputs, strict=True))}, ensure_ascii=False)
            for n, (source, reference, outputs) in enumerate(news, 1)]


def _campaign(name: str, seed: int = 3, **settings):
    settings.setdefault("source_language", "de")
    settings.setdefault("target_language", "en")
    return import_campaign(_lines(), name=name, protocol="ranking", seed=seed, hit_size=len(NEWS),
                           options={"screen_size": 5, "gold": "none"}, **settings).campaign


def _shown_ranks(page: Page) -> list[int | None]:
    """The rank checked in each row, in screen order (None where there is none)."""
    return page.evaluate("""() => Array.from(document.querySelectorAll('#rk-rows > .rk-row'), row => {
        const checked = row.querySelector('input[type=radio]:checked');
        return checked ? Number(checked.value) : null; })""")


def _focused_row(page: Page) -> int:
    return page.evaluate("""() => Array.from(document.querySelectorAll('#rk-rows > .rk-row'))
        .indexOf(document.activeElement.closest('.rk-row'))""")


def _check_screen(page: Page, item: dict, stored: HitItem) -> None:
    """What the screen shows is what the item carries: source, reference, one row per translation in order."""
    assert set(item) == {"id", "protocol", "source", "reference", "candidates"}
    assert [c["key"] for c in item["candidates"]] == [c["key"] for c in stored.payload["candidates"]]
    assert item["source"] == stored.segment.source and item["reference"] == stored.segment.reference
    expect(page.locator("#rk-source")).to_have_text(item["source"])
    assert page.text_content("#rk-source-label") == "Source (German)"
    assert page.get_attribute("#rk-source", "lang") == "de"
    expect(page.locator("#rk-reference-box")).to_be_visible()
    expect(page.locator("#rk-reference")).to_have_text(item["reference"])
    rows = page.evaluate("""() => Array.from(document.querySelectorAll('#rk-rows > .rk-row'), row => ({
        text: row.querySelector('.rk-text').textContent, dir: row.querySelector('.rk-text').dir,
        letter: row.querySelector('.rk-letter').textContent,
        ranks: Array.from(row.querySelectorAll('input[type=radio]'), r => r.value),
        labels: Array.from(row.querySelectorAll('label.rk-rank'), l => l.textContent),
        legend: row.querySelector('legend').textContent}))""")
    assert [r["text"] for r in rows] == [c["text"] for c in item["candidates"]]
    n = len(item["candidates"])
    for i, row in enumerate(rows):
        assert row["dir"] == "ltr" and row["letter"] == "ABCDE"[i]
        assert row["ranks"] == [str(r) for r in range(1, n + 1)]
        assert row["labels"][0] == "1 (best)" and row["labels"][-1] == f"{n} (worst)"  # what a screen reader says
        assert row["legend"] == f"Rank of translation {'ABCDE'[i]}"
    expect(page.locator("#rk-worst")).to_have_text(str(n))


def _expect_waiting(page: Page, left: int, posts: list[str]) -> None:
    """Submit is disabled, the hint says how many translations are left, Enter posts nothing."""
    expect(page.locator("#submit")).to_be_disabled()
    expect(page.locator("#rk-remaining")).to_have_text(
        f"{left} translation{'s' if left > 1 else ''} still to rank")
    before = len(posts)
    page.keyboard.press("Enter")
    page.wait_for_timeout(50)
    assert len(posts) == before


def _keyboard_screen(page: Page, k: int, n: int, posts: list[str]) -> list[int]:
    """Rank screen k with the keyboard, a different way on each screen; returns the ranks in row order."""
    assert _focused_row(page) == 0  # the keys work at once
    if k == 0:
        # Digits alone: each ranks the focused row and moves on to the next.
        for i, digit in enumerate("21253"):
            page.keyboard.press(digit)
            assert _focused_row(page) == min(i + 1, n - 1)
            if i < n - 1:
                _expect_waiting(page, n - 1 - i, posts)
        page.keyboard.press("4")  # the last row keeps the focus: a second digit corrects it
        return [2, 1, 2, 5, 4]
    if k == 1:
        # Arrows first down to the third row, rank it, back up to the first, then through the rest.
        page.keyboard.press("ArrowDown")
        page.keyboard.press("ArrowDown")
        assert _focused_row(page) == 2
        page.keyboard.press("1")
        assert _focused_row(page) == 3 and _shown_ranks(page) == [None, None, 1, None, None]
        for _ in range(4):
            page.keyboard.press("ArrowUp")  # stops at the top
        assert _focused_row(page) == 0
        page.keyboard.press("3")
        page.keyboard.press("3")  # ties: the second row gets 3 as well
        page.keyboard.press("ArrowDown")  # the third keeps its 1
        _expect_waiting(page, 2, posts)
        page.keyboard.press("5")
        page.keyboard.press("ArrowUp")
        page.keyboard.press("ArrowDown")
        assert _focused_row(page) == 4
        page.keyboard.press("2")
        return [3, 3, 1, 5, 2]
    if k == 2:
        # Tab moves row by row (one stop per radio group); ← → change a rank; Shift+Tab goes back.
        page.keyboard.press("Space")  # the focused radio: rank 1
        page.keyboard.press("ArrowRight")  # → 2
        page.keyboard.press("ArrowRight")  # → 3
        page.keyboard.press("Tab")
        assert _focused_row(page) == 1
        page.keyboard.press("4")  # moves on to row 3
        page.keyboard.press("Tab")
        assert _focused_row(page) == 3
        page.keyboard.press("Shift+Tab")
        assert _focused_row(page) == 2
        page.keyboard.press("1")
        page.keyboard.press("1")
        page.keyboard.press("ArrowLeft")  # the last row was unranked: ← from nothing takes the last rank
        assert _shown_ranks(page)[4] is not None
        page.keyboard.press("2")
        return [3, 4, 1, 1, 2]
    # Every row the same rank, then Tab to Submit and press it with the space bar (below).
    for _ in range(n):
        page.keyboard.press("3")
    return [3] * n


def test_a_worker_ranks_a_whole_hit_with_the_keyboard(live_server, desktop):
    page = desktop
    campaign = _campaign("News de-en, <i>ranking</i>")
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    csp: list[str] = []
    page.on("console", lambda m: csp.append(m.text) if "Content Security Policy" in m.text else None)
    token, state = _start(page, live_server, campaign.slug, "rank-keyboard")
    hit_id = Assignment.objects.get(token=token).hit_id
    total = HitItem.objects.filter(hit_id=hit_id).count()
    assert total == len(NEWS)
    assert "<i>ranking</i>" in page.inner_text(".campaign-name")
    assert page.text_content("#statement").startswith("Rank the translations from best (1) to worst.")
    progress, submit = page.locator("#progress-text"), page.locator("#submit")

    expected: dict[int, dict[str, int]] = {}
    hostile = 0
    for k in range(total):
        assert not state["done"] and state["position"] == k + 1 and state["total"] == total
        item = state["item"]
        stored = HitItem.objects.select_related("segment").get(pk=item["id"], hit_id=hit_id)
        expect(progress).to_have_text(f"{k + 1} / {total}")
        _check_screen(page, item, stored)
        n = len(item["candidates"])
        assert _shown_ranks(page) == [None] * n
        _expect_waiting(page, n, posts)
        if any(XSS in c["text"] for c in item["candidates"]):
            hostile += 1
            assert page.locator(".rk-text", has_text=XSS).count() == 1
        assert page.evaluate("document.querySelectorAll('#screen script, #screen .rk-text b').length") == 0
        assert page.evaluate("typeof window.__xss") == "undefined"

        # The focus is visible: an accent bar on the focused row, a ring around the focused rank button.
        focused = page.locator(".rk-row").nth(0)
        assert focused.evaluate("r => getComputedStyle(r).borderLeftColor") == ACCENT
        assert page.locator(".rk-row").nth(1).evaluate("r => getComputedStyle(r).borderLeftColor") != ACCENT
        page.keyboard.press("ArrowDown")
        page.keyboard.press("ArrowUp")
        ring = page.evaluate("getComputedStyle(document.activeElement.nextElementSibling).outlineStyle")
        assert ring == "solid"

        ranks = _keyboard_screen(page, k, n, posts)
        assert _shown_ranks(page) == ranks
        expect(page.locator("#rk-remaining")).to_have_text("All ranked")
        expect(submit).to_be_enabled()
        checked = page.locator(".rk-row").nth(0).locator("input:checked + .rk-face")
        assert checked.evaluate("f => getComputedStyle(f).backgroundColor") == ACCENT
        expected[item["id"]] = {c["key"]: r for c, r in zip(item["candidates"], ranks, strict=True)}

        with page.expect_response(_is_hit_api("POST")) as answer:
            if k == total - 1:
                page.keyboard.press("Tab")  # from the last row to Submit
                assert page.evaluate("document.activeElement.id") == "submit"
                page.keyboard.press("Space")
            else:
                page.keyboard.press("Enter")
                if k == 1:
                    page.keyboard.press("Enter")  # a double press stores one answer and skips nothing
        assert answer.value.status == 201
        assert json.loads(answer.value.request.post_data) == {"item": item["id"], "ranks": expected[item["id"]]}
        state = answer.value.json()

    assert state["done"] is True
    expect(page.locator("#done")).to_be_visible()
    expect(page.locator("#screen")).to_be_hidden()
    code = page.text_content("#completion-code").strip()
    assert code and code == state["completion_code"]
    assert hostile == 1
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert len(posts) == total
    assert page.js_errors == [] and csp == []  # no inline script, nothing the policy blocks
    assignment = Assignment.objects.get(token=token)
    assert assignment.status == Assignment.Status.COMPLETED and assignment.completion_code == code
    stored = {j.item_id: j.ranks for j in Judgment.objects.filter(assignment=assignment)}
    assert stored == expected
    assert all(j.score is None for j in Judgment.objects.filter(assignment=assignment))


def test_a_worker_ranks_a_whole_hit_with_the_mouse(live_server, desktop):
    page = desktop
    campaign = _campaign("News de-en, ranking by mouse", seed=8)
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
    token, state = _start(page, live_server, campaign.slug, "rank-mouse")
    expected = {}
    plans = ([1, 2, 3, 4, 5], [5, 4, 3, 2, 1], [2, 2, 1, 3, 3], [1, 1, 1, 1, 1])
    for k, plan in enumerate(plans):
        item = state["item"]
        expect(page.locator("#progress-text")).to_have_text(f"{k + 1} / {len(NEWS)}")
        expect(page.locator("#rk-rows .rk-row")).to_have_count(5)
        for i, rank in enumerate(plan):
            expect(page.locator("#submit")).to_be_disabled()
            expect(page.locator("#rk-remaining")).to_have_text(
                f"{5 - i} translation{'s' if 5 - i > 1 else ''} still to rank")
            page.locator(".rk-row").nth(i).locator("label.rk-rank").nth(rank - 1).click()
        if k == 2:  # a change of mind: the first row from 2 to 4
            page.locator(".rk-row").nth(0).get_by_text("4", exact=True).click()
            plan = [4, *plan[1:]]
        assert _shown_ranks(page) == plan
        expect(page.locator("#submit")).to_be_enabled()
        expected[item["id"]] = {c["key"]: r for c, r in zip(item["candidates"], plan, strict=True)}
        with page.expect_response(_is_hit_api("POST")) as answer:
            page.click("#submit")
        assert answer.value.status == 201
        state = answer.value.json()
    assert state["done"] is True
    expect(page.locator("#done")).to_be_visible()
    assert len(posts) == len(NEWS) and page.js_errors == []
    stored = {j.item_id: j.ranks for j in Judgment.objects.filter(assignment__token=token)}
    assert stored == expected


def test_a_refused_answer_leaves_the_screen_to_fix(live_server, desktop):
    """A 400 shows the server's reason and gives Submit back; a paused campaign (423) says so."""
    page = desktop
    campaign = _campaign("News de-en, refused")
    token, state = _start(page, live_server, campaign.slug, "rank-refused")
    page.route(f"**/api/hit/{token}/", lambda route: route.fulfill(
        status=400, content_type="application/json", body=json.dumps({"error": "ranks must be integers"}))
        if route.request.method == "POST" else route.continue_())
    expect(page.locator("#rk-rows > .rk-row")).to_have_count(5)  # the screen is drawn before the keys (under load)
    for _ in range(5):
        page.keyboard.press("1")
    expect(page.locator("#submit")).to_be_enabled()
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_have_text("ranks must be integers")
    expect(page.locator("#submit")).to_be_enabled()
    assert _shown_ranks(page) == [1] * 5
    page.unroute(f"**/api/hit/{token}/")
    campaign.status = "paused"
    campaign.save(update_fields=["status"])
    with page.expect_response(_is_hit_api("POST")) as answer:
        page.click("#submit")
    assert answer.value.status == 423
    expect(page.locator("#halted")).to_be_visible()
    expect(page.locator("#screen")).to_be_hidden()
    page.keyboard.press("2")  # keys do nothing while the screen is hidden
    assert _shown_ranks(page) == [1] * 5
    assert not Judgment.objects.exists()
    assert page.js_errors == []


def test_a_line_without_a_reference_shows_no_empty_reference_box(live_server, desktop):
    """A campaign line that gives no reference makes an item whose reference is empty: the screen leaves the
    Reference box out instead of showing its label over nothing."""
    page = desktop
    lines = [json.dumps({"doc_id": "d", "seg_id": n, "source": source,
                         "systems": dict(zip(SYSTEMS, outputs, strict=True))}, ensure_ascii=False)
             for n, (source, _reference, outputs) in enumerate(NEWS, 1)]
    campaign = import_campaign(lines, name="No reference", protocol="ranking", seed=3, hit_size=len(NEWS),
                               options={"screen_size": 5, "gold": "none"}).campaign
    _, state = _start(page, live_server, campaign.slug, "rank-no-reference")
    assert not state["item"].get("reference")
    expect(page.locator("#rk-source")).to_have_text(state["item"]["source"])
    expect(page.locator("#rk-reference-box")).to_be_hidden()
    assert page.js_errors == []


def test_right_to_left_target_language(live_server, desktop):
    page = desktop
    lines = _lines(ARABIC, systems=SYSTEMS[:3])
    campaign = import_campaign(lines, name="German-Arabic ranking", protocol="ranking", seed=2,
                               source_language="de", target_language="ar", options={"screen_size": 5}).campaign
    _, state = _start(page, live_server, campaign.slug, "rank-rtl")
    item = state["item"]
    expect(page.locator(".rk-row")).to_have_count(3)  # three systems: screens of three
    assert page.get_attribute("html", "lang") == "ar"
    texts = page.locator(".rk-text")
    for i in range(3):
        assert texts.nth(i).get_attribute("dir") == "rtl" and texts.nth(i).get_attribute("lang") == "ar"
        assert texts.nth(i).evaluate("t => getComputedStyle(t).direction") == "rtl"
        assert texts.nth(i).text_content() == item["candidates"][i]["text"]
    assert page.get_attribute("#rk-reference", "dir") == "rtl"
    assert page.evaluate("getComputedStyle(document.getElementById('rk-reference')).direction") == "rtl"
    assert page.get_attribute("#rk-source", "dir") == "ltr"  # the German source stays left-to-right
    # The rank buttons stay 1..N from left to right.
    ranks = page.locator(".rk-row").nth(0).locator(".rk-face")
    assert ranks.nth(0).bounding_box()["x"] < ranks.nth(2).bounding_box()["x"]
    assert page.locator(".rk-ranks").nth(0).evaluate("f => getComputedStyle(f).direction") == "ltr"
    for digit in "213":
        page.keyboard.press(digit)
    with page.expect_response(_is_hit_api("POST")) as answer:
        page.keyboard.press("Enter")
    assert answer.value.status == 201
    assert Judgment.objects.get().ranks == {c["key"]: r for c, r in zip(item["candidates"], (2, 1, 3), strict=True)}
    assert page.js_errors == []


def test_ranking_screenshots_desktop_and_phone(live_server, browser):
    campaign = _campaign("WMT news de-en, relative ranking", seed=11)
    client = Client()
    response = client.get(f"/c/{campaign.slug}/start/", {"worker_id": "rank-screenshot"})
    assert response.status_code == 302
    token = response["Location"].rstrip("/").split("/")[-1]
    # The cycle-lane story, as a real item: answer every screen before it through the API.
    hit_id = Assignment.objects.get(token=token).hit_id
    position = HitItem.objects.get(hit_id=hit_id, segment__seg_id=1).position
    for _ in range(position):
        item = client.get(f"/api/hit/{token}/").json()["item"]
        answered = client.post(f"/api/hit/{token}/", {"item": item["id"], "ranks": {c["key"]: 1 for c in
                                                                                  item["candidates"]}},
                               content_type="application/json")
        assert answered.status_code == 201
    shots = DOCS / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)

    with _page(browser, 1280, 800) as page:
        page.goto(f"{live_server.url}/hit/{token}/")
        expect(page.locator("#progress-text")).to_have_text(f"{position + 1} / {len(NEWS)}")
        expect(page.locator("#rk-source")).to_have_text(NEWS[0][0])
        expect(page.locator(".rk-row")).to_have_count(5)
        # A translation's text and its rank buttons on one line; the whole screen fits without scrolling.
        row = page.locator(".rk-row").nth(0)
        text_box, ranks_box = row.locator(".rk-text").bounding_box(), row.locator(".rk-ranks").bounding_box()
        assert ranks_box["x"] > text_box["x"] + text_box["width"]
        assert page.locator("#submit").bounding_box()["y"] + 40 <= 800
        for digit in "21":
            page.keyboard.press(digit)  # a screen half done: two ranked, the third focused
        page.mouse.move(0, 0)
        page.screenshot(path=str(shots / "ranking-desktop.png"))
        assert page.js_errors == []

    with _page(browser, 375, 812, is_mobile=True, has_touch=True) as phone:
        phone.goto(f"{live_server.url}/hit/{token}/")
        expect(phone.locator("#progress-text")).to_have_text(f"{position + 1} / {len(NEWS)}")
        assert phone.evaluate("document.documentElement.scrollWidth") <= 375  # nothing sticks out sideways
        # Stacked: the rank buttons under the text, across the row, each large enough for a finger.
        row = phone.locator(".rk-row").nth(0)
        text_box, ranks_box = row.locator(".rk-text").bounding_box(), row.locator(".rk-ranks").bounding_box()
        assert ranks_box["y"] >= text_box["y"] + text_box["height"]
        for face in row.locator(".rk-face").all():
            box = face.bounding_box()
            assert box["height"] >= 44 and box["width"] >= 44
        expect(phone.locator("#rk-remaining")).to_be_visible()
        for i, rank in enumerate((2, 1, 4, 3)):
            phone.locator(".rk-row").nth(i).locator("label.rk-rank").nth(rank - 1).tap()
        expect(phone.locator("#submit")).to_be_disabled()
        expect(phone.locator("#rk-remaining")).to_have_text("1 translation still to rank")
        phone.wait_for_timeout(400)  # let the tap highlight fade, for the same picture every time
        phone.screenshot(path=str(shots / "ranking-phone.png"), full_page=True)  # the whole screen, top to Submit
        phone.locator(".rk-row").nth(4).locator("label.rk-rank").nth(4).tap()
        expect(phone.locator("#submit")).to_be_enabled()
        with phone.expect_response(_is_hit_api("POST")) as answer:
            phone.tap("#submit")
        assert answer.value.status == 201
        if position + 1 < len(NEWS):
            expect(phone.locator("#progress-text")).to_have_text(f"{position + 2} / {len(NEWS)}")
            expect(phone.locator("#submit")).to_be_disabled()
            assert phone.evaluate("window.scrollY") == 0  # the next screen starts at its top
        else:
            expect(phone.locator("#done")).to_be_visible()
        assert phone.js_errors == []
    judgment = Judgment.objects.get(assignment__token=token, item__position=position)
    assert sorted(judgment.ranks.values()) == [1, 2, 3, 4, 5]
