"""A worker id is not a credential (docs/api.md §8.1): what a second browser presenting a known id gets, that refused
entries create no worker record, and how much work one crowd entry costs.

Binding on (the default), the id is held by the browser it was used in: its open HIT, its next HIT and its
completion codes are that browser's; any other browser gets one neutral answer that does not tell whether the id
has an open HIT, finished ones, or is unknown to this browser for another reason."""
import threading
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.models import Annotator, Assignment, Campaign
from annotation.views import pages

from .conftest import post_answer

pytestmark = pytest.mark.django_db

COOKIE = pages.BROWSER_COOKIE


@pytest.fixture
def protected(settings):
    settings.CROWD_BIND_BROWSER = True
    settings.CROWD_ENTRY_RATE_PER_IP = None
    settings.CROWD_ENTRY_RATE_PER_CAMPAIGN = None
    settings.CROWD_MAX_OPEN_HITS_PER_IP = None
    return settings


def enter(client, campaign, worker, **params):
    return client.get(f"/c/{campaign.slug}/start/", {"worker_id": worker, **params})


def token_of(response) -> str:
    assert response.status_code == 302, response.content
    return response["Location"].rstrip("/").split("/")[-1]


def finish(client, token) -> str:
    state = client.get(f"/api/hit/{token}/").json()
    while not state["done"]:
        response = post_answer(client, token, {"item": state["item"]["id"], "score": 60})
        assert response.status_code == 201, response.content
        state = response.json()
    return state["completion_code"]


def refusal(response) -> str:
    """The refusal page without what differs by request anyway (the try-again link carries the worker id)."""
    assert response.status_code == 409, response.content
    return response.content.decode().replace(response.wsgi_request.get_full_path(), "")


# Defect 8: a worker id is a bearer credential -------------------------------------------------------------------


def test_another_browser_gets_neither_the_next_hit_nor_the_codes_of_a_finished_worker(protected, make_campaign):
    campaign = make_campaign(n_segments=14, hit_size=20, redundancy=2)  # two HITs of 20 items
    victim, stranger = Client(), Client()
    code = finish(victim, token_of(enter(victim, campaign, "VIC-9")))

    taken = enter(stranger, campaign, "VIC-9")
    assert taken.status_code == 409 and code not in taken.content.decode()
    assert Assignment.objects.filter(annotator__external_id="VIC-9").count() == 1  # no HIT handed out
    # A stranger on the bare entry URL, and the same id under another market's parameter, learn nothing either.
    assert code not in stranger.get(f"/c/{campaign.slug}/start/").content.decode()
    assert code not in stranger.get(f"/c/{campaign.slug}/start/", {"PROLIFIC_PID": "VIC-9"}).content.decode()

    second = token_of(enter(victim, campaign, "VIC-9"))  # the browser that earned it goes on
    finish(victim, second)
    page = enter(victim, campaign, "VIC-9").content.decode()
    assert "You have finished" in page and code in page
    assert code not in enter(stranger, campaign, "VIC-9").content.decode()


def test_codes_are_shown_only_where_they_were_earned_also_when_the_campaign_is_closed(protected, make_campaign):
    campaign = make_campaign(n_segments=7, hit_size=20, redundancy=2, completion_code="SECRETCODE")
    victim = Client()
    finish(victim, token_of(enter(victim, campaign, "VIC-9")))
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.CLOSED)
    assert b"SECRETCODE" in enter(victim, campaign, "VIC-9").content
    stranger = enter(Client(), campaign, "VIC-9")
    unknown = enter(Client(), campaign, "never-seen")
    assert stranger.status_code == unknown.status_code == 403 and b"SECRETCODE" not in stranger.content
    assert stranger.content.replace(b"VIC-9", b"") == unknown.content.replace(b"never-seen", b"")


def test_the_refusal_does_not_tell_an_open_hit_from_finished_ones(protected, make_campaign):
    campaign = make_campaign(n_segments=105, redundancy=2, hit_timeout_minutes=30)
    open_browser, done_browser = Client(), Client()
    token_of(enter(open_browser, campaign, "busy"))
    finish(done_browser, token_of(enter(done_browser, campaign, "done")))
    busy, done = enter(Client(), campaign, "busy"), enter(Client(), campaign, "done")
    assert refusal(busy).replace("busy", "") == refusal(done).replace("done", "")
    page = refusal(busy)
    assert "in use in another browser" in page and "30 minutes" in page and "minutes from now" not in page
    assert COOKIE not in busy.cookies


def test_a_worker_who_changed_browser_goes_on_once_the_id_has_been_unused_for_the_timeout(protected,
                                                                                         make_campaign):
    campaign = make_campaign(n_segments=14, hit_size=20, redundancy=2, hit_timeout_minutes=30)
    first, second = Client(), Client()
    code = finish(first, token_of(enter(first, campaign, "mover")))
    assert enter(second, campaign, "mover").status_code == 409
    Assignment.objects.filter(annotator__external_id="mover").update(
        last_activity_at=timezone.now() - timedelta(minutes=31))
    token = token_of(enter(second, campaign, "mover"))  # the next HIT, in the browser now used
    assert Assignment.objects.get(token=token).browser_key == second.cookies[COOKIE].value
    assert enter(first, campaign, "mover").status_code == 409  # the id has moved
    assert code not in enter(second, campaign, "mover").content.decode()  # codes stay where they were earned


def test_a_stranger_cannot_answer_a_known_workers_qualification_form(protected, make_campaign):
    campaign = make_campaign(n_segments=105, redundancy=2, require_qualification=True)
    victim = Client()
    url = f"/c/{campaign.slug}/start/?worker_id=VIC-9"
    token_of(victim.post(url, {"native_language": "German", "country": "Austria"}))
    refused = Client().post(url, {"native_language": "Klingon", "country": "Qo'noS"})
    assert refused.status_code == 409
    assert Annotator.objects.get(external_id="VIC-9").native_language == "de"  # stored as its code


@pytest.mark.django_db(transaction=True)
def test_parallel_first_requests_of_one_id_bind_it_to_one_browser(protected, make_campaign):
    """A double click on a first visit: requests without a cookie at once. One HIT is handed out, under one
    worker record; the others are refused without a key of their own, so the browser keeps the HIT's key."""
    campaign = make_campaign(n_segments=140, redundancy=2)  # 4 HITs
    barrier, responses = threading.Barrier(6), []

    def first_visit():
        try:
            barrier.wait()
            responses.append(enter(Client(), campaign, "clicker"))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=first_visit) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(r.status_code for r in responses) == [302] + [409] * 5
    assert [COOKIE in r.cookies for r in responses if r.status_code == 409] == [False] * 5
    assert Assignment.objects.filter(annotator__external_id="clicker").count() == 1
    assert Annotator.objects.filter(external_id="clicker").count() == 1


# Defect 9: refused entries create no worker record ---------------------------------------------------------------


def test_refused_entries_create_no_worker(protected, make_campaign):
    protected.CROWD_MAX_OPEN_HITS_PER_IP = 3
    campaign = make_campaign(n_segments=105, redundancy=2)  # 3 HITs, 6 places
    statuses = [enter(Client(REMOTE_ADDR="10.9.0.1"), campaign, f"w{i}").status_code for i in range(20)]
    assert statuses == [302] * 3 + [429] * 17
    assert Annotator.objects.count() == 3

    full = make_campaign(name="Full", n_segments=7, hit_size=20)  # one place
    token_of(enter(Client(), full, "first"))
    assert enter(Client(), full, "second").status_code == 200  # no more work
    Campaign.objects.filter(pk=full.pk).update(status=Campaign.Status.PAUSED)
    assert enter(Client(), full, "third").status_code == 403
    form = make_campaign(name="Form", require_qualification=True)
    assert b'name="native_language"' in enter(Client(), form, "fourth").content
    assert not Annotator.objects.filter(external_id__in=["second", "third", "fourth"]).exists()


def test_a_qualified_newcomer_is_stored_with_their_answers_when_a_hit_is_handed_out(protected, make_campaign):
    campaign = make_campaign(require_qualification=True, required_native_language="German")
    url = f"/c/{campaign.slug}/start/?worker_id=newcomer"
    token_of(Client().post(url, {"native_language": "german", "country": "Austria"}))
    annotator = Annotator.objects.get(external_id="newcomer")
    assert (annotator.native_language, annotator.country, annotator.source) == ("de", "Austria", "crowd")
    # A declaration that disqualifies is kept, so that the worker is not asked again (and cannot answer again).
    other = f"/c/{campaign.slug}/start/?worker_id=other"
    assert Client().post(other, {"native_language": "French", "country": "France"}).status_code == 403
    assert Annotator.objects.get(external_id="other").native_language == "fr"
    assert Client().post(other, {"native_language": "German", "country": "Austria"}).status_code == 403
    assert not Assignment.objects.filter(annotator__external_id="other").exists()


# Entry path cost ---------------------------------------------------------------------------------------------------


def test_an_entry_costs_a_bounded_number_of_statements(protected, make_campaign):
    protected.CROWD_MAX_OPEN_HITS_PER_IP = 3
    campaign = make_campaign(n_segments=140, redundancy=3)  # 4 HITs
    for i in range(6):
        token_of(enter(Client(REMOTE_ADDR=f"10.8.0.{i}"), campaign, f"old{i}"))
    client = Client(REMOTE_ADDR="10.8.1.1")
    with CaptureQueriesContext(connection) as new:
        token = token_of(enter(client, campaign, "newcomer"))
    with CaptureQueriesContext(connection) as back:
        assert token_of(enter(client, campaign, "newcomer")) == token
    assert len(new) <= 17, [q["sql"][:80] for q in new]  # 21 before the entry path was trimmed
    assert len(back) <= 4, [q["sql"][:80] for q in back]
