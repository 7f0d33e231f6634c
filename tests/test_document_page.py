"""Document-level DA on one page (`document_page`, docs/methods.md §1.1; docs/api.md §8.2-§8.3): the import option
and what it refuses, the page in the annotator state, a page's answers stored whole as one batch (never past the
page), quality control indistinguishable on the page, tutorials between documents, and results identical to the
same scores given one at a time."""
import json

import pytest

from annotation.models import Assignment, Campaign, HitItem, Judgment
from annotation.protocols import get_protocol
from annotation.protocols.options import OptionError
from annotation.services.campaign_import import CampaignFileError, import_campaign
from evaluation.analyses import compute_results

from .conftest import as_bytes, post_answer, start
from .test_document_da import SYSTEMS, lines
from .test_import_front_ends import upload
from .test_training_protocols import da_campaign, da_lines

PAGE = {"document_mode": True, "document_page": True}


@pytest.fixture
def page_campaign(db, researcher):
    return import_campaign(lines(), name="Doc DA page", protocol="adequacy", seed=3, owner=researcher,
                           options=PAGE).campaign


def _records() -> list[dict]:
    return [json.loads(line) for line in lines()]


def _items(token: str) -> list[HitItem]:
    return list(HitItem.objects.filter(hit__assignments__token=token).order_by("position"))


def _page_batch(page: list[dict], base: int = 30) -> dict:
    return {"batch": [{"item": entry["id"], "score": base + k} for k, entry in enumerate(page)]}


def _stored(token: str) -> list[tuple[int, float]]:
    return list(Judgment.objects.filter(assignment__token=token).order_by("item__position")
                .values_list("item_id", "score"))


@pytest.mark.parametrize("protocol", ["fluency", "adequacy", "source-adequacy"])
def test_the_option_is_off_by_default_and_taken_by_every_da_protocol(protocol):
    spec = get_protocol(protocol)
    assert spec.parse_options({}).options.get("document_page") is None
    assert spec.parse_options({"document_mode": "yes", "document_page": "yes"}).options["document_page"] is True
    assert "document_page" not in {o.name for o in get_protocol("esa").option_fields()}


@pytest.mark.parametrize("raw, named", [
    ({"document_page": "yes"}, "needs document_mode"),
    ({"document_mode": "yes", "document_page": "yes", "require_media_played": "50"}, "require_media_played"),
    ({"document_mode": "yes", "document_page": "yes", "instruction_judgment": "yes"}, "instruction_judgment"),
])
def test_a_page_where_it_cannot_work_is_refused_naming_the_conflict(raw, named):
    with pytest.raises(OptionError) as refused:
        get_protocol("adequacy").parse_options(raw)
    assert named in str(refused.value) and "document_page" in str(refused.value)


def test_the_api_import_refuses_a_page_without_document_mode_with_a_400(api):
    response = api.post("/api/campaigns/", {"name": "No mode", "protocol": "adequacy", "document_page": "true",
                                            "file": upload([json.dumps(r) for r in _records()])}, format="multipart")
    assert response.status_code == 400
    assert "document_page" in response.content.decode() and "document_mode" in response.content.decode()
    assert not Campaign.objects.exists()


@pytest.mark.parametrize("key, value", [("media", [{"kind": "image", "src": "a.png"}]),
                                        ("instructions", "Keep it formal.")])
def test_lines_with_their_own_media_or_instructions_refuse_a_page(db, key, value):
    records = _records()
    records[7][key] = value
    with pytest.raises(CampaignFileError) as refused:
        import_campaign(as_bytes([json.dumps(r) for r in records]), name="Per line", protocol="adequacy", seed=3,
                        options=PAGE)
    assert "document_page" in str(refused.value.errors) and key in str(refused.value.errors)
    assert not Campaign.objects.exists()


def test_document_instructions_are_shown_once_with_the_page(db, client):
    records = _records()
    for record in records:
        record["document_instructions"] = "A news story."
    campaign = import_campaign(as_bytes([json.dumps(r) for r in records]), name="Doc instr", protocol="adequacy",
                               seed=3, options=PAGE).campaign
    state = client.get(f"/api/hit/{start(client, campaign, 'w')}/").json()
    assert len(state["page"]) == 7 and state["item"]["instructions"] == "A news story."


def test_the_state_carries_the_page_from_the_current_segment_to_the_document_item(client, page_campaign):
    token = start(client, page_campaign, "w1")
    items = _items(token)
    state = client.get(f"/api/hit/{token}/").json()
    page = state["page"]
    assert [entry["id"] for entry in page] == [i.id for i in items[:7]]
    assert [entry["unit"] for entry in page] == ["segment"] * 6 + ["document"]
    assert page[0]["candidate"] == state["item"]["candidate"]
    assert all(set(entry) == {"id", "unit", "candidate", "reference"} for entry in page[:6])
    assert page[6] == {"id": items[6].id, "unit": "document"}
    # answered one at a time, the rest of the page is what remains; the document item alone is no page
    assert post_answer(client, token, {"item": items[0].id, "score": 50}).status_code == 201
    assert [e["id"] for e in client.get(f"/api/hit/{token}/").json()["page"]] == [i.id for i in items[1:7]]
    assert post_answer(client, token, _page_batch([{"id": i.id} for i in items[1:6]])).status_code == 201
    assert "page" not in client.get(f"/api/hit/{token}/").json()


def test_without_the_option_the_state_has_no_page(client, make_campaign):
    plain = make_campaign(options={"document_mode": True})
    assert "page" not in client.get(f"/api/hit/{start(client, plain, 'w')}/").json()
    flat = make_campaign(name="flat")
    assert "page" not in client.get(f"/api/hit/{start(client, flat, 'w')}/").json()


def test_a_page_is_stored_whole_in_one_post_and_the_next_page_comes_back(client, page_campaign):
    token = start(client, page_campaign, "w1")
    items = _items(token)
    page = client.get(f"/api/hit/{token}/").json()["page"]
    response = post_answer(client, token, _page_batch(page))
    assert response.status_code == 201, response.content
    after = response.json()
    assert after["position"] == 8 and after["item"]["id"] == items[7].id
    assert after["page"][0]["id"] == items[7].id and after["page"][-1]["unit"] == "document"
    assert _stored(token) == [(i.id, 30 + k) for k, i in enumerate(items[:7])]
    seconds = set(Judgment.objects.filter(assignment__token=token).values_list("seconds", flat=True))
    assert len(seconds) == 1  # the page's time, shared out equally (as every batch's)


def test_a_batch_past_the_page_is_a_400_and_stores_nothing(client, page_campaign):
    token = start(client, page_campaign, "w1")
    items = _items(token)
    page = client.get(f"/api/hit/{token}/").json()["page"]
    response = post_answer(client, token, _page_batch([*page, {"id": items[7].id}]))
    assert response.status_code == 400
    assert "past the current page" in response.json()["error"] and str(items[7].id) in response.json()["error"]
    assert _stored(token) == [] and Assignment.objects.get(token=token).position == 0


def test_a_document_item_reached_alone_is_a_page_of_one_that_a_batch_may_not_leave(client, page_campaign):
    """The segments answered one at a time leave the document item alone on its screen: still a page (of one),
    so a batch from it may not take the next document's items along."""
    token = start(client, page_campaign, "w1")
    items = _items(token)
    page = client.get(f"/api/hit/{token}/").json()["page"]
    for entry in page[:-1]:
        assert post_answer(client, token, {"item": entry["id"], "score": 40}).status_code == 201
    state = client.get(f"/api/hit/{token}/").json()
    assert state["item"]["id"] == page[-1]["id"] == items[6].id and "page" not in state
    response = post_answer(client, token, _page_batch([page[-1], {"id": items[7].id}]))
    assert response.status_code == 400 and "past the current page" in response.json()["error"]
    assert len(_stored(token)) == 6 and Assignment.objects.get(token=token).position == 6
    assert post_answer(client, token, {"item": items[6].id, "score": 55}).status_code == 201


def test_a_replayed_page_is_answered_as_before_and_stored_once(client, page_campaign):
    token = start(client, page_campaign, "w1")
    page = client.get(f"/api/hit/{token}/").json()["page"]
    first = post_answer(client, token, _page_batch(page))
    again = post_answer(client, token, _page_batch(page))
    assert again.status_code == 201 and again.json() == first.json()
    assert len(_stored(token)) == len(page)


def test_quality_control_items_look_like_any_other_on_the_page(client, page_campaign):
    token = start(client, page_campaign, "w1")
    kinds = set()
    while True:
        state = client.get(f"/api/hit/{token}/").json()
        if state["done"]:
            break
        page = state["page"]
        types = dict(HitItem.objects.filter(pk__in=[e["id"] for e in page]).values_list("id", "item_type"))
        kinds |= set(types.values())
        text = json.dumps(state)
        assert "item_type" not in text and "gold" not in text and not any(name in text for name in SYSTEMS)
        assert all(set(e) == {"id", "unit", "candidate", "reference"} for e in page[:-1])
        assert post_answer(client, token, _page_batch(page)).status_code == 201
    assert {"bad_ref", "repeat", "reference", "system"} <= kinds


@pytest.mark.parametrize("mode", ["silent", "loud"])
def test_tutorials_sit_only_between_documents_never_on_a_page(db, client, mode):
    campaign = da_campaign(lines=da_lines(tutorials=2, segments=12, docs=3), document_mode=True, document_page=True,
                           hit_size=40, tutorial_mode=mode)
    token = start(client, campaign, "w1")
    items = {i.id: i for i in _items(token)}
    tutorials_seen = 0
    while not (state := client.get(f"/api/hit/{token}/").json())["done"]:
        current = items[state["item"]["id"]]
        if current.item_type == "tutorial":
            tutorials_seen += 1
            assert "page" not in state
            before = [i for i in items.values() if i.position == current.position - 1]
            assert not before or before[0].item_type == "tutorial" or before[0].payload["unit"] == "document"
            body = {"item": current.id, "score": 10}
        else:
            assert current.payload["unit"] == "segment" and current.position == current.payload["first"]
            assert all(items[e["id"]].item_type != "tutorial" for e in state["page"])
            body = _page_batch(state["page"])
        assert post_answer(client, token, body).status_code == 201
    assert tutorials_seen == 2


def test_results_are_those_of_the_same_scores_given_one_at_a_time(client, api, researcher):
    def score_of(item):  # by what the item shows, so both campaigns get the same score for the same item
        unit = item.payload["unit"]
        return float(10 + (hash((item.segment.seg_id, item.segment.document.doc_id, unit, item.item_type,
                                 item.output.system.name if item.output_id else "")) % 80))

    campaigns = [import_campaign(lines(), name=name, protocol="adequacy", seed=3, owner=researcher,
                                 redundancy=2, options=options).campaign
                 for name, options in (("Singles", {"document_mode": True}), ("Pages", PAGE))]
    for worker in ("w1", "w2", "w3", "w4"):
        token = start(client, campaigns[0], worker)
        for item in _items(token):
            assert post_answer(client, token, {"item": item.id, "score": score_of(item)}).status_code == 201
        token = start(client, campaigns[1], worker)
        by_id = {i.id: i for i in _items(token)}
        posts = 0
        while not (state := client.get(f"/api/hit/{token}/").json())["done"]:
            body = {"batch": [{"item": e["id"], "score": score_of(by_id[e["id"]])} for e in state["page"]]}
            assert post_answer(client, token, body).status_code == 201
            posts += 1
        assert posts == sum(1 for i in by_id.values() if i.payload["unit"] == "document")  # one POST a document
    tables = []
    for campaign in campaigns:
        compute_results(campaign)
        tables.append([api.get(f"/api/campaigns/{campaign.slug}/systems/", {"workers": "all", **unit}).json()
                       ["results"] for unit in ({}, {"unit": "document"})])
    assert tables[0] == tables[1] and len(tables[0][1]) == len(SYSTEMS)
