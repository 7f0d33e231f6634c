"""Error-span campaigns (docs/methods.md §11): HITs of whole documents with perturbed copies and tutorial items,
what the screen is sent (document context, pre-marked spans, never the system), and the validation of answers:
overlapping, out-of-bounds, unknown severity or category, spans without a score, each a precise 400 that stores
nothing."""
import json

import pytest
from django.test import Client

from annotation.models import HitItem, Judgment
from annotation.protocols import get_protocol
from annotation.services.campaign_import import CampaignFileError, import_campaign
from evaluation.families.error_spans.presenter import document_view

from .conftest import post_answer, start

pytestmark = pytest.mark.django_db

SYSTEMS = ("alpha", "beta", "gamma")
ARABIC = "ذهب الولد إلى المدرسة صباحا مع أخيه الصغير"


def span_lines(documents=4, per_doc=5, tutorial=1, prefill=True, domains=("news", "speech")) -> list[str]:
    lines = []
    for d in range(documents):
        for s in range(per_doc):
            record = {"doc_id": f"doc-{d}", "seg_id": s + 1, "source": f"Quelle {d}.{s} mit einigen Wörtern hier.",
                      "reference": f"Reference {d}.{s}.", "domain": domains[d % len(domains)],
                      "systems": {name: f"The {name} translation of segment {d}.{s} has several words in it."
                                  for name in SYSTEMS}}
            if prefill and s == 0:
                record["error_spans"] = {"alpha": [{"start": 4, "end": 9, "severity": "minor"}]}
            lines.append(json.dumps(record, ensure_ascii=False))
    for t in range(tutorial):
        lines.append(json.dumps({"doc_id": "tutorial", "seg_id": t + 1, "source": "Ein Beispiel.", "tutorial": True,
                                 "systems": {name: "An example sentence for the tutorial." for name in SYSTEMS}}))
    return lines


def span_campaign(protocol="esa", lines=None, tutorial=1, **raw):
    parsed = get_protocol(protocol).parse_options({"segments_per_hit": 12, "seed": 3, "source_language": "de",
                                                   **raw})
    data = [(line + "\n").encode() for line in (lines or span_lines(tutorial=tutorial))]
    return import_campaign(data, name=f"{protocol} test", protocol=protocol, parsed=parsed).campaign


def items_of(campaign):
    return list(HitItem.objects.filter(hit__campaign=campaign).order_by("hit__number", "position"))


def test_hits_keep_documents_whole_with_perturbed_copies_and_tutorial_first():
    campaign = span_campaign(perturbation_rate=0.2)
    items = items_of(campaign)
    by_hit: dict[int, list[HitItem]] = {}
    for item in items:
        by_hit.setdefault(item.hit_id, []).append(item)
    system_items = [i for i in items if i.item_type == "system"]
    assert len(system_items) == 4 * 5 * len(SYSTEMS)  # every output once
    assert len({i.output_id for i in system_items}) == len(system_items)
    for hit_items in by_hit.values():
        assert hit_items[0].item_type == "tutorial"
        bad = [i for i in hit_items if i.item_type == "bad_ref"]
        originals = [i for i in hit_items if i.item_type == "system"]
        assert len(bad) == round(len(originals) * 0.2)
        for b in bad:
            partner = hit_items[b.partner_position]
            assert partner.output_id == b.output_id and partner.partner_position == b.position
            assert len(b.text) < len(partner.output.text)
        # a document's segments stay in order within a HIT
        runs: dict[tuple, list[int]] = {}
        for i in originals:
            runs.setdefault((i.output.system_id, i.segment.document_id), []).append(i.segment.seg_id)
        assert all(seq == sorted(seq) for seq in runs.values())
    assert {d.domain for d in campaign.documents.all()} == {"news", "speech", ""}


def test_the_screen_gets_its_document_and_prefilled_spans_but_never_the_system():
    campaign = span_campaign()
    client = Client()
    token = start(client, campaign, "w1")
    state = client.get(f"/api/hit/{token}/").json()
    item = state["item"]
    assert item["protocol"] == "esa"
    # the HIT opens with its tutorial document, a practice item (services/tutorials.screen_fields)
    assert set(item) == {"id", "protocol", "candidate", "source", "document", "severities", "prefilled", "practice"}
    assert item["practice"] is True
    assert "alpha" not in json.dumps(item) and "beta" not in json.dumps(item)
    doc = item["document"]
    assert doc["segments"][doc["current"]]["candidate"] == item["candidate"]
    assert item["severities"] == ["minor", "major"]


def answer_current(client, token, **body):
    state = client.get(f"/api/hit/{token}/").json()
    return post_answer(client, token, {"item": state["item"]["id"], **body}), state["item"]


@pytest.mark.parametrize("body,message", [
    ({"spans": [{"start": 0, "end": 5, "severity": "minor"}, {"start": 3, "end": 8, "severity": "major"}],
      "score": 50}, "spans 0 and 1 overlap"),
    ({"spans": [{"start": 0, "end": 500, "severity": "minor"}], "score": 50}, "out of bounds"),
    ({"spans": [{"start": -1, "end": 2, "severity": "minor"}], "score": 50}, "out of bounds"),
    ({"spans": [{"start": 0, "end": 3, "severity": "terrible"}], "score": 50}, "unknown severity 'terrible'"),
    ({"spans": [{"start": 0, "end": 3, "severity": "minor", "category": "Style"}], "score": 50},
     "takes no 'category'"),
    ({"spans": [{"start": 0, "end": 3, "severity": "minor"}]}, "'score' is missing"),
    ({"spans": [{"start": 0, "end": 3, "severity": "minor"}], "score": 101}, "between 0 and 100"),
    ({"spans": [{"start": 2, "end": 2, "severity": "minor"}], "score": 40}, "must sit at the end"),
    ({"spans": "0-3", "score": 40}, "must be a list"),
])
def test_bad_esa_answers_get_a_precise_400_and_store_nothing(body, message):
    campaign = span_campaign(tutorial=0)
    client = Client()
    token = start(client, campaign, "w1")
    response, _ = answer_current(client, token, **body)
    assert response.status_code == 400, response.content
    assert message in response.json()["error"]
    assert not Judgment.objects.filter(campaign=campaign).exists()


def test_a_score_without_spans_and_an_omission_at_the_end_are_answers():
    campaign = span_campaign(tutorial=0)
    client = Client()
    token = start(client, campaign, "w1")
    response, _ = answer_current(client, token, score=80)
    assert response.status_code == 201
    response, item = answer_current(client, token, score=30, spans=[
        {"start": len(item_text := client.get(f"/api/hit/{token}/").json()["item"]["candidate"]),
         "end": len(item_text), "severity": "major"},
        {"start": 0, "end": 3, "severity": "minor"}])
    assert response.status_code == 201, response.content
    stored = list(Judgment.objects.filter(campaign=campaign).order_by("id").values_list("score", "spans"))
    assert stored[0] == (80.0, [])
    assert stored[1][1] == [{"start": 0, "end": 3, "severity": "minor"},
                            {"start": len(item_text), "end": len(item_text), "severity": "major"}]


def test_a_replay_with_the_spans_in_another_order_is_the_same_answer():
    campaign = span_campaign(tutorial=0)
    client = Client()
    token = start(client, campaign, "w1")
    spans = [{"start": 5, "end": 9, "severity": "major"}, {"start": 0, "end": 3, "severity": "minor"}]
    first, item = answer_current(client, token, score=40, spans=spans)
    assert first.status_code == 201
    again = post_answer(client, token, {"item": item["id"], "score": 40, "spans": spans[::-1]})
    assert again.status_code == 201
    other = post_answer(client, token, {"item": item["id"], "score": 40, "spans": spans[:1]})
    assert other.status_code == 409
    assert Judgment.objects.filter(campaign=campaign).count() == 1


def test_mqm_needs_a_category_of_the_campaigns_taxonomy():
    campaign = span_campaign("mqm", lines=span_lines(tutorial=0, prefill=False),
                             taxonomy="Accuracy/Mistranslation,Fluency/Punctuation,Other", critical=True)
    client = Client()
    token = start(client, campaign, "w1")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    assert item["categories"] == ["Accuracy/Mistranslation", "Fluency/Punctuation", "Other"]
    assert item["severities"] == ["minor", "major", "critical"]
    for span, message in (({"start": 0, "end": 3, "severity": "minor"}, "'category' is missing"),
                          ({"start": 0, "end": 3, "severity": "minor", "category": "Style"},
                           "unknown category 'Style'")):
        response = post_answer(client, token, {"item": item["id"], "score": 20, "spans": [span]})
        assert response.status_code == 400 and message in response.json()["error"]
    response = post_answer(client, token, {"item": item["id"], "score": 20, "spans": [
        {"start": 0, "end": 3, "severity": "critical", "category": "Accuracy/Mistranslation"}]})
    assert response.status_code == 201
    assert Judgment.objects.get(campaign=campaign).spans[0]["category"] == "Accuracy/Mistranslation"


def test_contrastive_screens_show_every_system_and_take_an_answer_per_candidate():
    campaign = span_campaign("contrastive-esa", tutorial=0, perturbation_rate=0.0)
    client = Client()
    token = start(client, campaign, "w1")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    keys = [c["key"] for c in item["candidates"]]
    assert len(keys) == len(SYSTEMS)
    assert all(c["document"][item["current"]] == c["text"] for c in item["candidates"])
    missing = post_answer(client, token, {"item": item["id"], "candidates": {keys[0]: {"score": 50}}})
    assert missing.status_code == 400 and "missing" in missing.json()["error"]
    bad = post_answer(client, token, {"item": item["id"], "candidates": {
        k: {"score": 50, "spans": [{"start": 0, "end": 999, "severity": "minor"}] if k == keys[1] else []}
        for k in keys}})
    assert bad.status_code == 400 and "out of bounds" in bad.json()["error"]
    assert not Judgment.objects.filter(campaign=campaign).exists()
    good = post_answer(client, token, {"item": item["id"], "candidates": {
        k: {"score": 10 * n, "spans": [{"start": 0, "end": 3, "severity": "major"}] if n == 0 else []}
        for n, k in enumerate(keys)}})
    assert good.status_code == 201, good.content
    judgment = Judgment.objects.get(campaign=campaign)
    assert judgment.scores == {k: 10.0 * n for n, k in enumerate(keys)}
    assert judgment.spans == [{"start": 0, "end": 3, "severity": "major", "candidate": keys[0]}]
    # the results' "one document, every judge" shows each column with its own score and spans
    names = {c["key"]: c["name"] for c in judgment.item.payload["candidates"]}
    doc_id = judgment.item.segment.document.doc_id
    for n, key in enumerate(keys):
        view = document_view(campaign, doc_id, names[key])
        [judge] = next(s for s in view["segments"] if s["seg_id"] == judgment.item.segment.seg_id)["judges"]
        assert judge["score"] == 10.0 * n and len(judge["spans"]) == (1 if n == 0 else 0)


def test_prefilled_spans_are_checked_at_import_and_shown_premarked():
    lines = span_lines(tutorial=0)
    record = json.loads(lines[0])
    record["error_spans"] = {"alpha": [{"start": 0, "end": 400, "severity": "minor"}]}
    with pytest.raises(CampaignFileError) as refused:
        span_campaign(lines=[json.dumps(record)] + lines[1:])
    assert "out of bounds" in str(refused.value.errors)
    campaign = span_campaign(tutorial=0)
    prefilled = HitItem.objects.filter(hit__campaign=campaign, item_type="system", output__system__name="alpha",
                                       segment__seg_id=1).first()
    assert prefilled.output.spans == [{"start": 4, "end": 9, "severity": "minor"}]
    payload = get_protocol("esa").item_payload(prefilled)
    assert payload["prefilled"] == [{"start": 4, "end": 9, "severity": "minor"}]


def test_offsets_are_code_points_in_arabic_text():
    lines = span_lines(tutorial=0, prefill=False)
    lines = [json.dumps({**json.loads(line), "systems": {name: ARABIC for name in SYSTEMS}}, ensure_ascii=False)
             for line in lines]
    campaign = span_campaign(lines=lines, perturbation_rate=0.0)
    client = Client()
    token = start(client, campaign, "w1")
    end = len(ARABIC)
    response, _ = answer_current(client, token, score=60, spans=[{"start": end - 6, "end": end, "severity": "minor"}])
    assert response.status_code == 201
    response, _ = answer_current(client, token, score=60, spans=[{"start": 0, "end": end + 1, "severity": "minor"}])
    assert response.status_code == 400


def test_prefilled_spans_must_fit_the_campaigns_severities_and_taxonomy():
    lines = span_lines(tutorial=0, prefill=False)
    record = json.loads(lines[0])
    record["error_spans"] = {"alpha": [{"start": 0, "end": 3, "severity": "critical"}]}
    changed = [json.dumps(record)] + lines[1:]
    with pytest.raises(CampaignFileError) as refused:
        span_campaign(lines=changed)
    assert "unknown severity 'critical'" in str(refused.value.errors) and "doc-0" in str(refused.value.errors)
    assert span_campaign("mqm", lines=[json.dumps({**record, "error_spans": {"alpha": [
        {"start": 0, "end": 3, "severity": "critical", "category": "Style"}]}})] + lines[1:], critical=True)
    with pytest.raises(CampaignFileError) as refused:
        span_campaign("mqm", lines=changed, critical=True)
    assert "'category' is missing" in str(refused.value.errors)


def test_an_answer_reads_the_campaigns_options_from_the_one_read_of_the_hit():
    """The judging snapshot gives each item its HIT and campaign, so checking an error-span answer against the
    campaign's severities costs no query of its own."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    campaign = span_campaign(tutorial=0)
    client = Client()
    token = start(client, campaign, "w1")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    with CaptureQueriesContext(connection) as queries:
        response = post_answer(client, token, {"item": item["id"], "score": 70,
                                               "spans": [{"start": 0, "end": 3, "severity": "minor"}]})
    assert response.status_code == 201
    reads = [q["sql"] for q in queries.captured_queries]
    assert not any('FROM "annotation_hit"' in sql and "WHERE" in sql and '"annotation_hit"."id" =' in sql
                   for sql in reads), reads
    assert not any(sql.startswith('SELECT') and 'FROM "annotation_campaign" WHERE "annotation_campaign"."id" ='
                   in sql for sql in reads), reads
