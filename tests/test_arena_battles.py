"""Arena battles (LMSYS's `clean_battle` shape, docs/api.md §5.7) imported into a pairwise campaign, exported as
`arena-jsonl` and imported again to the same judgments; a malformed file refused with line numbers, nothing
stored."""
import io
import json

import pytest
from django.core.management import call_command

from annotation.building.campaign_files import CampaignFileError
from annotation.models import Campaign, Judgment, System
from annotation.services.judgment_import import import_judgments

pytestmark = pytest.mark.django_db

#: Battles as LMSYS publishes them (a JSON array of records, more fields than the import reads).
BATTLES = [
    {"model_a": "gpt-4-0613", "model_b": "claude-2.1", "winner": "model_a", "judge": "arena_user_973",
     "turn": 1, "anony": True, "language": "English", "tstamp": 1700000000.123, "question_id": "q1",
     "conv_metadata": {"sum_user_tokens": 12}},
    {"model_a": "claude-2.1", "model_b": "mixtral-8x7b", "winner": "tie (bothbad)", "judge": "arena_user_12",
     "turn": 2, "anony": False, "language": "Deutsch", "tstamp": 1700000100, "question_id": "q2"},
    {"model_a": "mixtral-8x7b", "model_b": "gpt-4-0613", "winner": "tie", "judge": "arena_user_973",
     "tstamp": 1700000200.5},
    {"model_a": "mixtral-8x7b", "model_b": "gpt-4-0613", "winner": "model_b", "judge": "arena_user_12",
     "tstamp": 1700000300.0, "question_id": "q4"},
]


def battles(campaign) -> list[tuple]:
    """A campaign's battles as the judgments store them, by time: judge, models, choice, bothbad, time, extras."""
    stored = Judgment.objects.filter(campaign=campaign).values_list("annotator__external_id", "choice", "item__payload")
    return sorted(((w, p["model_a"], p["model_b"], c, p["bothbad"], p["tstamp"], p.get("question_id"),
                    p.get("language"), p.get("turn"), p.get("anony")) for w, c, p in stored), key=lambda b: b[5])


def export(slug: str) -> str:
    out = io.StringIO()
    call_command("campaign", "export", slug, "--format", "arena-jsonl", stdout=out)
    return out.getvalue()


def test_arena_battles_round_trip_through_the_api(api):
    upload = io.BytesIO(json.dumps(BATTLES, indent=2).encode())
    upload.name = "clean_battle.json"
    response = api.post("/api/campaigns/import-judgments/", {"file": upload, "format": "arena", "name": "Arena"},
                        format="multipart")
    assert response.status_code == 201, response.content
    campaign = Campaign.objects.get(slug=response.json()["campaign"])
    assert campaign.protocol == "pairwise-adequacy" and response.json()["judgments"] == 4
    assert sorted(System.objects.filter(campaign=campaign).values_list("name", flat=True)) == [
        "claude-2.1", "gpt-4-0613", "mixtral-8x7b"]
    first = battles(campaign)
    assert first[0] == ("arena_user_973", "gpt-4-0613", "claude-2.1", "A", False, 1700000000.123, "q1", "English",
                        1, True)
    assert first[1][3:5] == ("tie", True) and first[2][3:5] == ("tie", False) and first[3][3] == "B"

    exported = export(campaign.slug)
    records = [json.loads(line) for line in exported.splitlines()]
    records.sort(key=lambda r: r["tstamp"])
    assert [r["winner"] for r in records] == ["model_a", "tie (bothbad)", "tie", "model_b"]
    assert records[0] == {k: v for k, v in BATTLES[0].items() if k != "conv_metadata"}
    again = import_judgments(exported.splitlines(keepends=True), fmt="arena", name="Arena again")
    assert battles(again.campaign) == first
    response = api.get(f"/api/campaigns/{campaign.slug}/judgments/", {"format": "arena-jsonl"})
    assert response.status_code == 200
    assert b"".join(response.streaming_content).decode() == exported


def test_a_two_system_campaign_exports_as_battles(make_campaign):
    from tests.conftest import start

    campaign = make_campaign(protocol="pairwise-adequacy", systems=("sys-A", "sys-B"), n_segments=4,
                             options={"systems": ["sys-A", "sys-B"], "unit": "sentence"})
    from django.test import Client

    client = Client()
    token = start(client, campaign, "w1")
    for _ in range(3):
        item = client.get(f"/api/hit/{token}/").json()["item"]
        assert client.post(f"/api/hit/{token}/", {"item": item["id"], "choice": "A"},
                           content_type="application/json").status_code == 201
    records = [json.loads(line) for line in export(campaign.slug).splitlines()]
    lefts = [p["left"] for p in Judgment.objects.filter(campaign=campaign).exclude(item__item_type="spam")
             .order_by("pk").values_list("item__payload", flat=True)]
    assert len(records) == len(lefts) >= 1
    for record, left in zip(records, lefts, strict=True):
        assert record["winner"] == "model_a" and record["judge"] == "w1"
        assert (record["model_a"], record["model_b"]) == (("sys-A", "sys-B") if left == 0 else ("sys-B", "sys-A"))
    again = import_judgments(io.BytesIO("".join(json.dumps(r) + "\n" for r in records).encode()), fmt="arena",
                             name="Back")
    assert again.judgments == len(records)


def test_a_malformed_battle_file_is_refused_by_line_and_stores_nothing():
    lines = [json.dumps(BATTLES[0]) + "\n",
             json.dumps({**BATTLES[1], "winner": "both"}) + "\n",
             "\n",
             json.dumps({**BATTLES[2], "model_b": "mixtral-8x7b", "tstamp": "yesterday"}) + "\n",
             '{"model_a": "x",\n',
             json.dumps({k: v for k, v in BATTLES[3].items() if k != "judge"}) + "\n"]
    before = (Campaign.objects.count(), Judgment.objects.count(), System.objects.count())
    with pytest.raises(CampaignFileError) as refused:
        import_judgments(lines, fmt="arena", name="Bad")
    assert refused.value.errors == [
        (2, "winner must be model_a, model_b, tie or tie (bothbad), not 'both'"),
        (4, "model_a and model_b must differ, both are 'mixtral-8x7b'"),
        (4, "tstamp must be a number of seconds since 1970, not 'yesterday'"),
        (5, "not valid JSON: Expecting property name enclosed in double quotes (column 17)"),
        (6, "judge is missing")]
    # a JSON array names the line each bad element starts on
    text = json.dumps([BATTLES[0], {**BATTLES[1], "turn": "two"}], indent=1)
    with pytest.raises(CampaignFileError) as refused:
        import_judgments(io.BytesIO(text.encode()), fmt="arena", name="Bad")
    start_line = text.splitlines().index(" {", 2) + 1
    assert refused.value.errors == [(start_line, "turn must be an integer below 2^31, not 'two'")]
    with pytest.raises(CampaignFileError) as refused:
        import_judgments(["[\n", json.dumps(BATTLES[0]) + "\n", "{\n"], fmt="arena", name="Bad")
    assert refused.value.errors == [(3, "expected , or ] between the array's elements")]
    assert (Campaign.objects.count(), Judgment.objects.count(), System.objects.count()) == before


def test_the_csv_export_and_the_results_of_an_arena_campaign_name_the_models(api, researcher):
    campaign = import_judgments([json.dumps(b) + "\n" for b in BATTLES], fmt="arena", name="Arena",
                                owner=researcher).campaign
    response = api.get(f"/api/campaigns/{campaign.slug}/judgments/", {"format": "json"})
    assert response.status_code == 200, response.content
    rows = sorted(json.loads(b"".join(response.streaming_content)), key=lambda r: r["doc_id"])
    assert [(r["system_A"], r["system_B"], r["preferred"]) for r in rows][:2] == [
        ("mixtral-8x7b", "gpt-4-0613", "tie"), ("gpt-4-0613", "claude-2.1", "gpt-4-0613")]
    from evaluation.families.pairwise.storage import compute_pairwise

    results = compute_pairwise(campaign)
    assert results is not None
    totals = api.get(f"/api/campaigns/{campaign.slug}/pairwise/").json()
    assert totals["conditions"][0]["a"] == 1 and totals["conditions"][0]["b"] == 1, totals
