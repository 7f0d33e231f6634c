"""A media bundle above IMPORT_INLINE_MAX_BYTES is imported by a background job (docs/api.md §4) like any
campaign file: the job's status tells the result, the media are stored; a bad bundle fails the job naming the
file, with nothing stored."""
import io

import pytest

from annotation.models import Campaign, MediaItem

from .media_files import bundle, good_bundle, media_lines
from .test_import_jobs import accepted, wait_for_job

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def small_threshold(settings, tmp_path):
    settings.IMPORT_INLINE_MAX_BYTES = 1000
    settings.IMPORT_UPLOAD_DIR = str(tmp_path / "imports")
    settings.STORAGES = {**settings.STORAGES, "media": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path / "media")}}}


def _zip(data: bytes) -> io.BytesIO:
    handle = io.BytesIO(data)
    handle.name = "campaign.zip"
    return handle


def test_a_bundle_imported_by_a_job(api):
    data = good_bundle()
    assert len(data) > 1000
    url = accepted(api.post("/api/campaigns/", {"file": _zip(data), "name": "Job", "protocol": "adequacy",
                                                "hit_size": "20"}, format="multipart"))
    status = wait_for_job(api, url)
    assert status["status"] == "done", status
    campaign = Campaign.objects.get(slug=status["result"]["campaign"])
    assert sorted(MediaItem.objects.filter(campaign=campaign).values_list("src", flat=True)) == [
        "media/sign.png", "media/voice.wav"]
    url = accepted(api.post("/api/campaigns/", {"file": _zip(bundle(media_lines(), {})), "name": "Bad",
                                                "protocol": "adequacy", "hit_size": "20"}, format="multipart"))
    status = wait_for_job(api, url)
    assert status["status"] == "failed" and "'media/sign.png': no such file in the bundle" in str(status["errors"])
    assert not Campaign.objects.filter(name="Bad").exists() and MediaItem.objects.count() == 2
