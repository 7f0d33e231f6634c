"""Adaptive allocation with a stopping rule, the campaign side (docs/methods.md §12.2): import options and their
errors, the first batch only, later batches built by weight with every HIT's quality-control structure intact,
looks that build the next batch or stop, a budget never passed, one look per batch, the API and the admin."""
from __future__ import annotations

import random
from collections import Counter
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Campaign, Hit, HitItem
from annotation.protocols import get_protocol
from annotation.protocols.options import OptionError
from annotation.services.adaptive_batches import (
    batch_complete,
    build_batch,
    current_batch,
    output_quota,
    spread_over_hits,
)
from annotation.services.campaign_import import CampaignFileError
from evaluation.models import AdaptiveRun
from evaluation.services.adaptive import look, look_after_batch

from .adaptive_helpers import SYSTEMS, adaptive_campaign, finish_batch

APART = {"sys-A": 85.0, "sys-B": 55.0, "sys-C": 25.0}
TIED = {"sys-A": 60.0, "sys-B": 60.0, "sys-C": 60.0}


def parse(**raw):
    return get_protocol("adequacy").parse_options({"hit_size": "20", **raw})


# Options ------------------------------------------------------------------------------------------------------

def test_adaptive_options_parse_and_money_is_turned_into_hits():
    parsed = parse(adaptive="true", budget_money="30.00", payment_per_hit="1.50", redundancy="2", batch_hits="3",
                   alpha_spending="pocock")
    adaptive = {"adaptive": True, "budget_money": "30.00", "batch_hits": 3, "alpha_spending": "pocock"}
    assert {key: parsed.options.get(key) for key in [*adaptive, "budget_judgments"]} == {**adaptive,
                                                                                      "budget_judgments": None}
    from annotation.building.adaptive_rules import adaptive_settings

    settings = adaptive_settings(parsed.options, hit_size=20, redundancy=2, payment_per_hit=Decimal("1.50"))
    assert settings.budget_hits == 10  # 30.00 / (1.50 × 2 workers)
    both = adaptive_settings({**parsed.options, "budget_judgments": 200}, hit_size=20, redundancy=2,
                             payment_per_hit=Decimal("1.50"))
    assert both.budget_hits == 5  # 200 / (20 × 2) < 10: the smaller budget holds
    assert (settings.alpha, settings.spending, both.usable_judgments) == (0.05, "pocock", 200)


@pytest.mark.parametrize("raw, field, words", [
    ({"adaptive": "true"}, "adaptive", "needs a budget"),
    ({"adaptive": "true", "budget_money": "10"}, "budget_money", "payment_per_hit above 0"),
    ({"adaptive": "true", "budget_judgments": "100", "document_mode": "true"}, "adaptive", "document_mode"),
    ({"adaptive": "true", "budget_judgments": "200"}, "batch_hits", "no more than one batch"),
    ({"adaptive": "true", "budget_judgments": "10"}, "budget_judgments", "buys no HIT"),
    ({"budget_judgments": "1000"}, "budget_judgments", "only with adaptive"),
    ({"adaptive": "true", "budget_judgments": "1000", "alpha_spending": "bonferroni"}, "alpha_spending", "one of"),
    ({"adaptive": "true", "budget_judgments": "1000", "adaptive_alpha": "0.9"}, "adaptive_alpha", "at most"),
])
def test_nonsense_adaptive_options_are_refused_by_name(raw, field, words):
    with pytest.raises(OptionError) as refused:
        parse(**raw)
    reasons = dict(refused.value.errors)
    assert field in reasons and words in reasons[field], refused.value.errors


def test_the_import_refuses_adaptive_options_given_as_code_too(make_campaign):
    with pytest.raises(CampaignFileError, match="adaptive: needs a budget"):
        make_campaign(n_segments=20, systems=SYSTEMS, hit_size=20, options={"adaptive": True})
    with pytest.raises(CampaignFileError, match="at least two"):
        make_campaign(n_segments=20, systems=("solo",), hit_size=20, options={"adaptive": True,
                                                                            "budget_judgments": 1000})
    assert not Campaign.objects.exists()


# Batches ------------------------------------------------------------------------------------------------------

def test_an_adaptive_campaign_is_imported_with_its_first_batch_only(make_campaign):
    campaign = adaptive_campaign(make_campaign)
    hits = list(campaign.hits.all())
    assert [h.batch for h in hits] == [1, 1]  # batch_hits 2 of the 5 HITs the file would make
    systems = Counter(HitItem.objects.filter(hit__campaign=campaign, item_type="system")
                      .values_list("output__system__name", flat=True))
    assert max(systems.values()) - min(systems.values()) <= 2, systems  # spread evenly
    run = AdaptiveRun.objects.get(campaign=campaign)
    assert (run.state, run.budget_hits, run.budget_judgments) == ("running", 8, 320)
    plain = make_campaign(n_segments=20, systems=SYSTEMS, hit_size=20, name="plain")
    assert plain.hits.count() == 5 and not plain.hits.filter(batch__isnull=False).exists()
    assert not AdaptiveRun.objects.filter(campaign=plain).exists()


def test_the_sizing_check_counts_the_hits_the_budget_buys(researcher):
    from annotation.services.campaign_import import import_campaign

    from .adaptive_helpers import ADAPTIVE
    from .conftest import as_bytes, campaign_lines

    result = import_campaign(as_bytes(campaign_lines(20, SYSTEMS)), name="sized", protocol="adequacy", hit_size=20,
                             redundancy=2, options=dict(ADAPTIVE), owner=researcher)
    assert result.hits == 2 and "2 per HIT × 8 HITs" in result.warnings[0]  # not the file's 5 HITs


def test_quota_follows_the_weights_within_what_each_system_has():
    assert output_quota([0.5, 0.25, 0.25], [100, 100, 100], 28) == [14, 7, 7]
    assert output_quota([1.0, 0.0, 0.0], [10, 100, 100], 28) == [10, 9, 9]  # capped: the rest goes evenly
    assert output_quota([0, 0, 0], [100, 100, 100], 9) == [3, 3, 3]
    table = spread_over_hits([15, 7, 6], 2)
    assert [sum(row) for row in table] == [14, 14] and [sum(c) for c in zip(*table, strict=True)] == [15, 7, 6]


def _check_qc_structure(hit: Hit):
    """Every DA HIT's layout (docs/methods.md §2.1): types in the right numbers, pairs joining set i and i+h on the
    same output, distinct outputs."""
    items = {i.position: i for i in hit.items.all()}
    half = hit.size // 20
    types = Counter(i.item_type for i in items.values())
    assert types == {"system": 14 * half, "bad_ref": 2 * half, "repeat": 2 * half, "reference": 2 * half}
    for item in items.values():
        if item.item_type in ("bad_ref", "repeat", "reference"):
            partner = items[item.partner_position]
            assert partner.item_type == "system" and partner.partner_position == item.position
            assert abs(partner.set_index - item.set_index) == half
            assert partner.segment_id == item.segment_id
            if item.item_type != "reference":
                assert partner.output_id == item.output_id
    plain = [i.output_id for i in items.values() if i.item_type == "system"]
    assert len(plain) == len(set(plain))


def test_build_batch_follows_the_weights_and_keeps_every_hits_quality_control(make_campaign):
    campaign = adaptive_campaign(make_campaign)
    shown_before = set(HitItem.objects.filter(hit__campaign=campaign, item_type="system")
                       .values_list("output_id", flat=True))
    assert build_batch(campaign, {"sys-A": 0.5, "sys-B": 0.5, "sys-C": 0.0}, 2, after=1) == 2
    assert build_batch(campaign, {"sys-A": 1.0}, 2, after=1) == 0  # another look built batch 2 already
    new = list(campaign.hits.filter(batch=2))
    assert [h.number for h in new] == [3, 4]
    for hit in new:
        _check_qc_structure(hit)
        systems = Counter(hit.items.filter(item_type="system").values_list("output__system__name", flat=True))
        assert systems == {"sys-A": 7, "sys-B": 7}
    outputs = set(HitItem.objects.filter(hit__in=new, item_type="system").values_list("output_id", flat=True))
    fresh = set(campaign.outputs.filter(system__name__in=("sys-A", "sys-B")).exclude(pk__in=shown_before)
                .values_list("pk", flat=True))
    assert len(fresh) < 28 and fresh <= outputs  # every fresh output first, then outputs shown once again
    with pytest.raises(ValueError, match="no system called"):
        build_batch(campaign, {"sys-Z": 1.0}, 1)


def test_a_system_whose_outputs_are_used_up_is_shown_again(make_campaign):
    campaign = adaptive_campaign(make_campaign, budget_judgments=1000)
    for _ in range(3):
        build_batch(campaign, {"sys-C": 1.0}, 2)
    hits = list(campaign.hits.filter(batch__gt=1))
    c_items = HitItem.objects.filter(hit__in=hits, item_type="system", output__system__name="sys-C")
    assert c_items.count() == 6 * 14 > 20  # 84 showings of C's 20 outputs: reused, least shown first
    shown = Counter(HitItem.objects.filter(hit__campaign=campaign, item_type="system", output__system__name="sys-C")
                    .values_list("output_id", flat=True))  # batch 1's showings too
    assert len(shown) == 20 and max(shown.values()) - min(shown.values()) <= 1
    for hit in hits:
        _check_qc_structure(hit)


# Looks --------------------------------------------------------------------------------------------------------

def test_a_look_builds_the_next_batch_for_open_pairs_then_stops_when_all_are_separated(make_campaign):
    campaign, rng = adaptive_campaign(make_campaign), random.Random(3)
    early = look(campaign)
    assert not early.looked and early.decision == "nothing-new"
    finish_batch(campaign, APART, rng, noise=25.0)
    assert batch_complete(campaign)
    outcome = look_after_batch(campaign)
    while outcome.decision == "next-batch":
        assert outcome.built == 2 and current_batch(campaign) == outcome.entry["batch"] + 1
        finish_batch(campaign, APART, rng, noise=25.0)
        outcome = look_after_batch(campaign)
    run = AdaptiveRun.objects.get(campaign=campaign)
    assert outcome.decision == "stop" and run.state == "stopped"
    assert run.reason == "every adjacent pair of systems is separated"
    last = run.looks[-1]
    assert last["order"] == ["sys-A", "sys-B", "sys-C"] and last["open"] == 0
    assert all(abs(p["z"]) >= last["boundary"] or p["separated"] for p in last["pairs"])
    assert [e["number"] for e in run.looks] == list(range(1, len(run.looks) + 1))
    fractions = [e["fraction"] for e in run.looks]
    assert fractions == sorted(fractions) and fractions[-1] < 1  # stopped before the budget was spent
    campaign.refresh_from_db()
    assert campaign.status == "closed"


def test_a_tie_runs_to_the_budget_and_never_past_it(make_campaign):
    campaign, rng = adaptive_campaign(make_campaign, adaptive_futility=0), random.Random(4)
    decisions = []
    while True:
        finish_batch(campaign, TIED, rng)
        outcome = look_after_batch(campaign)
        decisions.append(outcome.decision)
        if outcome.decision != "next-batch":
            break
    run = AdaptiveRun.objects.get(campaign=campaign)
    assert decisions == ["next-batch", "next-batch", "next-batch", "stop"]
    assert run.reason.startswith("the budget is spent (320 judgments)")
    assert campaign.hits.count() == 8 and run.looks[-1]["fraction"] == 1.0
    assert run.spent_judgments == 320 <= run.budget_judgments
    assert look(campaign).decision == "stopped" and campaign.hits.count() == 8


def test_futility_gives_a_tie_up_from_half_the_budget_on(make_campaign):
    """With the default futility (0.1) a tied pair whose chance of separating by the end of the budget is small is
    given up once half the budget is spent: the run stops with every pair decided, before the budget is."""
    campaign, rng = adaptive_campaign(make_campaign), random.Random(4)
    decisions = []
    while (outcome := look_after_batch(campaign) if decisions else None) is None or outcome.decision == "next-batch":
        finish_batch(campaign, TIED, rng)
        decisions.append("batch")
    run = AdaptiveRun.objects.get(campaign=campaign)
    assert outcome.decision == "stop" and run.looks[-1]["fraction"] < 1.0
    assert run.looks[-1]["futile"] and all(p["separated"] or p["futile"] for p in run.looks[-1]["pairs"])
    assert run.spent_judgments < run.budget_judgments


def test_one_look_per_finished_batch(make_campaign):
    campaign, rng = adaptive_campaign(make_campaign), random.Random(5)
    finish_batch(campaign, TIED, rng, workers=("w-1",))
    assert look_after_batch(campaign).decision == "not-due"  # half the batch's assignments are finished
    assert look(campaign).decision == "wait"  # a researcher's look while the batch is out builds nothing
    finish_batch(campaign, TIED, rng)
    first, second = look_after_batch(campaign), look_after_batch(campaign)
    assert (first.decision, second.decision) == ("next-batch", "not-due")
    assert campaign.hits.count() == 4 and len(AdaptiveRun.objects.get(campaign=campaign).looks) == 2


def test_a_finished_batch_sets_off_its_look(make_campaign, settings, django_capture_on_commit_callbacks):
    """Through the annotator API: the last finished HIT of the batch sends assignment_completed, whose receiver
    runs the look (in the caller here: ADAPTIVE_INLINE_WHEN_EAGER; a Celery task in production)."""
    from django.test import Client

    from .simulation import Behaviour, complete_hit

    settings.ADAPTIVE_INLINE_WHEN_EAGER = True
    campaign, rng, client = adaptive_campaign(make_campaign), random.Random(8), Client()
    for worker in ("judge-1", "judge-2"):
        for _ in range(2):
            with django_capture_on_commit_callbacks(execute=True):
                assert complete_hit(client, campaign.slug, worker, Behaviour("diligent"), TIED, rng)
    run = AdaptiveRun.objects.get(campaign=campaign)
    assert [(e["trigger"], e["batch"], e["decision"]) for e in run.looks] == [("batch", 1, "next-batch")]
    assert current_batch(campaign) == 2 and campaign.hits.count() == 4


def test_a_lost_look_is_made_up_when_a_worker_connects(make_campaign, settings):
    from evaluation.adaptive_tasks import catch_up_looks

    settings.ADAPTIVE_INLINE_WHEN_EAGER = True
    campaign, rng = adaptive_campaign(make_campaign), random.Random(9)
    assert catch_up_looks() == 0  # batch 1 not finished: nothing to look at
    finish_batch(campaign, TIED, rng)  # written without the signal: its look was "lost"
    assert catch_up_looks() == 1
    assert current_batch(campaign) == 2 and catch_up_looks() == 0


# API and admin ------------------------------------------------------------------------------------------------

def test_the_api_reports_and_looks(make_campaign, api):
    campaign, rng = adaptive_campaign(make_campaign), random.Random(6)
    url = f"/api/campaigns/{campaign.slug}/adaptive/"
    body = api.get(url).json()
    assert body["state"] == "running" and body["budget"]["judgments"] == 320 and body["looks"] == []
    assert body["projected"]["judgments"] == 320 and body["spent"]["judgments"] == 0
    finish_batch(campaign, TIED, rng)
    answer = api.post(url + "look/").json()
    assert answer["looked"] and answer["decision"] == "next-batch" and answer["built"] == 2
    body = answer["adaptive"]
    assert body["spent"] == {"judgments": 80, "money": "0.00", "assignments": 4, "hits_built": 4, "fraction": 0.25}
    assert len(body["looks"]) == 1 and body["batch"]["number"] == 2
    assert all({"better", "worse", "z", "boundary"} <= set(p) for p in body["open_pairs"])
    assert 80 <= body["projected"]["judgments"] <= 320
    assert api.post(url + "look/").json()["decision"] == "nothing-new"


def test_the_api_refuses_what_it_must(make_campaign, api, client):
    campaign = adaptive_campaign(make_campaign)
    plain = make_campaign(n_segments=20, systems=SYSTEMS, hit_size=20, name="plain")
    assert api.get(f"/api/campaigns/{plain.slug}/adaptive/").status_code == 400
    assert "not imported with adaptive" in api.post(f"/api/campaigns/{plain.slug}/adaptive/look/").json()["detail"]
    assert api.get("/api/campaigns/no-such/adaptive/").status_code == 404
    other = get_user_model().objects.create_user("other", is_staff=True)
    stranger = APIClient()
    stranger.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=other).key}")
    assert stranger.get(f"/api/campaigns/{campaign.slug}/adaptive/").status_code == 404
    assert stranger.post(f"/api/campaigns/{campaign.slug}/adaptive/look/").status_code == 404
    assert client.get(f"/api/campaigns/{campaign.slug}/adaptive/").status_code in (401, 403)
    assert api.get(f"/api/campaigns/{campaign.slug}/adaptive/look/").status_code == 405
    assert not AdaptiveRun.objects.get(campaign=campaign).looks


def test_the_admin_page_shows_the_run_and_runs_a_look(make_campaign, admin_client):
    campaign, rng = adaptive_campaign(make_campaign), random.Random(7)
    finish_batch(campaign, TIED, rng)
    run = AdaptiveRun.objects.get(campaign=campaign)
    client = admin_client
    page = client.get(f"/admin/evaluation/adaptiverun/{run.pk}/change/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "Run a look now" in text and "320" in text and "Projected spend" in text
    response = client.post(f"/admin/evaluation/adaptiverun/{run.pk}/look/")
    assert response.status_code == 302
    assert len(AdaptiveRun.objects.get(pk=run.pk).looks) == 1 and campaign.hits.count() == 4
    text = client.get(f"/admin/evaluation/adaptiverun/{run.pk}/change/").content.decode()
    assert "sys-A" in text and "next-batch" in text
    listing = client.get("/admin/evaluation/adaptiverun/").content.decode()
    assert campaign.name in listing


def test_the_results_page_warns_that_its_pooled_ranking_is_not_the_runs_decisions(make_campaign, admin_client):
    from evaluation.families import family_of

    campaign, rng = adaptive_campaign(make_campaign), random.Random(6)
    finish_batch(campaign, {"sys-A": 85.0, "sys-B": 60.0, "sys-C": 30.0}, rng)
    family_of(campaign).compute(campaign)
    page = admin_client.get(f"/results/{campaign.slug}/").content.decode()
    assert "This campaign ran adaptively" in page and f"/api/campaigns/{campaign.slug}/adaptive/" in page
