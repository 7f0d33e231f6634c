"""Crowd entry hardening: a worker id alone does not hand over that worker's HIT.

Signed entry links (`require_signed_entry`), HITs bound to the browser that took them, rate limits per address
and per campaign, and a cap on open HITs per address. The test settings turn these protections off (many workers
from one client and one address); each test here turns on what it tests (the `settings` fixture)."""
import hashlib
import hmac
import io
import shlex
import subprocess
import sys
import threading
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connections
from django.test import Client
from django.utils import timezone

from annotation.models import Annotator, Assignment, Campaign
from annotation.services import assignment as assigning
from annotation.views import pages

from .conftest import campaign_lines

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent
COOKIE = pages.BROWSER_COOKIE


@pytest.fixture
def protected(settings):
    """Every protection on, with its own rate-limit counters (nothing left over from another test)."""
    settings.CROWD_BIND_BROWSER = True
    settings.CROWD_ENTRY_RATE_PER_IP = None
    settings.CROWD_ENTRY_RATE_PER_CAMPAIGN = None
    settings.CROWD_MAX_OPEN_HITS_PER_IP = None
    settings.TRUSTED_PROXY_COUNT = 0
    settings.RATELIMIT_CACHE_PREFIX = f"rl-test-{uuid.uuid4().hex}:"
    return settings


def enter(client, campaign, worker=None, **params):
    if worker is not None:
        params["worker_id"] = worker
    return client.get(f"/c/{campaign.slug}/start/", params)


def token_of(response) -> str:
    assert response.status_code == 302, response.content
    return response["Location"].rstrip("/").split("/")[-1]


def browser(ip="127.0.0.1", **extra) -> Client:
    return Client(REMOTE_ADDR=ip, **extra)


# 1. A worker id is bound to the browser that took its HIT ------------------------------------------------------


def test_a_victims_hit_cannot_be_borrowed_from_another_browser(protected, make_campaign):
    campaign = make_campaign(n_segments=105, redundancy=2)  # 3 HITs
    victim, attacker = browser(), browser()
    mine = token_of(enter(victim, campaign, "victim"))
    cookie = victim.cookies[COOKIE]
    assert cookie["httponly"] and cookie["samesite"] == "Lax" and not cookie["secure"]
    assert len(cookie.value) >= 40
    assert Assignment.objects.get(token=mine).browser_key == cookie.value

    refused = enter(attacker, campaign, "victim")  # neither that HIT nor another one in the victim's name
    assert refused.status_code == 409 and mine not in refused.content.decode()
    assert Assignment.objects.filter(campaign=campaign).count() == 1
    assert token_of(enter(victim, campaign, "victim")) == mine
    # The rating page and its API are reached by the token alone: the token is the secret.
    assert browser().get(f"/hit/{mine}/").status_code == 200
    assert browser().get(f"/api/hit/{mine}/").status_code == 200


def test_a_second_browser_is_refused_when_there_is_no_other_hit_until_the_timeout_frees_it(protected,
                                                                                          make_campaign):
    campaign = make_campaign(redundancy=2, hit_timeout_minutes=30)  # one HIT
    first, second = browser(), browser()
    mine = token_of(enter(first, campaign, "victim"))
    refused = enter(second, campaign, "victim")
    page = refused.content.decode()
    assert refused.status_code == 409
    assert mine not in page and "/hit/" not in page
    assert "in use in another browser" in page and "cleared your cookies" in page
    assert "unused for 30 minutes" in page and "minutes from now" not in page  # nothing about the worker's HIT
    assert 'id="try-again"' in page
    assert COOKIE not in refused.cookies  # no key for a refused browser (it may be a first visit's double click)

    # Cookies cleared: after the idle timeout the HIT is free, and the browser the worker now uses takes it up.
    Assignment.objects.filter(token=mine).update(last_activity_at=timezone.now() - timedelta(minutes=31))
    assert token_of(enter(second, campaign, "victim")) == mine
    assignment = Assignment.objects.get(token=mine)
    assert assignment.browser_key == second.cookies[COOKIE].value
    assert timezone.now() - assignment.last_activity_at < timedelta(minutes=1)
    assert assignment.item_served_at is None
    assert enter(first, campaign, "victim").status_code == 409  # now the first browser is the other one


def test_a_lost_hit_taken_back_is_bound_to_the_browser_that_takes_it(protected, make_campaign):
    campaign = make_campaign(redundancy=2)
    first, second = browser(), browser()
    mine = token_of(enter(first, campaign, "w"))
    Assignment.objects.filter(token=mine).update(status=Assignment.Status.ABANDONED)
    assert token_of(enter(second, campaign, "w")) == mine
    assert Assignment.objects.get(token=mine).browser_key == second.cookies[COOKIE].value
    assert enter(first, campaign, "w").status_code == 409


def test_a_hit_taken_before_binding_goes_to_the_first_browser_that_comes_back(protected, make_campaign):
    campaign = make_campaign(redundancy=2)
    protected.CROWD_BIND_BROWSER = False
    first = browser()
    mine = token_of(enter(first, campaign, "old"))
    assert Assignment.objects.get(token=mine).browser_key == "" and COOKIE not in first.cookies
    protected.CROWD_BIND_BROWSER = True
    second = browser()
    assert token_of(enter(second, campaign, "old")) == mine
    assert Assignment.objects.get(token=mine).browser_key == second.cookies[COOKIE].value
    assert enter(first, campaign, "old").status_code == 409


def test_the_cookie_is_secure_over_https_and_a_forged_cookie_is_replaced(protected, make_campaign):
    campaign = make_campaign()
    client = browser()
    response = client.get(f"/c/{campaign.slug}/start/", {"worker_id": "s"}, secure=True)
    assert response.cookies[COOKIE]["secure"]
    forged = browser()
    forged.cookies[COOKIE] = "short"
    token = token_of(enter(forged, make_campaign(name="Other"), "t"))
    key = Assignment.objects.get(token=token).browser_key
    assert key != "short" and assigning.BROWSER_KEY_PATTERN.match(key)


def test_with_binding_off_any_browser_gets_the_workers_hit(protected, make_campaign):
    protected.CROWD_BIND_BROWSER = False
    campaign = make_campaign(redundancy=2)
    mine = token_of(enter(browser(), campaign, "w"))
    assert token_of(enter(browser(), campaign, "w")) == mine


# 2. Signed entry links --------------------------------------------------------------------------------------------


def signature(campaign, worker):
    return hmac.new(campaign.entry_secret.encode(), f"{campaign.slug}:{worker}".encode(), hashlib.sha256).hexdigest()


def test_signed_links_are_required_accepted_and_forgeries_refused(protected, make_campaign):
    campaign = make_campaign(require_signed_entry=True, redundancy=3)
    other = make_campaign(name="Other", require_signed_entry=True)
    assert campaign.entry_secret != other.entry_secret
    client = browser()

    missing = enter(client, campaign, "w1")
    assert missing.status_code == 403 and b"signature is missing or does not match" in missing.content
    for forged in ("0" * 64, signature(campaign, "w2"), signature(other, "w1"), "zz\u00e9", "", " "):
        assert enter(client, campaign, "w1", signature=forged).status_code == 403
    assert not Annotator.objects.filter(external_id="w1").exists()  # nothing is created for a refused link
    bare = client.get(f"/c/{campaign.slug}/start/")
    assert bare.status_code == 403 and b"personal" in bare.content and b'name="worker_id"' not in bare.content

    good = signature(campaign, "w1")
    token = token_of(enter(client, campaign, "w1", signature=good))
    assert token_of(enter(client, campaign, "w1", signature=good.upper())) == token  # hex in any case
    assert assigning.entry_signature(campaign, "w1") == good
    # Other markets' parameters carry the id the same way; the signature is of the id alone.
    assert enter(client, campaign, PROLIFIC_PID="p1", signature=signature(campaign, "p1")).status_code == 302
    # A campaign that does not require signatures takes links without them (and ignores a wrong one).
    plain = make_campaign(name="Plain", redundancy=2)
    assert enter(client, plain, "w1").status_code == 302
    assert enter(browser(), plain, "w9", signature="0").status_code == 302


def test_a_paused_campaign_reveals_nothing_to_an_unsigned_link(protected, make_campaign):
    campaign = make_campaign(require_signed_entry=True, completion_code="SECRETCODE")
    Assignment.objects.create(campaign=campaign, hit=campaign.hits.get(), status=Assignment.Status.COMPLETED,
                              annotator=Annotator.objects.create(external_id="done"), completion_code="SECRETCODE")
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.PAUSED)
    response = enter(browser(), campaign, "done")
    assert response.status_code == 403 and b"SECRETCODE" not in response.content
    assert b"SECRETCODE" in enter(browser(), campaign, "done", signature=signature(campaign, "done")).content


def test_sign_entry_link_prints_links_that_work(protected, make_campaign):
    campaign = make_campaign(require_signed_entry=True, redundancy=2)
    out = io.StringIO()
    call_command("sign_entry_link", campaign.slug, "w1", "w.2@x", "--base-url", "https://eval.example.org/",
                 stdout=out)
    links = out.getvalue().split()
    assert links == [f"https://eval.example.org/c/{campaign.slug}/start/?worker_id=w1&signature="
                     f"{signature(campaign, 'w1')}",
                     f"https://eval.example.org/c/{campaign.slug}/start/?worker_id=w.2%40x&signature="
                     f"{signature(campaign, 'w.2@x')}"]
    for link in links:
        assert browser().get(link.removeprefix("https://eval.example.org")).status_code == 302
    out = io.StringIO()
    call_command("sign_entry_link", campaign.slug, "P", "--parameter", "PROLIFIC_PID", stdout=out)
    assert out.getvalue().strip() == f"/c/{campaign.slug}/start/?PROLIFIC_PID=P&signature={signature(campaign, 'P')}"
    out = io.StringIO()
    call_command("sign_entry_link", campaign.slug, "--secret", stdout=out)
    assert out.getvalue().strip() == campaign.entry_secret
    with pytest.raises(CommandError, match="no campaign"):
        call_command("sign_entry_link", "nope", "w1", stdout=io.StringIO())
    with pytest.raises(CommandError, match="worker id"):
        call_command("sign_entry_link", campaign.slug, "a b", stdout=io.StringIO())


def test_the_docs_one_liner_computes_the_signature(make_campaign):
    campaign = make_campaign()
    docs = (ROOT / "docs" / "api.md").read_text()
    line = next(text for text in docs.splitlines() if text.strip().startswith("python3 -c ") and "hmac" in text)
    program, flag, code, *placeholders = shlex.split(line)
    assert (program, flag, placeholders) == ("python3", "-c", ["SECRET", "SLUG", "WORKER_ID"])
    result = subprocess.run([sys.executable, "-c", code, campaign.entry_secret, campaign.slug, "w1"],
                            capture_output=True, text=True, check=True)
    assert result.stdout.strip() == assigning.entry_signature(campaign, "w1")


def test_require_signed_entry_is_an_import_option(tmp_path, db, researcher):
    path = tmp_path / "campaign.jsonl"
    path.write_text("\n".join(campaign_lines()) + "\n")
    call_command("import_campaign", str(path), "--name", "Signed", "--protocol", "adequacy",
                 "--require-signed-entry", stdout=io.StringIO())
    call_command("import_campaign", str(path), "--name", "Open", "--protocol", "adequacy", stdout=io.StringIO())
    assert Campaign.objects.get(name="Signed").require_signed_entry is True
    assert Campaign.objects.get(name="Open").require_signed_entry is False


# 3. Rate limits ------------------------------------------------------------------------------------------------


def test_too_many_entries_from_one_address_get_429_with_retry_after(protected, make_campaign):
    protected.CROWD_ENTRY_RATE_PER_IP = "3/m"
    campaign = make_campaign(n_segments=140, redundancy=3)
    client = browser("10.1.1.1")
    for i in range(3):
        assert enter(client, campaign, f"w{i}").status_code == 302
    refused = enter(client, campaign, "w3")
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    page = refused.content.decode()
    assert "Too many requests" in page and f"wait {refused['Retry-After']} seconds" in page
    assert not Annotator.objects.filter(external_id="w3").exists()
    assert enter(client, make_campaign(name="Another"), "w3").status_code == 429  # per address, every campaign
    assert enter(browser("10.1.1.2"), campaign, "w3").status_code == 302  # another address is not held back
    assert browser("10.1.1.1").get("/c/no-such-campaign/start/").status_code == 429  # counted before the lookup


def test_too_many_entries_to_one_campaign_get_429(protected, make_campaign):
    protected.CROWD_ENTRY_RATE_PER_CAMPAIGN = "4/m"
    busy, quiet = make_campaign(n_segments=140, redundancy=3), make_campaign(name="Quiet")
    for i in range(4):
        assert enter(browser(f"10.2.0.{i}"), busy, f"w{i}").status_code == 302
    refused = enter(browser("10.2.0.99"), busy, "w99")
    assert refused.status_code == 429 and 1 <= int(refused["Retry-After"]) <= 60
    assert b"Many people are starting this campaign" in refused.content
    assert enter(browser("10.2.0.99"), quiet, "w99").status_code == 302


def test_behind_a_trusted_proxy_the_forwarded_address_counts(protected, make_campaign):
    protected.CROWD_ENTRY_RATE_PER_IP = "2/m"
    campaign = make_campaign(n_segments=140, redundancy=3)
    proxy = "10.3.0.1"
    # No trusted proxy: X-Forwarded-For is the client's to write and changes nothing.
    for i, forwarded in enumerate(("1.1.1.1", "2.2.2.2")):
        assert enter(browser(proxy, HTTP_X_FORWARDED_FOR=forwarded), campaign, f"a{i}").status_code == 302
    assert enter(browser(proxy, HTTP_X_FORWARDED_FOR="3.3.3.3"), campaign, "a2").status_code == 429
    # One trusted proxy: its entry (the last) is the client; what the client wrote before it is ignored.
    protected.TRUSTED_PROXY_COUNT = 1
    for i in range(2):
        forwarded = f"9.9.9.{i}, 4.4.4.4"
        assert enter(browser(proxy, HTTP_X_FORWARDED_FOR=forwarded), campaign, f"b{i}").status_code == 302
    assert enter(browser(proxy, HTTP_X_FORWARDED_FOR="9.9.9.9, 4.4.4.4"), campaign, "b2").status_code == 429
    assert enter(browser(proxy, HTTP_X_FORWARDED_FOR="5.5.5.5"), campaign, "b3").status_code == 302
    assert Assignment.objects.get(annotator__external_id="b3").entry_ip == "5.5.5.5"


def test_client_ip():
    meta = {"REMOTE_ADDR": "10.0.0.1", "HTTP_X_FORWARDED_FOR": "6.6.6.6, 7.7.7.7 , 8.8.8.8"}
    assert assigning.client_ip(meta) == "10.0.0.1"
    assert assigning.client_ip(meta, 1) == "8.8.8.8"
    assert assigning.client_ip(meta, 2) == "7.7.7.7"
    assert assigning.client_ip(meta, 5) == "6.6.6.6"  # fewer hops than proxies: the first one
    assert assigning.client_ip({"REMOTE_ADDR": "10.0.0.1", "HTTP_X_FORWARDED_FOR": "junk"}, 1) == "10.0.0.1"
    assert assigning.client_ip({"REMOTE_ADDR": "10.0.0.1"}, 1) == "10.0.0.1"
    assert assigning.client_ip({"REMOTE_ADDR": "2001:DB8::1"}) == "2001:db8::1"
    assert assigning.client_ip({}) is None
    assert pages._rate_key("2001:db8::1") == pages._rate_key("2001:db8::ffff") == "2001:db8::/64"
    assert pages._rate_key("10.0.0.1") == "10.0.0.1" and pages._rate_key(None) == "unknown"


def test_a_cache_that_cannot_be_reached_limits_nothing(protected, make_campaign, monkeypatch):
    protected.CROWD_ENTRY_RATE_PER_IP = "1/m"

    def broken(*args, **kwargs):
        raise ConnectionError("redis is down")

    monkeypatch.setattr(pages, "get_usage", broken)
    campaign = make_campaign(n_segments=105, redundancy=3)
    for i in range(3):
        assert enter(browser(), campaign, f"w{i}").status_code == 302


def test_rate_settings_are_checked_at_start_up():
    env = {"PATH": "/usr/bin:/bin", "DEBUG": "1", "DJANGO_SETTINGS_MODULE": "config.settings",
           "CROWD_ENTRY_RATE_PER_IP": "thirty a minute"}
    result = subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT, env=env,
                            capture_output=True, text=True)
    assert result.returncode != 0 and "CROWD_ENTRY_RATE_PER_IP must be blank (off) or match" in result.stderr
    env["CROWD_ENTRY_RATE_PER_IP"] = ""
    env["CROWD_MAX_OPEN_HITS_PER_IP"] = ""
    code = ("import django; django.setup(); from django.conf import settings as s; "
            "print(s.CROWD_ENTRY_RATE_PER_IP, s.CROWD_ENTRY_RATE_PER_CAMPAIGN, s.CROWD_MAX_OPEN_HITS_PER_IP, "
            "s.CROWD_BIND_BROWSER, s.TRUSTED_PROXY_COUNT)")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.stdout.split() == ["None", "600/m", "None", "True", "0"], result.stderr


# 4. Open HITs per address ------------------------------------------------------------------------------------------


def test_an_address_gets_no_more_open_hits_than_the_cap(protected, make_campaign):
    protected.CROWD_MAX_OPEN_HITS_PER_IP = 3
    campaign = make_campaign(n_segments=140, redundancy=2, hit_timeout_minutes=60)  # 4 HITs, 8 places
    tokens = [token_of(enter(browser("10.4.0.1"), campaign, f"w{i}")) for i in range(3)]
    assert {a.entry_ip for a in Assignment.objects.filter(token__in=tokens)} == {"10.4.0.1"}
    refused = enter(browser("10.4.0.1"), campaign, "w3")
    assert refused.status_code == 429 and b"Too many open HITs" in refused.content
    assert b"3 HITs of this campaign are already open from your network" in refused.content
    assert Assignment.objects.filter(campaign=campaign).count() == 3  # the four requests did not take every HIT
    assert enter(browser("10.4.0.2"), campaign, "w3").status_code == 302  # another address


def test_the_cap_counts_open_hits_only(protected, make_campaign):
    protected.CROWD_MAX_OPEN_HITS_PER_IP = 2
    campaign = make_campaign(n_segments=140, redundancy=2, hit_timeout_minutes=60)
    clients = [browser("10.5.0.1") for _ in range(2)]
    tokens = [token_of(enter(client, campaign, f"w{i}")) for i, client in enumerate(clients)]
    assert enter(browser("10.5.0.1"), campaign, "w2").status_code == 429
    assert token_of(enter(clients[0], campaign, "w0")) == tokens[0]  # back to one's own HIT: fine
    Assignment.objects.filter(token=tokens[0]).update(status=Assignment.Status.COMPLETED)
    third = token_of(enter(browser("10.5.0.1"), campaign, "w2"))
    assert enter(browser("10.5.0.1"), campaign, "w3").status_code == 429
    Assignment.objects.filter(token=third).update(last_activity_at=timezone.now() - timedelta(minutes=61))
    assert enter(browser("10.5.0.1"), campaign, "w3").status_code == 302  # an idle HIT is not open


@pytest.mark.django_db(transaction=True)
def test_parallel_entries_from_one_address_stay_under_the_cap(protected, make_campaign):
    protected.CROWD_MAX_OPEN_HITS_PER_IP = 3
    campaign = make_campaign(n_segments=280, redundancy=2)  # 8 HITs, 16 places
    barrier, statuses = threading.Barrier(8), []

    def worker(i):
        try:
            barrier.wait()
            statuses.append(enter(browser("10.6.0.1"), campaign, f"racer{i}").status_code)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert sorted(statuses) == [302] * 3 + [429] * 5
    assert Assignment.objects.filter(campaign=campaign, entry_ip="10.6.0.1").count() == 3
