"""A media bundle imports alike through the admin form, `POST /api/campaigns/` (multipart) and
`manage.py import_campaign`; a bad bundle is refused by each, naming the file, with nothing stored (docs/api.md
§2.1)."""
import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.media_models import MediaItem
from annotation.models import Campaign

from .media_files import bundle, good_bundle, media_lines, png
from .test_import_front_ends import IMPORT_URL, FormFields

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.STORAGES = {**settings.STORAGES, "media": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path / "media")}}}


def _zip(data: bytes) -> io.BytesIO:
    handle = io.BytesIO(data)
    handle.name = "campaign.zip"
    return handle


def _media(campaign) -> list:
    return sorted(MediaItem.objects.filter(campaign=campaign).values_list("kind", "src", "content_type", "seg_id"),
                  key=str)


def test_a_bundle_imports_alike_through_the_admin_the_api_and_the_command(admin_client, api, tmp_path):
    page = admin_client.get(IMPORT_URL)
    form = FormFields()
    form.feed(page.content.decode())
    response = admin_client.post(IMPORT_URL, {**form.values, "name": "admin", "protocol": "adequacy",
                                              "hit_size": "20", "file": _zip(good_bundle())})
    assert response.status_code == 302, response.context["form"].errors if response.context else response
    response = api.post("/api/campaigns/", {"name": "api", "protocol": "adequacy", "hit_size": "20",
                                            "file": _zip(good_bundle())}, format="multipart")
    assert response.status_code == 201, response.content
    path = tmp_path / "campaign.zip"
    path.write_bytes(good_bundle())
    out = io.StringIO()
    call_command("import_campaign", str(path), "--name", "cli", "--protocol", "adequacy", "--hit-size", "20",
                 stdout=out)
    made = {name: Campaign.objects.get(name=name) for name in ("admin", "api", "cli")}
    assert json.loads(out.getvalue())["campaign"] == made["cli"].slug
    expected = [("audio", "media/voice.wav", "audio/wav", None), ("image", "media/sign.png", "image/png", 1)]
    assert all(_media(campaign) == expected for campaign in made.values()), {k: _media(c) for k, c in made.items()}


def test_a_bad_bundle_is_refused_by_the_api_and_the_command_naming_the_file(api, tmp_path):
    bad = bundle(media_lines(), {"media/sign.png": b"GIF8 not quite"})
    response = api.post("/api/campaigns/", {"name": "api", "protocol": "adequacy", "hit_size": "20",
                                            "file": _zip(bad)}, format="multipart")
    assert response.status_code == 400 and "'media/sign.png' is not an image" in response.content.decode()
    path = tmp_path / "bad.zip"
    path.write_bytes(bundle(media_lines(), {"media/sign.png": png(), "../up.png": png()}))
    with pytest.raises(CommandError, match="'../up.png' goes up a folder"):
        call_command("import_campaign", str(path), "--name", "cli", "--protocol", "adequacy", "--hit-size", "20")
    assert not Campaign.objects.exists() and not MediaItem.objects.exists()
