"""Segment-level MQM scores (issue 25, defect 10): `GET /api/campaigns/<slug>/segments/`, the `segments` table as
CSV, and the document view's score, each the item score the system table is built from, against hand-computed
scores with Google's weights (Freitag et al. 2021: major 5, minor 1, minor Fluency/Punctuation 0.1)."""
import csv
import io

import pytest

from annotation.services.judgment_import import import_judgments
from evaluation.analyses import compute_results

pytestmark = pytest.mark.django_db

HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment"
ROWS = [
    "sysA\td1\t1\t101\tr1\tDas ist gut.\tThis <v>is</v> good.\tAccuracy/Mistranslation\tMajor\t",
    "sysA\td1\t1\t101\tr2\tDas ist gut.\tThis is good.\tNo-error\tNo-error\t",
    "sysA\td1\t2\t102\tr1\tJa.\t<v>Yes</v>.\tFluency/Punctuation\tMinor\t",
    "sysA\td1\t2\t102\tr1\tJa.\tYes<v>.</v>\tStyle/Awkward\tMinor\t",
    "sysB\td1\t1\t101\tr1\tDas ist gut.\tThat is good.\tNo-error\tNo-error\t",
    "sysB\td1\t2\t102\tr2\tJa.\t<v>Yes</v>.\tAccuracy/Omission\tMinor\t",
]
#: By hand, by (system, the segment's number in its document, the file's doc_id column): sysA 1: r1 −5, r2 0 → −2.5;
#: sysA 2: r1 −0.1 − 1 = −1.1; sysB 1: 0; sysB 2: −1.
EXPECTED = {("sysA", 1): -2.5, ("sysA", 2): -1.1, ("sysB", 1): 0.0, ("sysB", 2): -1.0}


@pytest.fixture
def campaign(researcher):
    lines = [(line + "\n").encode() for line in (HEADER, *ROWS)]
    campaign = import_judgments(lines, fmt="mqm-tsv", name="Segments", owner=researcher).campaign
    compute_results(campaign)
    return campaign


def test_the_segments_endpoint_gives_each_items_mqm_score(api, campaign):
    response = api.get(f"/api/campaigns/{campaign.slug}/segments/")
    assert response.status_code == 200, response.content
    rows = response.json()["results"]
    got = {(r["system"], r["seg_id"]): r["score"] for r in rows}
    assert got.keys() == EXPECTED.keys()
    for key, value in EXPECTED.items():
        assert got[key] == pytest.approx(value)
    assert {r["score_name"] for r in rows} == {"mqm"}
    # the system table is the mean of these item scores
    systems = {r["system"]: r["score"] for r in api.get(f"/api/campaigns/{campaign.slug}/systems/").json()["results"]}
    assert systems["sysA"] == pytest.approx((-2.5 - 1.1) / 2) and systems["sysB"] == pytest.approx(-0.5)


def test_the_segments_table_downloads_as_csv(api, campaign):
    response = api.get(f"/api/campaigns/{campaign.slug}/tables/segments/", {"format": "csv"})
    assert response.status_code == 200
    body = b"".join(response.streaming_content) if response.streaming else response.content
    rows = list(csv.DictReader(io.StringIO(body.decode("utf-8-sig"))))
    assert {(r["system"], int(r["seg_id"])): float(r["score"]) for r in rows} == pytest.approx(EXPECTED)


def test_the_document_view_shows_the_mqm_score(api, campaign):
    doc_id = campaign.documents.get().doc_id
    response = api.get(f"/api/campaigns/{campaign.slug}/document/", {"document": doc_id, "system": "sysA"})
    assert response.status_code == 200, response.content
    scores = {s["seg_id"]: s["score"] for s in response.json()["segments"]}
    assert scores == pytest.approx({1: -2.5, 2: -1.1})
