"""Media through the exports (docs/api.md §2.1, §5.5, §6.4): an `esa-jsonl` file's `media` and `doc_media` are
kept and written back by the esa-jsonl export (a round trip gives the same file); a campaign imported from a bundle
writes its media into the esa-jsonl export, and the judgment export (CSV, JSON) lists the media each item showed."""
import csv
import io
import json

import pytest
from django.test import Client

from annotation.building.campaign_files import CampaignFileError
from annotation.protocols.error_spans.export import esa_jsonl_lines
from annotation.services.campaign_import import import_campaign
from annotation.services.export import as_csv, columns_for, judgment_rows
from annotation.services.judgment_import import import_judgments

from .conftest import post_answer, start
from .media_files import bundle, media_lines, png, wav

pytestmark = pytest.mark.django_db

IMAGE = {"kind": "image", "src": "media/sign.png", "alt": "A sign", "caption": "Figure 1"}
VIDEO = {"kind": "video", "src": "https://example.org/clip.mp4"}


def _esa_lines() -> list[str]:
    lines = []
    for seg in (1, 2):
        for system in ("A", "B"):
            record = {"system": system, "doc_id": "d1", "seg_id": seg, "rater": "r1", "score": 60 + seg,
                      "spans": [], "source": f"Quelle {seg}", "target": f"Target {seg} {system}",
                      "doc_media": [VIDEO]}
            if seg == 1:
                record["media"] = [IMAGE]
            lines.append(json.dumps(record))
    return lines


def _export(campaign) -> list[dict]:
    return [json.loads(line) for line in esa_jsonl_lines(campaign)]


def test_esa_jsonl_media_make_a_round_trip():
    first = import_judgments([line.encode() for line in _esa_lines()], fmt="esa-jsonl", name="ESA media").campaign
    exported = _export(first)
    assert [(r["seg_id"], r.get("media"), r["doc_media"]) for r in exported] == [
        (1, [IMAGE], [VIDEO]), (1, [IMAGE], [VIDEO]), (2, None, [VIDEO]), (2, None, [VIDEO])]
    again = import_judgments([json.dumps(r).encode() for r in exported], fmt="esa-jsonl", name="again").campaign
    assert _export(again) == exported


def test_esa_jsonl_media_are_checked():
    bad = [json.dumps({**json.loads(_esa_lines()[0]), "media": [{"kind": "hologram", "src": "x"}]})]
    with pytest.raises(CampaignFileError, match=r"line 1: 'media'\[0\]: 'kind' must be one of image, video, audio"):
        import_judgments([line.encode() for line in bad], fmt="esa-jsonl", name="bad")


@pytest.fixture
def media_root(settings, tmp_path):
    settings.STORAGES = {**settings.STORAGES, "media": {
        "BACKEND": "django.core.files.storage.FileSystemStorage", "OPTIONS": {"location": str(tmp_path / "media")}}}


def test_a_bundle_campaign_exports_its_media_with_the_judgments(media_root):
    data = bundle(media_lines(n_segments=4, docs=2, doc_media=[{"kind": "audio", "src": "media/voice.wav"}]),
                  {"media/sign.png": png(), "media/voice.wav": wav()})
    campaign = import_campaign(io.BytesIO(data), name="ESA bundle", protocol="esa", seed=2, hit_size=4,
                               options={"tutorial": 0}).campaign
    client = Client()
    token = start(client, campaign, "w1")
    state = client.get(f"/api/hit/{token}/").json()
    while not state["done"]:
        state = post_answer(client, token, {"item": state["item"]["id"], "score": 70, "spans": []}).json()
    rows = list(judgment_rows(campaign))
    assert "media" in columns_for(campaign)
    by_segment = {(r["doc_id"], r["seg_id"]): r["media"] for r in rows}
    assert by_segment[("doc-0", 1)] == [{"kind": "audio", "src": "media/voice.wav"},
                                        {"kind": "image", "src": "media/sign.png"}]
    assert by_segment[("doc-1", 1)] == []
    table = list(csv.DictReader(io.StringIO("".join(as_csv(iter(rows), columns_for(campaign))))))
    assert json.loads(next(r["media"] for r in table if r["doc_id"] == "doc-0" and r["seg_id"] == "1"))[1] == {
        "kind": "image", "src": "media/sign.png"}
    esa = {(r["doc_id"], r["seg_id"]): r for r in _export(campaign)}
    assert esa[("doc-0", 1)]["media"] == [IMAGE] and esa[("doc-0", 1)]["doc_media"] == [
        {"kind": "audio", "src": "media/voice.wav"}]
    assert "media" not in esa[("doc-1", 1)] and "doc_media" not in esa[("doc-1", 1)]


def test_a_campaign_without_media_exports_as_before(make_campaign):
    assert "media" not in columns_for(make_campaign())
