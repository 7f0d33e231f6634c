"""Several answers in one POST, `{"batch": [answer, ...]}` (docs/api.md §8.3, "Several answers in one request"):
each answer checked as if it came alone, the batch stored whole or not at all, a replay answered as before and
stored once, the 409 rules of a single answer kept, and still two statements per POST."""
import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.models import Assignment, Judgment, TutorialTry
from annotation.services import judging
from evaluation.models import WorkerGate

from .conftest import post_answer, start
from .test_training import RIGHT, training_campaign, training_lines


@pytest.fixture
def hit(make_campaign):
    """A worker's client, HIT token and first state on a fresh 100-item adequacy HIT."""
    client = Client()
    token = start(client, make_campaign(), "batcher")
    return client, token, client.get(f"/api/hit/{token}/").json()


def _ids(token: str, first: int, count: int) -> list[int]:
    """The ids of the HIT's items at 0-based positions first .. first + count - 1."""
    assignment = Assignment.objects.get(token=token)
    return list(assignment.hit.items.filter(position__gte=first, position__lt=first + count)
                .order_by("position").values_list("id", flat=True))


def _batch(ids, score=40):
    return {"batch": [{"item": item, "score": score + k % 50} for k, item in enumerate(ids)]}


def _stored(token: str) -> list[tuple[int, float]]:
    return list(Judgment.objects.filter(assignment__token=token).order_by("id").values_list("item_id", "score"))


def test_a_batch_stores_every_answer_in_order_and_answers_the_next_item(hit):
    client, token, state = hit
    ids = _ids(token, 0, 5)
    assert state["item"]["id"] == ids[0]
    response = post_answer(client, token, _batch(ids))
    assert response.status_code == 201, response.content
    after = response.json()
    assert after["position"] == 6 and after["item"]["id"] == _ids(token, 5, 1)[0]
    assert _stored(token) == [(item, 40 + k) for k, item in enumerate(ids)]
    assignment = Assignment.objects.get(token=token)
    assert assignment.position == 5 and assignment.last_item_id == ids[-1]
    seconds = list(Judgment.objects.filter(assignment=assignment).values_list("seconds", flat=True))
    assert len(set(seconds)) == 1  # the batch's time, shared out equally


def test_a_replayed_batch_is_answered_as_before_and_stored_once(hit):
    client, token, _ = hit
    ids = _ids(token, 0, 4)
    first = post_answer(client, token, _batch(ids))
    again = post_answer(client, token, _batch(ids))
    assert again.status_code == 201 and again.json() == first.json()
    assert len(_stored(token)) == 4


def test_a_replayed_batch_with_another_answer_is_a_conflict_and_keeps_the_first(hit):
    client, token, _ = hit
    ids = _ids(token, 0, 3)
    post_answer(client, token, _batch(ids))
    changed = _batch(ids)
    changed["batch"][1]["score"] = 99
    response = post_answer(client, token, changed)
    assert response.status_code == 409
    assert response.json()["stored"] == {"item": ids[1], "score": 41}
    assert _stored(token) == [(item, 40 + k) for k, item in enumerate(ids)]


@pytest.mark.parametrize("bad", [
    {"score": 150},  # out of range
    {"score": 40, "seconds": 3},  # a field the answer does not have
    {"score": "x"},
])
def test_one_bad_answer_refuses_the_whole_batch_and_stores_nothing(hit, bad):
    client, token, _ = hit
    ids = _ids(token, 0, 4)
    body = _batch(ids)
    body["batch"][2] = {"item": ids[2], **bad}
    response = post_answer(client, token, body)
    assert response.status_code == 400, response.content
    assert _stored(token) == []
    assert Assignment.objects.get(token=token).position == 0


@pytest.mark.parametrize("order", ["skip", "repeat", "swap"])
def test_a_batch_must_answer_consecutive_items_in_order(hit, order):
    client, token, _ = hit
    ids = _ids(token, 0, 4)
    sent = {"skip": [ids[0], ids[2]], "repeat": [ids[0], ids[0]], "swap": [ids[0], ids[2], ids[1]]}[order]
    response = post_answer(client, token, _batch(sent))
    assert response.status_code == 400 and "consecutive" in response.json()["error"]
    assert _stored(token) == []


def test_a_batch_not_starting_at_the_current_item_is_a_conflict(hit, make_campaign):
    client, token, _ = hit
    response = post_answer(client, token, _batch(_ids(token, 1, 3)))
    assert response.status_code == 409 and response.json()["state"]["position"] == 1
    assert _stored(token) == []
    strict, campaign = Client(), make_campaign(name="Strict")  # with navigation off, a 400, as for one answer
    campaign.options = {**(campaign.options or {}), "allow_item_navigation": False}
    campaign.save(update_fields=["options"])
    other = start(strict, campaign, "strict")
    strict.get(f"/api/hit/{other}/")
    response = post_answer(strict, other, _batch(_ids(other, 1, 2)))
    assert response.status_code == 400 and "in order" in response.json()["error"]


def test_a_batch_past_the_end_is_refused_and_one_up_to_the_end_completes_the_hit(hit):
    client, token, _ = hit
    post_answer(client, token, _batch(_ids(token, 0, 95)))
    over = _ids(token, 95, 5) + [_ids(token, 0, 1)[0]]
    response = post_answer(client, token, _batch(over))
    assert response.status_code == 400 and "HIT ends" in response.json()["error"]
    assert len(_stored(token)) == 95
    done = post_answer(client, token, _batch(_ids(token, 95, 5)))
    assert done.status_code == 201 and done.json()["done"] is True and done.json()["completion_code"]
    assignment = Assignment.objects.get(token=token)
    assert assignment.status == Assignment.Status.COMPLETED and len(_stored(token)) == 100


@pytest.mark.parametrize("body", [
    {"batch": []},
    {"batch": "all of them"},
    {"batch": [{"score": 40}]},  # an answer without its item
    {"batch": [7]},
    {"batch": [{"item": 1, "score": 40}], "extra": 1},
    {"batch": [{"item": 1, "score": 40}] * (judging.MAX_BATCH + 1)},
])
def test_a_malformed_batch_is_a_400_and_stores_nothing(hit, body):
    client, token, _ = hit
    response = post_answer(client, token, body)
    assert response.status_code == 400, response.content
    assert _stored(token) == []


def test_a_batch_costs_two_statements_like_a_single_answer(hit):
    client, token, _ = hit
    post_answer(client, token, _batch(_ids(token, 0, 3)))  # prepares this connection's statements
    body = _batch(_ids(token, 3, 3))
    with CaptureQueriesContext(connection) as posted:
        response = post_answer(client, token, body)
    assert response.status_code == 201
    if connection.vendor == "postgresql":
        assert len(posted) == 2, [q["sql"][:80] for q in posted.captured_queries]
    assert len(_stored(token)) == 6


def test_a_tutorial_item_is_answered_by_itself_not_in_a_batch(db):
    campaign, client = training_campaign(lines=training_lines(tutorials=2)), Client()  # loud: tutorials first
    token = start(client, campaign, "learner")
    client.get(f"/api/hit/{token}/")
    ids = _ids(token, 0, 2)
    response = post_answer(client, token, {"batch": [{"item": item, **RIGHT} for item in ids]})
    assert response.status_code == 400 and "tutorial" in response.json()["error"]
    assert _stored(token) == [] and not TutorialTry.objects.exists()
    assert post_answer(client, token, {"batch": [{"item": ids[0], **RIGHT}]}).status_code == 201  # one is fine


def test_silent_checks_in_a_batch_are_scored_like_items_alone_and_never_told_apart(
        db, django_capture_on_commit_callbacks):
    """To the judge a silent check is an item like the others (docs/methods.md §12.5): a batch over checks is not
    refused (a refusal would tell them apart), each check is scored and kept as when it comes alone, and failing
    them gates the worker as the single answers do."""
    campaign = training_campaign(lines=training_lines(tutorials=2), tutorial_mode="silent")
    client = Client()
    token = start(client, campaign, "batch-careless")
    total = client.get(f"/api/hit/{token}/").json()["total"]
    ids = _ids(token, 0, total)
    assert Assignment.objects.get(token=token).hit.items.filter(item_type="tutorial").count() == 2
    with django_capture_on_commit_callbacks(execute=True):
        response = post_answer(client, token, {"batch": [{"item": item, "spans": [], "score": 50} for item in ids]})
    assert response.status_code == 201, response.content
    assert response.json()["done"] and "training" not in response.json()
    assert len(_stored(token)) == total
    assert list(TutorialTry.objects.values_list("mode", "passed", "final")) == [("silent", False, True)] * 2
    assert WorkerGate.objects.get(campaign=campaign).rule == "checks"
