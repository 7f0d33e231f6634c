"""What an annotator request costs the database, for every registered protocol and stage (docs/api.md,
"Annotators"): a GET of the state is one statement (the read); a POST of one answer is two on PostgreSQL (the read,
and the write that moves the assignment on and stores the judgment together). The protocols come from the registry,
and the HIT from tests/test_annotator_fuzz_corpus.py's `live_hit` (a later stage is reached by answering the ones
before it), so a new protocol is counted too. A statement added to either request fails here.

PREPARE is left out of the count: it runs once per connection and statement (annotation/services/judging_sql.py),
not once per request."""
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation.protocols import all_protocols

from .conftest import post_answer
from .test_annotator_fuzz_corpus import VALID, live_hit

pytestmark = pytest.mark.django_db


def _statements(captured) -> list[str]:
    """The statements a request ran, each cut short for the message; PREPARE aside."""
    return [query["sql"][:120] for query in captured.captured_queries if not query["sql"].startswith("PREPARE ")]


@pytest.mark.parametrize("name", sorted(p.name for p in all_protocols()))
def test_a_get_is_one_statement_and_a_post_of_one_answer_two(name, django_capture_on_commit_callbacks):
    client, token, state = live_hit(name)  # its GET started the item's clock
    with CaptureQueriesContext(connection) as got:
        shown = client.get(f"/api/hit/{token}/")
    assert shown.status_code == 200 and shown.json()["item"]["id"] == state["item"]["id"]
    assert len(_statements(got)) == 1, _statements(got)
    with CaptureQueriesContext(connection) as posted:
        answered = post_answer(client, token, {"item": state["item"]["id"], **VALID[name](state["item"])})
    assert answered.status_code == 201, answered.content
    if connection.vendor == "postgresql":
        assert len(_statements(posted)) == 2, _statements(posted)
    else:  # read, then UPDATE and INSERT in a transaction (a savepoint inside the test's own)
        assert len(_statements(posted)) <= 5, _statements(posted)
