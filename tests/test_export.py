"""The streamed judgment export, CSV and JSON, with the columns of docs/api.md §6.4."""
import csv
import io
import json

import pytest

from annotation.models import HitItem

from .conftest import post_answer, start

pytestmark = pytest.mark.django_db
COLUMNS = ["worker", "hit", "position", "item_type", "system", "doc_id", "seg_id", "score", "choice", "ranks", "z",
           "seconds", "created_at"]


@pytest.fixture
def judged(client, campaign):
    for worker, score in (("w1", 10.5), ("w2", 90)):
        token = start(client, campaign, worker)
        state = client.get(f"/api/hit/{token}/").json()
        for _ in range(3):
            state = post_answer(client, token, {"item": state["item"]["id"], "score": score}).json()
    return campaign


def streamed(response) -> str:
    assert response.status_code == 200 and response.streaming
    return b"".join(response.streaming_content).decode()


def test_csv_export(api, judged):
    response = api.get(f"/api/campaigns/{judged.slug}/judgments/", {"format": "csv"})
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(streamed(response))))
    assert len(rows) == 6 and list(rows[0]) == COLUMNS
    first = rows[0]
    item = HitItem.objects.select_related("output__system", "segment__document").get(hit__number=1, position=0)
    assert first["worker"] == "w1" and first["hit"] == "1" and first["position"] == "1"
    assert first["item_type"] == item.item_type and float(first["score"]) == 10.5
    assert first["doc_id"] == item.segment.document.doc_id and int(first["seg_id"]) == item.segment.seg_id
    assert first["system"] == (item.output.system.name if item.output else "")
    assert float(first["seconds"]) >= 0
    assert {r["worker"] for r in rows} == {"w1", "w2"}


def test_json_export_is_the_default_shape(api, judged):
    rows = json.loads(streamed(api.get(f"/api/campaigns/{judged.slug}/judgments/", {"format": "json"})))
    assert len(rows) == 6 and list(rows[0]) == COLUMNS
    assert [r["score"] for r in rows] == [10.5] * 3 + [90.0] * 3


def test_csv_is_the_default_and_other_formats_are_refused(api, judged):
    assert api.get(f"/api/campaigns/{judged.slug}/judgments/")["Content-Type"].startswith("text/csv")
    assert api.get(f"/api/campaigns/{judged.slug}/judgments/", {"format": "xml"}).status_code == 400


def test_campaign_list_and_detail_counts(api, judged):
    listing = api.get("/api/campaigns/").json()
    assert listing["count"] == 1
    detail = api.get(f"/api/campaigns/{judged.slug}/").json()
    assert detail["counts"] == {"hits_total": 1, "hits_assigned": 1, "hits_done": 0, "assignments_active": 2,
                                "assignments_done": 0, "places_done": 0, "places_total": 2, "judgments": 6}
    assert detail["protocol"] == "adequacy" and detail["results_computed_at"] is None
    assert detail["crowd_link"].endswith(f"/c/{judged.slug}/start/?worker_id=")
    assert listing["results"][0]["counts"] == detail["counts"]


def test_openapi_schema_is_served(api):
    response = api.get("/api/schema/")
    assert response.status_code == 200 and b"/api/campaigns/" in response.content
