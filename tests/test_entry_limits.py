"""A campaign's crowd entry limits (issue 23, defect 7; docs/api.md §8.1): "crowd" keeps the per-address limits and
the browser binding, "lab" drops them so that a lab or class behind one address works; the refusals say what the
researcher can change, and the admin page and the API show the limits in force."""
import uuid

import pytest
from django.test import Client

from annotation.models import Assignment
from annotation.views.pages import LAB_HINT

pytestmark = pytest.mark.django_db
LAB = "10.7.0.1"  # the one address every machine of the lab is seen from


@pytest.fixture
def limits(settings):
    """Today's crowd limits, with this test's own rate-limit counters."""
    settings.CROWD_BIND_BROWSER = True
    settings.CROWD_ENTRY_RATE_PER_IP = None
    settings.CROWD_ENTRY_RATE_PER_CAMPAIGN = None
    settings.CROWD_MAX_OPEN_HITS_PER_IP = 3
    settings.TRUSTED_PROXY_COUNT = 0
    settings.RATELIMIT_CACHE_PREFIX = f"rl-test-{uuid.uuid4().hex}:"
    return settings


def enter(campaign, worker, client=None):
    return (client or Client(REMOTE_ADDR=LAB)).get(f"/c/{campaign.slug}/start/", {"worker_id": worker})


def with_abandoned_tabs(make_campaign, entry_limits):
    """A campaign with room for 12 workers, 3 of whom took a HIT from the lab's address and left the tab open."""
    campaign = make_campaign(n_segments=140, redundancy=3, entry_limits=entry_limits)
    for i in range(3):
        assert enter(campaign, f"tab{i}").status_code == 302
    return campaign


def test_a_lab_campaign_lets_five_workers_in_behind_one_address_with_three_abandoned_tabs(limits, make_campaign):
    campaign = with_abandoned_tabs(make_campaign, "lab")
    for i in range(5):
        assert enter(campaign, f"student{i}").status_code == 302
    assert Assignment.objects.filter(campaign=campaign, entry_ip=LAB, status="active").count() == 8


def test_a_crowd_campaign_still_refuses_and_the_429_page_says_what_the_researcher_can_change(limits,
                                                                                           make_campaign):
    campaign = with_abandoned_tabs(make_campaign, "crowd")
    refused = enter(campaign, "student0")
    page = refused.content.decode()
    assert refused.status_code == 429 and "Too many open HITs" in page
    assert "ask the researcher to switch this campaign to lab limits" in page and LAB_HINT in page
    assert Assignment.objects.filter(campaign=campaign).count() == 3


def test_the_entry_rate_per_address_holds_for_crowd_only(limits, make_campaign):
    limits.CROWD_ENTRY_RATE_PER_IP = "2/m"
    crowd = make_campaign(n_segments=140, redundancy=3, name="Crowd")
    lab = make_campaign(n_segments=140, redundancy=3, name="Lab", entry_limits="lab")
    assert [enter(lab, f"l{i}").status_code for i in range(4)] == [302] * 4
    assert [enter(crowd, f"c{i}").status_code for i in range(2)] == [302] * 2
    refused = enter(crowd, "c2")
    assert refused.status_code == 429 and LAB_HINT in refused.content.decode()
    assert enter(lab, "l4").status_code == 302


def test_in_a_lab_a_worker_goes_on_from_another_browser(limits, make_campaign):
    """The browser binding is off in a lab: the worker's closed browser does not lock them out (409) for the
    HIT's idle timeout; the same HIT goes on in the new browser."""
    crowd = make_campaign(n_segments=140, redundancy=3, name="Crowd")
    lab = make_campaign(n_segments=140, redundancy=3, name="Lab", entry_limits="lab")
    first = enter(lab, "w1")
    again = enter(lab, "w1", Client(REMOTE_ADDR=LAB))
    assert first.status_code == again.status_code == 302 and first["Location"] == again["Location"]
    assert enter(crowd, "w1").status_code == 302
    in_use = enter(crowd, "w1", Client(REMOTE_ADDR=LAB))
    assert in_use.status_code == 409 and LAB_HINT in in_use.content.decode()


def test_the_admin_page_and_the_api_show_the_limits_in_force(limits, make_campaign, admin_client, api):
    limits.CROWD_ENTRY_RATE_PER_IP = "30/m"
    crowd = make_campaign(name="Crowd")
    lab = make_campaign(name="Lab", entry_limits="lab")
    page = admin_client.get(f"/admin/annotation/campaign/{crowd.pk}/change/").content.decode()
    assert "Crowd entry limits" in page and "Mode: crowd" in page
    assert "Open HITs per network address: at most 3" in page and "Entry rate per network address: at most 30/m" in page
    page = admin_client.get(f"/admin/annotation/campaign/{lab.pk}/change/").content.decode()
    assert "Mode: lab" in page and "Open HITs per network address: no limit" in page
    assert "Worker id bound to its browser: no" in page
    assert api.get(f"/api/campaigns/{crowd.slug}/").json()["active_entry_limits"] == {
        "mode": "crowd", "entry_rate_per_address": "30/m", "max_open_hits_per_address": 3,
        "browser_binding": True, "entry_rate_per_campaign": None}
    body = api.get(f"/api/campaigns/{lab.slug}/").json()
    assert body["entry_limits"] == "lab" and body["active_entry_limits"]["max_open_hits_per_address"] is None
    assert body["active_entry_limits"]["browser_binding"] is False

