"""Media on the screens in a real browser (docs/api.md, "Media actions"; issue 26): a contrastive ESA campaign
whose document carries an image, a video and instructions, rated on a desktop and on a phone with Submit held
until the video has played the required share; and a Direct Assessment campaign with audio, its source
right-to-left. The files are the demo's generated ones (annotation/demo/media/), imported as a bundle. Screenshots
go to a temporary folder; `SCREENSHOT_DIR=docs` refreshes docs/screenshots/media-*.png."""
from __future__ import annotations

import io
import json
import os
import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import expect

from annotation.management.commands.load_demo import MEDIA_DIR
from annotation.models import Judgment
from annotation.protocols import get_protocol
from annotation.services.campaign_import import import_campaign

from ..media_files import bundle
from .screens import open_page, post_of, start_hit

pytestmark = pytest.mark.browser

DOCS = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="mteval-shots-")) / "screenshots"
INSTRUCTIONS = "Translate for a tourist brochure: friendly, informal register, at most 12 words."
HARBOUR = [
    ("Der kleine Hafen wurde am Montag wieder eröffnet.", "The small harbour reopened on Monday.",
     "The little harbour was opened again on Monday.", "Small harbour opened again on Monday."),
    ("Viele Besucher kamen mit dem Boot.", "Many visitors came by boat.", "Lots of visitors arrived with the boat.",
     "Many visitors came with the boat."),
]
PLAY = """() => { const v = document.querySelector('.media video, .media audio');
                  v.muted = true; v.playbackRate = 4; return v.play(); }"""


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.STORAGES = {**settings.STORAGES, "media": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path / "media")}}}
    settings.MEDIA_SERVE = "django"


def _shots() -> Path:
    DOCS.mkdir(parents=True, exist_ok=True)
    return DOCS


def _files(*names: str) -> dict[str, bytes]:
    return {name: (MEDIA_DIR / name).read_bytes() for name in names}


def _import(lines: list[dict], files: dict[str, bytes], protocol: str, name: str, **options):
    parsed = get_protocol(protocol).parse_options({"seed": 5, "target_language": "en", **options})
    data = bundle([json.dumps(line, ensure_ascii=False) for line in lines], files)
    return import_campaign(io.BytesIO(data), name=name, protocol=protocol, parsed=parsed).campaign


@pytest.fixture
def harbour(db):
    lines = [{"doc_id": "harbour", "seg_id": k, "source": src, "instructions": INSTRUCTIONS,
              "systems": {"online-A": a, "neural-B": b, "rule-C": c}} for k, (src, a, b, c) in enumerate(HARBOUR, 1)]
    lines[0]["doc_media"] = [
        {"kind": "image", "src": "harbour.png", "alt": "A small harbour at dusk with a red boat",
         "caption": "The reopened harbour"},
        {"kind": "video", "src": "harbour-walk.webm", "alt": "A walk along the pier", "caption": "The pier (4 s)"}]
    return _import(lines, _files("harbour.png", "harbour-walk.webm"), "contrastive-esa",
                   "Harbour news de-en, contrastive ESA with media", source_language="de", perturbation_rate=0.0,
                   segments_per_hit=2, require_media_played=75)


def _score_all(page, tap: bool = False) -> None:
    for n in range(page.locator(".vas-track").count()):
        track = page.locator(".vas-track").nth(n)
        track.scroll_into_view_if_needed()
        box = track.bounding_box()
        x, y = box["x"] + box["width"] * (0.4 + 0.2 * n), box["y"] + box["height"] / 2
        page.touchscreen.tap(x, y) if tap else page.mouse.click(x, y)


def _played_and_sent(page, item_id: int, submit) -> dict:
    """Play the clip fast and muted, wait for Submit, send; the answer's media report and what was stored."""
    page.evaluate(PLAY)
    expect(page.locator("#submit")).to_be_enabled(timeout=15_000)
    expect(page.locator("[data-media-hold]")).to_be_hidden()
    status, body, _ = post_of(page, submit)
    assert status == 201, body
    stored = Judgment.objects.get(item_id=item_id).media
    assert stored["actions"] == body["media_actions"] and stored["seconds"] == body["media_seconds"]
    return body


def test_contrastive_esa_with_an_image_and_a_video_holds_submit_until_the_video_has_played(live_server, browser,
                                                                                          harbour):
    with open_page(browser, 1280, 900) as page:
        _, state = start_hit(page, live_server, harbour.slug, "media-desktop")
        item = state["item"]
        assert [m["kind"] for m in item["media"]] == ["image", "video"]
        box = page.locator("#ces-source-box .media")
        expect(box.locator("img")).to_have_attribute("alt", "A small harbour at dusk with a red boat")
        expect(box.locator("video")).to_have_attribute("controls", "")
        expect(box.locator(".media-caption")).to_have_text(["The reopened harbour", "The pier (4 s)"])
        # The image opens larger; Esc closes it and the focus is back on the thumbnail.
        page.locator(".media-zoom").click()
        expect(page.locator("dialog.media-lightbox")).to_be_visible()
        expect(page.locator("dialog.media-lightbox .media-large")).to_have_attribute("alt", item["media"][0]["alt"])
        page.keyboard.press("Escape")
        expect(page.locator("dialog.media-lightbox")).to_be_hidden()
        assert page.evaluate("document.activeElement.classList.contains('media-zoom')")
        # Every translation scored, but Submit waits for the video, and says why.
        _score_all(page)
        expect(page.locator("#ces-remaining")).to_have_text("All scored")
        expect(page.locator("#submit")).to_be_disabled()
        expect(page.locator("[data-media-hold]")).to_contain_text("to at least 75 %")
        page.mouse.move(0, 0)
        page.screenshot(path=str(_shots() / "media-contrastive-esa.png"), full_page=True)
        body = _played_and_sent(page, item["id"], lambda: page.click("#submit"))
        assert "play" in [a["event"] for a in body["media_actions"]]
        assert body["media_seconds"][0]["media"] == 1 and body["media_seconds"][0]["played"] >= 2.5
        assert body["media_seconds"][0]["duration"] == pytest.approx(4.0, abs=0.2)
        assert page.js_errors == [] and page.csp == []


def _on_a_phone(phone, live_server, slug: str, worker: str, kind: str):
    """Enter the HIT on a 390 px phone: its first state and its player, visible and no wider than the screen."""
    _, state = start_hit(phone, live_server, slug, worker)
    player = phone.locator(f".media {kind}")
    expect(player).to_be_visible()
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    assert player.bounding_box()["width"] <= 390
    return state, player


def test_contrastive_esa_with_media_on_a_phone(live_server, browser, harbour):
    with open_page(browser, 390, 844, is_mobile=True, has_touch=True) as phone:
        state, video = _on_a_phone(phone, live_server, harbour.slug, "media-phone", "video")
        assert phone.locator(".media-zoom").bounding_box()["width"] <= 390
        _score_all(phone, tap=True)
        expect(phone.locator("#submit")).to_be_disabled()
        phone.evaluate("window.scrollTo(0, 0)")
        phone.screenshot(path=str(_shots() / "media-contrastive-esa-phone.png"), full_page=True)
        body = _played_and_sent(phone, state["item"]["id"], lambda: phone.tap("#submit"))
        assert body["media_seconds"][0]["played"] >= 2.5
        assert phone.js_errors == [] and phone.csp == []


@pytest.fixture
def museum(db):
    """Direct Assessment of an Arabic source with an audio clip per segment; Submit waits for 60 % of the clip."""
    sources = ["المتحف مغلق أيام الاثنين.", "الدخول مجاني في الأسابيع الأربعة الأولى."]
    lines = [{"doc_id": f"museum-{k % 2}", "seg_id": k // 2 + 1, "source": sources[k % 2] + f" ({k})",
              "reference": f"The museum is closed on Mondays, as announced ({k}).",
              "media": [{"kind": "audio", "src": "harbour-bell.wav", "alt": "The speaker reading the sentence",
                         "caption": "Listen before you rate"}],
              "systems": {"sys-A": f"The museum is closed on Mondays ({k}).",
                          "sys-B": f"Museum closed Monday ({k})."}} for k in range(10)]
    return _import(lines, _files("harbour-bell.wav"), "source-adequacy", "Museum ar-en, DA with audio",
                   source_language="ar", hit_size=20, require_media_played=60)


def test_direct_assessment_with_audio_and_a_right_to_left_source(live_server, browser, museum):
    campaign = museum
    with open_page(browser, 1100, 800) as page:
        _, state = start_hit(page, live_server, campaign.slug, "media-audio")
        assert [m["kind"] for m in state["item"]["media"]] == ["audio"]
        box = page.locator(".media")
        expect(box.locator("audio")).to_be_visible()
        assert box.evaluate("el => getComputedStyle(el).direction") == "rtl"
        audio, card = box.locator("audio").bounding_box(), box.bounding_box()
        assert audio["x"] + audio["width"] >= card["x"] + card["width"] - 2  # laid out from the right
        box_ = page.locator("#vas-track").bounding_box()
        page.mouse.click(box_["x"] + 0.7 * box_["width"], box_["y"] + box_["height"] / 2)
        expect(page.locator("#submit")).to_be_disabled()
        expect(page.locator("[data-media-hold]")).to_contain_text("the audio to at least 60 %")
        page.mouse.move(0, 0)
        page.screenshot(path=str(_shots() / "media-da-audio.png"), full_page=True)
        body = _played_and_sent(page, state["item"]["id"], lambda: page.click("#submit"))
        assert body["media_seconds"][0]["duration"] == pytest.approx(3.0, abs=0.1)
        assert Judgment.objects.get(item_id=state["item"]["id"]).score == pytest.approx(70, abs=2)
        assert page.js_errors == [] and page.csp == []


def test_direct_assessment_with_audio_on_a_phone(live_server, browser, museum):
    """The player fits a 390 px screen above the texts; a tap on the line rates, Submit waits for the clip."""
    with open_page(browser, 390, 844, is_mobile=True, has_touch=True) as phone:
        state, audio = _on_a_phone(phone, live_server, museum.slug, "media-audio-phone", "audio")
        track = phone.locator("#vas-track").bounding_box()
        assert audio.bounding_box()["y"] < track["y"]
        phone.touchscreen.tap(track["x"] + 0.3 * track["width"], track["y"] + track["height"] / 2)
        expect(phone.locator("#submit")).to_be_disabled()
        expect(phone.locator("[data-media-hold]")).to_contain_text("the audio to at least 60 %")
        phone.screenshot(path=str(_shots() / "media-da-audio-phone.png"), full_page=True)
        # "Why can't I submit?" names the clip (it said "Finish the parts above first."; found in the walk)
        phone.tap("#why-submit")
        expect(phone.locator("#why-message")).to_contain_text("played the audio to at least 60 %")
        expect(phone.locator(".media.why-highlight audio")).to_have_count(1)
        body = _played_and_sent(phone, state["item"]["id"], lambda: phone.tap("#submit"))
        assert body["media_seconds"][0]["played"] >= 1.8
        assert phone.js_errors == [] and phone.csp == []
