"""Pearmut's annotation log (docs/api.md §5.8) imported into ESA and MQM campaigns, its inclusive span ends made
half-open, exported as `pearmut-jsonl` and imported again to the same judgments; a malformed log refused with line
numbers, nothing stored."""
import io
import json

import pytest
from django.core.management import call_command

from annotation.building.campaign_files import CampaignFileError
from annotation.models import Campaign, Judgment
from annotation.services.judgment_import import import_judgments

pytestmark = pytest.mark.django_db

#: Pearmut's log lines: "schön" is [21, 25] inclusive in GPT-4's text; 😀 is one code point.
LOG = [
    {"user_id": "alice", "item_i": 0,
     "item": [{"item_id": "esa_item_1", "src": "The weather is beautiful today.",
               "tgt": {"GPT-4": "Das Wetter ist heute schön.", "Claude": "😀 Das Wetter ist heute wunderschön."}},
              {"src": "Hello.", "tgt": {"GPT-4": "Hallo.", "Claude": "Servus."}}],
     "annotation": [{"GPT-4": {"score": 85, "error_spans": [{"start_i": 21, "end_i": 25, "category": None,
                                                             "severity": "minor"}]},
                     "Claude": {"score": 92, "error_spans": [{"start_i": 0, "end_i": 0, "category": None,
                                                              "severity": "major"},
                                                             {"start_i": 35, "end_i": 34, "category": None,
                                                              "severity": "minor"}]}},
                    {"GPT-4": {"score": 100, "error_spans": []}, "Claude": {"score": 70, "error_spans": []}}],
     "comment": "", "actions": [{"time": 1705680000, "type": "focus"}], "time": 45},
    {"user_id": "bob", "item_i": 0,
     "item": [{"src": "The weather is beautiful today.",
               "tgt": {"GPT-4": "Das Wetter ist heute schön.", "Claude": "😀 Das Wetter ist heute wunderschön."}},
              {"src": "Hello.", "tgt": {"GPT-4": "Hallo.", "Claude": "Servus."}}],
     "annotation": [{"GPT-4": {"score": 93, "error_spans": []}}, None], "time": 40},
]


def lines(records) -> list[str]:
    return [json.dumps(r, ensure_ascii=False) + "\n" for r in records]


def judged(campaign) -> list[tuple]:
    return sorted(Judgment.objects.filter(campaign=campaign).values_list(
        "annotator__external_id", "item__output__system__name", "item__segment__seg_id", "item__output__text",
        "score", "spans"), key=lambda j: j[:3])


def test_a_pearmut_log_round_trips_through_an_esa_campaign(api):
    upload = io.BytesIO("".join(lines(LOG)).encode())
    upload.name = "annotation_demo_esa.jsonl"
    response = api.post("/api/campaigns/import-judgments/", {"file": upload, "format": "pearmut", "name": "Pearmut",
                                                             "pair": "en-de"}, format="multipart")
    assert response.status_code == 201, response.content
    campaign = Campaign.objects.get(slug=response.json()["campaign"])
    assert campaign.protocol == "esa" and response.json()["judgments"] == 5
    first = judged(campaign)
    gpt = next(j for j in first if j[:3] == ("alice", "GPT-4", 1))
    assert gpt[3][21:26] == "schön" and gpt[5] == [{"start": 21, "end": 26, "severity": "minor"}]
    claude = next(j for j in first if j[:3] == ("alice", "Claude", 1))
    assert claude[3][0] == "😀" and claude[5] == [{"start": 0, "end": 1, "severity": "major"},
                                                  {"start": 35, "end": 35, "severity": "minor"}]

    out = io.StringIO()
    call_command("campaign", "export", campaign.slug, "--format", "pearmut-jsonl", stdout=out)
    exported = [json.loads(line) for line in out.getvalue().splitlines()]
    alice = next(r for r in exported if r["user_id"] == "alice")
    assert alice["item_i"] == 0 and alice["annotation"][0]["GPT-4"]["error_spans"] == [
        {"start_i": 21, "end_i": 25, "severity": "minor", "category": None}]
    assert len(next(r for r in exported if r["user_id"] == "bob")["annotation"]) == 1
    again = import_judgments(out.getvalue().splitlines(keepends=True), fmt="pearmut", name="Again", pair="en-de")
    assert judged(again.campaign) == first


def test_a_pearmut_mqm_log_keeps_categories():
    record = {**LOG[1], "annotation": [{"GPT-4": {"score": 60, "error_spans": [
        {"start_i": 4, "end_i": 9, "severity": "major", "category": "Terminology"}]}}, None]}
    campaign = import_judgments(lines([record]), fmt="pearmut", name="MQM", protocol="mqm").campaign
    assert campaign.protocol == "mqm"
    assert judged(campaign)[0][5] == [{"start": 4, "end": 10, "severity": "major", "category": "Terminology"}]
    out = io.StringIO()
    call_command("campaign", "export", campaign.slug, "--format", "pearmut-jsonl", stdout=out)
    again = import_judgments(out.getvalue().splitlines(keepends=True), fmt="pearmut", name="Again", protocol="mqm")
    assert judged(again.campaign) == judged(campaign)


def test_a_malformed_pearmut_log_is_refused_by_line_and_stores_nothing():
    bad_span = {**LOG[1], "annotation": [{"GPT-4": {"score": 93, "error_spans": [
        {"start_i": 20, "end_i": 40, "severity": "minor"}]}}, None]}
    bad_score = {**LOG[1], "user_id": "carol", "annotation": [{"GPT-4": {"score": 930}}, None]}
    no_user = {k: v for k, v in LOG[1].items() if k != "user_id"}
    before = (Campaign.objects.count(), Judgment.objects.count())
    with pytest.raises(CampaignFileError) as refused:
        import_judgments([*lines([LOG[0], bad_span]), "{oops\n", *lines([bad_score, no_user])], fmt="pearmut",
                         name="Bad")
    reasons = dict(refused.value.errors)
    assert sorted(reasons) == [2, 3, 4, 5]
    assert reasons[2].startswith("segment 1, model 'GPT-4': span 0: [20, 41) is out of bounds")
    assert reasons[3].startswith("not valid JSON") and "'score'" in reasons[4]
    assert reasons[5] == "'user_id' is missing"
    with pytest.raises(CampaignFileError) as refused:
        import_judgments(lines(LOG), fmt="pearmut", name="Bad", protocol="da")
    assert "esa or mqm" in refused.value.errors[0][1]
    assert (Campaign.objects.count(), Judgment.objects.count()) == before


#: Pearmut's DA log (its annotation_demo_da shape): scores only.
DA_LOG = [{"user_id": "carol", "item_i": 0, "annotation": [{"Gemini": {"score": 85}, "Llama": {"score": 78}},
                                                            {"Gemini": {"score": 90}, "Llama": {"score": 70}}],
           "comment": "", "time": 30},
          {"user_id": "david", "item_i": "doc-2", "annotation": [None, {"Gemini": {"score": 55.5}}]}]


def test_a_pearmut_da_log_round_trips_through_a_da_campaign():
    campaign = import_judgments(lines(DA_LOG), fmt="pearmut-da", name="Pearmut DA").campaign
    assert campaign.protocol == "source-adequacy"
    first = sorted(Judgment.objects.filter(campaign=campaign).values_list(
        "annotator__external_id", "item__output__system__name", "item__payload", "score"), key=str)
    assert len(first) == 5 and ("david", "Gemini", {"item_i": "doc-2", "position": 2}, 55.5) in first
    out = io.StringIO()
    call_command("campaign", "export", campaign.slug, "--format", "pearmut-da-jsonl", stdout=out)
    again = import_judgments(out.getvalue().splitlines(keepends=True), fmt="pearmut-da", name="Again").campaign
    assert sorted(Judgment.objects.filter(campaign=again).values_list(
        "annotator__external_id", "item__output__system__name", "item__payload", "score"), key=str) == first
    with pytest.raises(CampaignFileError) as refused:
        import_judgments(lines([DA_LOG[0], LOG[0]]), fmt="pearmut-da", name="Bad")
    assert refused.value.errors[0][0] == 2 and "import the log with format pearmut" in refused.value.errors[0][1]
