"""Several threads submitting to one HIT at once: every item stored exactly once, none lost."""
import threading

import pytest
from django.db import connections
from django.test import Client

from annotation.models import Judgment

from .conftest import post_answer, start

pytestmark = pytest.mark.django_db(transaction=True)


def race(token: str, threads: int, submissions: int, results: list):
    """Each thread keeps answering whatever it believes is the current item, as a double-clicking browser would."""
    barrier = threading.Barrier(threads)

    def worker():
        client = Client()
        try:
            barrier.wait()
            state = client.get(f"/api/hit/{token}/").json()
            for _ in range(submissions):
                if state.get("done"):
                    break
                item = state["item"]["id"] if "item" in state else state["state"]["item"]["id"]
                response = post_answer(client, token, {"item": item, "score": 50})
                results.append(response.status_code)
                body = response.json()
                state = body.get("state", body) if response.status_code == 409 else body
        finally:
            connections.close_all()

    together(worker, threads)


def together(target, threads: int, timeout: float = 120) -> None:
    """Run `target` in `threads` threads at once and wait for them all."""
    pool = [threading.Thread(target=target) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(timeout=timeout)


def test_concurrent_submissions_store_each_item_exactly_once(make_campaign):
    campaign = make_campaign()
    token = start(Client(), campaign, "racer")
    results: list[int] = []
    race(token, threads=6, submissions=200, results=results)
    stored = list(Judgment.objects.filter(assignment__token=token).values_list("item__position", flat=True))
    assert sorted(stored) == list(range(100)), "every item exactly once"
    assert set(results) <= {201, 409}
    assert results.count(201) >= 100
    assert Client().get(f"/api/hit/{token}/").json()["done"] is True


def test_concurrent_identical_batches_are_stored_once(make_campaign):
    """Four browsers send the same batch of five answers at once (a retried request): stored once, every sender
    answered 201 (the winner, then replays) or 409; the HIT moves on by five."""
    token = start(Client(), make_campaign(), "batch-racer")
    state = Client().get(f"/api/hit/{token}/").json()
    first = state["item"]["id"]
    body = {"batch": [{"item": first + k, "score": 50} for k in range(5)]}  # a new campaign's ids run in HIT order
    barrier, results = threading.Barrier(4), []

    def send():
        barrier.wait()
        results.append(post_answer(Client(), token, body).status_code)
        connections.close_all()

    together(send, 4, timeout=60)
    stored = list(Judgment.objects.filter(assignment__token=token).values_list("item__position", flat=True))
    assert sorted(stored) == list(range(5)), "each answer of the batch exactly once"
    assert len(results) == 4 and set(results) <= {201, 409} and 201 in results
    assert Client().get(f"/api/hit/{token}/").json()["position"] == 6
