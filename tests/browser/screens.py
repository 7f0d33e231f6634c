"""What the annotator-screen browser tests share: entering a HIT through the crowd link, a fresh page that
records script errors and Content-Security-Policy reports, and catching the answer a screen posts."""
from __future__ import annotations

import json
import re
from contextlib import contextmanager

from playwright.sync_api import Page


def is_hit_api(method: str):
    """A response predicate: the annotator API of a HIT, asked with `method`."""
    return lambda r: "/api/hit/" in r.url and r.request.method == method


def start_hit(page: Page, live_server, slug: str, worker: str) -> tuple[str, dict]:
    """Enter through the crowd link; returns the HIT token and the first state the page fetched."""
    with page.expect_response(is_hit_api("GET")) as first:
        page.goto(f"{live_server.url}/c/{slug}/start/?worker_id={worker}")
    match = re.search(r"/hit/([^/]+)/$", page.url)
    assert match, page.url
    assert first.value.status == 200
    return match.group(1), first.value.json()


@contextmanager
def open_page(browser, width: int, height: int, **options):
    """A page in a context of its own; `page.js_errors` collects script errors and `page.csp` the console's
    Content-Security-Policy reports."""
    context = browser.new_context(viewport={"width": width, "height": height}, **options)
    context.set_default_timeout(10_000)
    try:
        page = context.new_page()
        page.js_errors = []
        page.on("pageerror", lambda exc: page.js_errors.append(str(exc)))
        page.csp = []
        page.on("console", lambda m: page.csp.append(m.text) if "Content Security Policy" in m.text else None)
        yield page
    finally:
        context.close()


def post_of(page: Page, action) -> tuple[int, dict, dict]:
    """Run `action` and return the status, the body and the answer of the POST it makes to the HIT's API."""
    with page.expect_response(is_hit_api("POST")) as answer:
        action()
    return answer.value.status, json.loads(answer.value.request.post_data), answer.value.json()
