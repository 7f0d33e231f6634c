"""Screens that show more than their item (document-level DA: the document's segments; ranking: the segment's
outputs; error spans: the document; contrastive ESA: every system's document; post-editing and reference
translation: the screen's sentences, and the machine translations an answer is compared with; reading
comprehension: the article, and the HIT's other questions in the vote) get it from the one read of the judging path
(annotation/building/screen_context.py): a GET is one statement and a POST two, as for every protocol, and the
payload is the one the same item gives when read by the ORM (the admin's preview)."""
import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from annotation.models import HitItem
from annotation.protocols import get_protocol
from annotation.services.campaign_import import import_campaign

from .conftest import post_answer, start
from .test_document_da import lines as document_lines
from .test_error_span_protocols import span_campaign
from .test_post_edit import post_edit_campaign
from .test_ranking_protocol import ranking
from .test_reading_comprehension import enter, rc_campaign, stage, vote, work, write
from .test_reference_translation import rt_campaign

pytestmark = pytest.mark.django_db


def _entered(campaign):
    client = Client()
    return client, start(client, campaign, "w1")


def _stage(capture, name):
    campaign = rc_campaign()
    with capture(execute=True):  # a stage is built by the after-commit work of its input's judgments
        work(campaign, ["w1", "w2"], write)
    if name == "answer":
        with capture(execute=True):
            work(stage(campaign, "vote"), ["v1", "v2", "v3"], vote)
    return enter(stage(campaign, name), "a1")


def _document_da():
    return _entered(import_campaign(document_lines(), name="Doc DA", protocol="adequacy", seed=3,
                                    options={"document_mode": True}).campaign)


SETUPS = {
    "adequacy": lambda capture: _document_da(),
    "ranking": lambda capture: _entered(ranking()),
    "esa": lambda capture: _entered(span_campaign("esa", tutorial=0)),
    "contrastive-esa": lambda capture: _entered(span_campaign("contrastive-esa", tutorial=0, perturbation_rate=0.0)),
    "post-edit": lambda capture: _entered(post_edit_campaign(screens_per_hit=3)),
    "reference-translation": lambda capture: _entered(rt_campaign()),
    "reading-comprehension": lambda capture: enter(rc_campaign(articles_per_hit=3), "w1"),
    "reading-comprehension-vote": lambda capture: _stage(capture, "vote"),
    "reading-comprehension-answer": lambda capture: _stage(capture, "answer"),
}


def _answer(item: dict) -> dict:
    protocol = item["protocol"]
    if protocol == "ranking":
        return {"ranks": {c["key"]: 1 for c in item["candidates"]}}
    if protocol == "adequacy":
        return {"score": 50}
    if protocol == "esa":
        return {"score": 50, "spans": []}
    if protocol == "contrastive-esa":
        return {"candidates": {c["key"]: {"score": 50} for c in item["candidates"]}}
    if protocol == "post-edit":
        return {"edits": item["outputs"]}
    if protocol == "reference-translation":  # the first screen of a HIT asks the translator's background
        background = {"native_language": "en", "target_language_years": 20, "country": "UK"}
        sources = item["source"]
        return {"translations": [f"Translation of {s}" for s in sources], "pasted": [False] * len(sources),
                **({"background": background} if item["ask_background"] else {})}
    if protocol == "reading-comprehension":
        return write("w1", item)
    return {"good": "yes", "redundant_with": item["others"][0]["id"]}  # checked against the other questions


def _statements(captured) -> list[str]:
    return [q["sql"][:100] for q in captured.captured_queries]


@pytest.mark.parametrize("protocol", list(SETUPS))
def test_a_screen_reading_beyond_its_item_costs_no_statement_of_its_own(protocol, django_capture_on_commit_callbacks):
    client, token = SETUPS[protocol](django_capture_on_commit_callbacks)
    state = client.get(f"/api/hit/{token}/").json()  # starts the clock
    with CaptureQueriesContext(connection) as got:
        shown = client.get(f"/api/hit/{token}/").json()["item"]
    assert shown["protocol"] == protocol and len(got) == 1, _statements(got)
    by_orm = HitItem.objects.select_related("hit__campaign", "segment", "output").get(pk=shown["id"])
    assert get_protocol(protocol).item_payload(by_orm) == shown
    if state["total"] < 3:  # a one-item HIT (an answer HIT): its POST completes it
        return
    state = post_answer(client, token, {"item": shown["id"], **_answer(shown)}).json()  # also prepares
    with CaptureQueriesContext(connection) as posted:
        response = post_answer(client, token, {"item": state["item"]["id"], **_answer(state["item"])})
    assert response.status_code == 201, response.content
    if connection.vendor == "postgresql":
        assert len(posted) == 2, _statements(posted)
    else:  # read, then UPDATE and INSERT in a transaction (a savepoint inside the test's own)
        assert len(posted) <= 5, _statements(posted)
