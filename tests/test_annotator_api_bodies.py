"""Bodies the annotator API must refuse with a 400 that stores nothing, never a 500 (docs/api.md §8.3): what the JSON
parser cannot take, integers too large for a float, text no database stores, fields the answer does not have.
Every protocol and stage meets the whole hostile corpus in tests/test_annotator_fuzz_corpus.py."""
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from annotation.models import Assignment, Judgment
from annotation.protocols import JudgmentError, get_protocol
from annotation.protocols.options import OptionError
from annotation.services import judging

from .conftest import as_bytes, campaign_lines, post_answer, start
from .test_fuzz import FUZZ
from .test_fuzz_annotator import json_values

pytestmark = pytest.mark.django_db
HUGE = 10**400


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


def refused(client, campaign, answer: dict) -> str:
    """POST `answer` for the current item; asserts a 400 that left the HIT as it was and returns the reason."""
    token = start(client, campaign, "w")
    item = client.get(f"/api/hit/{token}/").json()["item"]["id"]
    before = Assignment.objects.filter(token=token).values().get()
    response = post_answer(client, token, json.dumps({"item": item, **answer}))
    assert response.status_code == 400, response.content
    assert Judgment.objects.count() == 0 and Assignment.objects.filter(token=token).values().get() == before
    return response.json()["error"]


@pytest.mark.parametrize("answer, reason", ids=["10**400", "-10**400", "10**20"], argvalues=[
    ({"score": HUGE}, "'score' must lie between 0 and 100, not an integer of 401 digits"),
    ({"score": -HUGE}, "'score' must lie between 0 and 100, not an integer of 401 digits"),
    ({"score": 10**20}, "'score' must lie between 0 and 100, not an integer of 21 digits"),
])
def test_an_integer_too_large_for_a_float_is_out_of_range(client, campaign, answer, reason):
    assert refused(client, campaign, answer) == reason


@pytest.mark.parametrize("item", [HUGE, 2**63, 0, -1], ids=["10**400", "2**63", "0", "-1"])
def test_an_item_that_no_row_can_have_is_400(client, campaign, item):
    token = start(client, campaign, "w")
    response = post_answer(client, token, json.dumps({"item": item, "score": 5}))
    assert response.status_code == 400 and response.json()["error"].startswith("'item' must be the integer id")
    assert Judgment.objects.count() == 0


@pytest.mark.parametrize("answer, reason", [
    ({"score": 50, "note": "\ud800"}, "'note' must not contain NUL characters or lone surrogates"),
    ({"score": 50, "\udfff": 1}, "a field name must not contain NUL characters or lone surrogates"),
    ({"score": 50, "x": [{"y": "a\x00b"}]}, "'x/0/y' must not contain NUL characters or lone surrogates"),
])
def test_text_no_database_stores_is_refused_where_the_body_is_read(client, campaign, answer, reason):
    assert refused(client, campaign, answer) == reason


@pytest.mark.parametrize("text, reason", [
    ('"n": "a\\u0000b"', "'n'"),                 # an escaped NUL in a value
    ('"k\\u0000": 1', "a field name"),          # ... in a key
    ('"n": "\\uD800"', "'n'"),                  # an escaped lone high surrogate, upper case
    ('"n": ["\\udfff"]', "'n/0'"),              # ... a lone low one
    ('"n": "\\udc00\\ud800"', "'n'"),          # a pair the wrong way round: two lone halves
    ('"\\ud83d": 1', "a field name"),           # half of an emoji as a key
])
def test_escaped_nul_and_lone_surrogates_are_refused(client, campaign, text, reason):
    token = start(client, campaign, "w")
    item = client.get(f"/api/hit/{token}/").json()["item"]["id"]
    response = post_answer(client, token, f'{{"item": {item}, "score": 5, {text}}}')
    assert response.status_code == 400, response.content
    assert response.json()["error"] == f"{reason} must not contain NUL characters or lone surrogates"
    assert Judgment.objects.count() == 0


@pytest.mark.parametrize("raw", [
    b'{"n": "caf\\u00e9 \\ud83d\\ude00"}',      # escaped text a database stores: an accent, an emoji's pair
    b'{"n": "\\\\u0000"}',                       # an escaped backslash, then "u0000": no NUL
    '{"n": "\U0001f600"}'.encode(),                  # the emoji as UTF-8
])
def test_escapes_of_storable_text_pass(raw):
    assert judging.unstorable_text(judging.parse_body(raw)) is None


def test_a_utf16_body_is_walked_too():
    """json.loads reads UTF-16 and UTF-32 bodies; their NUL bytes send them to the walk."""
    with pytest.raises(JudgmentError, match="'n' must not contain"):
        judging.parse_body('{"n": "\\u0000"}'.encode("utf-16"))
    assert judging.parse_body('{"n": "\u00e9"}'.encode("utf-16")) == {"n": "\u00e9"}


@FUZZ
@given(body=json_values(), ascii_only=st.booleans())
def test_the_raw_body_check_refuses_exactly_what_the_walk_refuses(body, ascii_only):
    """judging.MAY_BE_UNSTORABLE only spares the walk over the parsed body where it would find nothing."""
    try:
        raw = json.dumps(body, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    except (ValueError, OverflowError):
        return
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError):
        return
    walked = judging.unstorable_text(parsed)
    try:
        judging.parse_body(raw)
        refused = None
    except JudgmentError as exc:
        refused = str(exc)
    assert refused == (None if walked is None else f"{walked} must not contain NUL characters or lone surrogates")


def test_an_encoded_lone_surrogate_is_refused_too(client, campaign):
    """json.loads decodes bytes with surrogatepass, so UTF-8-encoded surrogate halves arrive as lone surrogates."""
    token = start(client, campaign, "w")
    item = client.get(f"/api/hit/{token}/").json()["item"]["id"]
    response = post_answer(client, token, b'{"item": %d, "score": 5, "n": "\xed\xa0\x80"}' % item)
    assert response.status_code == 400 and "lone surrogates" in response.json()["error"]
    assert Judgment.objects.count() == 0


@pytest.mark.parametrize("answer", [{"score": 50, "seconds": 12}, {"score": 50, "comment": "fine"}])
def test_direct_assessment_refuses_fields_it_does_not_have(client, campaign, answer):
    extra = next(k for k in answer if k != "score")
    assert refused(client, campaign, answer) == f"unexpected field {extra!r}; the answer is {{\"item\", \"score\"}}"


@pytest.mark.parametrize("protocol", ["pairwise-adequacy", "pairwise-fluency"])
def test_pairwise_refuses_fields_it_does_not_have(client, protocol):
    from annotation.services.campaign_import import import_campaign

    campaign = import_campaign(as_bytes(campaign_lines(20, systems=("human", "mt"), docs=4)), name="pw",
                               protocol=protocol, seed=5, options={"systems": ["mt", "human"]}).campaign
    assert refused(client, campaign, {"choice": "A", "score": 50}) == \
        "unexpected field 'score'; the answer is {\"item\", \"choice\"}"


@pytest.mark.parametrize("value", [HUGE, -HUGE], ids=["10**400", "-10**400"])
def test_a_float_option_given_a_huge_integer_is_out_of_range(value):
    with pytest.raises(OptionError) as error:
        get_protocol("adequacy").parse_options({"qc_threshold": value})
    assert error.value.errors == [("qc_threshold", "must be at most 0.5" if value > 0 else "must be at least 0.0001")]
