"""Shared fixtures: campaign files written here (never read from outside the repository), campaigns, clients."""
import json

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.services.campaign_import import import_campaign

WORDS = ("the quick brown fox jumps over a lazy dog while seven small birds sing in green trees near "
         "old stone houses and rivers flow slowly towards distant hills under grey clouds").split()


def sentence(i: int, length: int = 9) -> str:
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(length))


def campaign_lines(n_segments: int = 35, systems=("sys-A", "sys-B"), docs: int = 5, length: int = 9) -> list[str]:
    """A well-formed campaign file as a list of JSON lines."""
    lines = []
    for i in range(n_segments):
        record = {
            "doc_id": f"doc-{i % docs}", "seg_id": i // docs + 1,
            "source": f"Quelle {i}: " + sentence(i + 100, length),
            "reference": sentence(i, length) + f" ref{i}",
            "systems": {name: sentence(i + 13 * j, length) + f" {name}-{i}" for j, name in enumerate(systems)},
        }
        lines.append(json.dumps(record))
    return lines


def as_bytes(lines: list[str]) -> list[bytes]:
    return [(line + "\n").encode() for line in lines]


@pytest.fixture(autouse=True)
def forget_queued_recomputes():
    """Each test starts with no recompute remembered as queued by this process (campaign ids recur
    between tests; they never do in production)."""
    from evaluation import tasks

    tasks._covered_until.clear()
    yield
    tasks._covered_until.clear()


@pytest.fixture
def make_campaign(db, researcher):
    """Import a campaign owned by `researcher` (the `api` fixture's user) unless `owner=` says otherwise."""
    def make(n_segments=35, systems=("sys-A", "sys-B"), protocol="adequacy", redundancy=1, seed=7, **settings):
        lines = as_bytes(campaign_lines(n_segments, systems))
        settings.setdefault("owner", researcher)
        return import_campaign(lines, name=settings.pop("name", "Test campaign"), protocol=protocol,
                               redundancy=redundancy, seed=seed, **settings).campaign
    return make


@pytest.fixture
def campaign(make_campaign):
    """One adequacy campaign of exactly one 100-item HIT, done by two workers."""
    return make_campaign(redundancy=2)


@pytest.fixture
def researcher(db):
    return get_user_model().objects.create_user("researcher", password="pw-researcher", is_staff=True)


@pytest.fixture
def researcher_browser(researcher):
    """A browser session logged in as `researcher` (the results pages, the crowd link's trial)."""
    from django.test import Client

    client = Client()
    client.force_login(researcher)
    return client


@pytest.fixture
def api(researcher):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    return client


def start(client, campaign, worker: str) -> str:
    """Enter a campaign as a crowd worker; returns the HIT token."""
    response = client.get(f"/c/{campaign.slug}/start/", {"worker_id": worker})
    assert response.status_code == 302, response.content
    return response["Location"].rstrip("/").split("/")[-1]


def post_answer(client, token: str, body) -> "object":
    payload = body if isinstance(body, (str, bytes)) else json.dumps(body)
    return client.post(f"/api/hit/{token}/", payload, content_type="application/json")
