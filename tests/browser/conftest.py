"""Headless Chromium for the browser tests: Debian's binary, driven by Playwright's sync API.

Playwright's own browser download does not work here, so the system Chromium is launched
explicitly. The sync API runs an event loop in the test thread, which makes Django refuse
ORM calls unless DJANGO_ALLOW_ASYNC_UNSAFE is set; the tests only touch the database
while the page is idle, so that is safe.
"""
import os
import shutil

import pytest

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture(scope="session")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    if not (os.path.exists(CHROMIUM) or shutil.which(CHROMIUM)):
        pytest.skip(f"no Chromium at {CHROMIUM}")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def desktop(browser):
    """A fresh desktop-sized page (no shared cookies or storage between tests)."""
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    context.set_default_timeout(10_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.js_errors = errors
    yield page
    context.close()
