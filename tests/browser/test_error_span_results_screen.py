"""The error-span results page in a real browser: an MQM evaluation imported from Google's TSV layout (four
systems, three raters, errors of several categories and severities), its system table, the stacked error bars and
one document with every rater's marks; photographed for docs/ (`SCREENSHOT_DIR=docs` refreshes
docs/screenshots/results-mqm.png and results-mqm-document.png)."""
from __future__ import annotations

import random

import pytest
from django.contrib.auth import get_user_model

from annotation.services.judgment_import import import_judgments
from evaluation.analyses import compute_results
from evaluation.services.results_read import stored_rows

from .test_results_screens import DOCS, _login

pytestmark = [pytest.mark.browser, pytest.mark.urls("tests.test_results_pages")]

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment"
#: (system, errors per segment on average): the true order is the reverse of the error load.
SYSTEMS = {"Human-A": 0.3, "Online-W": 0.9, "NMT-base": 1.6, "Legacy-RBMT": 2.6}
CATEGORIES = [("Accuracy/Mistranslation", 3), ("Accuracy/Omission", 1), ("Fluency/Grammar", 2),
              ("Fluency/Punctuation", 2), ("Terminology", 1), ("Style", 1)]
WORDS = "the council agreed on a new plan for the harbour and its old warehouses along the river".split()


def mqm_file(rng: random.Random) -> list[str]:
    lines, seg = [HEADER], 0
    for doc in ("harbour-news", "council-report"):
        for doc_id in range(1, 7):
            seg += 1
            source = f"Quelle {doc} {doc_id} mit einigen Wörtern."
            words = [WORDS[(doc_id * 3 + k) % len(WORDS)] for k in range(9)]
            for system, load in SYSTEMS.items():
                target = " ".join(words) + f" ({system[:2]})."
                for rater in ("rater1", "rater2", "rater3"):
                    n = sum(rng.random() < load / 3 for _ in range(3))
                    picked = rng.sample(range(len(words)), n)
                    if not picked:
                        lines.append(f"{system}\t{doc}\t{doc_id}\t{seg}\t{rater}\t{source}\t{target}\tNo-error\t"
                                     "No-error\t")
                    for w in picked:
                        marked = " ".join(f"<v>{x}</v>" if k == w else x for k, x in enumerate(words))
                        category = rng.choices([c for c, _ in CATEGORIES], [wt for _, wt in CATEGORIES])[0]
                        severity = "Major" if rng.random() < 0.35 else "Minor"
                        lines.append(f"{system}\t{doc}\t{doc_id}\t{seg}\t{rater}\t{source}\t{marked} ({system[:2]}).\t"
                                     f"{category}\t{severity}\t")
    return lines


def test_mqm_results_page(live_server, browser):
    rng = random.Random(2021)
    user = get_user_model().objects.create_user("mqm-screens", password="pw", is_staff=True)
    campaign = import_judgments([line + "\n" for line in mqm_file(rng)], fmt="mqm-tsv",
                                name="MQM newstest-style, en→de (imported)", owner=user).campaign
    campaign.options = {**campaign.options, "min_items": 1}
    campaign.save(update_fields=["options"])
    compute_results(campaign)
    order = [r["system"] for r in stored_rows(campaign, "systems")]
    assert order == list(SYSTEMS)

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    _login(context, live_server, user)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    response = page.goto(f"{live_server.url}/results/{campaign.slug}/")
    assert response.status == 200
    assert page.locator("#system-table tbody tr:not(.cluster-break)").count() == len(SYSTEMS)
    assert page.locator("#errors svg.chart rect.bar").count() > len(SYSTEMS)
    page.screenshot(path=str(DOCS / "screenshots" / "results-mqm.png"), full_page=True)
    page.goto(f"{live_server.url}/results/{campaign.slug}/?document=harbour-news&system=Legacy-RBMT#document")
    judges = page.locator(".doc-judge")
    assert judges.count() == 6 * 3
    assert page.locator(".doc-judge mark").count() > 6
    page.locator("#document").screenshot(path=str(DOCS / "screenshots" / "results-mqm-document.png"))
    assert not errors
    context.close()
