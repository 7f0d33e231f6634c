"""The admin leads a researcher through a campaign, in a real browser: (a) from a file to a published
campaign whose page holds the annotators' link, copied with its button and opened as a crowd worker;
(b) a pilot of 5 segments × 3 systems imported with the HIT size the form suggests, done by three
simulated workers and analysed; (c) the pairwise preview, which says which system is on which side.

`SCREENSHOT_DIR=docs` refreshes docs/admin-campaign.png, docs/admin-pilot-results.png and
docs/admin-pairwise-preview.png; otherwise the screenshots go to a temporary folder.
"""
from __future__ import annotations

import json
import os
import random
import re
import tempfile
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from playwright.sync_api import Page, expect

from annotation.models import Campaign, HitItem
from evaluation.analyses import compute_results

from ..simulation import Behaviour, complete_hit

pytestmark = pytest.mark.browser

DOCS = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="mteval-shots-"))
USERNAME, PASSWORD = "pilot-researcher", "a-long-test-password-7"

# Short news stories, one document each: German source, English reference and three machine translations.
STORIES = [
    ("Der Verein hat am Samstag sein neues Stadion eröffnet.", "The club opened its new stadium on Saturday.",
     "The club opened its new stadium on Saturday.", "The club has opened its new stadium on Saturday.",
     "The association opened on Saturday its new stadium."),
    ("Tausende Fans kamen trotz des Regens zum ersten Spiel.", "Thousands of fans came to the first game despite "
     "the rain.", "Thousands of fans came to the first match despite the rain.", "Despite the rain, thousands of "
     "fans came to the first game.", "Thousands fans came despite of the rain to first game."),
    ("Der Bürgermeister lobte die kurze Bauzeit von nur zwei Jahren.", "The mayor praised the short construction "
     "time of only two years.", "The mayor praised the short construction period of just two years.",
     "The mayor praised the brief construction time of only two years.", "The mayor lauded the short building "
     "time of only two year."),
    ("Die Tickets für die nächste Saison sind bereits ausverkauft.", "Tickets for next season are already sold "
     "out.", "Tickets for the next season are already sold out.", "The tickets for next season have already sold "
     "out.", "The tickets for the next season are already out sold."),
    ("Im Sommer soll neben dem Stadion ein kleiner Park entstehen.", "A small park is to be built next to the "
     "stadium in the summer.", "A small park is to be built next to the stadium in summer.", "In the summer, a "
     "small park will be created next to the stadium.", "In summer should next to the stadium a small park arise."),
]
PILOT_SYSTEMS = ("online-B", "uedin", "baseline")
QUALITY = {"online-B": 78, "uedin": 70, "baseline": 52}


def _login(page: Page, base_url: str) -> None:
    page.goto(f"{base_url}/admin/")
    page.fill("#id_username", USERNAME)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page.locator("#site-name")).to_be_visible()


def _pilot_file(path: Path) -> Path:
    """5 segments × 3 systems: 15 system outputs, too few for a 100-item HIT (70)."""
    lines = [json.dumps({"doc_id": "club-news", "seg_id": k + 1, "source": s, "reference": r,
                         "systems": dict(zip(PILOT_SYSTEMS, outputs, strict=True))}, ensure_ascii=False)
             for k, (s, r, *outputs) in enumerate(STORIES)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _full_file(path: Path) -> Path:
    """35 segments × 2 systems: the 70 system outputs of one 100-item HIT."""
    lines = []
    for d in range(7):
        for k, (source, reference, first, second, _third) in enumerate(STORIES):
            lines.append(json.dumps({"doc_id": f"club-{d + 1}", "seg_id": k + 1, "source": f"{source} ({d + 1})",
                                     "reference": f"{reference} ({d + 1})",
                                     "systems": {"online-B": f"{first} ({d + 1})", "uedin": f"{second} ({d + 1})"}},
                                    ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _import(page: Page, base: str, file: Path, name: str, protocol: str = "adequacy", **fields: str) -> None:
    page.goto(f"{base}/admin/annotation/campaign/")
    page.get_by_role("link", name="Import a campaign file").click()
    page.fill("#id_name", name)
    page.select_option("#id_protocol", protocol)
    for field, value in fields.items():
        page.fill(f"#id_{field}", value)
    page.set_input_files("#id_file", str(file))
    page.click("#campaign-import input[type=submit]")


@pytest.fixture
def lead(db):
    return get_user_model().objects.create_superuser(USERNAME, "pilot@example.org", PASSWORD)


def test_from_a_file_to_a_published_campaign_and_its_crowd_link(live_server, browser, lead, tmp_path):
    base = live_server.url
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base)
    context.set_default_timeout(10_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        _login(page, base)
        _import(page, base, _full_file(tmp_path / "club.jsonl"), "Club news de-en", redundancy="3", seed="4",
                source_language="de")
        expect(page).to_have_url(re.compile(r"/admin/annotation/campaign/\d+/preview/$"))
        campaign = Campaign.objects.get()
        assert campaign.status == Campaign.Status.DRAFT
        expect(page.locator("#qc-warning")).to_have_count(0)  # 10 pairs per HIT: nothing to warn about

        # Publish: the researcher lands on the campaign's page and sees its links.
        page.click("#publish")
        expect(page).to_have_url(f"{base}/admin/annotation/campaign/{campaign.pk}/change/")
        expect(page.locator("#campaign-status")).to_have_text("Active")
        expect(page.locator("ul.messagelist")).to_contain_text("Club news de-en is now active.")
        crowd_link = f"{base}/c/{campaign.slug}/start/?worker_id="
        expect(page.locator("#crowd-link")).to_have_value(crowd_link)
        expect(page.locator("#results-link")).to_have_attribute("href", f"/results/{campaign.slug}/")
        expect(page.locator("#api-link")).to_have_attribute("href", f"/api/campaigns/{campaign.slug}/")
        expect(page.locator("#hit-counts")).to_contain_text("1 HIT, each done by 3 workers: 3 places in all")
        expect(page.locator("#hit-progress")).to_contain_text("0 of 1 HITs done")
        for action in ("#pause", "#close", "#preview-link"):
            expect(page.locator(action)).to_be_visible()
        expect(page.locator("#publish")).to_have_count(0)

        # The copy button puts the link on the clipboard.
        page.evaluate("navigator.clipboard.writeText('')")
        page.click("#copy-crowd-link")
        expect(page.locator("#copy-crowd-link")).to_have_text("Copied")
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied == crowd_link
        page.mouse.move(0, 0)
        DOCS.mkdir(exist_ok=True)
        page.screenshot(path=str(DOCS / "admin-campaign.png"))

        # A crowd worker (no admin session) opens the copied link with their id: a HIT page.
        crowd = browser.new_context(viewport={"width": 1100, "height": 800})
        try:
            worker = crowd.new_page()
            worker.goto(copied + "pilot-worker-1")
            expect(worker).to_have_url(re.compile(rf"^{re.escape(base)}/hit/[^/]+/$"))
            expect(worker.locator("#progress-text")).to_have_text("1 / 100")
        finally:
            crowd.close()
        page.reload()
        expect(page.locator("#hit-progress")).to_contain_text("1 with a worker now")
        assert errors == []
    finally:
        context.close()


def test_a_pilot_sized_by_the_form_rated_by_three_workers_and_analysed(live_server, desktop, lead, tmp_path):
    page, base = desktop, live_server.url
    _login(page, base)
    _import(page, base, _pilot_file(tmp_path / "pilot.jsonl"), "Club news pilot", redundancy="3", seed="8",
            source_language="de")

    # Refused at the default HIT size: the error sits at hit_size and names the size that fits.
    hit_size_row = page.locator(".form-row.field-hit_size")
    expect(hit_size_row.locator(".errorlist")).to_contain_text("the file has 15 (5 segments × 3 systems)")
    expect(hit_size_row.locator(".errorlist")).to_contain_text("The largest HIT size this file fills is 20.")
    expect(hit_size_row.locator(".help")).to_contain_text("This file fills HIT sizes up to 20.")
    expect(page.locator(".form-row.field-file .errorlist")).to_have_count(0)
    # The file is kept: change the one field and submit again without choosing it anew.
    expect(page.locator("#kept-file")).to_contain_text("pilot.jsonl")
    assert page.input_value("#id_file") == ""
    page.fill("#id_hit_size", "20")
    page.click("#campaign-import input[type=submit]")
    expect(page).to_have_url(re.compile(r"/admin/annotation/campaign/\d+/preview/$"))
    campaign = Campaign.objects.get()
    assert (campaign.hit_size, campaign.redundancy, campaign.hits.count()) == (20, 3, 2)

    # The preview warns that 2 pairs per HIT make the reliability test demanding, with the numbers.
    warning = page.locator("#qc-warning")
    expect(warning).to_contain_text("2 bad-reference pairs per HIT and at most 4")
    expect(warning).to_contain_text("4.46 standard deviations")
    page.click("#publish")
    expect(page.locator("#campaign-status")).to_have_text("Active")

    # Three workers do both HITs through the annotator API.
    for w in range(3):
        client = Client()
        for _ in range(2):
            code = complete_hit(client, campaign.slug, f"pilot-{w + 1}", Behaviour("diligent", noise=4), QUALITY,
                                random.Random(w))
            assert code
    page.reload()
    expect(page.locator("#hit-progress")).to_contain_text("2 of 2 HITs done")
    expect(page.locator("#judgment-counts")).to_have_text("120 of 120")

    results = compute_results(campaign)
    assert results is not None and results.summary["workers"] == 3
    page.goto(f"{base}/results/{campaign.slug}/")
    expect(page.locator("h1")).to_have_text("Club news pilot")
    expect(page.locator("#worker-table tbody tr")).to_have_count(3)
    ranking = page.locator("table.ranking").first
    expect(ranking).to_contain_text("online-B")
    assert ranking.locator("tbody tr td.name").first.inner_text() == "online-B"
    page.set_viewport_size({"width": 1280, "height": 1000})
    page.mouse.move(0, 0)
    page.locator("#workers").evaluate("section => section.scrollIntoView()")
    page.screenshot(path=str(DOCS / "admin-pilot-results.png"))

    # The admin's results: the stored tables, read-only, with a link to the page above.
    page.goto(f"{base}/admin/evaluation/campaignstatistics/{campaign.pk}/change/")
    expect(page.locator("#open-results-page")).to_have_attribute("href", f"/results/{campaign.slug}/")
    expect(page.locator("input[name=_save]")).to_have_count(0)
    assert "object (" not in page.content()
    assert page.js_errors == []


def test_the_pairwise_preview_says_which_system_is_on_each_side(live_server, desktop, lead, tmp_path):
    page, base = desktop, live_server.url
    lines = []
    for d in range(4):
        for k, (source, reference, first, second, _third) in enumerate(STORIES[:3]):
            lines.append(json.dumps({"doc_id": f"club-{d + 1}", "seg_id": k + 1, "source": source,
                                     "reference": reference, "systems": {"MT": first, "Human": second}},
                                    ensure_ascii=False))
    file = tmp_path / "pairwise.jsonl"
    file.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _login(page, base)
    page.goto(f"{base}/admin/annotation/campaign/import/")
    page.fill("#id_name", "Club news, MT vs Human")
    page.select_option("#id_protocol", "pairwise-adequacy")
    page.fill("#id_systems", "MT,Human")
    page.select_option("#id_unit", "both")
    page.fill("#id_docs_per_hit", "1")
    page.fill("#id_seed", "3")
    page.set_input_files("#id_file", str(file))
    page.click("#campaign-import input[type=submit]")
    expect(page).to_have_url(re.compile(r"/admin/annotation/campaign/\d+/preview/$"))
    campaign = Campaign.objects.get()

    items = {i.position: i for i in HitItem.objects.filter(hit__campaign=campaign, hit__number=1)}
    rows = page.locator("#preview-items tbody tr")
    expect(rows).to_have_count(len(items))
    cells = page.eval_on_selector_all(
        "#preview-items tbody tr", "rows => rows.map(r => Array.from(r.cells).map(c => c.innerText.trim()))")
    for number, _set, _kind, _pair, systems, _segment, shown in cells:
        item = items[int(number) - 1]
        first, second = ("MT", "Human") if item.payload["left"] == 0 else ("Human", "MT")
        assert systems.startswith(f"A: {first}\nB: {second}"), systems
        assert "['" not in shown and "']" not in shown
        for sentence in item.payload["source"] + item.payload["A"] + item.payload["B"]:
            assert sentence in shown.split("\n") or any(sentence in line for line in shown.split("\n"))
    # One sentence a line: the first document's source sentences each on their own line.
    first_row = page.locator("#preview-items tbody tr").first
    expect(first_row.locator('.block[data-key="source"] .line')).to_have_count(
        len(items[0].payload["source"]))
    expect(first_row.locator('.block[data-key="A"] .label')).to_have_text("A:")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.mouse.move(0, 0)
    page.screenshot(path=str(DOCS / "admin-pairwise-preview.png"))
    assert page.js_errors == []


def test_with_no_protocol_chosen_every_option_row_shows(live_server, desktop, lead):
    """The protocol may come from a settings file: with none chosen, the form shows every option row (each one's
    help says which protocols use it), so options can be set beside the file; choosing a protocol narrows them."""
    page, base = desktop, live_server.url
    _login(page, base)
    page.goto(f"{base}/admin/annotation/campaign/import/")
    assert page.input_value("#id_protocol") == ""
    rows = page.locator("#campaign-import [data-protocols]")
    total = rows.count()
    assert total > 10
    hidden = page.eval_on_selector_all("#campaign-import [data-protocols]",
                                       "rows => rows.filter(r => r.style.display === 'none').length")
    assert hidden == 0
    expect(page.locator("#id_screen_size")).to_be_enabled()
    page.select_option("#id_protocol", "adequacy")
    hidden = page.eval_on_selector_all("#campaign-import [data-protocols]",
                                       "rows => rows.filter(r => r.style.display === 'none').length")
    assert 0 < hidden < total
    expect(page.locator("#id_screen_size")).to_be_disabled()
    assert page.js_errors == []
