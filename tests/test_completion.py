"""Crowd completion (docs/api.md §8): the completion URL a finished worker is sent to, with their code and what
their start link carried (Prolific, Mechanical Turk); a worker who comes back after finishing sees their code;
a bad completion URL template is refused at import, naming the field."""
import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from annotation.models import Assignment, Campaign
from annotation.protocols import all_protocols, get_protocol
from annotation.protocols.options import OptionError

from . import test_protocol_options as imports
from .conftest import campaign_lines, post_answer

pytestmark = pytest.mark.django_db

PROLIFIC = "https://app.prolific.com/submissions/complete?cc={code}"
MTURK = "{turk_submit_to}/mturk/externalSubmit?assignmentId={assignment_id}&code={code}"
SANDBOX = "https://workersandbox.mturk.com"


@pytest.fixture(params=["cli", "api", "admin"])
def importer(request, tmp_path):
    """Import through one front-end: (lines, **fields) -> {field: [reasons]}, empty when imported."""
    if request.param == "cli":
        return lambda lines, **fields: imports.via_cli(tmp_path, lines, fields)
    if request.param == "api":
        api = request.getfixturevalue("api")
        return lambda lines, **fields: imports.via_api(api, lines, fields)
    admin_client = request.getfixturevalue("admin_client")
    return lambda lines, **fields: imports.via_admin(admin_client, lines, fields)


@pytest.fixture
def small(make_campaign):
    """A campaign of one 20-item HIT (14 outputs); `small(**settings)`."""
    return lambda **settings: make_campaign(n_segments=7, hit_size=20, **settings)


def enter(client, campaign, **params):
    response = client.get(f"/c/{campaign.slug}/start/", params)
    assert response.status_code == 302, response.content
    return response["Location"].rstrip("/").split("/")[-1]


def finish(client, token) -> dict:
    state = client.get(f"/api/hit/{token}/").json()
    while not state["done"]:
        response = post_answer(client, token, {"item": state["item"]["id"], "score": 60})
        assert response.status_code == 201, response.content
        state = response.json()
    return state


def test_prolific_completion_url_carries_the_code(client, small):
    campaign = small(completion_url=PROLIFIC)
    token = enter(client, campaign, PROLIFIC_PID="5f1e2d3c", STUDY_ID="st1", SESSION_ID="se1")
    assert Assignment.objects.get(token=token).entry == {"worker_id": "5f1e2d3c", "study_id": "st1",
                                                         "session_id": "se1"}
    state = finish(client, token)
    code = state["completion_code"]
    assert state["completion_url"] == f"https://app.prolific.com/submissions/complete?cc={code}"
    assert client.get(f"/api/hit/{token}/").json() == state  # a later GET says the same


def test_a_fixed_code_and_encoded_values(client, small):
    campaign = small(completion_url="https://example.org/done?code={code}&w={worker_id}&s={study_id}",
                     completion_code="C0DE 1&2")
    token = enter(client, campaign, worker_id="a+b@c", STUDY_ID="s-1")
    assert finish(client, token)["completion_url"] == "https://example.org/done?code=C0DE%201%262&w=a%2Bb%40c&s=s-1"


def test_mturk_completion_url_from_the_entry_parameters(client, small):
    campaign = small(completion_url=MTURK, redundancy=3)
    token = enter(client, campaign, workerId="A1WORKER", assignmentId="3ASSIGN", hitId="3HIT",
                  turkSubmitTo=SANDBOX + "/")
    assert Assignment.objects.get(token=token).entry == {
        "worker_id": "A1WORKER", "assignment_id": "3ASSIGN", "hit_id": "3HIT", "turk_submit_to": SANDBOX}
    state = finish(client, token)
    assert state["completion_url"] == (f"{SANDBOX}/mturk/externalSubmit?assignmentId=3ASSIGN"
                                       f"&code={state['completion_code']}")
    # A start link pointing turkSubmitTo elsewhere is not believed: no URL, the code is shown only.
    forged = enter(client, campaign, workerId="A2WORKER", assignmentId="4ASSIGN", turkSubmitTo="https://evil.example")
    assert "turk_submit_to" not in Assignment.objects.get(token=forged).entry
    assert finish(client, forged)["completion_url"] is None
    # MTurk's preview placeholder is not an assignment id.
    preview = enter(client, campaign, workerId="A3WORKER", assignmentId="ASSIGNMENT_ID_NOT_AVAILABLE",
                    turkSubmitTo=SANDBOX)
    assert "assignment_id" not in Assignment.objects.get(token=preview).entry
    assert finish(client, preview)["completion_url"] is None


def test_the_latest_entry_is_kept_for_an_unfinished_hit(client, small):
    campaign = small(completion_url=MTURK)
    token = enter(client, campaign, workerId="W", assignmentId="OLD", turkSubmitTo=SANDBOX)
    assert enter(client, campaign, workerId="W", assignmentId="NEW", turkSubmitTo=SANDBOX) == token
    assert "assignmentId=NEW&" in finish(client, token)["completion_url"]


def test_no_completion_url_without_a_template_or_for_in_house_annotators(client, small):
    plain = small(name="Plain")
    assert finish(client, enter(client, plain, worker_id="w"))["completion_url"] is None
    campaign = small(name="Prolific", completion_url=PROLIFIC)
    client.force_login(get_user_model().objects.create_user("judge", password="pw"))
    response = client.post(f"/annotate/{campaign.slug}/start/")
    token = response["Location"].rstrip("/").split("/")[-1]
    assert Assignment.objects.get(token=token).entry == {}
    assert finish(client, token)["completion_url"] is None


def test_a_worker_back_after_finishing_sees_their_code_and_link(client, small):
    campaign = small(completion_url=PROLIFIC)
    code = finish(client, enter(client, campaign, PROLIFIC_PID="back", STUDY_ID="S9"))["completion_code"]
    again = client.get(f"/c/{campaign.slug}/start/", {"PROLIFIC_PID": "back"})
    page = again.content.decode()
    assert again.status_code == 200
    assert "You have finished" in page and "no more work" in page
    assert f'<code class="completion-code" id="completion-code-1">{code}</code>' in page
    assert f'href="https://app.prolific.com/submissions/complete?cc={code}"' in page
    assert 'data-copy="completion-code-1" hidden' in page and "annotation/copy.js" in page
    # A link without the study id keeps the one the HIT was done under (this visit's values come first).
    campaign.completion_url = "https://example.org/done?cc={code}&study={study_id}&w={worker_id}"
    campaign.save(update_fields=["completion_url"])
    page = client.get(f"/c/{campaign.slug}/start/", {"PROLIFIC_PID": "back"}).content.decode()
    assert f'href="https://example.org/done?cc={code}&amp;study=S9&amp;w=back"' in page
    # Someone who never finished a HIT is still told there is no more work, without a code.
    other = client.get(f"/c/{campaign.slug}/start/", {"PROLIFIC_PID": "late"})
    assert b"no more work" in other.content and b"completion-code" not in other.content


def test_a_returning_mturk_worker_gets_a_link_for_this_visit(client, make_campaign):
    campaign = make_campaign(n_segments=14, hit_size=20, completion_url=MTURK)  # two HITs
    first = finish(client, enter(client, campaign, workerId="T", assignmentId="A1", turkSubmitTo=SANDBOX))
    second = finish(client, enter(client, campaign, workerId="T", assignmentId="A2", turkSubmitTo=SANDBOX))
    page = client.get(f"/c/{campaign.slug}/start/", {"workerId": "T", "assignmentId": "A3",
                                                      "turkSubmitTo": SANDBOX}).content.decode()
    for state in (first, second):
        code = state["completion_code"]
        assert code in page
        assert f"{SANDBOX}/mturk/externalSubmit?assignmentId=A3&amp;code={code}" in page


def test_a_worker_back_after_the_campaign_closed_sees_their_code(client, small):
    campaign = small(completion_url=PROLIFIC, redundancy=2)
    code = finish(client, enter(client, campaign, PROLIFIC_PID="done"))["completion_code"]
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.CLOSED)
    response = client.get(f"/c/{campaign.slug}/start/", {"PROLIFIC_PID": "done"})
    assert response.status_code == 403
    assert b"has closed" in response.content and code.encode() in response.content
    stranger = client.get(f"/c/{campaign.slug}/start/", {"PROLIFIC_PID": "stranger"})
    assert stranger.status_code == 403 and b"has closed" in stranger.content and b"completion-code" not in \
        stranger.content


BAD_TEMPLATES = [
    ("ftp://example.org/{code}", "must be an http(s) URL"),
    ("javascript:alert(1)//{code}", "must be an http(s) URL"),
    ("example.org/done?cc={code}", "must be an http(s) URL"),
    ("https://example.org/done?cc={kode}", "has an unknown placeholder {kode}"),
    ("https://example.org/done?cc={code", "has an unmatched { or }"),
    ("https://example.org/done?cc={code!r}", "has a formatted placeholder"),
    ("https://{worker_id}.example.org/done", "must name its host itself"),
    ("https://example.org/{turk_submit_to}/x", "must name its host itself"),
    ("{turk_submit_to}.evil.example/x", "must go on with a path after {turk_submit_to}"),
    ("https://example.org/done ?cc={code}", "must not contain spaces"),
]


@pytest.mark.parametrize("template,reason", BAD_TEMPLATES)
def test_bad_templates_are_refused_naming_the_field(template, reason):
    for protocol in all_protocols():
        raw = {"completion_url": template, "systems": "A,B"} if protocol.family == "pairwise" else {
            "completion_url": template}
        with pytest.raises(OptionError) as info:
            protocol.parse_options(raw)
        assert [name for name, _ in info.value.errors] == ["completion_url"]
        assert info.value.errors[0][1].startswith(reason)
    with pytest.raises(ValidationError):  # the model field too (the admin's change form)
        Campaign(completion_url=template).clean_fields(exclude=[f.name for f in Campaign._meta.fields
                                                                if f.name != "completion_url"])


def test_good_templates_are_stored(importer):
    assert get_protocol("adequacy").parse_options({"completion_url": f"  {MTURK}  "}).campaign_fields[
        "completion_url"] == MTURK
    assert "completion_url" not in get_protocol("adequacy").parse_options({}).campaign_fields
    assert importer(campaign_lines(35), name="Crowd", protocol="adequacy", completion_url=PROLIFIC) == {}
    assert Campaign.objects.get(name="Crowd").completion_url == PROLIFIC


def test_a_bad_template_is_refused_by_every_front_end(importer):
    errors = importer(campaign_lines(35), name="Crowd", protocol="adequacy",
                       completion_url="ftp://example.org/?cc={code}")
    assert list(errors) == ["completion_url"]
    assert "must be an http(s) URL" in " ".join(errors["completion_url"])
    assert not Campaign.objects.filter(name="Crowd").exists()
