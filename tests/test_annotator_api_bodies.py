"""Bodies the JSON parser cannot take are a 400, never a 500 (docs/api.md §8.3)."""
import pytest

from annotation.models import Judgment

from .conftest import post_answer, start

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("body", [
    "[" * 10_000 + "]" * 10_000,                   # nesting deeper than the parser's recursion
    '{"item": ' + "9" * 5000 + ', "score": 5}',    # an integer longer than Python converts
    b'{"item": 1, "score": "\xff\xfe"}',           # not UTF-8
])
def test_unparsable_bodies_are_400(client, campaign, body):
    token = start(client, campaign, "w")
    response = post_answer(client, token, body)
    assert response.status_code == 400 and response.json() == {"error": "the body must be JSON"}
    assert Judgment.objects.count() == 0
