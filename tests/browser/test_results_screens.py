"""The results pages in a real browser: a Direct Assessment campaign and a pairwise campaign with
plausible data, checked for the figures and script errors, and photographed for docs/
(`SCREENSHOT_DIR=docs` refreshes docs/results-da.png and docs/results-pairwise.png)."""
from __future__ import annotations

import os
import random
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from annotation.models import Assignment, Judgment
from annotation.services.judgment_import import import_judgments
from evaluation.analyses import compute_results

pytestmark = [pytest.mark.browser, pytest.mark.urls("tests.test_results_pages")]

DOCS = Path(os.environ.get("SCREENSHOT_DIR") or tempfile.mkdtemp(prefix="mteval-shots-"))
WMT_HEADER = "HITId WorkerId Input.src Input.trg Input.item hit sys_id rid type sid score time"
SYSTEMS = {"ONLINE-B": 74, "UEDIN-NMT": 72, "NRC": 66, "KIT": 65, "CUNI-Transformer": 60, "PROMT-RBMT": 55,
           "UMD-baseline": 47, "TALP-UPC": 45}
# 003 Table 1 totals (MT preferred, tie, Human preferred) per condition.
PAPER = {("adequacy", "sentence"): (103, 19, 86), ("adequacy", "document"): (74, 22, 104),
         ("fluency", "sentence"): (66, 36, 106), ("fluency", "document"): (44, 57, 99)}


def _clamp(value: float) -> float:
    return round(min(100.0, max(0.0, value)), 1)


def _da_file(rng: random.Random) -> list[bytes]:
    """28 workers on 8 systems: most careful, a few half-hearted (small bad-reference drop), some clickers."""
    lines, n = [WMT_HEADER], 0
    workers = [(f"A{rng.randrange(10**11, 10**12):X}", kind) for kind in
               ["careful"] * 18 + ["sloppy"] * 4 + ["clicker"] * 6]
    for worker, kind in workers:
        speed = {"careful": rng.uniform(12, 34), "sloppy": rng.uniform(7, 16), "clicker": rng.uniform(1.5, 5)}[kind]
        drop = {"careful": rng.uniform(20, 40), "sloppy": rng.uniform(2, 9), "clicker": 0}[kind]
        bias = rng.gauss(0, 8)
        for h in range(2):
            hit = f"{worker}-{h}"
            for sid in range(1 + h * 20, 21 + h * 20):
                for system, quality in SYSTEMS.items():
                    if rng.random() < 0.5:
                        continue
                    score = _clamp(quality + bias + rng.gauss(0, 14)) if kind != "clicker" else _clamp(
                        rng.uniform(0, 100))
                    seconds = round(max(0.5, rng.gauss(speed, speed / 4)), 1)
                    rows = [("SYSTEM", score)]
                    if rng.random() < 0.18:
                        rows.append(("BAD_REF", _clamp(score - drop + rng.gauss(0, 8)) if kind != "clicker"
                                     else _clamp(rng.uniform(0, 100))))
                    if rng.random() < 0.12:
                        rows.append(("REPEAT", _clamp(score + rng.gauss(0, 6)) if kind != "clicker"
                                     else _clamp(rng.uniform(0, 100))))
                    for item_type, value in rows:
                        n += 1
                        lines.append("\t".join(map(str, [hit, worker, "de", "en", n % 100 + 1, hit, system, n,
                                                          item_type, sid, value, seconds])))
    return [(line + "\n").encode() for line in lines]


def _pairwise_file(rng: random.Random) -> list[bytes]:
    lines = ["rater,criterion,unit,item,choice,spam"]
    for (criterion, unit), (mt, tie, human) in PAPER.items():
        choices = ["MT"] * mt + ["tie"] * tie + ["Human"] * human
        rng.shuffle(choices)
        for i, choice in enumerate(choices):  # each item judged by two translators, for the agreement table
            lines.append(f"translator-{i % 4 + 1},{criterion},{unit},{unit}-{i // 2},{choice},")
        for i in range(16 if unit == "sentence" else 5):
            for r in range(1, 5):
                spam = rng.choice(["MT", "Human"])
                lines.append(f"translator-{r},{criterion},{unit},{unit}-spam-{i},{'Human' if spam == 'MT' else 'MT'},"
                             f"{spam}")
    # A fifth rater who fell for the spam items (003 §2.3 excluded one such rater).
    for i in range(40):
        spam = rng.choice(["MT", "Human"]) if i % 4 == 0 else ""
        lines.append(f"translator-5,fluency,document,document-x{i},{rng.choice(['MT', 'Human', 'tie'])},{spam}")
    return [(line + "\n").encode() for line in lines]


def _spread_over_time(campaign, rng: random.Random, hours: float = 40):
    """Imported judgments all carry the import time; give each HIT its own plausible working session."""
    start = timezone.now() - timedelta(hours=hours + 2)
    judgments = []
    for assignment in Assignment.objects.filter(campaign=campaign):
        begin = start + timedelta(hours=rng.uniform(0, hours))
        rows = list(Judgment.objects.filter(assignment=assignment).order_by("id"))
        moment = begin
        for judgment in rows:
            moment += timedelta(seconds=judgment.seconds or 10)
            judgment.created_at = moment
            judgments.append(judgment)
        assignment.completed_at = moment
        assignment.save(update_fields=["completed_at"])
    Judgment.objects.bulk_update(judgments, ["created_at"], batch_size=2000)


def _login(context, live_server, user):
    client = Client()
    client.force_login(user)
    cookie = client.cookies["sessionid"]
    context.add_cookies([{"name": "sessionid", "value": cookie.value, "url": live_server.url}])


def _desktop_page(browser, live_server, user):
    """A 1,280-wide page logged in as `user`, with the script errors it raises collected."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    _login(context, live_server, user)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return context, page, errors


def test_results_pages_screenshots(live_server, browser):
    rng = random.Random(2018)
    user = get_user_model().objects.create_user("screens", password="pw", is_staff=True)
    da = import_judgments(_da_file(rng), fmt="wmt-da", name="WMT-style newstest, German→English adequacy",
                          owner=user).campaign
    da.payment_per_hit = "1.00"
    da.save(update_fields=["payment_per_hit"])
    _spread_over_time(da, rng)
    compute_results(da)
    pairwise = import_judgments(_pairwise_file(rng), fmt="pairwise-csv", name="Human parity, zh→en (003 replication)",
                                systems=["MT", "Human"], owner=user).campaign
    pairwise.payment_per_hit = "45.00"
    pairwise.save(update_fields=["payment_per_hit"])
    _spread_over_time(pairwise, rng, hours=30)
    compute_results(pairwise)

    context, page, errors = _desktop_page(browser, live_server, user)
    for campaign, shot, figures in ((da, "results-da.png", 7), (pairwise, "results-pairwise.png", 4)):
        response = page.goto(f"{live_server.url}/results/{campaign.slug}/")
        assert response.status == 200
        assert page.locator("svg.chart").count() == figures
        assert page.locator("svg.chart").first.bounding_box()["width"] > 300
        # the row of CSV links wraps: the page is never wider than the window (it was 1,599 px at 1,280)
        assert page.evaluate("document.documentElement.scrollWidth") <= 1280
        page.screenshot(path=str(DOCS / shot), full_page=True)
    assert not errors
    context.close()


def _arena_file(rng: random.Random) -> list[bytes]:
    """1,200 arena battles among six models of known strength, a sixth of them ties."""
    import json
    import math

    strength = {"gpt-4o": 1.1, "claude-3.5-sonnet": 1.0, "gemini-1.5-pro": 0.7, "llama-3-70b": 0.2,
                "mixtral-8x22b": -0.2, "qwen-7b-chat": -0.9}
    models = list(strength)
    lines = []
    for k in range(1200):
        a, b = rng.sample(models, 2)
        if rng.random() < 1 / 6:
            winner = "tie (bothbad)" if rng.random() < 0.3 else "tie"
        else:
            winner = "model_a" if rng.random() < 1 / (1 + math.exp(strength[b] - strength[a])) else "model_b"
        lines.append(json.dumps({"model_a": a, "model_b": b, "winner": winner, "judge": f"arena_user_{k % 90}",
                                 "tstamp": 1.7e9 + 60 * k}) + "\n")
    return [line.encode() for line in lines]


def test_arena_results_show_the_bradley_terry_leaderboard(live_server, browser):
    """An imported arena campaign's page shows per-model strengths (docs/methods.md §8.8), not only side shares."""
    user = get_user_model().objects.create_user("arena", password="pw", is_staff=True)
    arena = import_judgments(_arena_file(random.Random(2024)), fmt="arena", name="Arena battles", owner=user).campaign
    compute_results(arena)
    context, page, errors = _desktop_page(browser, live_server, user)
    assert page.goto(f"{live_server.url}/results/{arena.slug}/").status == 200
    section = page.locator("#bradley_terry")
    assert section.locator("#bt-table tbody tr").count() == 6
    assert section.locator("#bt-table tbody tr").first.locator("td.name").inner_text() in ("gpt-4o",
                                                                                          "claude-3.5-sonnet")
    assert section.locator("#bt-matrix tbody tr").count() == 6 and "Davidson (1970)" in section.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= 1280
    assert page.locator("nav.toc a[href='#bradley_terry']").inner_text() == "Bradley–Terry leaderboard"
    section.screenshot(path=str(DOCS / "results-arena-bradley-terry.png"))
    assert not errors
    context.close()
