"""The Content-Security-Policy (no inline scripts) breaks none of the pages: every page people use loads
with no CSP violation in the browser's console, no script error and no other console error (such as the 404 of
the /favicon.ico a browser asks for by itself, found in the Chromium walk)."""
import random

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from annotation.services.judgment_import import import_judgments
from evaluation.analyses import compute_results

from ..conftest import as_bytes, campaign_lines
from ..test_results_pages import da_lines

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_no_page_breaks_the_content_security_policy(live_server, browser):
    from annotation.services.campaign_import import import_campaign

    rating = import_campaign(as_bytes(campaign_lines()), name="CSP rating", protocol="adequacy", seed=3).campaign
    results = import_judgments(da_lines(careful=2, clickers=1, segments=8), fmt="wmt-da", name="CSP results").campaign
    compute_results(results)
    get_user_model().objects.create_superuser("csp-admin", password="pw")
    client = Client()
    client.login(username="csp-admin", password="pw")
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    context.add_cookies([{"name": "sessionid", "value": client.cookies["sessionid"].value, "url": live_server.url}])
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{page.url}: {m.text}")
            if m.type == "error" or "Content Security Policy" in m.text else None)
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    paths = [f"/c/{rating.slug}/start/?worker_id=csp-{random.randrange(10**6)}", f"/results/{results.slug}/",
             "/results/", "/results/compare/", "/docs/", "/docs/methods/", "/admin/",
             f"/admin/annotation/campaign/{rating.pk}/change/", "/admin/annotation/campaign/import/",
             f"/admin/evaluation/campaignstatistics/{results.pk}/change/"]
    for path in paths:
        response = page.goto(live_server.url + path)
        assert response.status == 200, path
        assert "script-src 'self'" in response.headers.get("content-security-policy", ""), path
        page.wait_for_load_state("networkidle")
    slider = page.goto(live_server.url + paths[0])
    assert slider.status == 200 and page.locator("main").count() == 1
    context.close()
    assert problems == []
