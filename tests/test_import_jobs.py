"""Large imports run as background jobs (issue "Hardening" 7): the API answers 202 with the job's status URL,
the status tells the stage, the lines read, then the result or the problems; the admin shows the job's page.
Small files keep their 201 (tests/test_import.py). Jobs run in a thread here (tasks in-process), and through
a real Celery worker and Redis in `test_a_large_import_through_a_real_worker`."""
import io
import json
import re
import time
import uuid
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.import_form import KeptUploads
from annotation.models import Campaign, HitItem, ImportJob, Judgment, Segment, SystemOutput
from annotation.services import import_jobs
from annotation.services.campaign_import import import_campaign

from .conftest import campaign_lines
from .test_e2e_celery import running_worker

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def upload_dir(settings, tmp_path):
    settings.IMPORT_UPLOAD_DIR = str(tmp_path / "imports")
    return Path(settings.IMPORT_UPLOAD_DIR)


@pytest.fixture
def small_threshold(settings):
    """Files above 1 kB go to a job (the default is 2 MB): the same code path with quick files."""
    settings.IMPORT_INLINE_MAX_BYTES = 1000


def upload(lines, name="campaign.jsonl"):
    handle = io.BytesIO(("\n".join(lines) + "\n").encode())
    handle.name = name
    return handle


def large_campaign_lines(megabytes: float, systems=("sys-A", "sys-B", "sys-C")) -> list[str]:
    """A valid campaign file of about `megabytes` MB (long segments)."""
    one = len(campaign_lines(1, systems=systems, length=60)[0]) + 1
    return campaign_lines(int(megabytes * 1024 * 1024 / one) + 1, systems=systems, docs=50, length=60)


def wait_for_job(client, url: str, timeout: float = 120.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        answer = client.get(url)
        assert answer.status_code == 200, answer.content
        body = answer.json()
        if body["status"] in ("done", "failed"):
            return body
        time.sleep(0.2)
    raise AssertionError(f"the job did not end: {body}")


def accepted(response) -> str:
    assert response.status_code == 202, response.content
    body = response.json()
    assert set(body) == {"job", "status_url"}
    assert body["status_url"] == f"/api/imports/{body['job']}/" == response["Location"]
    return body["status_url"]


def test_a_file_above_the_threshold_answers_202_and_its_status_tells_the_result(api, researcher, small_threshold,
                                                                                 upload_dir):
    response = api.post("/api/campaigns/", {"file": upload(campaign_lines(70)), "name": "Queued campaign",
                                            "protocol": "adequacy", "redundancy": 2, "seed": 3}, format="multipart")
    url = accepted(response)
    status = wait_for_job(api, url)
    assert status["status"] == "done" and status["errors"] == []
    assert status["result"] == {"campaign": "queued-campaign", "hits": 2}
    assert status["stage"] == "done" and status["lines_read"] == 70 and status["kind"] == "campaign"
    campaign = Campaign.objects.get(slug="queued-campaign")
    assert (campaign.redundancy, campaign.seed, campaign.owner) == (2, 3, researcher)
    assert campaign.status == Campaign.Status.ACTIVE  # the API publishes by default, as inline
    assert SystemOutput.objects.filter(campaign=campaign).count() == 140
    assert list(upload_dir.iterdir()) == []  # the saved upload is deleted once imported

    # The same file and options inline give the same HITs (the job re-parses the options as submitted).
    inline = import_campaign(campaign_lines(70), name="Inline", protocol="adequacy", redundancy=2, seed=3).campaign

    def layout(c):
        return list(HitItem.objects.filter(hit__campaign=c).order_by("hit__number", "position").values_list(
            "item_type", "segment__seg_id", "segment__document__doc_id", "output__system__name", "text"))
    assert layout(campaign) == layout(inline)


def test_a_file_up_to_the_threshold_is_imported_in_the_request(api, small_threshold, settings):
    response = api.post("/api/campaigns/", {"file": upload(campaign_lines(70)[:3]), "name": "Tiny",
                                            "protocol": "adequacy"}, format="multipart")
    assert response.status_code == 400 and "at least 70 system outputs" in response.json()["detail"]
    settings.IMPORT_INLINE_MAX_BYTES = import_jobs.DEFAULT_INLINE_MAX_BYTES
    response = api.post("/api/campaigns/", {"file": upload(campaign_lines(70)), "name": "Small",
                                            "protocol": "adequacy"}, format="multipart")
    assert response.status_code == 201 and response.json() == {"campaign": "small", "hits": 2}
    assert not ImportJob.objects.exists()


def test_a_large_file_through_the_api(api):
    """Above the default threshold (2 MB): a real large file goes through a job."""
    lines = large_campaign_lines(2.5)
    assert len("\n".join(lines)) > import_jobs.DEFAULT_INLINE_MAX_BYTES
    url = accepted(api.post("/api/campaigns/", {"file": upload(lines), "name": "Large",
                                                "protocol": "source-adequacy"}, format="multipart"))
    status = wait_for_job(api, url)
    assert status["status"] == "done", status
    assert status["lines_read"] == len(lines)
    campaign = Campaign.objects.get(slug=status["result"]["campaign"])
    assert Segment.objects.filter(campaign=campaign).count() == len(lines)
    assert status["result"]["hits"] == campaign.hits.count() > 1


def test_a_refused_file_fails_the_job_with_lines_and_reasons(api, small_threshold, upload_dir):
    lines = campaign_lines(70)
    lines[2] = "{oops"
    lines[9] = json.dumps({**json.loads(lines[9]), "seg_id": 2**31})
    status = wait_for_job(api, accepted(api.post("/api/campaigns/", {"file": upload(lines), "name": "Bad",
                                                                     "protocol": "adequacy"}, format="multipart")))
    assert status["status"] == "failed" and status["result"] is None
    assert [e["line"] for e in status["errors"]] == [3, 10]
    assert status["errors"][0]["reason"].startswith("invalid JSON")
    assert status["errors"][1]["reason"] == "'seg_id' must be an integer between -2147483648 and 2147483647"
    assert status["stage"] == "refused: 2 problems; nothing was imported"
    assert not Campaign.objects.exists() and not Segment.objects.exists()
    assert list(upload_dir.iterdir()) == []


def test_options_the_file_contradicts_fail_the_job_with_a_suggestion(api, small_threshold):
    status = wait_for_job(api, accepted(api.post("/api/campaigns/", {
        "file": upload(campaign_lines(35)), "name": "Too big", "protocol": "adequacy", "hit_size": 200},
        format="multipart")))
    assert status["status"] == "failed"
    assert status["errors"][0]["line"] == 0 and status["errors"][0]["reason"].startswith("hit_size:")
    assert status["suggestions"] == {"hit_size": 100}


def test_bad_options_are_refused_before_any_job(api, small_threshold):
    response = api.post("/api/campaigns/", {"file": upload(campaign_lines(70)), "name": "x", "protocol": "adequacy",
                                            "redundancy": 0}, format="multipart")
    assert response.status_code == 400 and "redundancy" in response.json()
    assert not ImportJob.objects.exists()


def test_judgments_above_the_threshold_are_imported_by_a_job(api, researcher, small_threshold):
    lines = ["rater,criterion,unit,item,choice,spam"] + [
        f"r{i % 7},adequacy,document,d{i},{'MT' if i % 3 else 'Human'}," for i in range(200)]
    response = api.post("/api/campaigns/import-judgments/", {
        "file": upload(lines, "j.csv"), "format": "pairwise-csv", "name": "External", "systems": "MT,Human",
        "study": "WMT external", "max_spam_miss_rate": "0.25"}, format="multipart")
    status = wait_for_job(api, accepted(response))
    assert status["status"] == "done" and status["kind"] == "judgments"
    assert status["result"] == {"campaign": "external", "judgments": 200}
    assert status["lines_read"] == 201
    campaign = Campaign.objects.get(slug="external")
    assert campaign.owner == researcher and campaign.study.name == "WMT external"
    assert Judgment.objects.filter(campaign=campaign).count() == 200
    assert campaign.options["max_spam_miss_rate"] == 0.25  # a statistics option reaches the job (defect 7)


def test_a_job_is_seen_by_its_researcher_only(api, small_threshold, client):
    url = accepted(api.post("/api/campaigns/", {"file": upload(campaign_lines(70)), "name": "Mine",
                                                "protocol": "adequacy"}, format="multipart"))
    wait_for_job(api, url)
    other = get_user_model().objects.create_user("other", password="pw", is_staff=True)
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=other).key}")
    assert stranger.get(url).status_code == 404
    assert client.get(url).status_code == 403  # not logged in
    assert api.get(f"/api/imports/{uuid.uuid4()}/").status_code == 404
    boss = get_user_model().objects.create_superuser("boss", password="pw")
    superuser = APIClient()
    superuser.force_authenticate(boss)
    assert superuser.get(url).json()["status"] == "done"


# Running once -------------------------------------------------------------------------------------------


def queued_job(user, lines, upload_dir, name="Once") -> ImportJob:
    path = upload_dir / f"{uuid.uuid4().hex}.upload"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return ImportJob.objects.create(kind="campaign", upload=str(path), created_by=user,
                                    arguments={"name": name, "protocol": "adequacy", "options": {"seed": "1"}})


def test_a_task_delivered_twice_imports_once(researcher, upload_dir):
    job = queued_job(researcher, campaign_lines(70), upload_dir)
    assert import_jobs.run(job.pk)["status"] == "done"
    assert import_jobs.run(job.pk) == {"job": str(job.pk), "status": "finished"}
    assert Campaign.objects.count() == 1


def test_a_job_running_elsewhere_is_left_alone(researcher, upload_dir):
    job = queued_job(researcher, campaign_lines(70), upload_dir)
    holder = import_jobs._Lease(job.pk)
    assert holder.acquire()  # another worker runs it now
    ImportJob.objects.filter(pk=job.pk).update(status="running")
    try:
        assert import_jobs.run(job.pk)["status"] == "busy"
    finally:
        holder.release()
    assert not Campaign.objects.exists()


def test_a_job_whose_worker_died_is_taken_over_by_the_redelivered_task(researcher, upload_dir):
    """Running, but nobody holds its lease: the worker died mid-import (its transaction died with it)."""
    job = queued_job(researcher, campaign_lines(70), upload_dir)
    ImportJob.objects.filter(pk=job.pk).update(status="running", stage="storing items: 20,000 of 100,000")
    assert import_jobs.run(job.pk)["status"] == "done"
    assert Campaign.objects.get().owner == researcher


def test_two_workers_at_once_import_once(researcher, upload_dir):
    import threading

    job = queued_job(researcher, campaign_lines(140), upload_dir)
    outcomes = []

    def work():
        try:
            outcomes.append(import_jobs.run(job.pk)["status"])
        finally:
            from django.db import connection
            connection.close()

    threads = [threading.Thread(target=work) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count("done") == 1 and Campaign.objects.count() == 1


def test_progress_is_recorded_while_the_import_runs(researcher, upload_dir, monkeypatch):
    """The stage and lines read reach the job's row during the import (a thread writes them)."""
    seen = []
    job = queued_job(researcher, campaign_lines(700, systems=("A", "B")), upload_dir)
    original = import_jobs.JobProgress.__call__

    def spy(self, stage, lines_read=None):
        original(self, stage, lines_read)
        if stage.startswith("storing items"):
            time.sleep(import_jobs.BEAT_SECONDS * 1.5)  # let the thread write while the transaction is open
            seen.append(ImportJob.objects.using("default").values_list("stage", "lines_read").get(pk=job.pk))

    monkeypatch.setattr(import_jobs.JobProgress, "__call__", spy)
    import_jobs.run(job.pk)
    job.refresh_from_db()
    assert (job.status, job.stage, job.lines_read) == ("done", "done", 700)
    assert job.finished_at is not None
    from django.db import connection
    if connection.vendor == "postgresql":  # SQLite: written between transactions only
        assert seen and seen[0][0].startswith("storing items") and seen[0][1] == 700


# The admin ---------------------------------------------------------------------------------------------


IMPORT_URL = "/admin/annotation/campaign/import/"


def test_a_large_file_through_the_admin_shows_the_jobs_page(admin_client, admin_user):
    lines = large_campaign_lines(2.2)
    response = admin_client.post(IMPORT_URL, {"file": upload(lines), "name": "Admin large",
                                              "protocol": "adequacy", "redundancy": "2"})
    assert response.status_code == 302, response.content.decode()[:2000]
    job = ImportJob.objects.get()
    assert response["Location"] == f"{IMPORT_URL}{job.pk}/"
    assert job.arguments["file"]["name"] == "campaign.jsonl" and job.created_by == admin_user
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        page = admin_client.get(response["Location"]).content.decode()
        if 'http-equiv="refresh"' not in page:
            break
        assert 'content="2"' in page and "<script" not in page.split("</head>")[0].split("<meta http-equiv")[-1]
        time.sleep(0.3)
    assert "Imported Admin large:" in page and "It is a draft: check the preview, then publish it." in page
    campaign = Campaign.objects.get(name="Admin large")
    assert f'href="/admin/annotation/campaign/{campaign.pk}/preview/"' in page
    assert (campaign.status, campaign.redundancy, campaign.owner) == ("draft", 2, admin_user)
    assert Segment.objects.filter(campaign=campaign).count() == len(lines)


def test_the_jobs_page_refreshes_while_it_runs_and_lists_the_problems_after(admin_client, admin_user, settings):
    settings.IMPORT_INLINE_MAX_BYTES = 1000
    lines = campaign_lines(70)
    lines[4] = json.dumps({"doc_id": "d", "seg_id": 1, "source": "\x00", "reference": "r",
                           "systems": {"sys-A": "a", "sys-B": "b"}})
    # A job still waiting: the page refreshes itself.
    waiting = ImportJob.objects.create(kind="campaign", upload="/nonexistent", created_by=admin_user,
                                       arguments={"name": "Waiting"}, stage="waiting for a worker")
    page = admin_client.get(f"{IMPORT_URL}{waiting.pk}/").content.decode()
    assert '<meta http-equiv="refresh" content="2">' in page and "waiting for a worker" in page
    # A refused file: its problems by line.
    response = admin_client.post(IMPORT_URL, {"file": upload(lines), "name": "Refused", "protocol": "adequacy"})
    job = ImportJob.objects.get(arguments__name="Refused")
    while ImportJob.objects.get(pk=job.pk).status in ("queued", "running"):
        time.sleep(0.2)
    page = admin_client.get(response["Location"]).content.decode()
    assert 'http-equiv="refresh"' not in page
    assert "The file was refused; nothing was imported." in page
    assert "line 5: &#x27;source&#x27; must not contain NUL characters or lone surrogates" in page
    assert not Campaign.objects.filter(name="Refused").exists()


def test_a_large_file_kept_from_a_refused_submit_goes_to_a_job(admin_client, settings):
    settings.IMPORT_INLINE_MAX_BYTES = 1000
    page = admin_client.post(IMPORT_URL, {"file": upload(campaign_lines(70)), "name": "Kept", "protocol": "adequacy",
                                          "redundancy": "0"})
    assert page.status_code == 200 and not ImportJob.objects.exists()
    token = re.search(r'name="kept_file" value="([^"]+)"', page.content.decode()).group(1)
    response = admin_client.post(IMPORT_URL, {"kept_file": token, "name": "Kept", "protocol": "adequacy",
                                              "redundancy": "2"})
    assert response.status_code == 302
    job = ImportJob.objects.get()
    assert job.arguments["file"] == {"name": "campaign.jsonl", "size": len(upload(campaign_lines(70)).getvalue())}
    while ImportJob.objects.get(pk=job.pk).status in ("queued", "running"):
        time.sleep(0.2)
    assert Campaign.objects.get(name="Kept").redundancy == 2
    assert not (KeptUploads.folder() / token).exists()


def test_a_staff_researcher_sees_only_their_own_jobs_page(client, admin_user):
    staff = get_user_model().objects.create_user("staff", password="pw", is_staff=True)
    theirs = ImportJob.objects.create(kind="campaign", upload="/nonexistent", created_by=admin_user,
                                      arguments={"name": "Theirs"})
    client.force_login(staff)
    assert client.get(f"{IMPORT_URL}{theirs.pk}/").status_code == 404


# Through a real worker -----------------------------------------------------------------------------------


@pytest.fixture
def import_worker(transactional_db, tmp_path):
    """A real Celery worker (as tests/test_e2e_celery.py starts one); yields the path of its log."""
    log_path = tmp_path / "celery-worker.log"
    with running_worker("import", log_path, purpose="the background import test"):
        yield log_path


@pytest.mark.celery
def test_a_large_import_through_a_real_worker(import_worker, api, researcher, settings, tmp_path):
    # The worker reads uploads where this process saves them: the default folder, shared by both.
    settings.IMPORT_UPLOAD_DIR = None
    settings.IMPORT_INLINE_MAX_BYTES = 1000
    lines = campaign_lines(140)
    url = accepted(api.post("/api/campaigns/", {"file": upload(lines), "name": "Through the broker",
                                                "protocol": "fluency", "seed": 2}, format="multipart"))
    status = wait_for_job(api, url)
    assert status["status"] == "done", status
    assert status["result"] == {"campaign": "through-the-broker", "hits": 4} and status["lines_read"] == 140
    assert Campaign.objects.get(slug="through-the-broker").owner == researcher
    log = import_worker.read_text()
    assert "annotation.run_import" in log and "succeeded" in log  # the worker imported, not this process

    bad = list(lines)
    bad[6] = '{"doc_id": "d", "seg_id": ' + "9" * 5000 + "}"
    status = wait_for_job(api, accepted(api.post("/api/campaigns/", {"file": upload(bad), "name": "Bad",
                                                                     "protocol": "fluency"}, format="multipart")))
    assert status["status"] == "failed"
    assert status["errors"] == [{"line": 7, "reason": "invalid JSON (a number with too many digits)"}]
