"""Training with feedback and attention checks (docs/api.md §3 "Training", docs/methods.md §12.5): expected answers
checked on the server against hand-computed cases, the loud retry flow, silent checks that gate a careless worker
through the live reliability gate, and `allow_item_navigation` (400 for any item but the next one). Gate tasks
run eagerly here (settings_test: GATE_INLINE_WHEN_EAGER), inside `django_capture_on_commit_callbacks`."""
import json

import pytest
from django.test import Client

from annotation.building.training import check_expected, checks_fail, parse_expected
from annotation.models import Assignment, HitItem, Judgment, TutorialTry
from annotation.protocols import get_protocol
from annotation.services.campaign_import import CampaignFileError, import_campaign
from evaluation.models import WorkerGate

from .conftest import post_answer, start

SYSTEMS = ("alpha", "beta")
TUTORIAL_TEXT = "An example sentence for the tutorial."  # "example" is [3, 10)
EXPECTED = {"spans": [{"start": 3, "end": 10, "severity": "major"}], "score": [0, 50]}
RIGHT = {"spans": [{"start": 3, "end": 10, "severity": "major"}], "score": 30}
WRONG = {"spans": [], "score": 90}


def training_lines(tutorials=1, expected=EXPECTED, extra=None) -> list[bytes]:
    lines = [{"doc_id": f"d{d}", "seg_id": s + 1, "source": f"Quelle {d}.{s}.",
              "systems": {n: f"The {n} output {d}.{s} has words." for n in SYSTEMS}}
             for d in range(2) for s in range(3)]
    for t in range(tutorials):
        lines.append({"doc_id": "tutorial", "seg_id": t + 1, "source": "Ein Beispiel.", "tutorial": True,
                      "systems": dict.fromkeys(SYSTEMS, TUTORIAL_TEXT),
                      "expected": dict.fromkeys(SYSTEMS, expected), **(extra or {})})
    return [(json.dumps(line) + "\n").encode() for line in lines]


def training_campaign(protocol="esa", lines=None, owner=None, **raw):
    parsed = get_protocol(protocol).parse_options({"segments_per_hit": 6, "seed": 1, "perturbation_rate": 0, **raw})
    return import_campaign(lines or training_lines(), name="training", protocol=protocol, parsed=parsed,
                           owner=owner).campaign


# --- the expected-answer rules, hand-computed ---------------------------------------------------------------------

def test_an_expected_span_is_found_when_one_span_covers_the_set_share_of_its_characters():
    want = {"spans": [{"start": 10, "end": 20}]}  # 10 characters
    assert check_expected(want, [{"start": 15, "end": 30, "severity": "minor"}], None, 0.5).passed  # 5/10 = 0.5
    missed = check_expected(want, [{"start": 16, "end": 30, "severity": "minor"}], None, 0.5)  # 4/10
    assert not missed.passed and missed.missed == [{"start": 10, "end": 20, "problem": "not found"}]
    # two spans covering 4 and 4 characters: the best single one (4/10) counts, not their union
    split = [{"start": 10, "end": 14, "severity": "minor"}, {"start": 16, "end": 20, "severity": "minor"}]
    assert not check_expected(want, split, None, 0.5).passed
    assert check_expected(want, split, None, 0.4).passed  # 4/10 ≥ 0.4
    assert not check_expected(want, [], None, 0.01).passed


def test_severity_category_and_score_range_are_checked_against_the_best_overlapping_span():
    want = {"spans": [{"start": 0, "end": 4, "severity": "major", "category": "Accuracy/Omission"}], "score": [20, 40]}
    right = [{"start": 0, "end": 4, "severity": "major", "category": "Accuracy/Omission"}]
    assert check_expected(want, right, 20, 0.5).passed and check_expected(want, right, 40, 0.5).passed  # ends in
    assert check_expected(want, right, 40.5, 0.5).score_wrong
    minor = check_expected(want, [{**right[0], "severity": "minor"}], 30, 0.5)
    assert minor.missed[0]["problem"] == "severity" and minor.missed[0]["given"] == "minor"
    other = check_expected(want, [{**right[0], "category": "Style"}], 30, 0.5)
    assert other.missed[0]["problem"] == "category"
    # extra spans are no fault; no expected spans and a range: only the score counts
    assert check_expected(want, right + [{"start": 6, "end": 9, "severity": "minor"}], 30, 0.5).passed
    assert check_expected({"spans": [], "score": [90, 100]}, [], 95, 0.5).passed


def test_silent_check_limits_are_a_count_from_one_and_a_share_below_it():
    assert checks_fail(2, 5, 2) and not checks_fail(1, 5, 2)
    assert checks_fail(2, 4, 0.5) and not checks_fail(1, 3, 0.5) and not checks_fail(0, 0, 0.5)


def test_bad_expected_answers_are_refused_at_import_naming_the_segment():
    with pytest.raises(Exception, match="0 ≤ start < end ≤ 37"):
        parse_expected({"spans": [{"start": 30, "end": 40}]}, TUTORIAL_TEXT, ("minor", "major"), None)
    with pytest.raises(Exception, match="0 ≤ low ≤ high ≤ 100"):
        parse_expected({"score": [60, 40]}, TUTORIAL_TEXT, ("minor", "major"), None)
    with pytest.raises(Exception, match="takes no category"):
        parse_expected({"spans": [{"start": 0, "end": 2, "category": "Style"}]}, "abc", ("minor",), None)


@pytest.mark.django_db
@pytest.mark.parametrize("protocol", ["esa", "contrastive-esa"])
def test_import_refuses_expected_answers_off_tutorial_lines_or_with_a_bad_span(protocol):
    lines = training_lines(extra={"tutorial": False})
    with pytest.raises(CampaignFileError, match="needs \"tutorial\": true"):
        training_campaign(protocol, lines=lines)
    with pytest.raises(CampaignFileError, match="segment 1: 'expected' of 'alpha': span 0: severity must be one of"):
        training_campaign(protocol, lines=training_lines(expected={"spans": [{"start": 0, "end": 2,
                                                                               "severity": "huge"}]}))


# --- the flows through the annotator API --------------------------------------------------------------------------

def enter(client, campaign, worker: str) -> tuple[str, dict]:
    """A worker's HIT token and its first state, which never holds the expected answer."""
    token = start(client, campaign, worker)
    state = client.get(f"/api/hit/{token}/").json()
    assert '"expected"' not in json.dumps(state)
    return token, state


@pytest.mark.django_db
def test_loud_tutorial_shows_what_was_missed_and_takes_a_retry(django_capture_on_commit_callbacks):
    campaign, client = training_campaign(), Client()
    token, state = enter(client, campaign, "w1")
    item = state["item"]["id"]
    assert "major" not in json.dumps(state["item"]["prefilled"])
    with django_capture_on_commit_callbacks(execute=True):
        first = post_answer(client, token, {"item": item, **WRONG})
    assert first.status_code == 200
    body = first.json()
    assert body["item"]["id"] == item and body["position"] == 1  # still the same item
    assert body["feedback"]["expected"] == EXPECTED and body["feedback"]["tries_left"] == 2
    assert body["feedback"]["score_wrong"] and body["feedback"]["missed"][0]["problem"] == "not found"
    assert not Judgment.objects.filter(item_id=item).exists()
    assert post_answer(client, token, {"item": item, **WRONG}).status_code == 200  # a resend is the same try
    assert TutorialTry.objects.filter(item_id=item).count() == 1
    with django_capture_on_commit_callbacks(execute=True):
        second = post_answer(client, token, {"item": item, **RIGHT})
    assert second.status_code == 201 and second.json()["position"] == 2
    assert second.json()["training"]["passed"] is True
    tries = list(TutorialTry.objects.filter(item_id=item).order_by("attempt").values_list("attempt", "passed",
                                                                                           "final"))
    assert tries == [(1, False, False), (2, True, True)]
    assert Judgment.objects.filter(item_id=item).count() == 1
    assert not WorkerGate.objects.filter(campaign=campaign).exists()


@pytest.mark.django_db
def test_a_loud_tutorial_still_wrong_at_the_last_try_gates_the_worker(django_capture_on_commit_callbacks):
    campaign, client = training_campaign(tutorial_tries=2), Client()
    token = start(client, campaign, "w2")
    item = client.get(f"/api/hit/{token}/").json()["item"]["id"]
    assert post_answer(client, token, {"item": item, **WRONG}).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        last = post_answer(client, token, {"item": item, "spans": [], "score": 80})
    assert last.status_code == 201 and last.json()["training"]["stopped"] is True
    gate = WorkerGate.objects.get(campaign=campaign, annotator__external_id="w2")
    assert gate.rule == "tutorial" and "failed the tutorial" in gate.reason
    assert Assignment.objects.get(token=token).status == Assignment.Status.ABANDONED
    gone = client.get(f"/api/hit/{token}/")
    assert gone.status_code == 410 and gone.json()["blocked"] is True
    assert client.get(f"/c/{campaign.slug}/start/", {"worker_id": "w2"}).status_code == 403  # the gate's page
    listed = client.get(f"/hit/{token}/")
    assert listed.status_code == 403 and b"no further HITs for you" in listed.content


def answer_checks(client, token: str, answers: list[dict], other: dict | None = None) -> list:
    """Answer the HIT's items in order, each silent check with the next of `answers` and every other item with
    `other` (a middling score), until the answers run out; the responses to the checks."""
    responses, left = [], list(answers)
    while left:
        state = client.get(f"/api/hit/{token}/").json()
        item = HitItem.objects.get(pk=state["item"]["id"])
        body = left.pop(0) if item.item_type == "tutorial" else (other or {"spans": [], "score": 50})
        response = post_answer(client, token, {"item": item.pk, **body})
        assert response.status_code == 201 and "feedback" not in response.json()
        if item.item_type == "tutorial":
            responses.append(response)
    return responses


@pytest.mark.django_db
def test_silent_checks_sit_between_units_at_random_and_loud_tutorials_open_the_hit():
    silent = training_campaign(lines=training_lines(tutorials=2), tutorial_mode="silent", seed=2)
    loud = training_campaign(lines=training_lines(tutorials=2), seed=2)
    def spots(campaign):
        return [[i.position for i in hit.items.order_by("position") if i.item_type == "tutorial"]
                for hit in campaign.hits.order_by("number")]
    assert spots(loud) == [[0, 1], [0, 1]]
    assert all(len(s) == 2 for s in spots(silent)) and spots(silent) != spots(loud)


@pytest.mark.django_db
def test_silent_checks_are_kept_without_feedback_and_gate_a_careless_worker(django_capture_on_commit_callbacks,
                                                                              api, researcher):
    campaign, client = training_campaign(lines=training_lines(tutorials=2), tutorial_mode="silent",
                                         owner=researcher), Client()
    token = start(client, campaign, "careless")
    with django_capture_on_commit_callbacks(execute=True):
        first, = answer_checks(client, token, [WRONG])
        assert "training" not in first.json()
        assert not WorkerGate.objects.exists()  # one failed check of the two allowed
    with django_capture_on_commit_callbacks(execute=True):
        second, = answer_checks(client, token, [WRONG])
    assert "training" not in second.json()
    assert list(TutorialTry.objects.values_list("mode", "passed", "final")) == [("silent", False, True)] * 2
    assert Judgment.objects.filter(assignment__token=token, item__item_type="tutorial").count() == 2
    gate = WorkerGate.objects.get(campaign=campaign)
    assert gate.rule == "checks" and gate.reason.startswith("failed 2 of 2 attention checks")
    listed = api.get(f"/api/campaigns/{campaign.slug}/gates/").json()["results"]
    assert [(g["worker"], g["rule"], g["missed_share"]) for g in listed] == [("careless", "checks", 1.0)]


@pytest.mark.django_db
def test_a_share_of_failed_silent_checks_gates_too(django_capture_on_commit_callbacks):
    campaign, client = training_campaign(lines=training_lines(tutorials=2), tutorial_mode="silent",
                                         checks_max_failed=0.5), Client()
    token = start(client, campaign, "half")
    with django_capture_on_commit_callbacks(execute=True):
        answer_checks(client, token, [RIGHT])
    assert not WorkerGate.objects.exists()  # 0 of 1 failed
    with django_capture_on_commit_callbacks(execute=True):
        answer_checks(client, token, [WRONG])  # 1 of 2 failed: 0.5 reaches 0.5
    assert WorkerGate.objects.get(campaign=campaign).rule == "checks"
    assert list(TutorialTry.objects.order_by("id").values_list("passed", flat=True)) == [True, False]


@pytest.mark.django_db
@pytest.mark.parametrize("allow, status", [(None, 409), (False, 400)])
def test_navigation_off_refuses_any_item_but_the_next_with_400(allow, status):
    options = {} if allow is None else {"allow_item_navigation": allow}
    campaign, client = training_campaign(lines=training_lines(tutorials=0), **options), Client()
    token = start(client, campaign, "w3")
    state = client.get(f"/api/hit/{token}/").json()
    first = state["item"]["id"]
    nxt = post_answer(client, token, {"item": first, "spans": [], "score": 50}).json()
    later = Assignment.objects.get(token=token).hit.items.get(position=3).pk
    jump = post_answer(client, token, {"item": later, "spans": [], "score": 50})
    back = post_answer(client, token, {"item": first, "spans": [], "score": 10})
    assert (jump.status_code, back.status_code) == (status, status)
    if status == 400:
        assert "only item" in jump.json()["error"] and "cannot be answered again" in back.json()["error"]
    assert post_answer(client, token, {"item": first, "spans": [], "score": 50}).status_code == 201  # a resend
    assert Judgment.objects.filter(assignment__token=token).count() == 1
    assert Assignment.objects.get(token=token).position == 1 and nxt["position"] == 2
