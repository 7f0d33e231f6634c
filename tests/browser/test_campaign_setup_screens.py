"""Campaign set-up as a researcher does it, in a real browser (issue 5): log in to the admin through
its login form, import a campaign file (first one with a broken line, then a good one), read the
preview of the built HIT, publish, see a crowd worker get the instructions and then the slider,
pause, and see the crowd link refuse. A second test opens the results page of an analysed campaign.

`SCREENSHOT_DIR=docs` refreshes docs/setup-preview.png (the preview a researcher checks before
publishing); otherwise the screenshots go to a temporary folder. The campaign files are written
to tmp_path here (never read from outside the repository).
"""
from __future__ import annotations

import json
import os
import random
import re
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import Page, expect

from annotation.models import Campaign, ItemType
from annotation.services.judgment_import import import_judgments
from evaluation.analyses import compute_results

pytestmark = pytest.mark.browser

DOCS = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="mteval-shots-"))
USERNAME, PASSWORD = "lead-researcher", "a-long-test-password-9"

STATEMENT = "How much do you agree that the black text adequately expresses the meaning of the gray text?"
INSTRUCTIONS = """## How to rate

Each screen shows a **reference translation** in gray and a candidate translation in black.

- Move the slider to say how much you agree that the black text means the same as the gray one.
- Press *Submit* (or Enter) to go on. Some sentences come back: rate them as you did before.

Thank you for your help!"""

# Seven news segments, told of five cities (one document each): 35 distinct segments × 2 systems are
# the 70 system outputs of exactly one 100-item HIT.
NEWS = [
    ("Der Stadtrat von {city} hat den neuen Haushalt am Dienstagabend nach langer Debatte verabschiedet.",
     "The {city} city council approved the new budget on Tuesday evening after a long debate.",
     "The city council of {city} passed the new budget after a long debate on Tuesday evening.",
     "City council of {city} has approved new budget after long debating Tuesday in the evening."),
    ("Bis zum Ende der Woche wird rund um {city} starker Regen erwartet.",
     "Heavy rain is expected around {city} until the end of the week.",
     "Heavy rain is expected in the {city} area until the end of the week.",
     "Strong rain expected around {city} until week end."),
    ("Das Museum in {city} bleibt freitags länger geöffnet, um jüngere Besucher anzuziehen.",
     "The museum in {city} will stay open later on Fridays to attract younger visitors.",
     "The {city} museum will remain open longer on Fridays to attract young visitors.",
     "Museum in {city} stays open late Fridays for attracting more young visitor."),
    ("Forscher aus {city} stellten fest, dass das Medikament die Beschwerden bei zwei Dritteln der Patienten "
     "linderte.",
     "Researchers from {city} found that the drug eased the symptoms of two thirds of the patients.",
     "Researchers in {city} found that the medicine reduced symptoms in two thirds of patients.",
     "Researchers of {city} discovered the drug lowered symptoms at two third of the patients."),
    ("Der Zugverkehr zwischen {city} und der Hauptstadt wird am Montagmorgen wieder aufgenommen.",
     "Train services between {city} and the capital will resume on Monday morning.",
     "Train connections between {city} and the capital will resume on Monday morning.",
     "The trains between {city} and capital are resuming Monday in the morning."),
    ("Ein Unternehmen aus {city} will bis zum Jahresende dreihundert neue Mitarbeiter einstellen.",
     "A company from {city} wants to hire three hundred new employees by the end of the year.",
     "A {city} company plans to employ three hundred new workers by the end of the year.",
     "Company from {city} wants hire three hundreds new worker until end of year."),
    ("Die Landwirte um {city} fürchten, dass der trockene Sommer die diesjährige Ernte ruiniert.",
     "Farmers around {city} fear that the dry summer will ruin this year's harvest.",
     "Farmers near {city} fear the dry summer will destroy this year's harvest.",
     "The farmer around {city} are worried the dry summer ruins harvest of this year."),
]
CITIES = ("Bremen", "Leipzig", "Graz", "Basel", "Kiel")
SYSTEMS = ("online-B", "uedin-nmt")


def _campaign_records() -> list[dict]:
    records = []
    for d, city in enumerate(CITIES):
        for k, texts in enumerate(NEWS):
            source, reference, a, b = (t.format(city=city) for t in texts)
            records.append({"doc_id": f"news-{d + 1}", "seg_id": k + 1, "source": source, "reference": reference,
                            "systems": {SYSTEMS[0]: a, SYSTEMS[1]: b}})
    return records


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _login(page: Page, base_url: str) -> None:
    """Through the admin's own login form, as a person would."""
    page.goto(f"{base_url}/admin/")
    assert "/admin/login/" in page.url
    page.fill("#id_username", USERNAME)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page.locator("#site-name")).to_be_visible()
    assert page.url == f"{base_url}/admin/"


def _fill_import_form(page: Page, file: Path) -> None:
    page.fill("#id_name", "News de-en 2024, adequacy")
    page.select_option("#id_protocol", "adequacy")
    page.fill("#id_source_language", "de")
    page.fill("#id_target_language", "en")
    page.fill("#id_statement", STATEMENT)
    page.fill("#id_instructions", INSTRUCTIONS)
    page.fill("#id_redundancy", "3")
    page.fill("#id_seed", "11")
    page.fill("#id_payment_per_hit", "1.50")
    page.set_input_files("#id_file", str(file))


def _status_message(page: Page) -> str:
    return page.locator("ul.messagelist").inner_text()


def test_a_researcher_imports_previews_publishes_and_pauses_a_campaign(live_server, browser, desktop, tmp_path):
    get_user_model().objects.create_superuser(USERNAME, "lead@example.org", PASSWORD)
    records = _campaign_records()
    good_lines = [json.dumps(r, ensure_ascii=False) for r in records]
    bad_lines = list(good_lines)
    bad_lines[3] = '{"doc_id": "news-1", "seg_id": 4, "source": "Unfinished'  # line 4: broken JSON
    assert len({r["reference"] for r in records}) == 35
    bad_file = _write(tmp_path / "news-broken.jsonl", bad_lines)
    good_file = _write(tmp_path / "news.jsonl", good_lines)
    page, base = desktop, live_server.url

    # Log in, then Campaigns -> "Import a campaign file".
    _login(page, base)
    page.get_by_role("link", name="Campaigns", exact=True).first.click()
    expect(page).to_have_url(f"{base}/admin/annotation/campaign/")
    page.get_by_role("link", name="Import a campaign file").click()
    expect(page).to_have_url(f"{base}/admin/annotation/campaign/import/")

    # A file with a broken line: refused whole, the error and its line next to the file field.
    _fill_import_form(page, bad_file)
    page.click("#campaign-import input[type=submit]")
    file_errors = page.locator(".form-row.field-file .errorlist")
    expect(file_errors).to_contain_text("line 4: invalid JSON")
    expect(page.locator(".errorlist.nonfield")).to_contain_text("nothing was imported")
    # The error sits in the file field's own row, above the file input (not somewhere else on the page).
    assert page.locator(".form-row.field-file.errors #id_file").count() == 1
    error_box, input_box = file_errors.bounding_box(), page.locator("#id_file").bounding_box()
    assert error_box["y"] < input_box["y"] and input_box["y"] - error_box["y"] < 80
    assert Campaign.objects.count() == 0
    # The settings typed in survive the refusal; only the file has to be chosen again.
    assert page.input_value("#id_name") == "News de-en 2024, adequacy"
    assert page.input_value("#id_instructions") == INSTRUCTIONS
    assert page.input_value("#id_redundancy") == "3" and page.input_value("#id_payment_per_hit") == "1.50"

    # The good file: a draft, and the preview of its HIT.
    page.set_input_files("#id_file", str(good_file))
    page.click("#campaign-import input[type=submit]")
    expect(page).to_have_url(re.compile(r"/admin/annotation/campaign/\d+/preview/$"))
    campaign = Campaign.objects.get()
    assert (campaign.name, campaign.protocol, campaign.redundancy) == ("News de-en 2024, adequacy", "adequacy", 3)
    assert (campaign.statement, campaign.instructions.replace("\r\n", "\n")) == (STATEMENT, INSTRUCTIONS)
    assert str(campaign.payment_per_hit) == "1.50" and campaign.source_language == "de"
    assert campaign.status == Campaign.Status.DRAFT
    assert "It is a draft" in _status_message(page)
    expect(page.locator("#campaign-status")).to_have_text("Draft")
    head = page.locator("#campaign-preview > p").first.inner_text()
    assert "redundancy 3" in head and STATEMENT in head and "1 HIT" in head

    summary = page.locator(".preview-summary").inner_text()
    assert "100 items" in summary
    assert sorted(s.inner_text() for s in page.locator(".preview-summary span").all()) == \
        ["10 bad-reference checks", "10 human references (control)", "10 repeat checks", "70 translations to judge"]
    rows = page.locator("#preview-items tbody tr")
    expect(rows).to_have_count(100)
    expect(page.locator("#preview-items thead")).to_contain_text("What the annotator sees")
    expect(page.locator("#preview-legend")).to_contain_text("gray text is the context")
    cells = page.eval_on_selector_all(
        "#preview-items tbody tr",
        "rows => rows.map(r => Array.from(r.cells).map(c => c.innerText.trim()))")
    assert [int(c[0]) for c in cells] == list(range(1, 101))
    assert Counter(c[2] for c in cells) == {ItemType.SYSTEM.label: 70, ItemType.BAD_REF.label: 10,
                                             ItemType.REPEAT.label: 10, ItemType.REFERENCE.label: 10}
    # What the annotator sees, checked against the file itself: the gray reference, then the candidate.
    by_segment = {f"{r['doc_id']}:{r['seg_id']}": r for r in records}
    for number, _set, kind, pair, system, segment, shown in cells:
        record = by_segment[segment]
        reference, candidate = shown.split("\n")
        assert reference == record["reference"], (number, shown)
        if kind == ItemType.SYSTEM.label:
            assert system in SYSTEMS and candidate == record["systems"][system]
        elif kind == ItemType.REPEAT.label:
            assert candidate == record["systems"][system] and cells[int(pair[1:]) - 1][6] == shown
        elif kind == ItemType.BAD_REF.label:
            assert candidate != record["systems"][system] and cells[int(pair[1:]) - 1][2] == ItemType.SYSTEM.label
        else:
            assert candidate == record["reference"] and not system
    assert not any(record["source"] in "\n".join(c[6] for c in cells) for record in records)  # adequacy: no source
    DOCS.mkdir(exist_ok=True)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.mouse.move(0, 0)
    page.screenshot(path=str(DOCS / "setup-preview.png"))

    # Publish from the preview: the researcher lands on the campaign's page, with its links.
    page.click("#publish")
    expect(page).to_have_url(f"{base}/admin/annotation/campaign/{campaign.pk}/change/")
    expect(page.locator("#campaign-status")).to_have_text("Active")
    assert "News de-en 2024, adequacy is now active." in _status_message(page)
    expect(page.locator("#crowd-link")).to_have_value(f"{base}/c/{campaign.slug}/start/?worker_id=")
    campaign.refresh_from_db()
    assert campaign.status == Campaign.Status.ACTIVE
    expect(page.locator("#publish")).to_have_count(0)

    # A crowd worker (no admin session) follows the link: the instructions first, then the slider.
    crowd_context = browser.new_context(viewport={"width": 1100, "height": 800})
    try:
        worker = crowd_context.new_page()
        worker_errors: list[str] = []
        worker.on("pageerror", lambda exc: worker_errors.append(str(exc)))
        worker.goto(f"{base}/c/{campaign.slug}/start/?worker_id=x")
        expect(worker).to_have_url(re.compile(r"/hit/[^/]+/$"))
        instructions = worker.locator("#instructions")
        expect(instructions).to_be_visible()
        expect(worker.locator("#progress-text")).to_have_text("1 / 100")
        expect(instructions.locator("h2")).to_have_text("How to rate")
        expect(instructions.locator("strong")).to_have_text("reference translation")
        expect(instructions.locator("li")).to_have_count(2)
        expect(instructions.locator("em")).to_have_text("Submit")
        assert "##" not in instructions.inner_text() and "**" not in instructions.inner_text()
        expect(worker.locator("#screen")).to_be_hidden()
        expect(worker.locator("#vas-track")).to_be_hidden()
        worker.get_by_role("button", name="Begin").click()
        expect(instructions).to_be_hidden()
        expect(worker.locator("#screen")).to_be_visible()
        expect(worker.locator("#vas-track")).to_be_visible()
        expect(worker.locator("#statement")).to_have_text(STATEMENT)
        expect(worker.locator("#submit")).to_be_disabled()
        assert worker.text_content("#context-text") in {r["reference"] for r in records}
        assert worker_errors == []

        # Pause from the campaign's page: the crowd link now refuses, new and known workers alike.
        expect(page.locator("#content")).to_contain_text("Status: Active")
        page.get_by_role("button", name="Pause").click()
        expect(page.locator("#content")).to_contain_text("Status: Paused")
        assert "News de-en 2024, adequacy is now paused." in _status_message(page)
        campaign.refresh_from_db()
        assert campaign.status == Campaign.Status.PAUSED
        for worker_id in ("y", "x"):
            response = worker.goto(f"{base}/c/{campaign.slug}/start/?worker_id={worker_id}")
            assert response.status == 403
            expect(worker.locator("body")).to_contain_text("not accepting annotators")
            assert "/hit/" not in worker.url
    finally:
        crowd_context.close()
    assert page.js_errors == []


WMT_HEADER = "HITId WorkerId Input.src Input.trg Input.item hit sys_id rid type sid score time"


def _wmt_da_text(rng: random.Random) -> str:
    """12 workers on 4 systems: 9 careful (bad references ~30 lower), 3 random clickers."""
    quality = {"online-B": 74, "uedin-nmt": 68, "KIT": 61, "baseline": 48}
    lines, n = [WMT_HEADER], 0
    for w in range(12):
        careful = w < 9
        worker, hit = f"W{w:03d}", f"H{w % 4}"
        for sid in range(1, 21):
            for system, q in quality.items():
                score = round(min(100, max(0, q + rng.gauss(0, 10)))) if careful else rng.randint(0, 100)
                seconds = round(rng.uniform(9, 25) if careful else rng.uniform(1, 3), 1)
                rows = [("SYSTEM", score)]
                if sid % 4 == 0:
                    rows.append(("BAD_REF", max(0, score - 30 + round(rng.gauss(0, 5))) if careful
                                 else rng.randint(0, 100)))
                if sid % 5 == 0:
                    rows.append(("REPEAT", score if careful else rng.randint(0, 100)))
                for kind, value in rows:
                    n += 1
                    lines.append(f"{hit} {worker} de en {n % 100 + 1} {hit} {system} {n} {kind} {sid} {value} "
                                 f"{seconds}")
    return "\n".join(lines) + "\n"


def test_results_page_shows_the_figures(live_server, desktop, tmp_path):
    researcher = get_user_model().objects.create_user(USERNAME, password=PASSWORD, is_staff=True)
    path = tmp_path / "judgments.txt"
    path.write_text(_wmt_da_text(random.Random(5)), encoding="utf-8")
    with path.open("rb") as handle:
        campaign = import_judgments(handle, fmt="wmt-da", name="Imported news judgments", owner=researcher).campaign
    assert compute_results(campaign) is not None
    page = desktop
    page.goto(f"{live_server.url}/results/{campaign.slug}/")
    assert "/admin/login/" in page.url  # researchers only
    page.fill("#id_username", USERNAME)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page).to_have_url(f"{live_server.url}/results/{campaign.slug}/")
    expect(page.locator("h1")).to_have_text("Imported news judgments")
    charts = page.locator("svg.chart")
    expect(charts).to_have_count(7)  # progress ×2, worker scatter, rankings ×2, significance ×2
    for chart in charts.all():
        box = chart.bounding_box()
        assert box["width"] > 200 and box["height"] > 100
    expect(page.locator("#workers")).to_contain_text("12 workers")
    assert page.locator("#worker-table tbody tr").count() == 12
    ranking = page.locator("table.ranking").first.inner_text()
    assert all(system in ranking for system in ("online-B", "uedin-nmt", "KIT", "baseline"))
    assert page.locator("table.ranking").first.locator("tbody tr td.name").first.inner_text() == "online-B"
    page.screenshot(path=str(tmp_path / "results-page.png"), full_page=True)
    assert page.js_errors == []
