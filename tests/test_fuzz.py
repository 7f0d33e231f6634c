"""No request can make the researcher API answer 500: every operation of its own OpenAPI schema fuzzed with
schemathesis (the annotator API: tests/test_fuzz_annotator.py). Bounded: a few dozen cases per operation,
derandomised so CI is repeatable."""
import json
from contextlib import contextmanager

import pytest
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.authtoken.models import Token
from schemathesis import openapi

from annotation.services.judgment_import import import_judgments
from config.wsgi import application
from evaluation.analyses import compute_results

from .test_results_pages import da_lines, pairwise_lines

pytestmark = pytest.mark.django_db
FUZZ = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))


@contextmanager
def keeping_the_test_connection():
    """Call the WSGI application directly, as Django's test client does: without closing the test database's
    connection at the end of each request."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


@pytest.fixture
def campaigns(db):
    da = import_judgments(da_lines(careful=2, clickers=1, segments=8), fmt="wmt-da", name="Fuzz DA",
                          study="Fuzz study").campaign
    pairwise = import_judgments(pairwise_lines(raters=2, items=6), fmt="pairwise-csv", name="Fuzz pairwise",
                                systems=["MT", "Human"]).campaign
    for campaign in (da, pairwise):
        compute_results(campaign)
    return [da, pairwise]


def test_the_researcher_api_never_answers_500(campaigns, researcher):
    key = Token.objects.create(user=researcher).key
    raw = json.loads(json.dumps(SchemaGenerator().get_schema(request=None, public=True), default=str))
    schema = openapi.from_dict(raw)  # the served schema is for researchers only; this is the same document
    schema.app = application  # called in-process, through the whole middleware stack
    slugs = [c.slug for c in campaigns] + ["fuzz-study", "no-such-campaign"]
    failures, calls = [], 0
    for result in schema.get_all_operations():
        operation = result.ok()

        @FUZZ
        @given(case=operation.as_strategy(), data=st.data())
        def run(case, data):
            nonlocal calls
            if "slug" in (case.path_parameters or {}):
                case.path_parameters["slug"] = data.draw(st.sampled_from(slugs))
            response = case.call(headers={"Authorization": f"Token {key}"})
            calls += 1
            if response.status_code >= 500:
                failures.append(f"{response.status_code} {case.as_curl_command()}\n{response.text[:300]}")

        with keeping_the_test_connection():
            run()
    assert calls > 200
    assert failures == []
