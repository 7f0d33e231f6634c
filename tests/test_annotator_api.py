"""The annotator state machine of docs/api.md §8: current item only, 409, 400, replays, server-side seconds."""
import json
import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Assignment, HitItem, Judgment

from .conftest import post_answer, start

pytestmark = pytest.mark.django_db


def get_state(client, token):
    response = client.get(f"/api/hit/{token}/")
    assert response.status_code == 200
    return response.json()


def test_first_state_shows_only_what_the_screen_needs(client, campaign):
    token = start(client, campaign, "w1")
    state = get_state(client, token)
    assert (state["position"], state["total"], state["done"]) == (1, 100, False)
    assert set(state["item"]) == {"id", "protocol", "candidate", "reference"}  # never the item type or system
    assert state["item"]["protocol"] == "adequacy"
    item = HitItem.objects.get(pk=state["item"]["id"])
    assert item.position == 0


def test_whole_hit_then_completion_code(client, campaign):
    token = start(client, campaign, "w1")
    state = get_state(client, token)
    for k in range(1, 101):
        assert state["position"] == k
        response = post_answer(client, token, {"item": state["item"]["id"], "score": k - 0.5})
        assert response.status_code == 201
        state = response.json()
    assert state["done"] is True and len(state["completion_code"]) >= 8
    assignment = Assignment.objects.get(token=token)
    assert assignment.status == "completed" and assignment.completion_code == state["completion_code"]
    scores = list(Judgment.objects.filter(assignment=assignment).order_by("item__position").values_list("score",
                                                                                                        flat=True))
    assert scores == [k - 0.5 for k in range(1, 101)]
    assert get_state(client, token) == state
    assert post_answer(client, token, {"item": state.get("item", {}).get("id", 1), "score": 3}).status_code == 409


def test_only_the_current_item_is_accepted(client, campaign):
    token = start(client, campaign, "w1")
    first = get_state(client, token)["item"]["id"]
    items = dict(HitItem.objects.filter(hit__assignments__token=token).values_list("position", "id"))
    later = post_answer(client, token, {"item": items[5], "score": 10})
    assert later.status_code == 409 and later.json()["state"]["item"]["id"] == first
    assert post_answer(client, token, {"item": first, "score": 10}).status_code == 201
    assert post_answer(client, token, {"item": items[2], "score": 10}).status_code == 409
    earlier_than_last = post_answer(client, token, {"item": items[1], "score": 10})
    assert earlier_than_last.status_code == 201  # item 1 is now the current one
    assert post_answer(client, token, {"item": first, "score": 99}).status_code == 409  # no way back
    assert Judgment.objects.count() == 2


def test_a_replayed_submission_is_answered_as_before_and_stored_once(client, campaign):
    token = start(client, campaign, "w1")
    item = get_state(client, token)["item"]["id"]
    first = post_answer(client, token, {"item": item, "score": 42})
    again = post_answer(client, token, {"item": item, "score": 42})
    assert first.status_code == again.status_code == 201
    assert first.json() == again.json()
    assert Judgment.objects.count() == 1 and Judgment.objects.get().score == 42


@pytest.mark.parametrize("body,reason", [
    ("not json", "the body must be JSON"),
    ("[1, 2]", "the body must be a JSON object"),
    ({"score": 50}, "'item' must be the integer id"),
    ({"item": "1", "score": 50}, "'item' must be the integer id"),
    ({"item": True, "score": 50}, "'item' must be the integer id"),
    ({"item": "CURRENT"}, "'score' must be a number"),
    ({"item": "CURRENT", "score": "50"}, "'score' must be a number"),
    ({"item": "CURRENT", "score": True}, "'score' must be a number"),
    ({"item": "CURRENT", "score": None}, "'score' must be a number"),
    ({"item": "CURRENT", "score": 100.01}, "'score' must lie between 0 and 100"),
    ({"item": "CURRENT", "score": -1}, "'score' must lie between 0 and 100"),
    ('{"item": CURRENT, "score": NaN}', "'score' must be a number"),
    ('{"item": CURRENT, "score": Infinity}', "'score' must be a number"),
])
def test_malformed_or_out_of_range_input_gets_400_and_changes_nothing(client, campaign, body, reason):
    token = start(client, campaign, "w1")
    current = get_state(client, token)["item"]["id"]
    if isinstance(body, dict):
        body = {k: (current if v == "CURRENT" else v) for k, v in body.items()}
    else:
        body = body.replace("CURRENT", str(current))
    response = post_answer(client, token, body)
    assert response.status_code == 400
    assert response.json()["error"].startswith(reason)
    assert Judgment.objects.count() == 0
    assert get_state(client, token)["item"]["id"] == current


def test_unknown_token_is_404(client, campaign):
    assert client.get("/api/hit/not-a-token/").status_code == 404
    assert post_answer(client, "not-a-token", {"item": 1, "score": 1}).status_code == 404


def test_seconds_are_measured_on_the_server(client, campaign):
    token = start(client, campaign, "w1")
    item = get_state(client, token)["item"]["id"]
    time.sleep(0.3)
    claimed = post_answer(client, token, {"item": item, "score": 50, "seconds": 9999})  # a client cannot say
    assert claimed.status_code == 400 and claimed.json()["error"].startswith("unexpected field 'seconds'")
    state = post_answer(client, token, {"item": item, "score": 50}).json()
    time.sleep(0.1)
    post_answer(client, token, {"item": state["item"]["id"], "score": 50})
    first, second = Judgment.objects.order_by("item__position").values_list("seconds", flat=True)
    assert 0.3 <= first < 5 and 0.1 <= second < 5


def test_queries_per_request_do_not_grow_with_progress(client, campaign):
    """One read per GET; one read and one write per POST (two writes in a transaction off PostgreSQL).
    The first request on a connection also prepares its statements (PostgreSQL), hence k >= 2."""
    token = start(client, campaign, "w1")
    state = get_state(client, token)
    counts = {}
    for k in range(1, 100):
        with CaptureQueriesContext(connection) as post_queries:
            state = post_answer(client, token, {"item": state["item"]["id"], "score": 1}).json()
        with CaptureQueriesContext(connection) as get_queries:
            get_state(client, token)
        if k in (2, 50, 99):
            counts[k] = (len(post_queries), len(get_queries))
    assert counts[2] == counts[50] == counts[99], counts
    if connection.vendor == "postgresql":
        assert counts[2] == (2, 1), counts
    else:  # read, then UPDATE and INSERT in a transaction (a savepoint inside the test's own)
        assert counts[2][0] <= 5 and counts[2][1] == 1, counts


def test_an_idle_worker_loses_the_hit_but_keeps_their_judgments(client, campaign):
    campaign.redundancy = 1
    campaign.save()
    token = start(client, campaign, "slow")
    for _ in range(3):
        item = get_state(client, token)["item"]["id"]
        post_answer(client, token, {"item": item, "score": 30})
    Assignment.objects.filter(token=token).update(last_activity_at=timezone.now() - timedelta(
        minutes=campaign.hit_timeout_minutes + 1))
    other = start(client, campaign, "fast")
    assert Assignment.objects.get(token=other).hit == Assignment.objects.get(token=token).hit
    assert Assignment.objects.get(token=token).status == "abandoned"
    assert Judgment.objects.filter(assignment__token=token).count() == 3
    assert client.get(f"/api/hit/{token}/").status_code == 410
    assert post_answer(client, token, {"item": 1, "score": 1}).status_code == 410
    assert client.get(f"/hit/{token}/").status_code == 410


def test_an_active_worker_keeps_the_hit(client, campaign):
    campaign.redundancy = 1
    campaign.save()
    token = start(client, campaign, "steady")
    post_answer(client, token, {"item": get_state(client, token)["item"]["id"], "score": 30})
    assert start(client, campaign, "steady") == token
    response = client.get(f"/c/{campaign.slug}/start/", {"worker_id": "newcomer"})
    assert response.status_code == 200 and b"no more work" in response.content


def test_body_too_large_is_refused(client, campaign):
    token = start(client, campaign, "w1")
    assert post_answer(client, token, json.dumps({"item": 1, "score": 1, "pad": "x" * 70000})).status_code == 400
