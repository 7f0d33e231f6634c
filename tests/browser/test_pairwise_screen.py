"""The pairwise ranking screen in a real browser (docs/methods.md §7, docs/api.md §8).

A crowd worker judges a whole document-level adequacy HIT with the keyboard only (A / T / B
and the arrow keys choose, Enter submits); the test checks at every item what the screen
shows against the item stored in the database (the source, A and B columns, one aligned row
per sentence, texts as text and never as HTML), the disabled Submit, the pressed choice,
the progress and the completion code, and then the judgments stored, spam items included.
A fluency campaign shows no source column. The last test takes the screenshots in docs/.
"""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from django.test import Client
from playwright.sync_api import Page, expect

from annotation.models import Assignment, HitItem, ItemType, Judgment
from annotation.services.campaign_import import import_campaign

from .screens import is_hit_api as _is_hit_api
from .screens import open_page as _page
from .screens import start_hit as _start

pytestmark = pytest.mark.browser

# Screenshots go to a temporary folder; `SCREENSHOT_DIR=docs` refreshes the ones in docs/.
DOCS = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="mteval-shots-"))
XSS = "<script>window.__xss=1</script>"
ACCENT = "rgb(31, 95, 191)"

# Made-up German news and two English versions: ("human", "mt"). Documents of 4 to 8 sentences.
NEWS = {
    "radwege": [
        ("Der Stadtrat hat am Dienstag den Bau von zwölf Kilometern neuer Radwege beschlossen.",
         "On Tuesday the city council approved the construction of twelve kilometres of new cycle lanes.",
         "The city council decided on Tuesday the building of twelve kilometers new bike paths."),
        ("Die ersten Abschnitte sollen noch vor dem Sommer entlang der Hauptstraße entstehen.",
         "The first sections are due to be built along the main road before the summer.",
         "The first sections should arise still before the summer along the main street."),
        ("Geschäftsleute befürchten, dass dadurch Parkplätze vor ihren Läden wegfallen.",
         "Shop owners fear that this will cost them parking spaces in front of their shops.",
         "Business people fear that thereby parking places in front of their shops fall away."),
        ("Die Verwaltung verspricht, die Lieferzonen zu erhalten.",
         "The administration has promised to keep the delivery zones.",
         "The administration promises to obtain the delivery zones."),
    ],
    "unwetter": [
        ("Heftige Regenfälle haben in der Nacht zum Sonntag mehrere Keller im Süden der Region überflutet.",
         "Heavy rain flooded several basements in the south of the region overnight into Sunday.",
         "Violent rainfalls have flooded several cellars in the south of the region in the night to Sunday."),
        ("Die Feuerwehr rückte nach eigenen Angaben mehr als zweihundert Mal aus.",
         "The fire brigade says it was called out more than two hundred times.",
         "The fire department moved out according to own statements more than two hundred times."),
        ("Verletzt wurde niemand.", "Nobody was injured.", "Injured was nobody."),
        ("Auf der Landstraße zwischen Adorf und Bergheim blockierte ein umgestürzter Baum stundenlang den Verkehr.",
         "On the country road between Adorf and Bergheim, a fallen tree blocked traffic for hours.",
         "On the country road between Adorf and Bergheim a fallen tree blocked for hours the traffic."),
        ("Der Wetterdienst warnt für Montag vor weiteren Gewittern.",
         "The weather service has warned of more thunderstorms on Monday.",
         "The weather service warns for Monday before further thunderstorms."),
    ],
    "museum": [
        ("Nach drei Jahren Sanierung öffnet das Stadtmuseum am Samstag wieder seine Türen.",
         "After three years of renovation, the city museum reopens its doors on Saturday.",
         "After three years of renovation the city museum opens again its doors on Saturday."),
        ("Die Arbeiten kosteten rund elf Millionen Euro, zwei Millionen mehr als geplant.",
         "The work cost around eleven million euros, two million more than planned.",
         "The works cost around eleven million euro, two millions more than planned."),
        ("Besucher können nun auch das Dachgeschoss betreten, das lange gesperrt war.",
         "Visitors can now also enter the attic floor, which was closed for a long time.",
         "Visitors can now also enter the roof storey, which was long locked."),
        ("Dort zeigt das Museum eine Ausstellung über die Geschichte der örtlichen Brauereien.",
         "There the museum is showing an exhibition on the history of the local breweries.",
         "There the museum shows an exhibition about the history of the local breweries."),
        ("In den ersten vier Wochen ist der Eintritt frei.",
         "Admission is free for the first four weeks.",
         "In the first four weeks the entrance is free."),
        ("Die Museumsleitung rechnet mit großem Andrang und bittet um Anmeldung im Internet.",
         "The museum's management expects large crowds and asks visitors to register online.",
         "The museum management reckons with big rush and asks for registration in the internet."),
    ],
    "portal": [
        ("Im Terminportal der Stadtverwaltung ist eine Sicherheitslücke entdeckt worden.",
         "A security flaw has been discovered in the city administration's appointment portal.",
         "In the appointment portal of the city administration a security gap has been discovered."),
        ("Ein Student hatte bemerkt, dass das Namensfeld eingegebenen Code ungeprüft ausführt.",
         "A student had noticed that the name field runs any code typed into it without checking it.",
         "A student had noticed that the name field executes entered code unchecked."),
        (f"Als Beispiel trug er {XSS} als Namen ein.",
         f"As an example, he entered {XSS} as his name.",
         f"As example he entered {XSS} as name."),
        ("Daten von Bürgern seien nicht abgeflossen, teilte die Stadt mit.",
         "The city said that no citizens' data had been leaked.",
         "Data of citizens had not flowed off, the city informed."),
        ("Das Portal war am Mittwoch für sechs Stunden nicht erreichbar.",
         "The portal was unavailable for six hours on Wednesday.",
         "The portal was on Wednesday for six hours not reachable."),
        ("Inzwischen ist der Fehler behoben.", "The fault has since been fixed.", "Meanwhile the error is fixed."),
        ("Der Student erhält als Dank einen Gutschein für das Hallenbad.",
         "As a thank-you, the student is receiving a voucher for the indoor swimming pool.",
         "The student receives as thanks a voucher for the indoor bath."),
    ],
    "streik": [
        ("Die Lokführergewerkschaft hat für Donnerstag einen ganztägigen Streik angekündigt.",
         "The train drivers' union has announced an all-day strike for Thursday.",
         "The locomotive driver union has announced for Thursday an all-day strike."),
        ("Betroffen sind vor allem Regionalzüge und die S-Bahn.",
         "Regional trains and the suburban rail network will be hit hardest.",
         "Affected are above all regional trains and the S-Bahn."),
        ("Die Bahn will einen Notfahrplan anbieten, kann aber nicht jede Verbindung garantieren.",
         "The rail company plans to run an emergency timetable but cannot guarantee every connection.",
         "The railway wants to offer an emergency timetable, but can not guarantee every connection."),
        ("Fahrgäste können ihre Tickets kostenlos umbuchen oder erstatten lassen.",
         "Passengers can rebook their tickets or get a refund free of charge.",
         "Passengers can rebook their tickets free of charge or let them refund."),
        ("Die Gewerkschaft fordert mehr Lohn und kürzere Schichten.",
         "The union is demanding higher pay and shorter shifts.",
         "The union demands more wage and shorter shifts."),
        ("Die Verhandlungen waren in der vergangenen Woche ohne Ergebnis abgebrochen worden.",
         "Talks broke down without agreement last week.",
         "The negotiations had been broken off without result in the past week."),
        ("Pendler sollen nach Möglichkeit von zu Hause arbeiten, rät die Handelskammer.",
         "The chamber of commerce advises commuters to work from home where possible.",
         "Commuters should work if possible from home, advises the trade chamber."),
        ("Ein neuer Verhandlungstermin steht noch nicht fest.",
         "No date has yet been set for new talks.",
         "A new negotiation date stands not yet firm."),
    ],
}


def _news_lines() -> list[str]:
    return [json.dumps({"doc_id": doc, "seg_id": n, "source": source, "systems": {"human": human, "mt": mt}})
            for doc, sentences in NEWS.items() for n, (source, human, mt) in enumerate(sentences, 1)]


def _campaign(name: str, protocol: str = "pairwise-adequacy", docs_per_hit: int = len(NEWS), seed: int = 3):
    return import_campaign(_news_lines(), name=name, protocol=protocol, seed=seed, source_language="de",
                           target_language="en",
                           options={"systems": ["mt", "human"], "unit": "document",
                                    "docs_per_hit": docs_per_hit}).campaign


def _pressed(page: Page) -> list[str]:
    return page.eval_on_selector_all("#pw-choices .choice[aria-pressed=true]", "bs => bs.map(b => b.dataset.choice)")


def _check_rows(page: Page, item: dict, stored: HitItem, with_source: bool) -> None:
    """One row per sentence, each with the source (adequacy), A and B cells, shown as stored and aligned."""
    payload = stored.payload
    assert item["A"] == payload["A"] and item["B"] == payload["B"]
    n = len(payload["A"])
    assert len(payload["B"]) == n and 4 <= n <= 8
    columns = ["pw-source", "pw-a", "pw-b"] if with_source else ["pw-a", "pw-b"]
    if with_source:
        assert item["source"] == payload["source"] and len(payload["source"]) == n
    else:
        assert "source" not in item
    rows = page.evaluate("""() => Array.from(document.querySelectorAll('#pw-rows > .pw-row'), row =>
        Array.from(row.children, cell => ({cls: cell.className, text: cell.textContent,
                                            top: cell.getBoundingClientRect().top,
                                            visible: cell.offsetParent !== null})))""")
    assert len(rows) == n
    for i, cells in enumerate(rows):
        assert [c["cls"] for c in cells] == columns, (i, cells)
        assert all(c["visible"] for c in cells)
        texts = {c["cls"]: c["text"] for c in cells}
        assert texts["pw-a"] == payload["A"][i] and texts["pw-b"] == payload["B"][i]
        if with_source:
            assert texts["pw-source"] == payload["source"][i]
        # side by side: the sentences of one row start on the same line
        assert max(c["top"] for c in cells) - min(c["top"] for c in cells) < 1, (i, cells)
    header = page.eval_on_selector_all(".pw-head > span", "s => s.filter(e => e.offsetParent).map(e => e.textContent)")
    assert header == (["Source", "A", "B"] if with_source else ["A", "B"])


# The keys pressed on item k (cycled) and the choice they must leave; the last key pressed wins.
KEYS = [
    (["a"], "A"), (["ArrowRight"], "B"), (["t"], "tie"), (["b", "ArrowLeft"], "A"),
    (["ArrowDown"], "tie"), (["b"], "B"), (["Shift+T", "Shift+B"], "B"), (["a", "ArrowDown"], "tie"),
]


def test_a_worker_judges_a_document_hit_with_the_keyboard(live_server, desktop):
    page = desktop
    campaign = _campaign("News de-en, pairwise <i>adequacy</i>")
    posts: list[str] = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)

    token, state = _start(page, live_server, campaign.slug, "pw-keyboard")
    hit_id = Assignment.objects.get(token=token).hit_id
    total = HitItem.objects.filter(hit_id=hit_id).count()
    assert total == len(NEWS) + 1  # five documents and one spam copy (5 per 55, at least one)
    progress, submit = page.locator("#progress-text"), page.locator("#submit")
    assert "<i>adequacy</i>" in page.inner_text(".campaign-name")
    assert page.text_content("#statement").startswith("Read the source text and the two translations.")

    expected: dict[int, str] = {}
    hostile = 0
    for k in range(1, total + 1):
        assert not state["done"] and state["position"] == k and state["total"] == total
        item = state["item"]
        assert set(item) == {"id", "protocol", "unit", "source", "A", "B"}  # never the type nor the system
        assert item["protocol"] == "pairwise-adequacy" and item["unit"] == "document"
        stored = HitItem.objects.get(pk=item["id"], hit_id=hit_id)
        expect(progress).to_have_text(f"{k} / {total}")
        _check_rows(page, item, stored, with_source=True)
        assert page.evaluate("document.getElementById('pw-rows').scrollTop") == 0
        assert page.evaluate("document.activeElement.id") == "pw-rows"  # the keys work at once

        # Nothing is chosen, Submit is disabled and Enter does nothing.
        expect(submit).to_be_disabled()
        assert _pressed(page) == []
        before = len(posts)
        page.keyboard.press("Enter")
        page.wait_for_timeout(100)
        assert len(posts) == before
        expect(progress).to_have_text(f"{k} / {total}")

        # The markup in the text is text: never an element, never run.
        if any(XSS in text for text in item["A"] + item["B"] + item["source"]):
            hostile += 1
            assert XSS in page.inner_text("#pw-rows")
            assert page.locator(".pw-row", has_text=XSS).count() == 1
        assert page.evaluate("document.querySelectorAll('#screen script, #screen i').length") == 0
        assert page.evaluate("typeof window.__xss") == "undefined"

        keys, choice = KEYS[(k - 1) % len(KEYS)]
        for key in keys:
            page.keyboard.press(key)
        expect(submit).to_be_enabled()
        assert _pressed(page) == [choice]
        chosen = page.locator(f"#pw-choices .choice[data-choice={choice}]")
        assert chosen.evaluate("b => getComputedStyle(b).borderColor") == ACCENT
        assert chosen.evaluate("b => getComputedStyle(b).fontWeight") == "700"
        for other in {"A", "tie", "B"} - {choice}:
            assert page.locator(f"#pw-choices .choice[data-choice={other}]").evaluate(
                "b => getComputedStyle(b).borderColor") != ACCENT
        expected[item["id"]] = choice

        with page.expect_response(_is_hit_api("POST")) as answer:
            page.keyboard.press("Enter")
            if k == 2:
                page.keyboard.press("Enter")  # a double press stores one answer and skips nothing
        assert answer.value.status == 201
        state = answer.value.json()

    assert state["done"] is True
    expect(page.locator("#done")).to_be_visible()
    expect(page.locator("#screen")).to_be_hidden()
    expect(progress).to_have_text(f"{total} / {total}")
    code = page.text_content("#completion-code").strip()
    assert code and code == state["completion_code"]
    assert hostile >= 1, "the document with the <script> sentence never came up"
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert len(posts) == total
    assert page.js_errors == []

    assignment = Assignment.objects.get(token=token)
    assert assignment.status == Assignment.Status.COMPLETED and assignment.completion_code == code
    judgments = list(Judgment.objects.filter(assignment=assignment).select_related("item"))
    assert len(judgments) == total
    assert {j.item_id: j.choice for j in judgments} == expected
    assert set(expected.values()) == {"A", "B", "tie"}
    spam = [j for j in judgments if j.item.item_type == ItemType.SPAM]
    assert len(spam) == 1
    for judgment in spam:
        assert judgment.item.payload["spam_side"] in ("A", "B")
        assert judgment.choice == expected[judgment.item_id]
        assert judgment.score is None and judgment.ranks is None


def test_fluency_shows_no_source(live_server, desktop):
    page = desktop
    campaign = _campaign("News de-en, pairwise fluency", protocol="pairwise-fluency", docs_per_hit=2)
    token, state = _start(page, live_server, campaign.slug, "pw-fluency")
    item = state["item"]
    stored = HitItem.objects.get(pk=item["id"])
    assert "source" not in stored.payload  # fluency items never carry the source
    expect(page.locator("#progress-text")).to_have_text(f"1 / {state['total']}")
    assert page.text_content("#statement") == "Read the two texts. Which one is better written, more fluent English?"
    _check_rows(page, item, stored, with_source=False)
    assert page.locator(".pw-source").count() == 0
    expect(page.locator(".pw-col-source")).to_be_hidden()
    columns = page.evaluate("getComputedStyle(document.querySelector('.pw-row')).gridTemplateColumns").split()
    assert len(columns) == 2
    shown = page.inner_text("#screen")
    assert not [german for sentences in NEWS.values() for german, _, _ in sentences if german in shown]
    page.keyboard.press("ArrowDown")
    with page.expect_response(_is_hit_api("POST")) as answer:
        page.keyboard.press("Enter")
    assert answer.value.status == 201
    expect(page.locator("#progress-text")).to_have_text(f"2 / {state['total']}")
    assert Judgment.objects.get(assignment__token=token, item_id=item["id"]).choice == "tie"
    assert page.js_errors == []


def test_pairwise_screenshots_desktop_and_phone(live_server, browser):
    campaign = _campaign("WMT news de-en, pairwise adequacy", seed=11)
    client = Client()
    response = client.get(f"/c/{campaign.slug}/start/", {"worker_id": "pw-screenshot"})
    assert response.status_code == 302
    token = response["Location"].rstrip("/").split("/")[-1]
    hit_id = Assignment.objects.get(token=token).hit_id
    total = HitItem.objects.filter(hit_id=hit_id).count()
    # The museum story (six sentences), as a real item: answer every item before it through the API.
    position = HitItem.objects.get(hit_id=hit_id, item_type=ItemType.SYSTEM, payload__doc_id="museum").position
    for _ in range(position):
        item = client.get(f"/api/hit/{token}/").json()["item"]
        answered = client.post(f"/api/hit/{token}/", {"item": item["id"], "choice": "tie"},
                               content_type="application/json")
        assert answered.status_code == 201
    DOCS.mkdir(exist_ok=True)

    with _page(browser, 1200, 850) as page:
        page.goto(f"{live_server.url}/hit/{token}/")
        expect(page.locator("#progress-text")).to_have_text(f"{position + 1} / {total}")
        expect(page.locator(".pw-row")).to_have_count(6)
        # the whole document and the choices fit on the screen without scrolling
        assert page.evaluate("(r => r.scrollHeight <= r.clientHeight)(document.getElementById('pw-rows'))")
        assert page.locator("#submit").bounding_box()["y"] + 40 <= 850
        page.keyboard.press("b")
        expect(page.locator("#submit")).to_be_enabled()
        page.mouse.move(0, 0)
        page.screenshot(path=str(DOCS / "pairwise-screen.png"))
        assert page.js_errors == []

    with _page(browser, 390, 844, is_mobile=True, has_touch=True) as phone:
        phone.goto(f"{live_server.url}/hit/{token}/")
        expect(phone.locator("#progress-text")).to_have_text(f"{position + 1} / {total}")
        assert phone.evaluate("document.documentElement.scrollWidth") <= 390  # nothing sticks out sideways
        # stacked: in each row the source, then A, then B, one under the other
        tops = phone.evaluate("Array.from(document.querySelector('.pw-row').children,"
                              " c => c.getBoundingClientRect().top)")
        assert len(tops) == 3 and tops[0] < tops[1] < tops[2]
        expect(phone.locator("#submit")).to_be_disabled()
        phone.tap("#pw-choices .choice[data-choice=B]")
        expect(phone.locator("#submit")).to_be_enabled()
        assert _pressed(phone) == ["B"]
        # one page scroll, no box scrolling inside it; the picture shows the end of the document and the choices
        assert phone.evaluate("(r => r.scrollHeight <= r.clientHeight)(document.getElementById('pw-rows'))")
        phone.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        assert phone.evaluate("window.scrollY") > 0
        phone.wait_for_timeout(400)  # let the tap highlight fade, for the same picture every time
        phone.screenshot(path=str(DOCS / "pairwise-screen-phone.png"))
        with phone.expect_response(_is_hit_api("POST")) as answer:
            phone.tap("#submit")
        assert answer.value.status == 201
        expect(phone.locator("#progress-text")).to_have_text(f"{position + 2} / {total}")
        expect(phone.locator("#submit")).to_be_disabled()
        assert phone.evaluate("window.scrollY") == 0  # the next document starts at its top
        assert phone.js_errors == []
    assert Judgment.objects.get(assignment__token=token, item__position=position).choice == "B"
