"""The review stage of error spans (docs/methods.md "Review of error spans", docs/api.md "Review of error spans"):
built from the judges' finished annotations (or a file's automatic spans) through the stage mechanism, never
shown to the judge who made the first pass, answered with each first-pass span kept, changed or deleted plus the
added ones, refused whole (400, nothing stored) when it does not account for the first pass or breaks the
campaign's spans, and exported."""
import json

import pytest
from django.test import Client

from annotation.models import Campaign, HitItem, Judgment
from annotation.protocols import get_protocol
from annotation.services import stages
from annotation.services.campaign_import import import_campaign
from annotation.services.export import EXPORT_FORMATS

from .conftest import post_answer, start

pytestmark = pytest.mark.django_db

TEXTS = ["The old bridge will open again for cars next spring.", "The council approved the budget on Monday."]


def review_lines(prefill: bool = False) -> list[str]:
    lines = []
    for s, text in enumerate(TEXTS, 1):
        record = {"doc_id": "d1", "seg_id": s, "source": f"Quelle {s}.", "systems": {"alpha": text}}
        if prefill:
            record["error_spans"] = {"alpha": [{"start": 4, "end": 7, "severity": "minor", "category": "Style"}]}
        lines.append(json.dumps(record))
    return lines


def review_campaign(review="judges", protocol="mqm", **raw):
    parsed = get_protocol(protocol).parse_options({"segments_per_hit": 2, "seed": 1, "perturbation_rate": 0.0,
                                                   "review": review, "review_items_per_hit": 2, **raw})
    data = [(line + "\n").encode() for line in review_lines(prefill=review == "prefilled")]
    return import_campaign(data, name="review test", protocol=protocol, parsed=parsed).campaign


def span(text, word, severity="minor", category="Accuracy/Mistranslation"):
    start = text.index(word)
    return {"start": start, "end": start + len(word), "severity": severity, "category": category}


FIRST = {TEXTS[0]: [span(TEXTS[0], "old", "major"), span(TEXTS[0], "bridge"), span(TEXTS[0], "cars", "minor", "Style")],
         TEXTS[1]: [span(TEXTS[1], "council", "major", "Terminology")]}


def first_pass(campaign, judge="judge-1"):
    """`judge` annotates every item of the first stage with FIRST's spans."""
    client = Client()
    token = start(client, campaign, judge)
    while not (state := client.get(f"/api/hit/{token}/").json()).get("done"):
        item = state["item"]
        assert post_answer(client, token, {"item": item["id"], "spans": FIRST[item["candidate"]],
                                           "score": 60}).status_code == 201
    return client


def reviewing(stage, worker="reviewer-1"):
    client = Client()
    return client, start(client, stage, worker)


def test_the_review_stage_builds_from_finished_annotations_and_never_reaches_their_judge(
        django_capture_on_commit_callbacks):
    campaign = review_campaign()
    stage = Campaign.objects.get(stage_input=campaign)
    assert (stage.protocol, stage.stage_name, stage.redundancy, stage.hit_size) == ("mqm-review", "review", 1, 2)
    assert stage.options["taxonomy"] == campaign.options["taxonomy"] and not stage.hits.exists()
    with django_capture_on_commit_callbacks(execute=True):  # the finished HIT builds the stage (eager Celery)
        first_pass(campaign)
    items = list(HitItem.objects.filter(hit__campaign=stage).order_by("pk"))
    assert len(items) == 2
    judge = Judgment.objects.filter(campaign=campaign).first().annotator_id
    assert {i.payload["author"] for i in items} == {judge}
    assert all(i.payload["rater"] == "judge-1" for i in items)
    assert sorted(len(i.payload["first_pass"]) for i in items) == [1, 3]
    assert stages.build_stages(campaign) == {stage.slug: 0}  # each first-pass annotation reviewed once
    # the first-pass judge gets no review HIT; another judge does, and sees the first pass
    assert Client().get(f"/c/{stage.slug}/start/", {"worker_id": "judge-1"}).status_code != 302
    client, token = reviewing(stage)
    item = client.get(f"/api/hit/{token}/").json()["item"]
    assert item["first_pass"] == FIRST[item["candidate"]] and item["prefilled"] == []
    assert "rater" not in item and "author" not in item


def _review_of_long_text(stage):
    client, token = reviewing(stage)
    item = client.get(f"/api/hit/{token}/").json()["item"]
    if item["candidate"] != TEXTS[0]:  # answer the short one first
        body = {"item": item["id"], "review": [{"action": "kept"}], "added": [], "score": 70}
        assert post_answer(client, token, body).status_code == 201
        item = client.get(f"/api/hit/{token}/").json()["item"]
    return client, token, item


def test_kept_changed_deleted_and_added_are_stored_apart(django_capture_on_commit_callbacks):
    campaign = review_campaign()
    stage = Campaign.objects.get(stage_input=campaign)
    with django_capture_on_commit_callbacks(execute=True):
        first_pass(campaign)
    client, token, item = _review_of_long_text(stage)
    text = TEXTS[0]
    changed = span(text, "old bridge", "major")
    added = span(text, "spring", "major", "Accuracy/Omission")
    body = {"item": item["id"], "review": [{"action": "changed", "span": changed}, {"action": "deleted"},
                                           {"action": "kept"}], "added": [added], "score": 40}
    response = post_answer(client, token, body)
    assert response.status_code == 201, response.content
    judgment = Judgment.objects.get(campaign=stage, item_id=item["id"])
    assert judgment.answer == {
        "first_rater": "judge-1", "first_pass": FIRST[text],
        "review": [{"action": "changed", "from": FIRST[text][0], "to": changed},
                   {"action": "deleted", "from": FIRST[text][1]}, {"action": "kept", "from": FIRST[text][2]}],
        "added": [added]}
    assert [s["origin"] for s in judgment.spans] == ["changed", "kept", "added"]
    assert judgment.score == 40
    rows = list(EXPORT_FORMATS["mqm-review-tsv"].writer(stage))
    header = rows[0].rstrip("\n").split("\t")
    assert header[-4:] == ["review", "first_rater", "restored", "span_rater"]
    spans = [dict(zip(header, r.rstrip("\n").split("\t"), strict=True)) for r in rows[1:]]
    long = [r for r in spans if "<v>" in r["target"] and "cars" in r["target"]]
    assert [(r["review"], r["severity"], r["category"], r["first_rater"], r["restored"], r["span_rater"])
            for r in long] == [
        ("changed", "major", "Accuracy/Mistranslation", "judge-1", "", "judge-1"),
        ("kept", "minor", "Style", "judge-1", "", "judge-1"),
        ("added", "major", "Accuracy/Omission", "judge-1", "", long[0]["rater"])]


def _bodies(text):
    first = FIRST[text]
    keep_all = [{"action": "kept"}] * len(first)
    return [
        ({"review": keep_all[:-1], "added": [], "score": 50}, "account for each exactly once"),
        ({"review": [*keep_all[:-1], {"action": "changed"}], "added": [], "score": 50}, "needs 'span'"),
        ({"review": [*keep_all[:-1], {"action": "changed", "span": first[-1]}], "added": [], "score": 50},
         "unchanged"),
        ({"review": [*keep_all[:-1], {"action": "moved"}], "added": [], "score": 50}, "'action' must be one of"),
        ({"review": keep_all, "added": [{"start": 0, "end": 500, "severity": "minor", "category": "Style"}],
          "score": 50}, "out of bounds"),
        ({"review": keep_all, "added": [{"start": 0, "end": 3, "severity": "minor", "category": "Nonsense"}],
          "score": 50}, "unknown category"),
        ({"review": keep_all, "added": [{"start": 0, "end": 3, "severity": "awful", "category": "Style"}],
          "score": 50}, "unknown severity"),
        ({"review": keep_all, "added": [span(text, "old")], "score": 50}, "overlap"),
        ({"review": [*keep_all[:-1], {"action": "deleted", "span": first[-1]}], "added": [], "score": 50},
         "unexpected field 'span'"),
        ({"review": keep_all, "added": []}, "'score' is missing"),
        ({"review": "all kept", "added": [], "score": 50}, "'review' must be a list"),
        ({"spans": [], "score": 50}, "unexpected"),
    ]


def test_bad_reviews_get_a_400_and_store_nothing(django_capture_on_commit_callbacks):
    campaign = review_campaign()
    stage = Campaign.objects.get(stage_input=campaign)
    with django_capture_on_commit_callbacks(execute=True):
        first_pass(campaign)
    client, token, item = _review_of_long_text(stage)
    before = Judgment.objects.filter(campaign=stage).count()
    for body, message in _bodies(TEXTS[0]):
        response = post_answer(client, token, {"item": item["id"], **body})
        assert response.status_code == 400, (body, response.content)
        assert message in response.json()["error"], (message, response.json())
    assert Judgment.objects.filter(campaign=stage).count() == before


def test_automatic_spans_are_reviewed_at_once_and_esa_review_takes_no_category():
    campaign = review_campaign("prefilled")
    stage = Campaign.objects.get(stage_input=campaign)
    items = list(HitItem.objects.filter(hit__campaign=stage))
    assert len(items) == 2 and all(i.payload["rater"] == "automatic" and i.payload["author"] is None for i in items)
    assert items[0].payload["first_pass"] == [{"start": 4, "end": 7, "severity": "minor", "category": "Style"}]
    esa = review_campaign(protocol="esa")
    esa_stage = Campaign.objects.get(stage_input=esa)
    assert esa_stage.protocol == "esa-review" and "taxonomy" not in esa_stage.options
    assert not Campaign.objects.filter(stage_input=review_campaign("none")).exists()


MQM_TSV = ["system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity",
           "sysA\td1\t1\t1\trater-a\tDas ist gut.\tThat <v>is</v> fine.\tAccuracy/Mistranslation\tMajor",
           "sysA\td1\t1\t1\trater-a\tDas ist gut.\tThat is <v>fine</v>.\tStyle/Awkward\tNeutral",
           "sysB\td1\t1\t1\trater-b\tDas ist gut.\tIt is good.\tNo-error\tNo-error"]


def test_imported_mqm_judgments_get_a_review_stage_through_the_api(api, researcher):
    from annotation.services.judgment_import import import_judgments

    campaign = import_judgments([(line + "\n").encode() for line in MQM_TSV], fmt="mqm-tsv", name="Imported",
                                owner=researcher).campaign
    url = f"/api/campaigns/{campaign.slug}/add-stages/"
    assert api.post(url, {"review": "sometimes"}, format="json").status_code == 400
    assert api.post(url, {"redundancy": 3}, format="json").status_code == 400
    assert api.post(url, {"review": "none"}, format="json").status_code == 400
    assert not Campaign.objects.filter(stage_input=campaign).exists()
    response = api.post(url, {"review": "judges", "review_items_per_hit": 5}, format="json")
    assert response.status_code == 201, response.content
    [made] = response.json()["stages"]
    assert (made["protocol"], made["stage"], made["hits"]) == ("mqm-review", "review", 2)  # one HIT per rater
    stage = Campaign.objects.get(slug=made["campaign"])
    firsts = sorted((i.payload["rater"], i.payload["first_pass"]) for i in HitItem.objects.filter(hit__campaign=stage))
    # the Neutral span and the No-error row are no errors to review
    assert firsts == [("rater-a", [{"start": 5, "end": 7, "severity": "major",
                                    "category": "Accuracy/Mistranslation"}]), ("rater-b", [])]
    assert api.post(url, {"review": "judges"}, format="json").status_code == 400  # it feeds a stage already
    client, token = reviewing(stage)
    item = client.get(f"/api/hit/{token}/").json()["item"]
    body = {"item": item["id"], "review": [{"action": "kept"}] * len(item["first_pass"]), "added": [], "score": 80}
    assert post_answer(client, token, body).status_code == 201
    exported = api.get(f"/api/campaigns/{stage.slug}/judgments/", {"format": "json"})
    assert exported.status_code == 200, exported.content
    [row] = json.loads(b"".join(exported.streaming_content))
    assert row["answer"]["first_rater"] in ("rater-a", "rater-b") and row["spans"] == [
        {**s, "origin": "kept"} for s in row["answer"]["first_pass"]]
