"""Pairwise campaigns (docs/methods.md §7): HIT layout, spam items, no document seen both ways, the API."""
import io
import json
from collections import Counter

import pytest
from django.core.management import call_command
from django.test import Client

from annotation.models import Assignment, Campaign, Judgment
from annotation.services.campaign_import import CampaignFileError, import_campaign
from annotation.services.judgment_import import import_judgments

from .conftest import as_bytes, campaign_lines, post_answer, start

pytestmark = pytest.mark.django_db


def pairwise(unit="both", protocol="pairwise-adequacy", docs=6, segments=60, redundancy=2, **options):
    lines = as_bytes(campaign_lines(segments, systems=("human", "mt"), docs=docs))
    return import_campaign(lines, name=f"pw {unit}", protocol=protocol, redundancy=redundancy, seed=5,
                           options={"systems": ["mt", "human"], "unit": unit, "docs_per_hit": 2, **options}).campaign


def payloads(hit):
    return list(hit.items.order_by("position").values_list("item_type", "payload"))


def test_hits_mix_documents_and_sentences_without_overlap():
    campaign = pairwise("both")
    assert campaign.hits.count() == 3
    for hit in campaign.hits.all():
        items = payloads(hit)
        documents = {p["doc_id"] for t, p in items if p["unit"] == "document"}
        sentences = {p["doc_id"] for t, p in items if p["unit"] == "sentence"}
        assert documents and sentences and not documents & sentences
        assert hit.exposure == {"document": sorted(documents), "sentence": sorted(sentences)}
        for _, payload in items:
            assert len(payload["A"]) == len(payload["B"]) == len(payload["source"])
            assert payload["left"] in (0, 1)
            if payload["unit"] == "sentence":
                assert len(payload["A"]) == 1
        # spam at the paper's rates: 5 per 55 documents, 16 per 120 sentences, at least one of each
        kinds = Counter((t, p["unit"]) for t, p in items)
        assert kinds[("spam", "document")] == 1 and kinds[("spam", "sentence")] == round(20 * 16 / 120)


def test_left_right_order_is_random_but_reproducible():
    first, again = pairwise("document"), pairwise("document")
    lefts = [p["left"] for h in first.hits.all() for _, p in payloads(h)]
    assert 0 < sum(lefts) < len(lefts)
    assert lefts == [p["left"] for h in again.hits.all() for _, p in payloads(h)]


def test_spam_items_shuffle_one_side_keeping_the_edges():
    campaign = pairwise("sentence")
    spam = [(t, p) for h in campaign.hits.all() for t, p in payloads(h) if t == "spam"]
    assert spam
    real = {p["key"]: p for h in campaign.hits.all() for t, p in payloads(h) if t == "system"}
    for _, payload in spam:
        side = payload["spam_side"]
        original = real[payload["key"]]
        other = "B" if side == "A" else "A"
        assert payload[other] == original[other]
        shuffled, words = payload[side][0].split(), original[side][0].split()
        assert sorted(shuffled) == sorted(words) and shuffled != words


def test_a_worker_never_sees_a_document_both_ways():
    campaign = pairwise("both", redundancy=3)
    client = Client()
    seen = {"document": set(), "sentence": set()}
    hits = []
    while True:
        response = client.get(f"/c/{campaign.slug}/start/", {"worker_id": "curious"})
        if response.status_code != 302:
            break
        assignment = Assignment.objects.get(token=response["Location"].split("/")[2])
        Assignment.objects.filter(pk=assignment.pk).update(status="completed")
        hits.append(assignment.hit.number)
        for unit in seen:
            seen[unit].update(assignment.hit.exposure[unit])
    assert len(hits) == 1  # every other HIT shows one of its documents the other way
    assert not seen["document"] & seen["sentence"]


def test_the_api_shows_sides_not_systems(client):
    campaign = pairwise("document", protocol="pairwise-fluency")
    token = start(client, campaign, "judge")
    state = client.get(f"/api/hit/{token}/").json()
    assert set(state["item"]) == {"id", "protocol", "unit", "A", "B"}  # fluency: no source
    for body, status in (({"item": state["item"]["id"], "choice": "C"}, 400),
                         ({"item": state["item"]["id"], "score": 50}, 400),
                         ({"item": state["item"]["id"], "choice": "B"}, 201)):
        assert post_answer(client, token, body).status_code == status
    assert Judgment.objects.get().choice == "B"


@pytest.mark.parametrize("options,problem", [
    ({"systems": ["mt"]}, "systems: pairwise protocols compare two different systems"),
    ({"systems": ["mt", "google"]}, "systems: system 'google' is not in the file"),
    ({"systems": ["mt", "human"], "unit": "paragraph"}, "unit: must be one of"),
])
def test_bad_pairwise_options_are_refused(options, problem):
    with pytest.raises(CampaignFileError, match=problem):
        import_campaign(as_bytes(campaign_lines(10, systems=("human", "mt"))), name="x",
                        protocol="pairwise-adequacy", options=options)
    assert Campaign.objects.count() == 0


def test_command_takes_systems_and_unit(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(campaign_lines(20, systems=("human", "mt"), docs=4)) + "\n")
    out = io.StringIO()
    call_command("import_campaign", str(path), "--name", "PW", "--protocol", "pairwise-fluency", "--systems",
                 "mt,human", "--unit", "sentence", stdout=out)
    result = json.loads(out.getvalue())
    campaign = Campaign.objects.get(slug=result["campaign"])
    assert campaign.options["systems"] == ["mt", "human"] and campaign.options["unit"] == "sentence"
    assert result["hits"] == campaign.hits.count() == 1  # 4 documents, 10 per HIT by default


CSV = """rater,criterion,unit,item,choice,spam
r1,adequacy,document,d1,human,
r1,adequacy,document,d2,mt,
r1,adequacy,document,d3,tie,
r1,adequacy,document,d9,human,mt
r2,adequacy,document,d1,human,
r2,adequacy,document,d9,mt,mt
"""


def test_pairwise_csv_import():
    result = import_judgments([line.encode() for line in CSV.splitlines(True)], fmt="pairwise-csv", name="ext",
                              systems=["mt", "human"])
    assert result.judgments == 6
    campaign = result.campaign
    assert campaign.analysis_only and campaign.protocol == "pairwise-adequacy"
    assert campaign.options["systems"] == ["mt", "human"]
    choices = Counter(Judgment.objects.filter(campaign=campaign).values_list("choice", "item__item_type"))
    assert choices == {("B", "system"): 2, ("A", "system"): 1, ("tie", "system"): 1, ("B", "spam"): 1,
                       ("A", "spam"): 1}


@pytest.mark.parametrize("line,reason", [
    ("r1,accuracy,document,d1,mt,", "criterion must be adequacy or fluency"),
    ("r1,adequacy,page,d1,mt,", "unit must be document or sentence"),
    ("r1,adequacy,document,d1,deepl,", "choice must be mt, human or tie"),
    ("r1,adequacy,document,d1,mt,deepl", "spam must be empty or name mt or human"),
    ("r1,adequacy,document,d1", "expected 6 fields"),
])
def test_bad_pairwise_csv_lines_are_refused(line, reason):
    lines = CSV.splitlines(True)[:2] + [line + "\n"]
    with pytest.raises(CampaignFileError) as info:
        import_judgments([x.encode() for x in lines], fmt="pairwise-csv", name="bad", systems=["mt", "human"])
    assert any(n == 3 and text.startswith(reason) for n, text in info.value.errors), info.value.errors
    assert Campaign.objects.count() == 0


def test_pairwise_csv_needs_the_systems():
    with pytest.raises(CampaignFileError, match="systems: pairwise-csv needs the two systems compared"):
        import_judgments([CSV.encode()], fmt="pairwise-csv", name="x")
