"""Reading comprehension's screens in a real browser (docs/methods.md §9): writing three questions beside the human
translation of an article (duplicates hold Submit back, a yes/no sample answer is only flagged; what the database
STORED is the questions) and answering the kept questions beside one translation of the article (a "does not
say" tick empties its box; Enter moves on, Ctrl+Enter submits); every text from the server is shown as text.
Screenshots docs/screenshots/reading-comprehension-write.png and reading-comprehension-answer.png are written
when SCREENSHOT_DIR=docs/screenshots (else to a temporary folder)."""
from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from annotation.models import Campaign, Judgment
from annotation.protocols import (
    get_protocol,
    reading_comprehension,  # noqa: F401  (registers the protocols)
)
from annotation.services.campaign_import import import_campaign
from annotation.services.stages import build_stages

from .screens import open_page as _page
from .screens import post_of, start_hit


def _start(page: Page, live_server, slug: str, worker: str) -> dict:
    return start_hit(page, live_server, slug, worker)[1]


def _post(page: Page, action) -> tuple[int, dict]:
    return post_of(page, action)[:2]


pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="mteval-shots-"))
XSS = "<img src=x onerror=\"window.__xss=1\">"

# A made-up story of a town's harbour: the human translation and two systems' English output.
HARBOUR = [
    ("After years of decline, the old harbour of Kessin is to become a park.",
     "After years of decline, the old harbour of Kessin shall become a park.",
     "After years the old port of Kessin becomes a park."),
    ("The council decided this because the fishing fleet moved to the new port in 2019.",
     "The council decided this because the fishing fleet moved into the new port in 2019.",
     "The council decided it since the fleet went to 2019."),
    ("Residents had asked for more green space after the floods destroyed two playgrounds.",
     "Residents had asked for more green space after the floods destroyed two playgrounds.",
     "Inhabitants wanted more green because floods."),
    ("The warehouses will be kept and turned into a market hall, which the mayor hopes will draw tourists.",
     "The warehouses will be kept and turned into a market hall, which the mayor hopes will attract tourists.",
     f"The stores are kept as a market hall, the mayor hopes tourists {XSS}."),
]


def harbour_lines() -> list[str]:
    return [json.dumps({"doc_id": "kessin", "seg_id": n, "source": f"Quelle {n}", "reference": ref,
                        "systems": {"alpha": alpha, "beta": beta}}, ensure_ascii=False)
            for n, (ref, alpha, beta) in enumerate(HARBOUR, 1)]


def rc_campaign(name: str):
    parsed = get_protocol("reading-comprehension").parse_options({
        "seed": 2, "source_language": "de", "target_language": "en", "redundancy": 1, "voters": 1})
    return import_campaign([(line + "\n").encode() for line in harbour_lines()], name=name,
                           protocol="reading-comprehension", parsed=parsed).campaign


def _shots() -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    return SHOTS


QUESTIONS = [("Why is the old harbour to become a park?", "the fishing fleet moved to the new port"),
             ("Why did residents ask for more green space?", "floods destroyed two playgrounds"),
             ("What will the warehouses be turned into?", "a market hall")]


def test_write_three_questions(live_server, browser):
    campaign = rc_campaign("Kessin harbour, reading comprehension")
    with _page(browser, 1280, 900) as page:
        state = _start(page, live_server, campaign.slug, "writer-1")
        item = state["item"]
        assert item["article"] == [h[0] for h in HARBOUR]
        expect(page.locator(".rc-sentence")).to_have_text(item["article"])
        expect(page.locator("#submit")).to_be_disabled()
        # by keyboard: type, Tab to the sample answer, Tab to the next question
        page.locator(".rc-q-text").nth(0).click()
        for k, (q, a) in enumerate(QUESTIONS):
            page.keyboard.type(q if k != 2 else QUESTIONS[0][0])  # the third repeats the first, at first
            page.keyboard.press("Tab")
            page.keyboard.type(a if k != 1 else "Yes")  # a yes/no sample answer is flagged
            if k < 2:
                page.keyboard.press("Tab")
        warnings = page.locator(".rc-warning")
        expect(warnings.nth(1)).to_have_text(re.compile("yes/no"))
        expect(warnings.nth(2)).to_have_text(re.compile("same as an earlier question"))
        expect(page.locator("#submit")).to_be_disabled()
        expect(page.locator("#rc-remaining")).to_have_text("Write three different questions")
        page.locator(".rc-q-text").nth(2).fill(QUESTIONS[2][0])
        expect(warnings.nth(2)).to_be_hidden()
        expect(page.locator("#submit")).to_be_enabled()  # the yes/no flag does not hold Submit back
        page.locator(".rc-a-text").nth(1).fill(QUESTIONS[1][1])
        expect(warnings.nth(1)).to_be_hidden()
        page.locator(".rc-a-text").nth(1).focus()
        page.mouse.move(0, 0)
        page.screenshot(path=str(_shots() / "reading-comprehension-write.png"), full_page=True)
        status, body = _post(page, lambda: page.keyboard.press("Control+Enter"))
        assert status == 201
        assert body == {"item": item["id"], "questions": [{"question": q, "answer": a} for q, a in QUESTIONS]}
        stored = Judgment.objects.get(item_id=item["id"]).answer["questions"]
        assert [(q["question"], q["answer"]) for q in stored] == QUESTIONS
        expect(page.locator("#done")).to_be_visible()
        assert page.js_errors == [] and page.csp == []


def _answer_stage(name: str):
    """The campaign written and voted on (by the annotator API), its answer stage built."""
    from django.test import Client

    from ..conftest import post_answer, start

    campaign = rc_campaign(name)
    client = Client()
    token = start(client, campaign, "w")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    assert post_answer(client, token, {"item": item["id"], "questions": [
        {"question": q, "answer": a} for q, a in QUESTIONS]}).status_code == 201
    build_stages(campaign)
    vote = Campaign.objects.get(stage_input=campaign)
    voter = Client()
    token = start(voter, vote, "v")
    while not (state := voter.get(f"/api/hit/{token}/").json()).get("done"):
        assert post_answer(voter, token, {"item": state["item"]["id"], "good": "yes",
                                          "redundant_with": None}).status_code == 201
    build_stages(vote)
    return Campaign.objects.get(stage_input=vote)


def test_answer_the_questions_on_one_translation(live_server, browser):
    stage = _answer_stage("Kessin harbour, reading comprehension")
    assert stage.hits.count() == 3
    with _page(browser, 1280, 900) as page:
        state = _start(page, live_server, stage.slug, "reader-1")
        item = state["item"]
        assert set(item) == {"id", "protocol", "article", "questions"}
        expect(page.locator(".rc-sentence")).to_have_text(item["article"])
        assert page.evaluate("window.__xss") is None and page.locator(".rc-article img").count() == 0
        expect(page.locator(".rc-q-label")).to_have_text([q["question"] for q in item["questions"]])
        expect(page.locator("#submit")).to_be_disabled()
        page.locator(".rc-a-text").nth(0).click()
        page.keyboard.type("the fleet moved away")
        page.keyboard.press("Enter")  # on to the next box
        assert page.evaluate("document.activeElement.id") == page.locator(".rc-a-text").nth(1).get_attribute("id")
        page.keyboard.type("to be deleted")
        page.locator(".rc-unknown input").nth(1).check()  # does not say: the box empties
        expect(page.locator(".rc-a-text").nth(1)).to_have_value("")
        expect(page.locator(".rc-a-text").nth(1)).to_be_disabled()
        expect(page.locator("#rc-remaining")).to_have_text("1 question still to answer")
        page.locator(".rc-a-text").nth(2).fill("a market hall")
        expect(page.locator("#submit")).to_be_enabled()
        page.locator(".rc-a-text").nth(2).focus()
        page.mouse.move(0, 0)
        page.screenshot(path=str(_shots() / "reading-comprehension-answer.png"), full_page=True)
        status, body = _post(page, lambda: page.keyboard.press("Control+Enter"))
        assert status == 201
        ids = [q["id"] for q in item["questions"]]
        assert body == {"item": item["id"], "answers": dict(zip(ids, ["the fleet moved away", "", "a market hall"],
                                                               strict=True))}
        assert Judgment.objects.get(item_id=item["id"]).answer == {"answers": body["answers"]}
        expect(page.locator("#done")).to_be_visible()
        assert page.js_errors == [] and page.csp == []
        # one translation of the article: this reader gets no other
        page.goto(f"{live_server.url}/c/{stage.slug}/start/?worker_id=reader-1")
        assert "/hit/" not in page.url


def test_vote_and_grade_by_keyboard(live_server, browser):
    from django.test import Client

    from ..conftest import post_answer, start

    campaign = rc_campaign("Kessin harbour, votes and grades")
    client = Client()
    token = start(client, campaign, "w")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    assert post_answer(client, token, {"item": item["id"], "questions": [
        {"question": q, "answer": a} for q, a in QUESTIONS]}).status_code == 201
    build_stages(campaign)
    vote = Campaign.objects.get(stage_input=campaign)
    with _page(browser, 1100, 800) as page:
        state = _start(page, live_server, vote.slug, "voter-1")
        item = state["item"]
        expect(page.locator("#rc-question")).to_have_text(item["question"]["question"])
        expect(page.locator("#rc-sample")).to_have_text(item["question"]["answer"])
        expect(page.locator("#submit")).to_be_disabled()
        page.keyboard.press("y")
        page.locator("#rc-redundant").select_option(item["others"][1]["id"])
        page.locator("#rc-good input").nth(0).focus()
        status, body = _post(page, lambda: page.keyboard.press("Enter"))
        assert status == 201 and body == {"item": item["id"], "good": "yes", "redundant_with": item["others"][1]["id"]}
        for _ in range(2):  # the other two: not good, by mouse; then good
            expect(page.locator("#submit")).to_be_disabled()
            page.get_by_label("Yes").check()
            status, body = _post(page, lambda: page.click("#submit"))
            assert status == 201 and body["redundant_with"] is None
        assert page.js_errors == [] and page.csp == []
    build_stages(vote)
    answer = Campaign.objects.get(stage_input=vote)
    for k in range(3):
        reader = Client()
        token = start(reader, answer, f"r{k}")
        item = reader.get(f"/api/hit/{token}/").json()["item"]
        assert post_answer(reader, token, {"item": item["id"], "answers": {
            q["id"]: f"answer {k}" for q in item["questions"]}}).status_code == 201
    build_stages(answer)
    grade = Campaign.objects.get(stage_input=answer)
    with _page(browser, 1100, 800) as page:
        state = _start(page, live_server, grade.slug, "grader-1")
        item = state["item"]
        expect(page.locator("#rc-given")).to_have_text(item["answer"])
        expect(page.locator("#rc-sample")).to_have_text(item["sample_answer"])
        page.keyboard.press("n")
        status, body = _post(page, lambda: page.keyboard.press("Enter"))
        assert status == 201 and body == {"item": item["id"], "correct": "no"}
        assert Judgment.objects.get(item_id=item["id"]).answer == {"correct": False}
        assert page.js_errors == [] and page.csp == []
