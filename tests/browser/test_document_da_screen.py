"""Document-level Direct Assessment in a real browser (docs/methods.md §1.1): a worker rates the segments of a
document with the document in view (the scores already given beside the earlier segments), then the whole
document; and the slider with SQM's labelled marks. Screenshots go to a temporary folder; `SCREENSHOT_DIR=docs`
refreshes docs/screenshots/da-document.png and docs/screenshots/da-sqm.png."""
from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from annotation.models import HitItem, Judgment
from annotation.services.campaign_import import import_campaign

pytestmark = pytest.mark.browser

DOCS = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="mteval-shots-")) / "screenshots"

STORY = [
    ("The city council approved the new budget after a long debate on Tuesday evening.",
     "The city council approved the new budget on Tuesday evening after a long debate.",
     "City council has approved new budget after long debating Tuesday in the evening."),
    ("Most of the money will go to schools and to the repair of old bridges.",
     "Most of the money will go to schools and to repairing old bridges.",
     "The most of money goes to the schools and repair of old bridges."),
    ("Some members said the plan did not do enough for public transport.",
     "Some members said that the plan did not do enough for public transport.",
     "Several members told the plan makes not enough for the public transport."),
    ("The mayor promised a second package of measures before the summer.",
     "The mayor promised a second package of measures before summer.",
     "Mayor promised second packet of measures until summer."),
]


def _lines(n_docs: int = 8) -> list[str]:
    lines = []
    for d in range(n_docs):
        for k, (reference, a, b) in enumerate(STORY):
            lines.append(json.dumps({"doc_id": f"news-{d}", "seg_id": k + 1, "source": f"Quelle {d}.{k}.",
                                     "reference": reference, "systems": {"online-A": a, "uedin": b}}))
    return lines


def _start(page: Page, live_server, slug: str, worker: str) -> str:
    page.goto(f"{live_server.url}/c/{slug}/start/?worker_id={worker}")
    match = re.search(r"/hit/([^/]+)/$", page.url)
    assert match, page.url
    expect(page.locator("#progress-text")).to_have_text(re.compile(r"^1 / "))
    return match.group(1)


def _rate(page: Page, fraction: float) -> None:
    box = page.locator("#vas-track").bounding_box()
    page.mouse.click(box["x"] + fraction * box["width"], box["y"] + box["height"] / 2)


def _submit(page: Page, position: int) -> None:
    page.click("#submit")
    expect(page.locator("#progress-text")).to_have_text(re.compile(rf"^{position + 1} / "))


def test_a_worker_rates_a_document_segment_by_segment_then_whole(live_server, desktop):
    campaign = import_campaign(_lines(), name="WMT news de-en, document-level adequacy", protocol="adequacy",
                               seed=2, hit_size=40, options={"document_mode": True}).campaign
    page = desktop
    token = _start(page, live_server, campaign.slug, "doc-1")
    items = list(HitItem.objects.filter(hit__assignments__token=token).order_by("position"))
    assert items[0].payload == {"unit": "segment", "first": 0, "count": 4}
    fractions = (0.8, 0.55, 0.3, 0.7)
    expect(page.locator("#da-doc-note")).to_have_text("Segment 1 of 4 of a document.")
    expect(page.locator("#da-before")).to_be_hidden()
    expect(page.locator("#da-after .da-row")).to_have_count(3)
    expect(page.locator("#da-after .da-row.da-far")).to_have_count(2)
    expect(page.locator("#da-after .da-far").first).to_be_hidden()
    for k in range(3):
        expect(page.locator("#da-before .da-row")).to_have_count(k)
        expect(page.locator("#da-before .da-score-text")).to_have_text([str(round(100 * f)) for f in fractions[:k]])
        if k == 2:
            expect(page.locator("#da-expand")).to_be_visible()
            page.click("#da-expand")
            expect(page.locator("#da-before .da-far")).to_be_visible()
            page.click("#da-expand")
            _rate(page, fractions[k])
            page.mouse.move(0, 0)
            DOCS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(DOCS / "da-document.png"), full_page=True)
        else:
            _rate(page, fractions[k])
        _submit(page, k + 1)
    _rate(page, fractions[3])
    _submit(page, 4)
    # The document item: the whole document with the four scores, no single segment.
    expect(page.locator("#da-doc-note")).to_have_text("Now rate the whole document (4 segments) as one text.")
    expect(page.locator("#da-texts")).to_be_hidden()
    expect(page.locator("#da-before .da-row")).to_have_count(4)
    expect(page.locator("#da-before .da-score-text")).to_have_text([str(round(100 * f)) for f in fractions])
    expect(page.locator("#submit")).to_be_disabled()
    page.keyboard.press("End")
    _submit(page, 5)
    expect(page.locator("#da-doc-note")).to_have_text("Segment 1 of 4 of a document.")
    judgments = list(Judgment.objects.filter(assignment__token=token).order_by("item__position")
                     .values_list("item__payload", "score"))
    assert [p["unit"] for p, _ in judgments] == ["segment"] * 4 + ["document"]
    assert [s for _, s in judgments][:4] == pytest.approx([100 * f for f in fractions], abs=2)
    assert judgments[4][1] == 100
    assert page.js_errors == []


def test_sqm_labels_on_the_slider(live_server, desktop):
    campaign = import_campaign(_lines(), name="WMT news de-en, document-level SQM", protocol="source-adequacy",
                               seed=4, hit_size=40, source_language="de",
                               options={"document_mode": True, "sqm_labels": True}).campaign
    page = desktop
    _start(page, live_server, campaign.slug, "sqm-1")
    labels = page.locator("#vas-labels .vas-label")
    expect(labels).to_have_text(["No meaning preserved", "Some meaning preserved",
                                 "Most meaning preserved and few grammar mistakes", "Perfect meaning and grammar"])
    expect(page.locator(".vas-anchors")).to_be_hidden()
    track = page.locator("#vas-track").bounding_box()
    ticks = page.locator("#vas-track .vas-mark")
    expect(ticks).to_have_count(4)
    for tick, at in zip(ticks.all(), (0, 1 / 3, 2 / 3, 1), strict=True):
        box = tick.bounding_box()
        assert abs(box["x"] + box["width"] / 2 - (track["x"] + at * track["width"])) <= 2
    for k in range(4):
        _rate(page, 0.2 + 0.2 * k)
        _submit(page, k + 1)
    _rate(page, 0.7)
    page.mouse.move(0, 0)
    DOCS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(DOCS / "da-sqm.png"), full_page=True)
    assert page.js_errors == []
