"""Screens that show more than their item (ranking: the segment's outputs; contrastive ESA: every system's document;
a reading-comprehension vote: the article and the HIT's other questions) get it from the one read of the judging
path (annotation/building/screen_context.py): a GET is one statement and a POST two, as for every protocol, and
the payload is the one the same item gives when read by the ORM (the admin's preview)."""
import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.models import Assignment, HitItem
from annotation.protocols import get_protocol

from .conftest import post_answer, start
from .test_error_span_protocols import span_campaign
from .test_ranking_protocol import ranking
from .test_reading_comprehension import enter, rc_campaign, stage, work, write

pytestmark = pytest.mark.django_db


def _ranking():
    campaign = ranking()
    client = Client()
    return client, start(client, campaign, "w1")


def _contrastive():
    campaign = span_campaign("contrastive-esa", tutorial=0, perturbation_rate=0.0)
    client = Client()
    return client, start(client, campaign, "w1")


def _vote(capture):
    campaign = rc_campaign()
    with capture(execute=True):
        work(campaign, ["w1", "w2"], write)
    return enter(stage(campaign, "vote"), "v1")


def _answer(item: dict) -> dict:
    if item["protocol"] == "ranking":
        return {"ranks": {c["key"]: 1 for c in item["candidates"]}}
    if item["protocol"] == "contrastive-esa":
        return {"candidates": {c["key"]: {"score": 50} for c in item["candidates"]}}
    return {"good": "yes", "redundant_with": item["others"][0]["id"]}  # checked against the other questions


@pytest.mark.parametrize("protocol", ["ranking", "contrastive-esa", "reading-comprehension-vote"])
def test_a_screen_reading_beyond_its_item_costs_no_statement_of_its_own(protocol, django_capture_on_commit_callbacks):
    client, token = {"ranking": _ranking, "contrastive-esa": _contrastive,
                     "reading-comprehension-vote": lambda: _vote(django_capture_on_commit_callbacks)}[protocol]()
    state = client.get(f"/api/hit/{token}/").json()
    assert state["item"]["protocol"] == protocol
    state = post_answer(client, token, {"item": state["item"]["id"], **_answer(state["item"])}).json()  # prepares
    with CaptureQueriesContext(connection) as posted:
        response = post_answer(client, token, {"item": state["item"]["id"], **_answer(state["item"])})
    assert response.status_code == 201, response.content
    with CaptureQueriesContext(connection) as got:
        shown = client.get(f"/api/hit/{token}/").json()["item"]
    counts = (len(posted), len(got))
    if connection.vendor == "postgresql":
        assert counts == (2, 1), [q["sql"][:120] for q in posted.captured_queries + got.captured_queries]
    else:  # read, then UPDATE and INSERT in a transaction (a savepoint inside the test's own)
        assert counts[0] <= 5 and counts[1] == 1, counts
    by_orm = HitItem.objects.select_related("hit__campaign", "segment", "output").get(pk=shown["id"])
    assert get_protocol(protocol).item_payload(by_orm) == shown
    assert Assignment.objects.get(token=token).position == 2
