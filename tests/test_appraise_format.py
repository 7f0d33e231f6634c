"""Appraise's JSONL results (docs/api.md §5.9) imported directly into ESA and MQM campaigns: spans in UTF-16 code
units with inclusive ends become half-open code-point spans (astral characters before and inside them), the export
`appraise-jsonl` writes them back and re-imports to the same judgments; a malformed file is refused by line."""
import io
import json

import pytest
from django.core.management import call_command

from annotation.building.campaign_files import CampaignFileError
from annotation.models import Campaign, Judgment
from annotation.services.judgment_import import import_judgments

pytestmark = pytest.mark.django_db

TARGET = "Hi 😀 there 𝄞𝄞 end"  # 😀 and 𝄞 are two UTF-16 units each


def result(annotator="engdeu0a1b", system="ONLINE-B", item=3, spans=(), **more) -> dict:
    """A record as Appraise's ExportSystemScoresToJSONL writes it."""
    return {"annotator": annotator, "source_id": system, "source_text": "Hello there, clef clef end.",
            "target_id": system, "target_text": TARGET, "score": 71, "mqm_annotations": json.dumps(list(spans)),
            "item_id": item, "item_type": "TGT", "source_language": "eng", "target_language": "deu",
            "document_id": "doc7", "is_complete_document": False, "start_time": 1.0, "end_time": 9.5,
            "duration": 8.5, "batch_number": 2, "item_database_id": 99, "campaign_name": "wmt25",
            "task_type": "Document", **more}


def judged(campaign) -> list[tuple]:
    return sorted(Judgment.objects.filter(campaign=campaign).values_list(
        "annotator__external_id", "item__output__system__name", "item__segment__seg_id", "score", "spans"))


def test_appraise_utf16_inclusive_spans_round_trip():
    # "there" is UTF-16 [6, 10] inclusive (😀 counts two units) = code points [5, 10); "𝄞𝄞" is UTF-16 [12, 15].
    records = [result(spans=[{"start_i": 6, "end_i": 10, "severity": "minor"},
                             {"start_i": 12, "end_i": 15, "severity": "major"}]),
               result(annotator="engdeu0c2d", system="Claude", score=40,
                      spans=[{"start_i": 20, "end_i": 19, "severity": "major"}]),
               result(item_type="BAD", annotator="engdeu0c2d")]
    parsed = import_judgments([json.dumps(r, ensure_ascii=False) + "\n" for r in records], fmt="appraise",
                              name="Appraise", pair="en-de")
    assert parsed.warnings == ["a quality-control item (not TGT) left out on line 3"]
    first = judged(parsed.campaign)
    spans = dict(((j[0], j[1]), j[4]) for j in first)
    assert spans[("engdeu0a1b", "ONLINE-B")] == [{"start": 5, "end": 10, "severity": "minor"},
                                                 {"start": 11, "end": 13, "severity": "major"}]
    assert TARGET[5:10] == "there" and TARGET[11:13] == "𝄞𝄞"
    assert spans[("engdeu0c2d", "Claude")] == [{"start": len(TARGET), "end": len(TARGET), "severity": "major"}]

    out = io.StringIO()
    call_command("campaign", "export", parsed.campaign.slug, "--format", "appraise-jsonl", stdout=out)
    exported = [json.loads(line) for line in out.getvalue().splitlines()]
    mine = next(r for r in exported if r["annotator"] == "engdeu0a1b")
    assert json.loads(mine["mqm_annotations"]) == json.loads(records[0]["mqm_annotations"])
    again = import_judgments(out.getvalue().splitlines(keepends=True), fmt="appraise", name="Again", pair="en-de")
    assert judged(again.campaign) == first


def test_appraise_mqm_keeps_categories():
    record = result(spans=[{"start_i": 0, "end_i": 1, "severity": "major", "category": "Accuracy/Mistranslation"}])
    campaign = import_judgments([json.dumps(record) + "\n"], fmt="appraise", name="MQM", protocol="mqm").campaign
    assert campaign.protocol == "mqm"
    assert judged(campaign)[0][4] == [{"start": 0, "end": 2, "severity": "major",
                                       "category": "Accuracy/Mistranslation"}]


def test_a_malformed_appraise_file_is_refused_by_line_and_stores_nothing():
    lines = [json.dumps(result()) + "\n",
             json.dumps(result(item=4, spans=[{"start_i": 4, "end_i": 4, "severity": "minor"}])) + "\n",
             json.dumps(result(item=5, score=140)) + "\n",
             json.dumps({k: v for k, v in result(item=6).items() if k != "annotator"}) + "\n",
             json.dumps(result(item=7, mqm_annotations="[{")) + "\n"]
    before = (Campaign.objects.count(), Judgment.objects.count())
    with pytest.raises(CampaignFileError) as refused:
        import_judgments(lines, fmt="appraise", name="Bad")
    reasons = dict(refused.value.errors)
    assert sorted(reasons) == [2, 3, 4, 5]
    assert reasons[2] == "span 0: [4, 4] (UTF-16, inclusive) is out of the text's bounds or splits a character"
    assert "'score'" in reasons[3] and reasons[4] == "'annotator' is missing"
    assert reasons[5] == "'mqm_annotations' is not valid JSON"
    assert (Campaign.objects.count(), Judgment.objects.count()) == before
