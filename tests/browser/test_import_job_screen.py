"""A large campaign file imported from the admin in a real browser: the job's page refreshes itself (a <meta>
refresh: the CSP allows no inline script) until the import ends, then shows the result and the preview."""
import time

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from annotation.models import Campaign, ImportJob
from annotation.services import import_jobs

from ..conftest import campaign_lines

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_jobs_page_follows_the_import_to_its_end(live_server, desktop, settings, tmp_path, monkeypatch):
    settings.IMPORT_INLINE_MAX_BYTES = 1000
    settings.IMPORT_UPLOAD_DIR = str(tmp_path / "imports")
    run = import_jobs.run

    def slow_run(job_id):
        time.sleep(3)  # the page must be seen while the job waits
        return run(job_id)

    monkeypatch.setattr(import_jobs, "run", slow_run)
    get_user_model().objects.create_superuser("importer", password="pw-importer")
    path = tmp_path / "news.jsonl"
    path.write_text("\n".join(campaign_lines(70)) + "\n")
    page = desktop
    csp: list[str] = []
    page.on("console", lambda m: csp.append(m.text) if "Content Security Policy" in m.text else None)
    loads: list[str] = []
    page.on("load", lambda: loads.append(page.url))
    page.goto(f"{live_server.url}/admin/")
    page.fill("#id_username", "importer")
    page.fill("#id_password", "pw-importer")
    page.click("input[type=submit]")
    page.goto(f"{live_server.url}/admin/annotation/campaign/import/")
    page.fill("#id_name", "Background news")
    page.select_option("#id_protocol", "adequacy")
    page.set_input_files("#id_file", str(path))
    page.click("#campaign-import input[type=submit]")

    job = ImportJob.objects.get()
    assert page.url.endswith(f"/admin/annotation/campaign/import/{job.pk}/")
    expect(page.locator("#job-status")).to_have_text("Queued")
    expect(page.locator("#job-result")).to_contain_text("Imported Background news: 2 HITs.", timeout=30_000)
    assert loads.count(page.url) >= 2  # reloaded by itself
    expect(page.locator("#job-status")).to_have_text("Done")
    expect(page.locator("#job-lines")).to_have_text("70")
    page.click("#job-preview")
    campaign = Campaign.objects.get(name="Background news")
    assert page.url.endswith(f"/admin/annotation/campaign/{campaign.pk}/preview/")
    assert csp == [] and page.js_errors == []
