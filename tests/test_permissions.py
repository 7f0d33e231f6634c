"""Annotators see only their own HIT; the researcher API needs a researcher's token."""
import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import HitItem

from .conftest import post_answer, start

pytestmark = pytest.mark.django_db
RESEARCHER_URLS = ["/api/campaigns/", "/api/campaigns/{slug}/", "/api/campaigns/{slug}/judgments/"]


@pytest.mark.parametrize("url", RESEARCHER_URLS)
def test_no_credentials_gets_403(client, campaign, url):
    assert client.get(url.format(slug=campaign.slug)).status_code == 403


@pytest.mark.parametrize("url", RESEARCHER_URLS)
def test_an_annotator_session_gets_403(client, campaign, url):
    client.force_login(get_user_model().objects.create_user("judge", password="pw"))
    client.post(f"/annotate/{campaign.slug}/start/")
    assert client.get(url.format(slug=campaign.slug)).status_code == 403


@pytest.mark.parametrize("url", RESEARCHER_URLS)
def test_a_hit_token_gets_403(client, campaign, url):
    token = start(client, campaign, "w1")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert api.get(url.format(slug=campaign.slug)).status_code == 403
    assert client.get(url.format(slug=campaign.slug), {"token": token}).status_code == 403


def test_a_non_staff_token_gets_403_and_researchers_group_gets_in(campaign):
    user = get_user_model().objects.create_user("someone", password="pw")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    assert api.get("/api/campaigns/").status_code == 403
    user.groups.add(Group.objects.create(name="researchers"))
    assert api.get("/api/campaigns/").status_code == 200


def test_researcher_token_gets_in(api, campaign):
    assert api.get("/api/campaigns/").status_code == 200


def test_a_worker_cannot_answer_another_workers_hit(client, campaign):
    mine = start(client, campaign, "w1")
    theirs = start(client, campaign, "w2")
    assert mine != theirs
    their_item = client.get(f"/api/hit/{theirs}/").json()["item"]["id"]
    # Both do the same HIT (redundancy 2): the item ids match, but each token only reaches its own assignment.
    post_answer(client, mine, {"item": their_item, "score": 5})
    assert client.get(f"/api/hit/{theirs}/").json()["position"] == 1
    other_hit_item = HitItem.objects.exclude(hit__assignments__token=mine).first()
    if other_hit_item is not None:
        assert post_answer(client, mine, {"item": other_hit_item.id, "score": 5}).status_code == 409


def test_the_item_never_reveals_type_or_system(client, campaign):
    token = start(client, campaign, "w1")
    state = client.get(f"/api/hit/{token}/").json()
    for _ in range(100):
        assert set(state["item"]) == {"id", "protocol", "candidate", "reference"}
        text = str(state)
        assert "sys-A" not in text.replace("sys-A-", "") and "bad_ref" not in text and "repeat" not in text
        state = post_answer(client, token, {"item": state["item"]["id"], "score": 50}).json()
        if state["done"]:
            break
    assert state["done"]


def test_the_rating_page_escapes_campaign_text(client, make_campaign):
    campaign = make_campaign(statement='<script>alert("x")</script> agree?', target_language="ar")
    token = start(client, campaign, "w1")
    page = client.get(f"/hit/{token}/").content.decode()
    assert '<script>alert("x")</script>' not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; agree?" in page
    assert 'dir="rtl"' in page
