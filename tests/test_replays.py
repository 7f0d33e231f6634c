"""A replayed POST with the same answer gets 201 and is stored once; with another answer, 409 and the stored
answer, and nothing changes — also when the two arrive at the same moment."""
import threading

import pytest
from django.db import connections
from django.test import Client

from annotation.models import Judgment

from .conftest import post_answer, start


@pytest.mark.django_db
def test_a_replay_with_another_score_is_409_with_the_stored_answer(campaign):
    client = Client()
    token = start(client, campaign, "replayer")
    item = client.get(f"/api/hit/{token}/").json()["item"]["id"]
    assert post_answer(client, token, {"item": item, "score": 10}).status_code == 201
    again = post_answer(client, token, {"item": item, "score": 10})
    assert again.status_code == 201  # same answer: answered as before
    other = post_answer(client, token, {"item": item, "score": 90})
    assert other.status_code == 409
    body = other.json()
    assert body["stored"] == {"item": item, "score": 10.0} and body["state"]["position"] == 2
    assert list(Judgment.objects.filter(item_id=item).values_list("score", flat=True)) == [10.0]


@pytest.mark.django_db(transaction=True)
def test_two_different_answers_at_once_store_one_and_refuse_the_other(campaign):
    token = start(Client(), campaign, "racer")
    item = Client().get(f"/api/hit/{token}/").json()["item"]["id"]
    barrier, codes, stored = threading.Barrier(2), {}, {}

    def submit(score):
        try:
            barrier.wait()
            response = post_answer(Client(), token, {"item": item, "score": score})
            codes[score] = response.status_code
            stored[score] = response.json().get("stored")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=submit, args=(score,)) for score in (20, 80)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    kept = list(Judgment.objects.filter(item_id=item).values_list("score", flat=True))
    assert len(kept) == 1 and sorted(codes.values()) == [201, 409]
    loser = next(score for score, code in codes.items() if code == 409)
    assert stored[loser] == {"item": item, "score": kept[0]} and kept[0] != loser
