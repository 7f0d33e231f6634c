"""The Bradley–Terry options (`bradley_terry_ties`, `bradley_terry_runs`; docs/api.md "Campaign options") are
declared like every other statistics option: a pairwise or ranking import takes them, an imported arena file too,
`PATCH /api/campaigns/<slug>/` and the admin's Statistics options change them; a bad value (a tie model nobody
fits, more resamples than the part runs, a word) is a 400 naming the option, and changes nothing. They were
settable only from the shell, and the part read whatever was stored."""
import json

import pytest

from annotation.building.shared_options import MAX_BOOTSTRAP_RUNS
from annotation.models import Campaign
from annotation.protocols import get_protocol
from annotation.services.judgment_import import import_judgments
from evaluation.analyses import compute_results
from evaluation.families.common import ranked
from evaluation.stats.bradley_terry import TIE_MODELS

from .test_bradley_terry_results import arena_battles
from .test_campaign_options import upload

pytestmark = pytest.mark.django_db


def arena(researcher) -> Campaign:
    lines = [json.dumps(r) + "\n" for r in arena_battles(120, ties=True, seed=4)]
    return import_judgments(lines, fmt="arena", name="Arena", owner=researcher).campaign


def test_the_options_are_declared_once_for_the_families_that_fit_battles():
    for name in ("pairwise-fluency", "ranking", "ranking-constituent"):
        taken = {o.name: o for o in get_protocol(name).analysis_options()}
        assert {"bradley_terry_ties", "bradley_terry_runs"} <= set(taken), name
        assert [v for v, _ in taken["bradley_terry_ties"].choice_list()] == list(TIE_MODELS)
        assert taken["bradley_terry_runs"].maximum == MAX_BOOTSTRAP_RUNS == ranked.MAX_BOOTSTRAP_RUNS
    for name in ("adequacy", "esa", "constituent-acceptance"):  # no battles, no leaderboard
        assert "bradley_terry_runs" not in {o.name for o in get_protocol(name).option_fields()}, name


@pytest.mark.parametrize(("option", "value"), [("bradley_terry_runs", 5000), ("bradley_terry_runs", -1),
                                               ("bradley_terry_runs", "many"), ("bradley_terry_ties", "elo")])
def test_a_bad_value_is_a_400_naming_it_and_changes_nothing(researcher, api, option, value):
    campaign = arena(researcher)
    before = dict(campaign.options)
    response = api.patch(f"/api/campaigns/{campaign.slug}/", {"options": {option: value}}, format="json")
    assert response.status_code == 400 and option in response.json()["options"]
    campaign.refresh_from_db()
    assert campaign.options == before
    refused = api.post("/api/campaigns/import-judgments/", {
        "file": upload(b"".join(json.dumps(r).encode() + b"\n" for r in arena_battles(20, ties=False)), "a.jsonl"),
        "format": "arena", "name": "Bad arena", option: value}, format="multipart")
    assert refused.status_code == 400 and option in refused.content.decode()
    assert Campaign.objects.count() == 1


def test_a_patch_sets_them_and_the_recompute_follows(researcher, api):
    campaign = arena(researcher)
    response = api.patch(f"/api/campaigns/{campaign.slug}/", {"options": {
        "bradley_terry_ties": "rao-kupper", "bradley_terry_runs": "0"}}, format="json")
    assert response.status_code == 200, response.content
    assert {"bradley_terry_ties", "bradley_terry_runs"} <= set(response.json()["changed"])
    campaign.refresh_from_db()
    assert (campaign.options["bradley_terry_ties"], campaign.options["bradley_terry_runs"]) == ("rao-kupper", 0)
    compute_results(campaign)
    body = api.get(f"/api/campaigns/{campaign.slug}/bradley_terry/").json()
    assert (body["tie_model"], body["bootstrap"], body["runs_wanted"]) == ("rao-kupper", "none", 0)


def test_the_admin_offers_them_and_refuses_a_bad_one(researcher, admin_client):
    campaign = arena(researcher)
    page = admin_client.get(f"/admin/annotation/campaign/{campaign.pk}/options/").content.decode()
    assert 'name="bradley_terry_ties"' in page and 'name="bradley_terry_runs"' in page
    bad = admin_client.post(f"/admin/annotation/campaign/{campaign.pk}/options/",
                            {"bradley_terry_ties": "davidson", "bradley_terry_runs": "1001"})
    assert bad.status_code == 200 and "bradley_terry_runs" in bad.content.decode()
    campaign.refresh_from_db()
    assert "bradley_terry_ties" not in campaign.options
    good = admin_client.post(f"/admin/annotation/campaign/{campaign.pk}/options/",
                             {"bradley_terry_ties": "davidson", "bradley_terry_runs": "200"})
    assert good.status_code == 302
    campaign.refresh_from_db()
    assert (campaign.options["bradley_terry_ties"], campaign.options["bradley_terry_runs"]) == ("davidson", 200)
