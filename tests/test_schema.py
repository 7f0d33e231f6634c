"""The researcher API against its OpenAPI schema (`/api/schema/`, docs/api.md §6.1).

The schema is public; every operation is run in-process by schemathesis (its pytest integration over the Django
WSGI application) with a few examples each and every check benchmarks/schemathesis.toml enables: no server error,
status codes, content types and bodies as documented, schema-valid data accepted, invalid data refused, auth
enforced. benchmarks/schemathesis.py runs the same against a live server with many more examples.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import schemathesis
from django.contrib.auth import get_user_model
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from django.test import Client
from hypothesis import HealthCheck, Phase, settings
from rest_framework.authtoken.models import Token
from schemathesis.config import SchemathesisConfig

from annotation.services.campaign_import import import_campaign

CONFIG = Path(__file__).resolve().parent.parent / "benchmarks" / "schemathesis.toml"
#: The researcher's token key: the config reads it (as MTEVAL_TOKEN) when it is loaded, before any fixture runs.
TOKEN = "schemathesis0test0token0key0000000000000"
os.environ["MTEVAL_TOKEN"] = TOKEN


def _lines(n: int = 40) -> list[str]:
    return [json.dumps({"doc_id": f"d{i // 4}", "seg_id": i % 4 + 1, "source": f"Quelle {i}.",
                        "reference": f"Reference {i}.", "systems": {"sys-A": f"A says {i}.", "sys-B": f"B says {i}."}})
            for i in range(n)]


# The schema as the app serves it to anyone (no database needed for that).
schema = schemathesis.openapi.from_wsgi("/api/schema/", WSGIHandler(), config=SchemathesisConfig.from_path(CONFIG))


@pytest.fixture
def researcher_data(db):
    """A researcher with the token and campaigns of three families for the requests. Django's test client keeps
    the test's transaction open across requests by not closing connections after each; so does this."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    researcher = get_user_model().objects.create_user("schema-researcher", is_staff=True)
    Token.objects.create(user=researcher, key=TOKEN)
    pairwise = {"systems": ["sys-A", "sys-B"], "unit": "sentence"}
    for name, protocol, extra in (("DA", "adequacy", {}), ("Post-edit", "post-edit", {}),
                                  ("Pairwise", "pairwise-adequacy", pairwise)):
        import_campaign(_lines(), name=name, protocol=protocol, owner=researcher, seed=1, options=extra)
    yield researcher
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@schema.parametrize()
@settings(max_examples=10, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck),
          phases=[Phase.generate])  # random examples only: the boundary cases of the coverage phase take minutes
def test_the_api_does_what_its_schema_says(case, researcher_data):
    case.call_and_validate()


def test_the_schema_is_public_and_says_what_errors_look_like(db):
    """Anonymous readers get the schema (docs/api.md §6.1: open to all), and it documents the 403, 404 and 400
    answers, a campaign's study and stage_input as nullable, and the 200 of DELETE reference-ranking."""
    response = Client().get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    spec = response.json()
    campaign = spec["components"]["schemas"]["Campaign"]["properties"]
    assert campaign["stage_input"]["nullable"] and campaign["study"]["nullable"]
    detail = spec["paths"]["/api/campaigns/{slug}/"]["get"]["responses"]
    assert {"200", "403", "404"} <= set(detail)
    assert set(spec["paths"]["/api/campaigns/{slug}/reference-ranking/"]["delete"]["responses"]) >= {"200", "400"}
    assert "400" in spec["paths"]["/api/campaigns/{slug}/block/"]["post"]["responses"]
    # The API itself stays closed to anonymous readers.
    assert Client().get("/api/campaigns/").status_code == 403
