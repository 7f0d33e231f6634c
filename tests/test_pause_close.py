"""Pausing and closing a campaign take effect for HITs in progress at their next request (docs/api.md §8):
a paused campaign answers 423 with `"paused": true`, a closed one 410 with `"closed": true`, nothing is
stored, the HIT stays the worker's, and a finished HIT keeps its code. The status comes with the one read
of the hot path, so these answers cost no query more, and the write's guard re-checks it."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Assignment, Campaign, Judgment
from annotation.services import judging_sql
from annotation.services.judging import CLOSED_TEXT, PAUSED_TEXT

from .conftest import post_answer, start

pytestmark = pytest.mark.django_db


@pytest.fixture
def small(make_campaign):
    """One 20-item HIT, two places."""
    return make_campaign(n_segments=7, hit_size=20, redundancy=2)


def set_status(api, campaign, status):
    """Through the researcher API, as a researcher would."""
    response = api.post(f"/api/campaigns/{campaign.slug}/status/", {"status": status}, format="json")
    assert response.status_code == 200, response.content


def answer(client, token, count) -> dict:
    state = client.get(f"/api/hit/{token}/").json()
    for _ in range(count):
        state = post_answer(client, token, {"item": state["item"]["id"], "score": 70}).json()
    return state


def test_pause_at_the_next_request_then_resume(client, api, small):
    token = start(client, small, "w")
    state = answer(client, token, 3)
    current = state["item"]["id"]
    set_status(api, small, "paused")

    got = client.get(f"/api/hit/{token}/")
    assert got.status_code == 423
    assert got.json() == {"error": PAUSED_TEXT, "paused": True, "detail": PAUSED_TEXT, "position": 4, "total": 20,
                          "done": False}
    posted = post_answer(client, token, {"item": current, "score": 10})
    assert posted.status_code == 423 and posted.json()["paused"] is True
    assert Judgment.objects.count() == 3  # nothing stored while paused
    assignment = Assignment.objects.get(token=token)
    assert (assignment.status, assignment.position) == (Assignment.Status.ACTIVE, 3)  # the HIT stays theirs
    assert client.get(f"/hit/{token}/").status_code == 200  # the page loads; its script shows the message

    set_status(api, small, "active")
    resumed = client.get(f"/api/hit/{token}/")
    assert resumed.status_code == 200 and resumed.json()["item"]["id"] == current
    assert post_answer(client, token, {"item": current, "score": 10}).status_code == 201
    assert Judgment.objects.count() == 4


def test_close_at_the_next_request(client, api, small):
    token = start(client, small, "w")
    current = answer(client, token, 2)["item"]["id"]
    set_status(api, small, "closed")
    for response in (client.get(f"/api/hit/{token}/"), post_answer(client, token, {"item": current, "score": 10})):
        assert response.status_code == 410
        assert response.json() == {"error": CLOSED_TEXT, "closed": True, "detail": CLOSED_TEXT, "position": 3,
                                   "total": 20, "done": False}
    assert Judgment.objects.count() == 2
    page = client.get(f"/hit/{token}/")
    assert page.status_code == 410 and b"This campaign has closed; your judgments are saved." in page.content


def test_a_finished_hit_keeps_its_code_when_closed_or_paused(client, api, small):
    token = start(client, small, "w")
    done = answer(client, token, 20)
    assert done["done"] is True and "closed" not in done
    last = Judgment.objects.get(assignment__token=token, item__position=19).item_id
    set_status(api, small, "paused")
    assert client.get(f"/api/hit/{token}/").json() == done
    set_status(api, small, "closed")
    closed = client.get(f"/api/hit/{token}/")
    assert closed.status_code == 200
    assert closed.json() == {**done, "closed": True, "detail": CLOSED_TEXT}
    replay = post_answer(client, token, {"item": last, "score": 70})  # a retry of the last answer, lost on its way
    assert replay.status_code == 201 and replay.json()["completion_code"] == done["completion_code"]
    assert client.get(f"/hit/{token}/").status_code == 200
    assert Judgment.objects.count() == 20


def test_a_pause_committed_after_the_read_stores_nothing(client, small):
    """The race the status check on the read cannot see: the write's guard checks the campaign too."""
    token = start(client, small, "racer")
    answer(client, token, 1)
    snapshot = judging_sql.read(token)
    Campaign.objects.filter(pk=small.pk).update(status=Campaign.Status.PAUSED)
    assignment, item = snapshot.assignment, snapshot.items[1]
    now = timezone.now()
    judgment = Judgment(campaign_id=assignment.campaign_id, assignment_id=assignment.pk,
                        annotator_id=assignment.annotator_id, item_id=item.id, score=10, served_at=now, seconds=1.0)
    assignment.position, assignment.last_item_id = 2, item.id
    assignment.item_served_at = assignment.last_activity_at = now
    assert judging_sql.record(assignment, [judgment], expected_position=1) is False
    assert Judgment.objects.count() == 1 and Assignment.objects.get(token=token).position == 1
    # Through the API the lost write reads again and answers the pause.
    assert post_answer(client, token, {"item": item.id, "score": 10}).status_code == 423


def test_an_idle_workers_lost_hit_says_closed_when_the_campaign_closed(client, small):
    token = start(client, small, "idle")
    answer(client, token, 1)
    Assignment.objects.filter(token=token).update(status=Assignment.Status.ABANDONED)
    Campaign.objects.filter(pk=small.pk).update(status=Campaign.Status.PAUSED)
    assert "closed" not in client.get(f"/api/hit/{token}/").json()  # lost first: 410 gone, not "paused"
    assert client.get(f"/api/hit/{token}/").status_code == 410
    Campaign.objects.filter(pk=small.pk).update(status=Campaign.Status.CLOSED)
    assert client.get(f"/api/hit/{token}/").json()["closed"] is True


def test_entering_a_paused_campaign_says_so(client, api, small):
    start(client, small, "holder")
    set_status(api, small, "paused")
    for worker in ("holder", "newcomer"):
        response = client.get(f"/c/{small.slug}/start/", {"worker_id": worker})
        assert response.status_code == 403
        assert b"paused and not accepting annotators" in response.content and b"work so far is saved" in \
            response.content


def test_queries_per_post_are_unchanged_and_a_halted_answer_is_one_read(client, small):
    """Before this change a POST was one prepared read and one write on PostgreSQL (2 queries; 5 on SQLite:
    the read, then UPDATE and INSERT inside a savepoint), a GET one read. So it stays; a paused or closed
    answer is the read alone."""
    token = start(client, small, "counted")
    state = answer(client, token, 2)
    with CaptureQueriesContext(connection) as post_queries:
        state = post_answer(client, token, {"item": state["item"]["id"], "score": 1}).json()
    with CaptureQueriesContext(connection) as get_queries:
        client.get(f"/api/hit/{token}/")
    expected_post = 2 if connection.vendor == "postgresql" else 5
    assert (len(post_queries), len(get_queries)) == (expected_post, 1), post_queries.captured_queries
    for status in (Campaign.Status.PAUSED, Campaign.Status.CLOSED):
        Campaign.objects.filter(pk=small.pk).update(status=status)
        with CaptureQueriesContext(connection) as halted_post:
            assert post_answer(client, token, {"item": state["item"]["id"], "score": 1}).status_code in (410, 423)
        with CaptureQueriesContext(connection) as halted_get:
            assert client.get(f"/api/hit/{token}/").status_code in (410, 423)
        assert (len(halted_post), len(halted_get)) == (1, 1)
