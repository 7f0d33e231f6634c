"""Power and cost from a pilot (docs/methods.md §12.3): `GET /api/campaigns/<slug>/power/` and the page
`/results/<slug>/power/` on a Direct Assessment campaign of simulated judgments (a wmt-da file: careful workers
and random clickers), with the permission, the query checks and the cost arithmetic."""
import math
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.services.judgment_import import import_judgments
from evaluation.analyses import compute_results
from evaluation.families.direct_assessment import power as power_answer

from .test_results_pages import da_lines, pairwise_lines

pytestmark = pytest.mark.django_db
User = get_user_model()

SYSTEMS = ("sys-A", "sys-B", "sys-C", "sys-D")


@pytest.fixture
def owner(db):
    return User.objects.create_user("owner", password="pw-owner", is_staff=True)


@pytest.fixture
def api(owner):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=owner).key}")
    return client


def pilot_campaign(owner, name="Pilot", segments=60, careful=4, clickers=2, computed=True):
    """Four systems 4 points apart, careful workers (noise sd 10) and clickers; redundancy 2, 0.80 per HIT."""
    quality = {s: 70 - 4 * i for i, s in enumerate(SYSTEMS)}
    campaign = import_judgments(da_lines(careful=careful, clickers=clickers, segments=segments, systems=SYSTEMS,
                                         quality=quality, seed=5), fmt="wmt-da", name=name, owner=owner).campaign
    campaign.redundancy, campaign.payment_per_hit = 2, Decimal("0.80")
    campaign.save(update_fields=["redundancy", "payment_per_hit"])
    if computed:
        compute_results(campaign)
    return campaign


@pytest.fixture
def pilot(owner):
    return pilot_campaign(owner)


def url(campaign, **query):
    return f"/api/campaigns/{campaign.slug}/power/", query


def test_needs_a_token(pilot):
    """Without credentials, or with a wrong token, the API refuses (403, as everywhere in the API: session
    authentication comes first, so DRF answers 403 rather than 401) and computes nothing."""
    response = APIClient().get(*url(pilot, delta=5))
    assert response.status_code == 403 and "credentials were not provided" in response.json()["detail"]
    wrong = APIClient()
    wrong.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    response = wrong.get(*url(pilot, delta=5))
    assert response.status_code == 403 and "Invalid token" in response.json()["detail"]


def test_another_owners_campaign_is_not_found(api, db):
    other = User.objects.create_user("other", password="pw-other", is_staff=True)
    theirs = pilot_campaign(other, name="Theirs", segments=12, computed=False)
    response = api.get(*url(theirs, delta=5))
    assert response.status_code == 404
    assert api.get("/api/campaigns/no-such-campaign/power/", {"delta": 5}).status_code == 404


@pytest.mark.parametrize("query, message", [
    ({}, "give delta"),
    ({"delta": "abc"}, "delta must be a number"),
    ({"delta": "nan"}, "finite"),
    ({"delta": "inf"}, "finite"),
    ({"delta": 0}, "delta must be above 0"),
    ({"delta": -3}, "delta must be above 0"),
    ({"delta": 101}, "at most 100"),
    ({"delta": 6, "scale": "z"}, "at most 5 on the z scale"),
    ({"delta": 5, "scale": "log"}, "scale must be raw or z"),
    ({"delta": 5, "power": 0.5}, "power must be above 0.5"),
    ({"delta": 5, "power": 1}, "at most 0.99"),
    ({"delta": 5, "alpha": 0}, "alpha must be above 0"),
    ({"delta": 5, "alpha": 0.5}, "below 0.5"),
    ({"delta": 5, "repetitions": 10}, "repetitions must be a whole number"),
    ({"delta": 5, "repetitions": 100.5}, "repetitions must be a whole number"),
])
def test_a_bad_query_is_a_400_saying_what_is_wrong(api, owner, query, message):
    campaign = pilot_campaign(owner, segments=3, careful=1, clickers=0, computed=False)
    response = api.get(*url(campaign, **query))
    assert response.status_code == 400
    assert message in response.json()["detail"]


def test_a_campaign_without_results_or_with_too_little_data_is_a_400(api, owner):
    uncomputed = pilot_campaign(owner, name="Uncomputed", computed=False)
    response = api.get(*url(uncomputed, delta=5))
    assert response.status_code == 400 and "compute them first" in response.json()["detail"]
    tiny = pilot_campaign(owner, name="Tiny", segments=4)
    response = api.get(*url(tiny, delta=5))
    assert response.status_code == 400
    detail = response.json()["detail"]
    assert "too little data" in detail and "10 segments judged for two or more systems" in detail
    assert "it has 4 systems, 64 judgments and 4 such segments" in detail


def test_a_pilot_gives_judgments_hits_money_and_a_curve(api, pilot):
    response = api.get(*url(pilot, delta=4, power=0.8, alpha=0.05, scale="raw"))
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["query"] == {"delta": 4.0, "power": 0.8, "alpha": 0.05, "scale": "raw", "repetitions": 200}
    figures = body["pilot"]
    # 4 careful workers of 6 pass; the clickers' judgments do not count.
    assert (figures["workers"], figures["workers_passed"]) == (6, 4)
    assert figures["worker_pass_rate"] == pytest.approx(4 / 6)
    assert figures["pass_rate"] == pytest.approx(4 / 6)
    assert figures["judgments"] == 6 * 60 * 4 and figures["systems"] == 4 and figures["segments"] == 60
    assert 8 < figures["sd"] < 14  # careful workers' noise sd is 10
    assert body["design"] == {"systems": 4, "redundancy": 2, "hit_size": 100, "outputs_per_hit": 70,
                              "payment_per_hit": "0.80"}
    plan = body["plan"]
    assert body["reached"] and body["power_at_n"] >= 0.75
    # A translation counts when one of its 2 judges passed: q = 1 - (1/3)^2.
    q = 1 - (1 - 4 / 6) ** 2
    assert plan["segments_per_system"] == math.ceil(plan["translations_per_system"] / q)
    assert plan["judgments"] == plan["segments_per_system"] * 4 * 2
    assert plan["hits"] == math.ceil(plan["segments_per_system"] * 4 / 70)
    assert plan["assignments"] == plan["hits"] * 2 and plan["items"] == plan["assignments"] * 100
    assert Decimal(plan["money"]) == Decimal("0.80") * plan["assignments"]
    # Normal noise of sd ~10 plus a translation's own spread: tens, not thousands, of translations per system.
    assert 20 < plan["translations_per_system"] < 400
    curve = body["curve"]
    ns = [point["translations_per_system"] for point in curve]
    assert ns == sorted(ns) and plan["translations_per_system"] in ns
    assert curve[0]["power"] < 0.5 < curve[-1]["power"]
    fitted = [point["fitted"] for point in curve]
    assert all(a <= b for a, b in zip(fitted, fitted[1:], strict=False))


def test_the_same_query_gives_the_same_answer_and_a_smaller_delta_costs_more(api, pilot):
    first = api.get(*url(pilot, delta=4)).json()
    assert api.get(*url(pilot, delta=4)).json() == first  # from the cache
    uncached = power_answer.compute(pilot, power_answer.parse({"delta": "4"}))
    assert uncached["plan"] == first["plan"] and uncached["curve"] == first["curve"]
    smaller = api.get(*url(pilot, delta=2)).json()
    assert smaller["plan"]["translations_per_system"] > 2 * first["plan"]["translations_per_system"]
    assert Decimal(smaller["plan"]["money"]) > Decimal(first["plan"]["money"])
    z = api.get(*url(pilot, delta=0.3, scale="z")).json()
    assert z["query"]["scale"] == "z" and 0.5 < z["pilot"]["sd"] < 1.5 and z["reached"]


def test_a_difference_too_small_to_reach_says_so(api, pilot, monkeypatch):
    monkeypatch.setattr("evaluation.families.direct_assessment.power.MAX_TRANSLATIONS", 300)
    body = api.get(*url(pilot, delta=0.05, repetitions=50)).json()
    assert body["reached"] is False and body["plan"] is None and body["power_at_n"] < 0.8
    assert body["curve"][-1]["translations_per_system"] == body["max_translations"]


# The page ------------------------------------------------------------------------------------------------------


@pytest.fixture
def browser_client(client, owner):
    client.force_login(owner)
    return client


def test_the_page_answers_the_form_with_the_plan_and_the_curve(browser_client, pilot):
    empty = browser_client.get(f"/results/{pilot.slug}/power/")
    assert empty.status_code == 200 and b'id="power-form"' in empty.content and b"power-answer" not in empty.content
    page = browser_client.get(f"/results/{pilot.slug}/power/", {"delta": "4", "power": "0.8", "alpha": "0.05",
                                                                 "scale": "raw"})
    assert page.status_code == 200
    html = page.content.decode()
    plan = page.context["answer"]["plan"]
    assert f"{plan['translations_per_system']} translations per system" in html
    assert f"<strong>{plan['money']}</strong>" in html and "<svg" in html and "target 0.8" in html
    assert 'value="4"' in html  # the form keeps what was asked
    results = browser_client.get(f"/results/{pilot.slug}/").content.decode()
    assert f'href="/results/{pilot.slug}/power/"' in results


@pytest.mark.parametrize("query, message", [
    ({"delta": "five"}, "delta must be a number"),
    ({"delta": ""}, "give delta"),
    ({"delta": "5", "power": "2"}, "at most 0.99"),
    ({"delta": "5", "alpha": "0.7"}, "below 0.5"),
    ({"delta": "7", "scale": "z"}, "at most 5 on the z scale"),
    ({"delta": "5", "scale": "<script>"}, "scale must be raw or z"),
])
def test_the_page_shows_form_errors_never_a_500(browser_client, owner, query, message):
    campaign = pilot_campaign(owner, name="Form errors", segments=3, careful=1, clickers=0, computed=False)
    page = browser_client.get(f"/results/{campaign.slug}/power/", query)
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="power-error"' in html and message in html and "<script>" not in html


def test_the_page_says_when_there_is_too_little_data_or_no_power_for_the_family(browser_client, owner):
    tiny = pilot_campaign(owner, name="Tiny page", segments=4)
    page = browser_client.get(f"/results/{tiny.slug}/power/", {"delta": "5"})
    assert page.status_code == 200 and "too little data" in page.content.decode()
    pairwise = import_judgments(pairwise_lines(), fmt="pairwise-csv", name="Pairwise", systems=["MT", "Human"],
                                owner=owner).campaign
    page = browser_client.get(f"/results/{pairwise.slug}/power/", {"delta": "5"})
    assert page.status_code == 200 and "Direct Assessment campaigns only" in page.content.decode()
    assert "Power and cost" not in browser_client.get(f"/results/{pairwise.slug}/").content.decode()


def test_the_page_is_for_the_campaigns_researchers_only(client, owner, db):
    other = User.objects.create_user("other", password="pw-other", is_staff=True)
    theirs = pilot_campaign(other, name="Theirs", segments=12, computed=False)
    anonymous = client.get(f"/results/{theirs.slug}/power/", {"delta": "5"})
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]
    client.force_login(owner)
    assert client.get(f"/results/{theirs.slug}/power/", {"delta": "5"}).status_code == 404
