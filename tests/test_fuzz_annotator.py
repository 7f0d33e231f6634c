"""No request can make the annotator API answer 500: hypothesis-made bodies (deep nesting, huge numbers, NUL
bytes, lone surrogates, wrong types), hand-made extremes, and bad tokens. Bounded and derandomised."""
import json

import pytest
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from .conftest import start
from .test_fuzz import FUZZ

pytestmark = pytest.mark.django_db


def json_values(max_leaves=20):
    scalars = (st.none() | st.booleans() | st.integers(min_value=-(10**400), max_value=10**400)
               | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=30)
               | st.sampled_from(["\x00", "\ud800", "A", "B", "tie", "9" * 5000]))
    return st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8),
                                                                                               inner, max_size=4),
                        max_leaves=max_leaves)


def test_the_annotator_api_never_answers_500(make_campaign):
    campaign = make_campaign()
    client = Client()
    token = start(client, campaign, "fuzzer")
    item = client.get(f"/api/hit/{token}/").json()["item"]["id"]
    bodies = st.one_of(
        json_values(),
        st.fixed_dictionaries({"item": st.just(item) | json_values(3), "score": json_values(3)}),
        st.fixed_dictionaries({"item": st.just(item), "choice": json_values(3), "ranks": json_values(5)}),
    )
    failures = []

    @FUZZ
    @given(body=bodies, raw=st.booleans())
    def run(body, raw):
        try:
            text = json.dumps(body)
        except (ValueError, OverflowError):
            return
        payload = text if not raw else text.encode("utf-8", "surrogatepass")
        response = client.post(f"/api/hit/{token}/", payload, content_type="application/json")
        if response.status_code >= 500:
            failures.append((response.status_code, text[:200]))

    run()
    deep = "[" * 10_000 + "]" * 10_000
    for special in (deep, '{"item": ' + "9" * 5000 + ', "score": 5}', '{"item": 1, "score": 1e400}',
                    b'{"item": 1, "score": "\xff\xfe"}'):
        response = client.post(f"/api/hit/{token}/", special, content_type="application/json")
        if response.status_code >= 500:
            failures.append((response.status_code, str(special)[:80]))
    for path in (f"/api/hit/{token}\x00/", "/api/hit/%00abc/", "/c/" + campaign.slug + "/start/?worker_id=a%00b"):
        response = client.get(path)
        if response.status_code >= 500:
            failures.append((response.status_code, path))
    assert failures == []
