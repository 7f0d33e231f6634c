"""Google Anthea's evaluation files (docs/api.md §5.10) into the MQM family: errors located by prefix and
selection (source-side ones too), deleted errors and the prior rater kept in the item's payload, unvisited
segments left out; `anthea-jsonl` writes them back and re-imports to the same judgments; a malformed file is
refused with its line and nothing is stored."""
import io
import json

import pytest
from django.core.management import call_command

from annotation.building.campaign_files import CampaignFileError
from annotation.building.spans import DEFAULT_MQM_TAXONOMY
from annotation.models import Campaign, Judgment
from annotation.services.export import EXPORT_FORMATS
from annotation.services.judgment_import import import_judgments

pytestmark = pytest.mark.django_db


def evaluation(rater="rater1", errors=None) -> dict:
    """An Anthea download (trimmed: template and timings left out), pretty-printed as Anthea saves it."""
    return {
        "raterId": rater, "projectName": "wmt-mqm", "templateName": "MQM", "template": {},
        "createdAt": 1700000000000, "savedAt": 1700000500000,
        "parameters": {"source_language": "en", "target_language": "de"},
        "parsedDocSys": [{"doc": "doc-1", "sys": "sysA",
                          "srcSegments": ["The cat sat.", "", "It purred 😀 loudly."],
                          "tgtSegments": ["Die Katze saß.", "", "Sie schnurrte 😀 laut."],
                          "annotations": ["", "", ""]}],
        "results": [
            {"visited": True, "prior_rater": "rater0", "hotw_list": [], "timestamp": 1700000100000, "errors": errors
             if errors is not None else [
                 {"location": "translation", "prefix": "Die ", "selected": "Katze", "type": "Accuracy",
                  "subtype": "Mistranslation", "severity": "major", "metadata": {}},
                 {"location": "source", "prefix": "The cat ", "selected": "sat", "type": "Source issue",
                  "subtype": None, "severity": "minor", "metadata": {}},
                 {"location": "translation", "prefix": "Die Katze ", "selected": "saß", "type": "Fluency",
                  "subtype": "Grammar", "severity": "minor", "marked_deleted": True, "metadata": {}}]},
            {"visited": True, "errors": [
                {"location": "translation", "prefix": "Sie schnurrte 😀 ", "selected": "laut", "type": "Style",
                 "subtype": "Awkward", "severity": "Minor", "metadata": {}}]}],
    }


def judged(campaign) -> list[tuple]:
    return sorted(Judgment.objects.filter(campaign=campaign).values_list(
        "annotator__external_id", "item__segment__seg_id", "spans", "item__payload"), key=lambda j: j[:2])


def test_an_anthea_file_round_trips_with_its_deleted_errors_and_prior_rater():
    text = json.dumps(evaluation(), indent=2, ensure_ascii=False)
    result = import_judgments(io.BytesIO(text.encode()), fmt="anthea", name="Anthea")
    campaign = result.campaign
    assert campaign.protocol == "mqm" and (campaign.source_language, campaign.target_language) == ("en", "de")
    first = judged(campaign)
    assert [j[1] for j in first] == [1, 2]
    assert first[0][2] == [{"start": 4, "end": 9, "severity": "major", "category": "Accuracy/Mistranslation"},
                           {"start": 8, "end": 11, "severity": "minor", "category": "Source issue",
                            "side": "source"}]
    assert first[0][3]["anthea_prior_rater"] == "rater0"
    assert first[0][3]["anthea_deleted"] == [{"start": 10, "end": 13, "severity": "minor",
                                              "category": "Fluency/Grammar", "location": "translation"}]
    assert first[1][2] == [{"start": 16, "end": 20, "severity": "minor", "category": "Style/Awkward"}]

    out = io.StringIO()
    call_command("campaign", "export", campaign.slug, "--format", "anthea-jsonl", stdout=out)
    exported = json.loads(out.getvalue())
    assert exported["results"][0]["prior_rater"] == "rater0"
    assert exported["results"][0]["errors"][-1]["marked_deleted"] is True
    again = import_judgments(out.getvalue().splitlines(keepends=True), fmt="anthea", name="Again")
    assert judged(again.campaign) == first


def test_a_malformed_anthea_file_is_refused_by_line_and_stores_nothing():
    bad = [json.dumps(evaluation()) + "\n",
           json.dumps(evaluation("rater2", errors=[{"location": "translation", "prefix": "Der ", "selected": "Katze",
                                                    "type": "Accuracy", "severity": "major"}])) + "\n",
           json.dumps({**evaluation("rater3"), "results": []}) + "\n",
           json.dumps(evaluation("rater4", errors=[{"prefix": "", "selected": "Die", "type": "Style",
                                                    "severity": "Neutral"}])) + "\n"]
    before = (Campaign.objects.count(), Judgment.objects.count())
    with pytest.raises(CampaignFileError) as refused:
        import_judgments(bad, fmt="anthea", name="Bad")
    assert refused.value.errors == [
        (2, "results[0].errors[0]: 'prefix' and 'selected' do not match the translation's text"),
        (3, "'results' has 0 entries, fewer than the non-blank segments"),
        (4, "results[0].errors[0]: 'severity' must be one of minor, major, critical, not 'Neutral'")]
    assert (Campaign.objects.count(), Judgment.objects.count()) == before


def test_an_anthea_file_with_prior_ratings_is_reviewed_with_its_deleted_errors(api, researcher):
    """docs/methods.md §9.4: the review of an imported Anthea judgment made over a prior rater's pass shows the
    errors it deleted (translation side), and the reviewer may restore them; a bad index is a 400, nothing stored."""
    from django.test import Client

    from annotation.models import HitItem
    from tests.conftest import post_answer, start

    text = json.dumps(evaluation(), indent=2, ensure_ascii=False)
    campaign = import_judgments(io.BytesIO(text.encode()), fmt="anthea", name="Anthea", owner=researcher).campaign
    assert "Style/Awkward" in campaign.options["taxonomy"]
    # as imported before the taxonomy was extended: the review takes the item's own categories all the same
    campaign.options = {k: v for k, v in campaign.options.items() if k != "taxonomy"}
    campaign.save(update_fields=["options"])
    response = api.post(f"/api/campaigns/{campaign.slug}/add-stages/", {"review": "judges"}, format="json")
    assert response.status_code == 201, response.content
    stage = Campaign.objects.get(slug=response.json()["stages"][0]["campaign"])
    items = {i.payload["first_pass"][0]["start"]: i for i in HitItem.objects.filter(hit__campaign=stage)}
    over_prior, plain = items[4], items[16]
    deleted = {"start": 10, "end": 13, "severity": "minor", "category": "Fluency/Grammar"}
    assert over_prior.payload["prior_rater"] == "rater0" and over_prior.payload["first_pass_deleted"] == [deleted]
    assert "first_pass_deleted" not in plain.payload  # a judgment without a prior pass keeps none

    client = Client()
    token = start(client, stage, "reviewer-1")
    shown = {}
    while len(shown) < 2:
        item = client.get(f"/api/hit/{token}/").json()["item"]
        assert "prior_rater" not in item  # the screen never names the raters
        shown[item["id"]] = item
        body = {"item": item["id"], "review": [{"action": "kept"}] * len(item["first_pass"]), "added": [],
                "score": 70}
        if item["id"] == over_prior.pk:
            assert item["first_pass_deleted"] == [deleted]
            before = Judgment.objects.filter(campaign=stage).count()
            for bad in ([1], [0, 0], ["0"], 0):
                assert post_answer(client, token, {**body, "restored": bad}).status_code == 400, bad
            assert Judgment.objects.filter(campaign=stage).count() == before
            body["restored"] = [0]
        else:  # Style/Awkward, Anthea's and not in the default taxonomy, is offered and kept (issue 27)
            assert item["first_pass_deleted"] == [] and "Style/Awkward" in item["categories"]
        answered = post_answer(client, token, body)
        assert answered.status_code == 201, answered.content
    stored = Judgment.objects.get(campaign=stage, item_id=over_prior.pk)
    assert stored.spans == [{"start": 4, "end": 9, "severity": "major", "category": "Accuracy/Mistranslation",
                             "origin": "kept"}, {**deleted, "origin": "restored"}]
    assert stored.answer["prior_rater"] == "rater0" and stored.answer["first_pass_deleted"] == [deleted]
    assert stored.answer["restored"] == [0] and stored.answer["first_rater"] == "rater1"
    kept = Judgment.objects.get(campaign=stage, item_id=plain.pk)
    assert "first_pass_deleted" not in kept.answer
    assert kept.spans == [{"start": 16, "end": 20, "severity": "minor", "category": "Style/Awkward", "origin": "kept"}]

    # the MQM review export: what the reviewer did, whether the span was restored, and whose span it is
    rows = list(EXPORT_FORMATS["mqm-review-tsv"].writer(stage))
    header = rows[0].rstrip("\n").split("\t")
    lines = [dict(zip(header, r.rstrip("\n").split("\t"), strict=True)) for r in rows[1:]]
    assert sorted((r["category"], r["review"], r["restored"], r["first_rater"], r["span_rater"]) for r in lines) == [
        ("Accuracy/Mistranslation", "kept", "", "rater1", "rater1"),
        ("Fluency/Grammar", "restored", "restored", "rater1", "rater0"),
        ("Style/Awkward", "kept", "", "rater1", "rater1")]


def test_an_anthea_import_extends_the_taxonomy_with_its_categories():
    """docs/api.md §5.10: the campaign takes the file's categories (deleted errors' too) beside the default MQM
    taxonomy; the review stage carries it."""
    errors = [{"location": "translation", "prefix": "Die ", "selected": "Katze", "type": "Accuracy",
               "subtype": "Mistranslation", "severity": "major"},
              {"location": "translation", "prefix": "Die Katze ", "selected": "saß", "type": "Fluency",
               "subtype": "Awkward word order", "severity": "minor", "marked_deleted": True}]
    text = json.dumps(evaluation(errors=errors), ensure_ascii=False)
    campaign = import_judgments(io.BytesIO(text.encode()), fmt="anthea", name="Anthea").campaign
    taxonomy = campaign.options["taxonomy"]
    assert taxonomy[:len(DEFAULT_MQM_TAXONOMY)] == list(DEFAULT_MQM_TAXONOMY)
    assert taxonomy[len(DEFAULT_MQM_TAXONOMY):] == ["Style/Awkward", "Fluency/Awkward word order"]
    long = [{**errors[0], "type": "T" * 101}]
    with pytest.raises(CampaignFileError) as refused:
        import_judgments(io.BytesIO(json.dumps(evaluation(errors=long)).encode()), fmt="anthea", name="Long")
    assert "at most 100 characters" in refused.value.errors[0][1]
