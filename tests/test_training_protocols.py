"""Training beyond ESA and MQM (docs/methods.md §12.5): Direct Assessment tutorials with an expected score range
(adequacy, fluency, source-based adequacy, document-level DA) and contrastive ESA tutorials with an expected answer
per candidate column, through the same shared code (annotation/building/training.py, tutorial_plans.py), the same
loud retry and silent gate. Gate tasks run eagerly here (settings_test: GATE_INLINE_WHEN_EAGER)."""
import json
import random

import pytest
from django.test import Client

from annotation.building.hit_layout import ItemPlan
from annotation.building.training import Check, check_candidates, feedback
from annotation.building.tutorial_plans import place_tutorials
from annotation.models import HitItem, Judgment, TutorialTry
from annotation.protocols import get_protocol
from annotation.services.campaign_import import CampaignFileError, import_campaign
from evaluation.models import WorkerGate

from .conftest import post_answer, sentence, start
from .test_training import answer_checks, enter

SYSTEMS = ("alpha", "beta")
DA_EXPECTED = {"score": [0, 30]}  # a tutorial translation that is plainly wrong: a low score is expected


def da_lines(tutorials=1, expected=DA_EXPECTED, segments=7, docs=2) -> list[bytes]:
    lines = [{"doc_id": f"d{i % docs}", "seg_id": i // docs + 1, "source": f"Quelle {i}: {sentence(i + 40)}",
              "reference": sentence(i) + f" ref{i}", "systems": {n: sentence(i + 13 * j) + f" {n}{i}"
                                                                 for j, n in enumerate(SYSTEMS)}}
             for i in range(segments)]
    for t in range(tutorials):
        lines.append({"doc_id": "tutorial", "seg_id": t + 1, "source": "Das Museum öffnet am Samstag.",
                      "reference": "The museum opens on Saturday.", "tutorial": True,
                      "systems": dict.fromkeys(SYSTEMS, "The museum closes on Sunday."),
                      **({"expected": dict.fromkeys(SYSTEMS, expected)} if expected is not None else {})})
    return [(json.dumps(line) + "\n").encode() for line in lines]


def da_campaign(protocol="adequacy", lines=None, **raw):
    parsed = get_protocol(protocol).parse_options({"hit_size": 20, "seed": 1, **raw})
    return import_campaign(lines or da_lines(), name="da training", protocol=protocol, parsed=parsed).campaign


def items_of(campaign):
    return [list(hit.items.order_by("position")) for hit in campaign.hits.order_by("number")]


# --- placing tutorial items, by hand -------------------------------------------------------------------------------

def test_placing_tutorials_renumbers_positions_partners_and_unit_starts():
    plans = [ItemPlan(0, 0, "system", 1, 1, payload={"first": 0}), ItemPlan(1, 0, "system", 2, 2, payload={"first": 0}),
             ItemPlan(2, 1, "bad_ref", 1, 1, partner_position=0, payload={"first": 2})]
    plans[0].partner_position = 2
    tutorial = ItemPlan(0, 0, "tutorial", 9, 9, payload={"expected": {"score": [0, 10]}})
    loud = place_tutorials([ItemPlan(**vars(p)) for p in plans], [tutorial], False, random.Random(0))
    assert [p.item_type for p in loud] == ["tutorial", "system", "system", "bad_ref"]
    assert [p.position for p in loud] == [0, 1, 2, 3] and loud[1].partner_position == 3
    assert loud[3].partner_position == 1 and loud[3].payload["first"] == 3 and loud[2].payload["first"] == 1
    # silent: only at the boundaries of units (sets): before, between or after, never inside the first unit
    spots = {tuple(p.item_type for p in place_tutorials([ItemPlan(**vars(p)) for p in plans], [tutorial], True,
                                                        random.Random(seed))).index("tutorial") for seed in range(30)}
    assert spots == {0, 2, 3}


# --- Direct Assessment ------------------------------------------------------------------------------------------------

@pytest.mark.django_db
@pytest.mark.parametrize("protocol", ["adequacy", "fluency", "source-adequacy"])
def test_da_tutorials_open_every_hit_and_count_in_no_output(protocol):
    campaign = da_campaign(protocol)
    for items in items_of(campaign):
        assert items[0].item_type == "tutorial" and items[0].payload["expected"] == DA_EXPECTED
        assert [i.position for i in items] == list(range(len(items))) and len(items) == 21
        assert [i.item_type for i in items].count("tutorial") == 1
        by_position = {i.position: i for i in items}
        for item in items:  # every quality-control pair still points at its partner
            if item.partner_position is not None:
                partner = by_position[item.partner_position]
                assert partner.segment_id == item.segment_id and partner.item_type != "tutorial"
        assert all(i.segment.document.doc_id != "tutorial" for i in items[1:])


@pytest.mark.django_db
def test_da_refuses_expected_spans_and_tutorials_with_adaptive_allocation():
    with pytest.raises(CampaignFileError, match="'expected' of 'alpha': must be {\"score\": \\[low, high\\]}"):
        da_campaign(lines=da_lines(expected={"spans": [{"start": 0, "end": 3}], "score": [0, 30]}))
    with pytest.raises(CampaignFileError, match="0 ≤ low ≤ high ≤ 100"):
        da_campaign(lines=da_lines(expected={"score": [40, 20]}))
    with pytest.raises(CampaignFileError, match="not offered with adaptive allocation"):
        da_campaign(adaptive=True, budget_judgments=1000)


@pytest.mark.django_db
def test_loud_da_tutorial_takes_a_retry_with_the_expected_range_shown(django_capture_on_commit_callbacks):
    campaign, client = da_campaign(), Client()
    token, state = enter(client, campaign, "da1")
    item = state["item"]["id"]
    first = post_answer(client, token, {"item": item, "score": 85})
    assert first.status_code == 200 and first.json()["item"]["id"] == item
    shown = first.json()["feedback"]
    assert shown["expected"] == DA_EXPECTED and shown["score_wrong"] and shown["missed"] == []
    assert shown["message"] == ("The expected answer has a rating in another part of the line (below). "
                                "Try again (2 tries left).")
    assert not Judgment.objects.filter(item_id=item).exists()
    with django_capture_on_commit_callbacks(execute=True):
        right = post_answer(client, token, {"item": item, "score": 30})  # the range includes its ends
    assert right.status_code == 201 and right.json()["training"]["passed"] is True
    assert list(TutorialTry.objects.filter(item_id=item).order_by("attempt").values_list(
        "attempt", "passed", "final", "answer")) == [(1, False, False, {"spans": [], "score": 85.0}),
                                                     (2, True, True, {"spans": [], "score": 30.0})]
    assert not WorkerGate.objects.exists()


def practice_marks(client, token: str) -> list[tuple[str, bool]]:
    """(item type, whether the screen was told `practice`) for every item of the HIT, answered in order."""
    marks = []
    while not (state := client.get(f"/api/hit/{token}/").json()).get("done"):
        item = HitItem.objects.get(pk=state["item"]["id"])
        marks.append((item.item_type, state["item"].get("practice", False)))
        score = 20 if item.item_type == "tutorial" else 50  # inside the tutorial's expected range
        assert post_answer(client, token, {"item": item.pk, "score": score}).status_code == 201
    return marks


@pytest.mark.django_db
@pytest.mark.parametrize("mode", ["loud", "silent"])
def test_a_tutorial_item_says_practice_and_nothing_else_does(mode):
    """The screen is told `practice` on a loud tutorial's items, which open the HIT, and on nothing else: never on
    a silent attention check (which would then stand out from the real items), a control or a real item."""
    campaign, client = da_campaign(lines=da_lines(tutorials=2), tutorial_mode=mode), Client()
    marks = practice_marks(client, start(client, campaign, f"reader-{mode}"))
    kinds = {kind for kind, _ in marks}
    assert "tutorial" in kinds and len(kinds) > 2  # controls (bad references, repeats, references) too
    told = [kind for kind, practice in marks if practice]
    assert told == (["tutorial", "tutorial"] if mode == "loud" else [])
    if mode == "loud":
        assert [practice for _, practice in marks[:2]] == [True, True]  # they open the HIT


@pytest.mark.django_db
def test_silent_da_checks_sit_between_sets_and_gate_a_careless_worker(django_capture_on_commit_callbacks):
    campaign, client = da_campaign(lines=da_lines(tutorials=2), tutorial_mode="silent"), Client()
    for items in items_of(campaign):
        for i, item in enumerate(items):
            if item.item_type == "tutorial" and 0 < i < len(items) - 1:  # a check never splits a set
                neighbours = [x for x in (items[i - 1], items[i + 1]) if x.item_type != "tutorial"]
                assert len({x.set_index for x in neighbours}) == len(neighbours) or len(neighbours) < 2
    token = start(client, campaign, "careless")
    with django_capture_on_commit_callbacks(execute=True):
        answer_checks(client, token, [{"score": 100}], other={"score": 50})
    assert not WorkerGate.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        answer_checks(client, token, [{"score": 100}], other={"score": 50})
    gate = WorkerGate.objects.get(campaign=campaign)
    assert gate.rule == "checks" and gate.missed_share == 1.0
    assert list(TutorialTry.objects.values_list("mode", "passed")) == [("silent", False)] * 2


@pytest.mark.django_db
def test_document_da_keeps_units_whole_around_the_tutorials():
    campaign = da_campaign(lines=da_lines(tutorials=2, segments=12, docs=3), document_mode=True, hit_size=40,
                           tutorial_mode="silent")
    for items in items_of(campaign):
        assert sum(i.item_type == "tutorial" for i in items) == 2
        for item in items:
            if item.item_type == "tutorial":
                continue
            first, count = item.payload["first"], item.payload["count"]
            unit = items[first:first + count + 1]  # its segments, then its document item
            assert all(u.item_type != "tutorial" and u.set_index == item.set_index for u in unit)
            assert unit[-1].payload["unit"] == "document" and item in unit


@pytest.mark.django_db
def test_tutorial_judgments_stay_out_of_the_da_statistics():
    from evaluation.families.direct_assessment.storage import _judgment_table_query

    campaign, client = da_campaign(), Client()
    token = start(client, campaign, "da2")
    item = client.get(f"/api/hit/{token}/").json()["item"]["id"]
    post_answer(client, token, {"item": item, "score": 10})
    rows = list(_judgment_table_query(campaign))
    assert len(rows) == 1 and rows[0][3] == -1  # the item code no statistic counts


# --- contrastive ESA ----------------------------------------------------------------------------------------------

TEXT = "An example sentence for the tutorial."  # "example" is [3, 10)
ALPHA = {"spans": [{"start": 3, "end": 10, "severity": "major"}], "score": [0, 50]}
BETA = {"score": [60, 100]}


def contrastive_lines(tutorials=1) -> list[bytes]:
    lines = [{"doc_id": f"d{d}", "seg_id": s + 1, "source": f"Quelle {d}.{s}.",
              "systems": {n: f"The {n} output {d}.{s} has words." for n in SYSTEMS}}
             for d in range(2) for s in range(3)]
    for t in range(tutorials):
        lines.append({"doc_id": "tutorial", "seg_id": t + 1, "source": "Ein Beispiel.", "tutorial": True,
                      "systems": {"alpha": TEXT, "beta": "A sentence for the tutorial."},
                      "expected": {"alpha": ALPHA, "beta": BETA}})
    return [(json.dumps(line) + "\n").encode() for line in lines]


def contrastive_campaign(lines=None, **raw):
    parsed = get_protocol("contrastive-esa").parse_options({"segments_per_hit": 6, "seed": 1,
                                                            "perturbation_rate": 0, **raw})
    return import_campaign(lines or contrastive_lines(), name="ces training", protocol="contrastive-esa",
                           parsed=parsed).campaign


def test_candidate_columns_are_checked_each_against_its_own_expected_answer():
    expected = {"A": ALPHA, "B": {"spans": [], **BETA}}  # as parse_expected gives it
    spans = [{"start": 3, "end": 10, "severity": "major", "candidate": "B"}]  # the right span, in the wrong column
    check = check_candidates(expected, spans, {"A": 40, "B": 50}, 0.5)
    assert not check.passed and check.missed == [{"start": 3, "end": 10, "severity": "major",
                                                  "problem": "not found", "candidate": "A"}]
    assert check.scores_wrong == ["B"] and check.score_wrong
    right = [{**spans[0], "candidate": "A"}]
    assert check_candidates(expected, right, {"A": 40, "B": 60}, 0.5) == Check(True)
    assert check_candidates({"A": ALPHA}, right, {"A": 40, "B": 0}, 0.5).passed  # B has no expected answer
    shown = feedback({"candidates": expected}, check, 1, 3, ["B", "A"])  # the screen shows B first
    assert shown["message"] == ("The expected answer has an error you did not mark in translation B (highlighted); "
                                "a score between 60 and 100 in translation A. Try again (2 tries left).")


@pytest.mark.django_db
def test_contrastive_loud_tutorial_takes_a_retry(django_capture_on_commit_callbacks):
    campaign, client = contrastive_campaign(), Client()
    token, state = enter(client, campaign, "ces1")
    item = HitItem.objects.get(pk=state["item"]["id"])
    assert item.item_type == "tutorial"
    key = {c["name"]: c["key"] for c in item.payload["candidates"]}
    assert item.payload["expected"] == {"candidates": {key["alpha"]: ALPHA, key["beta"]: {"spans": [], **BETA}}}
    wrong = {key["alpha"]: {"spans": [], "score": 40}, key["beta"]: {"spans": [], "score": 40}}
    first = post_answer(client, token, {"item": item.pk, "candidates": wrong})
    assert first.status_code == 200
    shown = first.json()["feedback"]
    assert [m["candidate"] for m in shown["missed"]] == [key["alpha"]] and shown["scores_wrong"] == [key["beta"]]
    assert shown["expected"]["candidates"][key["beta"]] == {"spans": [], **BETA}
    right = {key["alpha"]: {"spans": [{"start": 3, "end": 9, "severity": "major"}], "score": 40},  # 6 of 7
             key["beta"]: {"spans": [], "score": 70}}
    with django_capture_on_commit_callbacks(execute=True):
        second = post_answer(client, token, {"item": item.pk, "candidates": right})
    assert second.status_code == 201 and second.json()["training"]["passed"] is True
    tries = list(TutorialTry.objects.filter(item=item).order_by("attempt"))
    assert [(t.attempt, t.passed) for t in tries] == [(1, False), (2, True)]
    assert tries[1].answer["scores"] == {key["alpha"]: 40.0, key["beta"]: 70.0}
    assert Judgment.objects.filter(item=item).count() == 1


@pytest.mark.django_db
def test_contrastive_silent_checks_are_scattered_and_gate(django_capture_on_commit_callbacks):
    campaign, client = contrastive_campaign(contrastive_lines(tutorials=2), tutorial_mode="silent", seed=3), Client()
    spots = [[i.position for i in items if i.item_type == "tutorial"] for items in items_of(campaign)]
    assert all(len(s) == 2 for s in spots) and any(s != [0, 1] for s in spots)
    token = start(client, campaign, "careless")
    statuses = []
    with django_capture_on_commit_callbacks(execute=True):
        while True:
            state = client.get(f"/api/hit/{token}/").json()
            if "item" not in state:
                break
            keys = [c["key"] for c in state["item"]["candidates"]]
            response = post_answer(client, token, {"item": state["item"]["id"],
                                                   "candidates": {k: {"spans": [], "score": 100} for k in keys}})
            statuses.append(response.status_code)
            assert "feedback" not in response.json()
            if response.status_code != 201:
                break
    assert WorkerGate.objects.get(campaign=campaign).rule == "checks"


@pytest.mark.django_db
def test_mqm_side_by_side_refuses_expected_answers_instead_of_ignoring_them():
    parsed = get_protocol("mqm-sxs").parse_options({"segments_per_hit": 6, "seed": 1, "perturbation_rate": 0})
    with pytest.raises(CampaignFileError, match="not offered for mqm-sxs"):
        import_campaign(contrastive_lines(), name="sxs training", protocol="mqm-sxs", parsed=parsed)
