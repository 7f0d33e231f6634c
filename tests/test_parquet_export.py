"""The judgment export as Parquet (docs/api.md §6.4): the same rows as the JSON export for every family's columns
(DA scores, pairwise choices, ranking ranks, error-span spans), read back through pyarrow; a command export needs a
file."""
import io
import json

import pyarrow.parquet as pq
import pytest
from django.core.management import CommandError, call_command

from annotation.services.judgment_import import import_judgments
from tests.test_appraise_format import result
from tests.test_arena_battles import BATTLES

pytestmark = pytest.mark.django_db


def exported(api, campaign, fmt):
    response = api.get(f"/api/campaigns/{campaign.slug}/judgments/", {"format": fmt})
    assert response.status_code == 200, response.content
    return response, b"".join(response.streaming_content)


@pytest.mark.parametrize("family", ["pairwise", "error-spans", "direct-assessment"])
def test_parquet_holds_the_rows_of_the_json_export(api, researcher, make_campaign, family):
    if family == "pairwise":
        campaign = import_judgments([json.dumps(b) + "\n" for b in BATTLES], fmt="arena", name="P",
                                    owner=researcher).campaign
    elif family == "error-spans":
        spans = [{"start_i": 6, "end_i": 10, "severity": "minor"}]
        campaign = import_judgments([json.dumps(result(spans=spans)) + "\n", json.dumps(result(item=4)) + "\n"],
                                    fmt="appraise", name="E", owner=researcher).campaign
    else:
        campaign = make_campaign(protocol="adequacy")
        from django.test import Client

        from tests.conftest import start
        client = Client()
        token = start(client, campaign, "w1")
        item = client.get(f"/api/hit/{token}/").json()["item"]
        assert client.post(f"/api/hit/{token}/", {"item": item["id"], "score": 64},
                           content_type="application/json").status_code == 201
    response, body = exported(api, campaign, "parquet")
    assert response["Content-Type"] == "application/vnd.apache.parquet"
    assert response["Content-Disposition"] == f'attachment; filename="{campaign.slug}-judgments.parquet"'
    table = pq.read_table(io.BytesIO(body))
    rows = json.loads(exported(api, campaign, "json")[1])
    assert table.num_rows == len(rows) >= 1
    assert str(table.schema.field("score").type) == "double" and str(table.schema.field("hit").type) == "int64"
    for got, want in zip(table.to_pylist(), rows, strict=True):
        assert set(got) == set(want)
        for key, value in want.items():
            expected = json.dumps(value, ensure_ascii=False) if isinstance(value, (list, dict)) else value
            if key not in ("hit", "position", "seg_id", "score", "z", "seconds") and expected is not None:
                expected = str(expected)
            assert got[key] == expected, key


def test_the_command_writes_parquet_to_a_file_only(api, researcher, tmp_path):
    campaign = import_judgments([json.dumps(b) + "\n" for b in BATTLES], fmt="arena", name="P",
                                owner=researcher).campaign
    with pytest.raises(CommandError, match="--output"):
        call_command("campaign", "export", campaign.slug, "--format", "parquet")
    path = tmp_path / "judgments.parquet"
    call_command("campaign", "export", campaign.slug, "--format", "parquet", "--output", str(path))
    assert pq.read_table(path).column("preferred").to_pylist() == [
        r["preferred"] for r in json.loads(exported(api, campaign, "json")[1])]
