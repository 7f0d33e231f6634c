"""Campaign bundles (docs/api.md §2.1): a good bundle stores its media and the screens' payload names them; every
refused bundle (path traversal, symbolic link, zip bomb, wrong content type, oversized file or bundle, missing
file, malformed zip) names the file and stores nothing: no campaign, no media row, no file."""
import io
import zipfile

import pytest
from django.core.files.storage import storages
from django.test import Client

from annotation.building.campaign_files import CampaignFileError
from annotation.media_models import MediaItem
from annotation.models import Campaign, Document, Segment
from annotation.services.campaign_import import import_campaign

from .conftest import post_answer, start
from .media_files import bundle, good_bundle, media_lines, mp4, png, wav, webm

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    settings.STORAGES = {**settings.STORAGES, "media": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path / "media")}}}
    return tmp_path / "media"


def _import(data: bytes, **options):
    return import_campaign(io.BytesIO(data), name="Media", protocol="adequacy", seed=1, hit_size=20,
                           options=options).campaign


def _stored_files(root) -> list:
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def test_a_good_bundle_stores_its_media_once_and_the_payload_serves_them(media_root):
    campaign = _import(good_bundle())
    items = MediaItem.objects.filter(campaign=campaign).order_by("kind")
    assert [(m.kind, m.src, m.content_type) for m in items] == [
        ("audio", "media/voice.wav", "audio/wav"), ("image", "media/sign.png", "image/png")]
    assert len(_stored_files(media_root)) == 2 and all(storages["media"].exists(m.name) for m in items)
    first = Segment.objects.get(campaign=campaign, document__position=0, seg_id=1)
    assert [(e["kind"], e["src"], e["alt"], e["caption"]) for e in first.media] == [
        ("image", "media/sign.png", "A sign", "Figure 1")]
    document = Document.objects.get(campaign=campaign, position=0)
    assert document.media["document"][0]["src"] == "media/voice.wav" and document.media["seg_ids"][0] == 1
    # the same file again in a second campaign is stored once
    _import(good_bundle())
    assert len(_stored_files(media_root)) == 2
    client = Client()
    token = start(client, campaign, "w1")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    while not item.get("media"):  # every item of document 0 shows its audio
        item = post_answer(client, token, {"item": item["id"], "score": 50}).json()["item"]
    media = item["media"]
    assert media[0]["kind"] == "audio" and media[0]["url"].startswith(f"/api/hit/{token}/media/")
    served = client.get(media[0]["url"])
    assert served.status_code == 200 and b"".join(served.streaming_content) == wav()


@pytest.mark.parametrize("name, files, lines, symlinks, expected", [
    ("traversal in the zip", {"../evil.png": png()}, None, (), "'../evil.png' goes up a folder"),
    ("absolute path in the zip", {"/etc/evil.png": png()}, None, (), "'/etc/evil.png' is absolute"),
    ("symbolic link", {}, None, ("media/sign.png",), "'media/sign.png' is a symbolic link"),
    ("traversal in src", {}, media_lines(media=[{"kind": "image", "src": "../../etc/passwd"}]), (),
     "'../../etc/passwd' goes up a folder"),
    ("wrong content type", {"media/sign.png": b"<html>not an image</html>"}, None, (),
     "'media/sign.png' is not an image (PNG, JPEG, GIF, WebP)"),
    ("kind and content disagree", {"media/sign.png": wav()}, None, (), "'media/sign.png' is audio/wav by its content"),
    ("missing file", {}, None, (), "'media/sign.png': no such file in the bundle"),
    ("two campaign files", {"media/sign.png": png(), "other.jsonl": b"{}"}, None, (), "exactly one campaign file"),
])
def test_a_bad_bundle_is_refused_naming_the_file_and_nothing_is_stored(media_root, name, files, lines, symlinks,
                                                                       expected):
    data = bundle(lines or media_lines(), files, symlinks=symlinks)
    with pytest.raises(CampaignFileError) as refused:
        _import(data)
    assert expected in str(refused.value), (name, str(refused.value))
    assert not Campaign.objects.exists() and not MediaItem.objects.exists() and not _stored_files(media_root)


def test_a_zip_bomb_is_refused_by_its_ratio_and_by_its_real_size(media_root, settings):
    bomb = bundle(media_lines(), {"media/sign.png": png() + b"\x00" * 2_000_000}, compression=zipfile.ZIP_DEFLATED)
    with pytest.raises(CampaignFileError, match="'media/sign.png' unpacks .* times its packed size"):
        _import(bomb)
    # a header that understates the size: the bytes unpacked are counted, not the declared size
    settings.MEDIA_MAX_COMPRESSION_RATIO = 10**6
    honest = bundle(media_lines(), {"media/sign.png": png() + b"\x00" * 200_000}, compression=zipfile.ZIP_DEFLATED)
    forged = _forge_size(honest, "media/sign.png", 1000)
    with pytest.raises(CampaignFileError, match="'media/sign.png' cannot be unpacked \\(Bad CRC"):
        _import(forged)
    settings.MEDIA_MAX_BUNDLE_ENTRIES = 3
    many = bundle(media_lines(), {f"media/{k}.png": png() for k in range(4)})
    with pytest.raises(CampaignFileError, match="the zip holds 5 entries; at most 3"):
        _import(many)
    assert not Campaign.objects.exists() and not MediaItem.objects.exists() and not _stored_files(media_root)


def _forge_size(data: bytes, name: str, size: int) -> bytes:
    """The zip with `name`'s uncompressed size in both headers replaced by `size` (its CRC stays, so only the
    count of bytes gives it away)."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info = z.getinfo(name)
    real = info.file_size.to_bytes(4, "little")
    forged = bytearray(data)
    at = forged.find(name.encode()) - 30  # the local header
    assert forged[at + 22:at + 26] == real
    forged[at + 22:at + 26] = size.to_bytes(4, "little")
    central = forged.find(b"PK\x01\x02" + bytes(forged[forged.find(b"PK\x01\x02") + 4:][:0]))
    while central != -1:
        if forged[central + 46:central + 46 + len(name)] == name.encode():
            forged[central + 24:central + 28] = size.to_bytes(4, "little")
        central = forged.find(b"PK\x01\x02", central + 4)
    return bytes(forged)


def test_oversized_files_and_bundles_and_malformed_zips_are_refused(media_root, settings):
    settings.MEDIA_MAX_FILE_BYTES = 500
    with pytest.raises(CampaignFileError, match="'media/sign.png' is 2000 bytes unpacked; at most 500 a file"):
        _import(bundle(media_lines(), {"media/sign.png": png() + b"\x00" * (2000 - len(png()))}))
    settings.MEDIA_MAX_FILE_BYTES, settings.MEDIA_MAX_BUNDLE_BYTES = 10_000, 6_000
    with pytest.raises(CampaignFileError, match="more than 6000 bytes .*passed at 'media/b.wav'"):
        _import(bundle(media_lines(), {"media/sign.png": png(), "media/a.wav": wav(2500), "media/b.wav": wav(2500)}))
    with pytest.raises(CampaignFileError, match="not a readable zip file"):
        _import(b"PK\x03\x04" + b"\x00" * 100)
    assert not Campaign.objects.exists() and not MediaItem.objects.exists() and not _stored_files(media_root)


def test_video_and_audio_are_told_by_their_content(media_root):
    media = [{"kind": "video", "src": "v.mp4"}, {"kind": "video", "src": "v.webm"}, {"kind": "audio", "src": "a"}]
    campaign = _import(bundle(media_lines(media=media), {"v.mp4": mp4(), "v.webm": webm(), "a": wav()}))
    assert sorted(MediaItem.objects.filter(campaign=campaign).values_list("content_type", flat=True)) == [
        "audio/wav", "video/mp4", "video/webm"]


def test_a_media_line_without_a_bundle_is_refused_naming_the_segment():
    with pytest.raises(CampaignFileError, match="doc_id 'doc-0' seg_id 1: 'media/sign.png': media files come in a "
                                                ".zip bundle"):
        import_campaign([line.encode() for line in media_lines()], name="M", protocol="adequacy", hit_size=20)
    assert not Campaign.objects.exists()
