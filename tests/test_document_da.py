"""Document-level Direct Assessment (docs/methods.md §1.1): the HIT plan, the screen's payload, answers through
the annotator API, the per-document statistics against a hand computation, and SQM's labelled marks."""
import json
import random
from collections import Counter, defaultdict

import numpy as np
import pytest

from annotation.building.degradation import degrade_adequacy
from annotation.building.hit_layout import CampaignContent, OutputRef, SegmentRef
from annotation.building.qc_hits import plan_da_hits
from annotation.models import Assignment, HitItem, Judgment
from annotation.protocols import get_protocol
from annotation.protocols.direct_assessment import SQM_MARKS
from annotation.protocols.direct_assessment.planner import plan_document_hits
from annotation.services.campaign_import import import_campaign
from evaluation.analyses import compute_results

from .conftest import as_bytes, post_answer, sentence, start

SYSTEMS = ("Alpha", "Bravo", "Charlie")


def content(doc_lengths=(7, 5, 9, 6, 8, 7), n_systems=3) -> CampaignContent:
    segments, outputs = [], []
    for d, length in enumerate(doc_lengths):
        for k in range(length):
            index = len(segments)
            segments.append(SegmentRef(index, d, f"doc-{d}", k + 1, f"Quelle {index}.", sentence(index)))
            for s in range(n_systems):
                outputs.append(OutputRef(index * n_systems + s, index, s, sentence(index * 5 + s + 1, 8)))
    return CampaignContent(segments, [f"sys{s}" for s in range(n_systems)], outputs)


def units_of(plans):
    """Consecutive runs of items with the same set_index: (kind, segment ids, system ids, plans)."""
    runs = defaultdict(list)
    for p in plans:
        runs[p.set_index].append(p)
    return [runs[k] for k in sorted(runs)]


def test_plan_keeps_documents_whole_in_order_with_the_document_item_last():
    c = content()
    hits = plan_document_hits(c, degrade_adequacy, 100, random.Random(5))
    docs = defaultdict(list)
    for seg in c.segments:
        docs[seg.doc].append(seg.index)
    seen = Counter()
    for plans in hits:
        assert [p.position for p in plans] == list(range(len(plans)))
        kinds = Counter()
        first_of = {}
        for u, run in enumerate(units_of(plans)):
            *segment_items, document_item = run
            doc = c.segments[segment_items[0].segment_id].doc
            assert [p.segment_id for p in segment_items] == docs[doc], "the whole document, in order"
            assert all(p.payload["unit"] == "segment" for p in segment_items)
            assert document_item.payload["unit"] == "document"
            assert document_item.segment_id == docs[doc][0]
            assert all(p.payload["first"] == run[0].position and p.payload["count"] == len(docs[doc]) for p in run)
            kind = document_item.item_type
            kinds[kind] += 1
            systems = {c.outputs[p.output_id].system_id for p in run if p.output_id is not None}
            assert len(systems) <= 1, "one system's translation per document"
            if kind == "system":
                assert all(p.item_type == "system" for p in run)
                seen[(doc, systems.pop())] += 1
                first_of[(doc, tuple(sorted(systems)))] = u
            elif kind == "reference":
                assert all(p.item_type == "reference" and p.output_id is None for p in run)
            else:  # a bad or repeated copy: after its original, with another unit between
                original = plans[run[0].partner_position]
                assert original.item_type == "system" and original.set_index < u - 1
                for p in run:
                    partner = plans[p.partner_position]
                    assert partner.partner_position == p.position and partner.output_id == p.output_id
                    if p.item_type == "bad_ref" and p.payload["unit"] == "segment":
                        assert p.text and p.text != c.outputs[p.output_id].text
                if kind == "bad_ref":
                    assert any(p.item_type == "bad_ref" for p in segment_items)
                else:
                    assert all(p.item_type == "repeat" and not p.text for p in run)
        assert kinds == {"system": kinds["system"], "bad_ref": 1, "repeat": 1, "reference": 1}
        genuine = sum(1 for p in plans if p.item_type == "system" and p.payload["unit"] == "segment")
        assert genuine <= 70 or kinds["system"] == 1
    assert seen == {(d, s): 1 for d in docs for s in range(3)}, "each system's document is judged once"


def test_plan_is_reproducible_from_the_seed():
    a = plan_document_hits(content(), degrade_adequacy, 60, random.Random(9))
    b = plan_document_hits(content(), degrade_adequacy, 60, random.Random(9))
    assert a == b


def lines(n_docs=6, length=6):
    out = []
    for d in range(n_docs):
        for k in range(length):
            i = d * length + k
            out.append(json.dumps({"doc_id": f"doc-{d}", "seg_id": k + 1, "source": f"Quelle {i}: {sentence(i + 50)}",
                                   "reference": sentence(i) + f" ref{i}",
                                   "systems": {name: sentence(i + 13 * j) + f" t{i}" for j, name in
                                               enumerate(SYSTEMS)}}))
    return as_bytes(out)


@pytest.fixture
def doc_campaign(db, researcher):
    return import_campaign(lines(), name="Doc DA", protocol="adequacy", seed=3, redundancy=3, owner=researcher,
                           options={"document_mode": True}).campaign


def test_default_plans_are_unchanged(db):
    c = content()
    protocol = get_protocol("adequacy")
    for options in ({}, {"document_mode": False, "sqm_labels": False}):
        assert protocol.plan_hits(c, 100, options, random.Random(4)) == plan_da_hits(
            c.outputs, degrade_adequacy, 100, random.Random(4))


def test_options_are_declared_once_and_stored_only_when_given():
    protocol = get_protocol("fluency")
    assert protocol.parse_options({}).options.get("document_mode") is None
    parsed = protocol.parse_options({"document_mode": "true", "sqm_labels": "yes"})
    assert parsed.options["document_mode"] is True and parsed.options["sqm_labels"] is True
    names = {o.name for o in protocol.option_fields()}
    assert {"document_mode", "sqm_labels"} <= names
    assert "document_mode" not in {o.name for o in get_protocol("esa").option_fields()}


def test_payload_shows_the_document_never_the_system(client, doc_campaign):
    token = start(client, doc_campaign, "w1")
    state = client.get(f"/api/hit/{token}/").json()
    item = state["item"]
    assert set(item) == {"id", "protocol", "candidate", "reference", "unit", "document"}
    assert item["unit"] == "segment" and item["document"]["current"] == 0
    segments = item["document"]["segments"]
    assert len(segments) == 6 and segments[0]["candidate"] == item["candidate"]
    assert all(set(s) == {"item", "candidate", "reference"} for s in segments)
    text = json.dumps(state)
    assert not any(name in text for name in SYSTEMS) and "item_type" not in text and "system" not in text


def test_answers_through_the_annotator_api_and_the_document_item(client, doc_campaign):
    token = start(client, doc_campaign, "w1")
    assignment = Assignment.objects.get(token=token)
    items = list(HitItem.objects.filter(hit=assignment.hit).order_by("position"))
    for k, expected in enumerate(items):
        item = client.get(f"/api/hit/{token}/").json()["item"]
        assert item["id"] == expected.id
        if expected.payload["unit"] == "document":
            assert item["unit"] == "document" and item["document"]["current"] is None
            assert [s["item"] for s in item["document"]["segments"]] == [i.id for i in items[k - 6:k]]
        else:
            assert item["document"]["current"] == expected.position - expected.payload["first"]
        assert post_answer(client, token, {"item": item["id"], "score": 10 + k % 80}).status_code == 201
    assert Judgment.objects.filter(assignment=assignment).count() == len(items)
    assert client.get(f"/api/hit/{token}/").json()["done"] is True


def _answer_all(client, campaign, worker, score_of):
    token = start(client, campaign, worker)
    while True:
        state = client.get(f"/api/hit/{token}/").json()
        if state["done"]:
            return
        item = HitItem.objects.select_related("output__system").get(pk=state["item"]["id"])
        assert post_answer(client, token, {"item": item.id, "score": score_of(item)}).status_code == 201


def test_per_document_statistics_against_a_hand_computation(client, api, doc_campaign):
    rng = random.Random(1)
    quality = {"Alpha": 70, "Bravo": 50, "Charlie": 35}

    def score_of(item):
        if item.item_type == "reference":
            return 90
        base = quality[item.output.system.name] + rng.uniform(-20, 20)
        return max(0.0, min(100.0, base - (40 if item.item_type == "bad_ref" else 0)))

    for w in range(6):
        _answer_all(client, doc_campaign, f"worker-{w}", score_of)
    compute_results(doc_campaign)

    # By hand: z per worker over all their scores; document items of system outputs (repeats included).
    rows = list(Judgment.objects.filter(campaign=doc_campaign).values_list(
        "annotator_id", "score", "item__item_type", "item__payload", "item__segment__document_id",
        "item__output__system__name"))
    by_worker = defaultdict(list)
    for annotator, score, *_ in rows:
        by_worker[annotator].append(score)
    stats = {a: (np.mean(v), np.std(v, ddof=1)) for a, v in by_worker.items()}
    per_doc = defaultdict(lambda: ([], []))
    for annotator, score, kind, payload, document, system in rows:
        if payload["unit"] == "document" and kind in ("system", "repeat"):
            mean, sd = stats[annotator]
            per_doc[(system, document)][0].append(score)
            per_doc[(system, document)][1].append((score - mean) / sd)
    expected = defaultdict(lambda: ([], []))
    for (system, _), (raw, z) in per_doc.items():
        expected[system][0].append(np.mean(raw))
        expected[system][1].append(np.mean(z))

    body = api.get(f"/api/campaigns/{doc_campaign.slug}/systems/", {"unit": "document", "workers": "all"}).json()
    assert body["unit"] == "document" and body["workers"] == "all"
    assert [r["system"] for r in body["results"]] == ["Alpha", "Bravo", "Charlie"]
    for r in body["results"]:
        raw, z = expected[r["system"]]
        assert r["translations"] == len(raw) == 6
        assert r["mean_raw"] == pytest.approx(np.mean(raw), abs=1e-9)
        assert r["mean_z"] == pytest.approx(np.mean(z), abs=1e-9)
        assert r["judgments"] == sum(len(per_doc[k][0]) for k in per_doc if k[0] == r["system"])

    # The segment level counts only segment items, and keeps its fields (no `unit` key by default).
    segment = api.get(f"/api/campaigns/{doc_campaign.slug}/systems/", {"workers": "all"}).json()
    assert "unit" not in segment
    n_segment = sum(1 for *_, kind, payload, _d, _s in rows if payload["unit"] == "segment"
                    and kind in ("system", "repeat"))
    assert sum(r["judgments"] for r in segment["results"]) == n_segment
    # Quality control: bad copies pair with their originals, documents with documents.
    summary = api.get(f"/api/campaigns/{doc_campaign.slug}/agreement/").json()
    bad = sum(1 for *_, kind, _p, _d, _s in rows if kind == "bad_ref")
    assert summary["summary"]["bad_reference_pairs"] == bad
    significance = api.get(f"/api/campaigns/{doc_campaign.slug}/significance/", {"unit": "document"}).json()
    assert significance["systems"][0] == "Alpha" and len(significance["p_values"]) == 3
    researcher = doc_campaign.owner
    client.force_login(researcher)
    table = client.get(f"/results/{doc_campaign.slug}/systems.csv").content.decode().splitlines()
    assert table[0].startswith("unit,workers,system,")
    assert Counter(line.split(",")[0] for line in table[1:]) == {"segment": 6, "document": 6}


def test_unit_parameter_is_checked(api, doc_campaign, make_campaign):
    url = f"/api/campaigns/{doc_campaign.slug}/systems/"
    assert api.get(url, {"unit": "page"}).status_code == 400
    assert api.get(url, {"unit": "document"}).status_code == 200
    plain = make_campaign()
    assert api.get(f"/api/campaigns/{plain.slug}/systems/", {"unit": "document"}).status_code == 400
    assert api.get(f"/api/campaigns/{plain.slug}/systems/", {"unit": "segment"}).status_code == 200


def test_sqm_labels_in_the_payload(client, make_campaign):
    sqm = make_campaign(options={"sqm_labels": True})
    item = client.get(f"/api/hit/{start(client, sqm, 'w1')}/").json()["item"]
    assert item["marks"] == [dict(m) for m in SQM_MARKS]
    assert [m["at"] for m in item["marks"]] == [0.0, 33.33, 66.67, 100.0]
    assert [m["text"] for m in item["marks"]] == ["No meaning preserved", "Some meaning preserved",
                                                  "Most meaning preserved and few grammar mistakes",
                                                  "Perfect meaning and grammar"]
    plain = make_campaign()
    item = client.get(f"/api/hit/{start(client, plain, 'w2')}/").json()["item"]
    assert set(item) == {"id", "protocol", "candidate", "reference"}


def test_the_results_page_shows_the_document_level_ranking(client, doc_campaign, researcher):
    rng = random.Random(2)
    for w in range(4):
        _answer_all(client, doc_campaign, f"page-{w}", lambda item: rng.uniform(20, 90))
    compute_results(doc_campaign)
    doc_campaign.owner = researcher
    doc_campaign.save(update_fields=["owner"])
    client.force_login(researcher)
    page = client.get(f"/results/{doc_campaign.slug}/").content.decode()
    assert 'id="documents"' in page and "Document level" in page
    assert page.count('id="document-ranking-') == 2
    for name in ("Alpha", "Bravo", "Charlie"):
        assert name in page.split('id="documents"')[1].split("</section>")[0]
