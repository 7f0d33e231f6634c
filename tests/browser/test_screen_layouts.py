"""Layout defects of issue 23 (defect 6), checked in a real browser by geometry and computed style: the ranking
results' gold chart agrees with the worker table, SQM labels on a phone keep clear of the slider's hint, the
reference-translation actions stay in the card at 1366 px, and contrastive ESA's "100" anchor ends at the end of
the track in a narrow column. Screenshots go to a temporary folder; `SCREENSHOT_DIR=docs/screenshots` refreshes
docs/screenshots/{ranking-gold-chart,da-sqm-phone,reference-translation-1366,contrastive-esa-narrow}.png."""
from __future__ import annotations

import os
import random
import re
import tempfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from playwright.sync_api import expect

from annotation.services.campaign_import import import_campaign
from evaluation.analyses import compute_results
from evaluation.services.results_read import stored_rows
from tests.ranking_simulation import campaign_lines, complete_ranking_hit

from .screens import open_page, start_hit
from .test_document_da_screen import _lines as da_lines
from .test_error_span_screens import campaign as span_campaign
from .test_reference_translation_screens import rt_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.urls("tests.test_results_pages")]

SHOTS = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="mteval-shots-"))
QUALITY = {"sysA": 80, "sysB": 70, "sysC": 60, "sysD": 50}
STATUS_TEXT = {"✓ trusted": "trusted", "✗ failed": "failed", "probation": "probation"}


def _shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name), **({"full_page": True} if hasattr(page, "goto") else {}))


def _login(context, live_server) -> None:
    user = get_user_model().objects.create_superuser("layout-admin", "a@example.org", "pw")
    client = Client()
    client.force_login(user)
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])


def _gold_campaign():
    """Careful judges (trusted), random rankers with many gold screens (failed) and random newcomers with one HIT
    (too few gold screens: on probation, whatever their accuracy)."""
    campaign = import_campaign(campaign_lines(80, list(QUALITY)), name="Gold chart", protocol="ranking",
                               redundancy=3, seed=7, hit_size=10,
                               options={"screen_size": 4, "gold": "best", "gold_rate": 0.3, "bootstrap_runs": 20,
                                        "min_gold": 6}).campaign
    rng, client = random.Random(2), Client()
    for worker, careful, hits in [("random0", False, 4), ("new0", False, 1), ("new1", False, 1)] + [
            (f"careful{i}", True, 4) for i in range(3)]:
        for _ in range(hits):  # a worker who failed the gold test is refused further HITs
            if complete_ranking_hit(client, campaign.slug, worker, QUALITY, careful, rng) is None:
                break
    compute_results(campaign)
    return campaign


def test_gold_chart_agrees_with_the_worker_table(live_server, browser, settings):
    """Each worker's mark carries the status the table shows; the shaded 'good' zone lies above the threshold."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    campaign = _gold_campaign()
    gold = {row["worker"]: row for row in stored_rows(campaign, "gold")}
    assert {row["status"] for row in gold.values()} == {"trusted", "failed", "probation"}
    assert any(row["status"] == "probation" and row["gold_accuracy"] < 0.7 for row in gold.values())
    with open_page(browser, 1100, 900) as page:
        _login(page.context, live_server)
        assert page.goto(f"{live_server.url}/results/{campaign.slug}/").status == 200
        table = {}
        for row in page.locator("#worker-table tbody tr").all():
            cells = row.locator("td").all_text_contents()
            table[cells[0]] = STATUS_TEXT[cells[5].strip()]
        assert table == {w: row["status"] for w, row in gold.items()}
        chart = page.locator("#workers svg")
        marks = {}
        for mark in chart.locator(".mark").all():
            title = mark.locator("title").text_content()
            worker, _, status = title.rpartition(": ")
            if worker:
                marks[worker] = (status, mark.get_attribute("stroke") if mark.get_attribute("fill") == "#FFFFFF"
                                 else mark.get_attribute("fill"), mark.evaluate("m => m.tagName"))
        assert {w: s for w, (s, _, _) in marks.items()} == table
        legend = {}
        for text in chart.locator("text").all():
            legend[text.text_content()] = text
        # the legend names the table's words, and each status has one look
        for status in ("trusted", "probation", "failed"):
            assert status in legend
            looks = {(colour, tag) for s, colour, tag in marks.values() if s == status}
            assert len(looks) == 1, (status, looks)
        assert "reliable" not in legend
        line = chart.locator(".threshold line").bounding_box()
        zone = chart.locator(".good-zone").bounding_box()
        assert zone["y"] + zone["height"] <= line["y"] + 2 and zone["height"] > 20  # shaded above the line
        for mark in chart.locator(".mark").all():
            title = mark.locator("title").text_content()
            worker = title.rpartition(": ")[0]
            if worker and gold[worker]["gold_accuracy"] >= 0.7 + 1e-9:
                box = mark.bounding_box()
                assert box["y"] + box["height"] / 2 <= line["y"] + 1
        _shot(page.locator("#workers"), "ranking-gold-chart.png")
        assert page.js_errors == []


def test_sqm_labels_clear_the_hint_on_a_phone(live_server, browser):
    campaign = import_campaign(da_lines(), name="Document SQM on a phone", protocol="source-adequacy", seed=4,
                               hit_size=40, source_language="de",
                               options={"document_mode": True, "sqm_labels": True}).campaign
    with open_page(browser, 390, 844, is_mobile=True, has_touch=True) as page:
        start_hit(page, live_server, campaign.slug, "sqm-phone")
        labels = page.locator("#vas-labels .vas-label")
        expect(labels).to_have_count(4)
        hint = page.locator("#vas-hint").bounding_box()
        track = page.locator("#vas-track").bounding_box()
        boxes = [label.bounding_box() for label in labels.all()]
        for box in boxes:
            assert box["y"] >= track["y"] + track["height"]
            assert box["y"] + box["height"] <= hint["y"] + 1, (box, hint)
            assert box["x"] >= 0 and box["x"] + box["width"] <= 390
        for a, b in zip(boxes, boxes[1:], strict=False):
            assert a["x"] + a["width"] <= b["x"] + 1, (a, b)  # side by side, not overlapping
        # each label stays with its mark: the first starts at 0, the last ends at 100, the middle ones centred
        assert abs(boxes[0]["x"] - track["x"]) <= 14
        assert abs(boxes[3]["x"] + boxes[3]["width"] - track["x"] - track["width"]) <= 14
        for box, at in zip(boxes[1:3], (1 / 3, 2 / 3), strict=True):
            assert abs(box["x"] + box["width"] / 2 - (track["x"] + at * track["width"])) <= 3
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        _shot(page, "da-sqm-phone.png")
        assert page.js_errors == []


def test_reference_translation_actions_at_1366(live_server, browser):
    campaign = rt_campaign("Museum news de-en at 1366 px")
    with open_page(browser, 1366, 768) as page:
        start_hit(page, live_server, campaign.slug, "rt-1366")
        card = page.locator(".card", has=page.locator("#rt-rows")).bounding_box()
        hint = page.locator(".rt-keys")
        expect(hint).to_be_visible()
        box = hint.bounding_box()
        assert card["x"] <= box["x"] and box["x"] + box["width"] <= card["x"] + card["width"], (box, card)
        assert card["y"] <= box["y"] and box["y"] + box["height"] <= card["y"] + card["height"], (box, card)
        submit = page.locator("#submit")
        height = submit.bounding_box()["height"]
        assert height <= 48, height
        assert page.evaluate("document.documentElement.scrollWidth") <= 1366
        _shot(page, "reference-translation-1366.png")
        assert page.js_errors == []


def _line_rects(page, selector: str) -> list[dict]:
    """The client rectangles of each line of the element's text."""
    return page.locator(selector).evaluate(
        """el => { const r = document.createRange(); r.selectNodeContents(el);
                   return Array.from(r.getClientRects()).map(b => ({left: b.left, right: b.right})); }""")


@pytest.mark.parametrize("width", [1100, 760])
def test_contrastive_esa_anchor_ends_at_100(live_server, browser, width):
    campaign = span_campaign("contrastive-esa", source_language="de", name=f"Contrastive ESA at {width} px")
    with open_page(browser, width, 900) as page:
        start_hit(page, live_server, campaign.slug, f"ces-{width}")
        for n in range(2):
            col = f".ces-col:nth-child({n + 1}) "
            track = page.locator(col + ".vas-track").bounding_box()
            high = page.locator(col + ".vas-anchors > span:last-child")
            low = page.locator(col + ".vas-anchors > span:first-child")
            assert re.match(r"^100\b", high.text_content()), high.text_content()
            assert high.evaluate("el => getComputedStyle(el).textAlign") in ("right", "end")
            high_lines, low_lines = _line_rects(page, col + ".vas-anchors > span:last-child"), _line_rects(
                page, col + ".vas-anchors > span:first-child")
            assert len(high_lines) >= 1 and len(low_lines) >= 1
            for rect in high_lines:  # every line of "100: …" ends at the 100 end of the track
                assert abs(rect["right"] - (track["x"] + track["width"])) <= 3, (rect, track)
            for rect in low_lines:  # and "0: …" starts at the 0 end
                assert abs(rect["left"] - track["x"]) <= 3, (rect, track)
            assert low.bounding_box()["x"] + low.bounding_box()["width"] <= high.bounding_box()["x"] + 1
        _shot(page, f"contrastive-esa-{width}.png")
        assert page.js_errors == []
