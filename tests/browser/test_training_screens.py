"""Training and attention checks in Chromium (docs/api.md §8 "Training"): a loud tutorial that needs a retry, on a
desktop and on a phone; a careless worker gated by silent checks (answered through the API) who then meets the
gate's page; and "why is Submit disabled" scrolling to and outlining the first unfinished part. The screenshot
tests write docs/screenshots/{tutorial-loud,tutorial-loud-phone,submit-why}.png when SCREENSHOT_DIR=docs; the DA and
contrastive ESA tutorials and the silent DA checks (issue 27) write tutorial-da-*.png and tutorial-contrastive-*.png."""
from __future__ import annotations

import json

import pytest
from django.test import Client
from playwright.sync_api import expect

from annotation.models import Judgment, TutorialTry
from evaluation.models import WorkerGate

from .screens import open_page, post_of, start_hit
from .test_error_span_screens import _shots, campaign, click_slider, drag_select, museum_lines

pytestmark = pytest.mark.browser

TUTORIAL = "The museum closes on Saturday."  # "closes" is [11, 17)
EXPECTED = {"spans": [{"start": 11, "end": 17, "severity": "major"}], "score": [0, 40]}


def tutorial_lines(tutorials: int = 1) -> list[str]:
    lines = museum_lines(xss=False)[:3]
    for t in range(tutorials):
        lines.append(json.dumps({"doc_id": "tutorial", "seg_id": t + 1, "source": "Das Museum öffnet am Samstag.",
                                 "tutorial": True, "systems": {"alpha": TUTORIAL, "beta": TUTORIAL},
                                 "expected": {"alpha": EXPECTED, "beta": EXPECTED}}, ensure_ascii=False))
    return lines


def tap_slider(phone, n: int = 0, fraction: float = 0.8) -> None:
    track = phone.locator(".vas-track").nth(n)
    track.scroll_into_view_if_needed()
    box = track.bounding_box()
    phone.touchscreen.tap(box["x"] + box["width"] * fraction, box["y"] + box["height"] / 2)


def wrong_on_a_phone(phone, shown: str, shot: str) -> None:
    """Submit the wrong answer already given on the phone: the feedback (`shown` visible) fits 390 px; screenshot."""
    status, _, _ = post_of(phone, lambda: phone.tap("#submit"))
    assert status == 200
    expect(phone.locator(shown).first).to_be_visible()
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    phone.evaluate("window.scrollTo(0, 0)")
    phone.wait_for_timeout(300)
    phone.screenshot(path=str(_shots() / shot), full_page=True)
    assert phone.js_errors == []


def test_loud_tutorial_needs_a_retry_on_desktop_and_phone(live_server, browser):
    loud = campaign(lines=tutorial_lines(), name="Museum tutorial, ESA", source_language="de")
    with open_page(browser, 1180, 860) as page:
        token, state = start_hit(page, live_server, loud.slug, "trainee")
        assert state["item"]["candidate"] == TUTORIAL and "expected" not in state["item"]
        expect(page.locator("#feedback")).to_be_hidden()
        click_slider(page, 0.9)  # no error marked, a high score: wrong twice over
        status, _, wrong = post_of(page, lambda: page.click("#submit"))
        assert status == 200 and wrong["feedback"]["tries_left"] == 2
        feedback = page.locator("#feedback")
        expect(feedback).to_be_visible()
        expect(feedback.locator("mark.fb-expected.fb-missed")).to_have_text("closes")
        expect(feedback.locator(".fb-label")).to_have_text(" [major: missed]")
        expect(feedback.locator(".fb-score")).to_have_text("Expected score: between 0 and 40.")
        expect(feedback.locator(".fb-message")).to_contain_text("Try again (2 tries left)")
        expect(page.locator("#progress-text")).to_have_text("1 / 4")  # the same item, ready for another try
        expect(page.locator("#submit")).to_be_enabled()
        page.evaluate("window.scrollTo(0, 0)")
        page.mouse.move(0, 0)
        page.screenshot(path=str(_shots() / "tutorial-loud.png"), full_page=True)
        drag_select(page, TUTORIAL, 11, 17)
        page.get_by_role("button", name="Major").click()
        click_slider(page, 0.3)
        status, body, right = post_of(page, lambda: page.click("#submit"))
        assert status == 201 and body["spans"] == [{"start": 11, "end": 17, "severity": "major"}]
        expect(page.locator("#progress-text")).to_have_text("2 / 4")
        expect(page.locator("#feedback")).to_be_hidden()
        expect(page.locator("#status")).to_have_text("Right: that is the expected answer.")
        assert page.js_errors == [] and page.csp == []
    assert list(TutorialTry.objects.filter(annotator__external_id="trainee").order_by("attempt")
                .values_list("attempt", "passed", "final")) == [(1, False, False), (2, True, True)]
    assert Judgment.objects.filter(annotator__external_id="trainee").count() == 1
    with open_page(browser, 390, 844, is_mobile=True, has_touch=True) as phone:
        start_hit(phone, live_server, loud.slug, "trainee-phone")
        tap_slider(phone)
        wrong_on_a_phone(phone, "#feedback mark.fb-expected", "tutorial-loud-phone.png")
        expect(phone.locator("#feedback mark.fb-expected")).to_have_text("closes")


def test_silent_checks_gate_a_careless_worker_who_then_sees_the_gate_page(live_server, browser):
    silent = campaign(lines=tutorial_lines(2), name="Museum checks", source_language="de", tutorial_mode="silent")
    client = Client()
    entry = client.get(f"/c/{silent.slug}/start/", {"worker_id": "careless"})
    token = entry["Location"].rstrip("/").split("/")[-1]
    statuses = []
    while not statuses or statuses[-1] == 201:  # the careless worker: no error marked, a top score, every item
        state = client.get(f"/api/hit/{token}/").json()
        if state.get("done") or "item" not in state:
            break
        answer = client.post(f"/api/hit/{token}/", json.dumps({"item": state["item"]["id"], "spans": [],
                                                                "score": 100}), content_type="application/json")
        statuses.append(answer.status_code)
        assert "feedback" not in answer.json()
    gate = WorkerGate.objects.get(campaign=silent, annotator__external_id="careless")
    assert gate.rule == "checks" and gate.missed_share == 1.0
    with open_page(browser, 1000, 700) as page:  # the worker's own browser: its cookie binds the worker id
        page.context.add_cookies([{"name": name, "value": morsel.value, "url": live_server.url}
                                  for name, morsel in client.cookies.items()])
        page.goto(f"{live_server.url}/c/{silent.slug}/start/?worker_id=careless")
        expect(page.locator("h1")).to_have_text("Thank you")
        expect(page.locator("main")).to_contain_text("There are no further HITs for you in this campaign.")
        assert page.js_errors == []


def test_why_submit_is_disabled_highlights_the_first_unfinished_part(live_server, browser):
    esa = campaign(lines=museum_lines(xss=False)[:2], name="Museum, why", source_language="de")
    with open_page(browser, 1180, 700) as page:
        start_hit(page, live_server, esa.slug, "why")
        expect(page.locator("#submit")).to_be_disabled()
        why = page.locator("#why-submit")
        expect(why).to_be_visible()
        box = page.locator("#submit").bounding_box()  # a click on the disabled Submit itself
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        expect(page.locator("#why-message")).to_have_text("Give a score: click or drag on this line.")
        expect(page.locator("#es-score .vas.why-highlight")).to_have_count(1)
        assert page.evaluate("document.activeElement.getAttribute('role')") == "slider"
        top = page.evaluate("document.querySelector('#es-score .vas').getBoundingClientRect().top")
        assert 0 <= top <= 700  # scrolled into view
        page.screenshot(path=str(_shots() / "submit-why.png"))
        click_slider(page, 0.5)
        expect(page.locator("#submit")).to_be_enabled()
        expect(why).to_be_hidden()
        assert page.js_errors == [] and page.csp == []


def test_why_submit_is_disabled_on_ranking_and_pairwise_screens(live_server, browser):
    """The same link on screens of radios (ranking: the first translation not yet ranked) and of toggle buttons
    (pairwise: A / tie / B), answered from the page alone."""
    from .test_pairwise_screen import _campaign as pairwise_campaign
    from .test_ranking_screen import _campaign as ranking_campaign

    ranking, pairwise = ranking_campaign("Why, ranking"), pairwise_campaign("Why, pairwise")
    with open_page(browser, 1100, 760) as page:
        start_hit(page, live_server, ranking.slug, "why-rank")
        page.locator(".rk-row").first.locator(".rk-face").nth(1).click()  # the first row ranked 2
        page.click("#why-submit")
        expect(page.locator("#why-message")).to_have_text("Choose an answer here.")
        highlighted = page.locator(".why-highlight")
        expect(highlighted).to_have_count(1)
        row_of = "el => [...document.querySelectorAll('.rk-row')].indexOf(el.closest('.rk-row'))"
        assert highlighted.evaluate(row_of) == 1
        start_hit(page, live_server, pairwise.slug, "why-pair")
        page.click("#why-submit")
        expect(page.locator("#why-message")).to_have_text("Choose one of these.")
        expect(page.locator("#pw-choices.why-highlight")).to_have_count(1)
        assert page.js_errors == []


def da_loud_retry(browser, live_server, da, worker: str, shot: str, total: int) -> None:
    """A DA loud tutorial walked on a desktop and a phone: a high score for the wrong translation shows the expected
    range on the slider's own terms (screenshots `shot`.png, `shot`-phone.png); a low one passes, and the HIT goes on
    (progress 2 / `total`), the click that sent it asking no "why" (read without waiting)."""
    with open_page(browser, 1280, 800) as page:
        token, state = start_hit(page, live_server, da.slug, worker)
        assert state["item"]["candidate"] == "The museum closes on Sunday." and "expected" not in state["item"]
        page.click("#begin") if page.locator("#begin").is_visible() else None
        expect(page.locator("#practice-note")).to_be_visible()  # a tutorial item says it is practice
        expect(page.locator("#practice-note")).to_contain_text("Practice")
        click_slider(page, 0.9)  # a high score for a wrong translation
        status, _, wrong = post_of(page, lambda: page.click("#submit"))
        assert status == 200 and wrong["feedback"]["score_wrong"]
        feedback = page.locator("#feedback")
        expect(feedback).to_be_visible()
        expect(feedback.locator(".fb-score")).to_have_text("Expected rating: in the left 30 % of the line.")
        expect(feedback.locator("mark")).to_have_count(0)  # no spans in DA
        expect(page.locator("#progress-text")).to_have_text(f"1 / {total}")
        page.evaluate("window.scrollTo(0, 0)")
        page.mouse.move(0, 0)
        page.screenshot(path=str(_shots() / f"{shot}.png"), full_page=True)
        click_slider(page, 0.1)
        status, body, _ = post_of(page, lambda: page.click("#submit"))
        assert status == 201 and body["score"] <= 30
        expect(page.locator("#feedback")).to_be_hidden()
        expect(page.locator("#status")).to_have_text("Right: that is the expected answer.")
        assert page.locator("#why-message").is_hidden()
        expect(page.locator("#progress-text")).to_have_text(f"2 / {total}")
        expect(page.locator("#practice-note")).to_be_hidden()  # the next item is not a tutorial one
        page.mouse.move(0, 0)
        page.screenshot(path=str(_shots() / f"{shot}-next.png"), full_page=True)
        assert page.js_errors == [] and page.csp == []
    with open_page(browser, 390, 844, is_mobile=True, has_touch=True) as phone:
        start_hit(phone, live_server, da.slug, f"{worker}-phone")
        phone.tap("#begin") if phone.locator("#begin").is_visible() else None
        tap_slider(phone)
        wrong_on_a_phone(phone, "#feedback .fb-score", f"{shot}-phone.png")
    assert TutorialTry.objects.filter(annotator__external_id=worker).count() == 2


def test_loud_da_tutorial_needs_a_retry_on_desktop_and_phone(live_server, browser):
    """Direct Assessment: the tutorial's expected range is shown after a wrong score, on the slider's own terms."""
    from tests.test_training_protocols import da_campaign

    da_loud_retry(browser, live_server, da_campaign(redundancy=2), "da-trainee", "tutorial-da-loud", 21)


def test_contrastive_esa_tutorial_shows_each_column_and_takes_a_retry(live_server, browser):
    from tests.test_training_protocols import TEXT, contrastive_campaign

    ces = contrastive_campaign(source_language="de", target_language="en", redundancy=2)
    with open_page(browser, 1280, 900) as page:
        token, state = start_hit(page, live_server, ces.slug, "ces-trainee")
        page.click("#begin") if page.locator("#begin").is_visible() else None
        columns = state["item"]["candidates"]
        alpha = next(i for i, c in enumerate(columns) if c["text"] == TEXT)
        for n in range(2):
            page.locator(".vas-track").nth(n).focus()
            page.keyboard.press("PageUp")  # 60: alpha's should be at most 50, beta's fits
        status, _, wrong = post_of(page, lambda: page.click("#submit"))
        assert status == 200 and len(wrong["feedback"]["missed"]) == 1
        feedback = page.locator("#feedback")
        expect(feedback.locator("h3.fb-column")).to_have_count(2)
        letter = "AB"[alpha]
        expect(feedback.locator(".fb-message")).to_contain_text(f"in translation {letter}")
        expect(feedback.locator("mark.fb-missed")).to_have_text("example")
        page.evaluate("window.scrollTo(0, 0)")
        page.mouse.move(0, 0)
        page.screenshot(path=str(_shots() / "tutorial-contrastive-loud.png"), full_page=True)
        drag_select(page, TEXT, 3, 10, n=alpha)
        page.locator(".ces-col").nth(alpha).get_by_role("button", name="Major").click()
        page.locator(".vas-track").nth(alpha).focus()
        page.keyboard.press("PageDown")  # 50
        status, body, _ = post_of(page, lambda: page.click("#submit"))
        assert status == 201, body
        expect(page.locator("#status")).to_have_text("Right: that is the expected answer.")
        assert page.js_errors == [] and page.csp == []
    with open_page(browser, 390, 844, is_mobile=True, has_touch=True) as phone:
        start_hit(phone, live_server, ces.slug, "ces-trainee-phone")
        phone.tap("#begin") if phone.locator("#begin").is_visible() else None
        for n in range(2):
            tap_slider(phone, n, 0.6)
        wrong_on_a_phone(phone, "#feedback h3.fb-column", "tutorial-contrastive-loud-phone.png")
        expect(phone.locator("#feedback h3.fb-column")).to_have_count(2)


def test_silent_da_checks_gate_a_careless_worker_in_the_browser(live_server, browser):
    """A careless worker (every translation at the top of the line) meets two silent checks among the DA items and
    is stopped at the second; nothing on the way says which items were checks."""
    from tests.test_training_protocols import da_campaign, da_lines

    silent = da_campaign(lines=da_lines(tutorials=2), tutorial_mode="silent")
    with open_page(browser, 1280, 800) as page:
        start_hit(page, live_server, silent.slug, "careless")
        page.click("#begin") if page.locator("#begin").is_visible() else None
        for _ in range(22):
            if not page.locator("#submit").is_visible():
                break
            click_slider(page, 0.98)
            status, _, answer = post_of(page, lambda: page.click("#submit"))
            assert status == 201 and "feedback" not in answer and "training" not in answer
            if WorkerGate.objects.filter(campaign=silent).exists():
                break
        gate = WorkerGate.objects.get(campaign=silent, annotator__external_id="careless")
        assert gate.rule == "checks" and gate.missed_share == 1.0
        expect(page.locator("#feedback")).to_be_hidden()
        page.goto(f"{live_server.url}/c/{silent.slug}/start/?worker_id=careless")
        expect(page.locator("h1")).to_have_text("Thank you")
        page.screenshot(path=str(_shots() / "tutorial-da-silent-gated.png"), full_page=True)
        assert page.js_errors == []


def test_loud_document_da_tutorial_needs_a_retry_on_desktop_and_phone(live_server, browser):
    """Document-level DA (issue 27): the loud tutorial opens the HIT, a wrong score shows the expected range, the
    retry passes and the HIT goes on to the first real document's first segment."""
    from tests.test_training_protocols import da_campaign, da_lines

    doc = da_campaign(lines=da_lines(tutorials=1, segments=6, docs=2), document_mode=True, hit_size=40,
                      redundancy=2)
    da_loud_retry(browser, live_server, doc, "doc-trainee", "tutorial-da-document-loud", 29)
