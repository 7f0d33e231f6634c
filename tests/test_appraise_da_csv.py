"""Appraise's DA scores CSV (ExportSystemScoresToCSV; docs/api.md §5.11) imported directly into a Direct Assessment
campaign with its controls (CHK repeats, BAD degraded copies, REF references), exported as `appraise-da-csv` and
imported again to the same judgments; a malformed file is refused by line with nothing stored."""
import io

import pytest

from annotation.building.campaign_files import CampaignFileError
from annotation.models import Campaign, Judgment
from annotation.services.judgment_import import import_judgments

pytestmark = pytest.mark.django_db

#: As Appraise writes it: no header; the last file's lines carry --batch-info's batchNo,itemID.
CSV = """engcze0a1b,ONLINE-B,12,TGT,eng,ces,71,1700000000.1,1700000012.6
engcze0a1b,ONLINE-B,12,BAD,eng,ces,20,1700000013.0,1700000020.0
engcze0a1b,ONLINE-B,12,CHK,eng,ces,68,1700000021.0,1700000030.5
engcze0c2d,Human-A.0,12,REF,eng,ces,90,1700000100,1700000110
engcze0c2d,ONLINE-W+CUNI,13,TGT,eng,ces,55.5,1700000111,1700000119
"""


def judged(campaign) -> list[tuple]:
    return sorted(Judgment.objects.filter(campaign=campaign).values_list(
        "annotator__external_id", "item__output__system__name", "item__segment__seg_id", "item__item_type", "score",
        "seconds", "item__payload"), key=lambda j: (j[0], j[2], j[3]))


def test_appraise_da_csv_round_trips(api):
    upload = io.BytesIO(CSV.encode())
    upload.name = "scores.csv"
    response = api.post("/api/campaigns/import-judgments/", {"file": upload, "format": "appraise-da-csv",
                                                             "name": "Appraise DA"}, format="multipart")
    assert response.status_code == 201, response.content
    campaign = Campaign.objects.get(slug=response.json()["campaign"])
    assert (campaign.protocol, campaign.source_language, campaign.target_language) == ("source-adequacy", "eng",
                                                                                       "ces")
    first = judged(campaign)
    assert [(j[1], j[3], j[4]) for j in first] == [
        ("ONLINE-B", "bad_ref", 20.0), ("ONLINE-B", "repeat", 68.0), ("ONLINE-B", "system", 71.0),
        (None, "reference", 90.0), ("ONLINE-W+CUNI", "system", 55.5)]
    assert first[2][5] == pytest.approx(12.5) and first[3][6]["reference"] == "Human-A.0"
    response = api.get(f"/api/campaigns/{campaign.slug}/judgments/", {"format": "appraise-da-csv"})
    exported = b"".join(response.streaming_content).decode()
    assert sorted(exported.splitlines()) == sorted(CSV.splitlines())
    again = import_judgments(io.BytesIO(exported.encode()), fmt="appraise-da-csv", name="Again")
    assert judged(again.campaign) == first


def test_a_malformed_appraise_da_csv_is_refused_by_line_and_stores_nothing():
    lines = CSV.splitlines(keepends=True)[:2] + [
        "u1,sysA,3,TGT,eng,ces,171,1,2\n", "u1,sysA,3,XYZ,eng,ces,71,1,2\n", "u1,sysA,3,TGT,eng,ces,71,5,2\n",
        "u1,sysA,3,TGT,eng\n", ",sysA,3,TGT,eng,ces,71,1,2\n"]
    before = (Campaign.objects.count(), Judgment.objects.count())
    with pytest.raises(CampaignFileError) as refused:
        import_judgments(lines, fmt="appraise-da-csv", name="Bad")
    reasons = dict(refused.value.errors)
    assert sorted(reasons) == [3, 4, 5, 6, 7]
    assert "score" in reasons[3] and "itemType" in reasons[4] and "endTime" in reasons[5]
    assert reasons[6].startswith("expected 9 fields") and reasons[7] == "username is empty"
    assert (Campaign.objects.count(), Judgment.objects.count()) == before
