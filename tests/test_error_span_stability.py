"""Ranking stability for error-span campaigns (docs/methods.md §12.4): ESA and MQM campaigns judged through the
annotator API by simulated judges (tests/test_error_span_results.py), the bootstrap run in-process through the API
and the page, its answer checked against the stored system table."""
import random

import pytest
from django.test import Client

from annotation.models import System
from evaluation import stability_tasks
from evaluation.families import family_of
from evaluation.families.error_spans.stability import stability_data
from evaluation.models import CampaignResults, WorkerResult
from evaluation.services.results_read import stored_rows

from .test_error_span_protocols import span_campaign, span_lines
from .test_error_span_results import QUALITY, judge_all, run_crowd
from .test_results_pages import read_csv

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.test_results_pages")]


@pytest.fixture(autouse=True)
def forget_loaded_inputs():
    """Each test starts with no input remembered by this process (campaign ids recur between tests)."""
    stability_tasks._loaded.clear()
    yield
    stability_tasks._loaded.clear()


def owned(campaign, researcher, **options):
    campaign.owner = researcher
    campaign.options = {**campaign.options, **options}
    campaign.save()
    return campaign


@pytest.fixture
def esa(researcher):
    """WMT24 ESA over one domain (its macro-average is then the mean of the items), every system ranked, three
    careful judges and a careless one who fails the perturbation test."""
    campaign = span_campaign(perturbation_rate=0.25, tutorial=1, redundancy=4,
                             lines=span_lines(documents=3, per_doc=5, domains=("news",)))
    owned(campaign, researcher, min_items=1)
    run_crowd(campaign, careful=3, careless=1, seed=5)
    family_of(campaign).compute(campaign)
    return campaign


def assert_matches_the_system_table(body, campaign):
    systems = stored_rows(campaign, "systems")
    assert body["status"] == "done" and body["older_results"] is False
    assert [r["system"] for r in body["results"]] == [r["system"] for r in systems]
    assert body["separation"]["systems"] == [r["system"] for r in systems]
    stored = {r["system"]: r["score"] for r in systems}
    for row in body["results"]:
        assert sum(row["rank_probabilities"]) == pytest.approx(1.0)
        assert row["observed_score"] == pytest.approx(stored[row["system"]], abs=1e-9)
        assert 1 <= row["rank_interval"][0] <= row["rank_interval"][1] <= len(systems)


def test_post_then_get_on_an_esa_campaign_with_both_worker_filters(esa, api):
    response = api.post(f"/api/campaigns/{esa.slug}/stability/", {"resamples": 200, "seed": 2}, format="json")
    assert response.status_code == 202, response.content
    assert [(r["workers"], r["status"]) for r in response.json()["runs"]] == [("all", "done"), ("reliable", "done")]
    body = api.get(f"/api/campaigns/{esa.slug}/stability/").json()
    assert body["workers"] == "all" and body["resamples"] == 200 and body["seed"] == 2
    assert_matches_the_system_table(body, esa)
    assert body["results"][0]["system"] == "alpha" and body["results"][0]["rank_probabilities"][0] > 0.9
    assert 0 <= body["stable_ranking_probability"] <= 1
    reliable = api.get(f"/api/campaigns/{esa.slug}/stability/", {"workers": "reliable"}).json()
    assert reliable["status"] == "done" and len(reliable["results"]) == 3
    for params in ({"score": "raw"}, {"workers": "careful"}):
        response = api.get(f"/api/campaigns/{esa.slug}/stability/", params)
        assert response.status_code == 400 and response.json()["detail"]
    # the reliable filter keeps the workers who passed the perturbation test
    header = CampaignResults.objects.get(campaign=esa)
    everyone = stability_data(esa, "all", "z", header.last_judgment_id)
    reliable = stability_data(esa, "reliable", "z", header.last_judgment_id)
    verdicts = list(WorkerResult.objects.filter(campaign=esa).values_list("reliable", flat=True))
    assert everyone.n_workers == len(verdicts) == 4
    assert reliable.n_workers == sum(verdicts) == 3
    assert reliable.translation_counts.sum() < everyone.translation_counts.sum()


def test_wmt25_scores_are_the_plain_means_of_every_rating(api, researcher):
    campaign = owned(span_campaign(tutorial=0, perturbation_rate=0.0, statistics_preset="wmt25-esa", redundancy=2,
                                   lines=span_lines(documents=4, per_doc=5)), researcher)
    rng = random.Random(7)
    minor = [{"start": 0, "end": 3, "severity": "minor"}]  # span agreement fails when nobody marks any span
    judge_all(campaign, lambda item, stored: {"score": QUALITY[stored.output.system.name] + rng.randint(-9, 9),
                                              "spans": minor}, workers=("w1", "w2"))
    family_of(campaign).compute(campaign)
    assert api.post(f"/api/campaigns/{campaign.slug}/stability/", {"resamples": 100, "workers": "all"}
                    ).status_code == 202
    assert_matches_the_system_table(api.get(f"/api/campaigns/{campaign.slug}/stability/").json(), campaign)


def test_contrastive_esa_resamples_every_candidate_as_its_system(api, researcher):
    campaign = owned(span_campaign("contrastive-esa", tutorial=0, perturbation_rate=0.0, redundancy=2, min_items=1,
                                   lines=span_lines(documents=3, domains=("news",))), researcher)
    names = list(System.objects.filter(campaign=campaign).order_by("pk").values_list("name", flat=True))  # by index
    rng = random.Random(9)
    judge_all(campaign, lambda item, stored: {"candidates": {
        c["key"]: {"score": QUALITY[names[c["system"]]] + rng.randint(-9, 9),
                   "spans": [{"start": 0, "end": 3, "severity": "minor"}]} for c in stored.payload["candidates"]}},
        workers=("w1", "w2"))
    family_of(campaign).compute(campaign)
    assert api.post(f"/api/campaigns/{campaign.slug}/stability/", {"resamples": 100, "workers": "all"}
                    ).status_code == 202
    body = api.get(f"/api/campaigns/{campaign.slug}/stability/").json()
    assert_matches_the_system_table(body, campaign)
    assert [r["system"] for r in body["results"]] == ["alpha", "beta", "gamma"]


def test_mqm_ranks_by_minus_the_weighted_errors(api, researcher):
    campaign = owned(span_campaign("mqm", lines=span_lines(tutorial=0, prefill=False), perturbation_rate=0.0,
                                   min_items=1), researcher)
    errors = {"alpha": [], "beta": [{"start": 0, "end": 3, "severity": "minor", "category": "Style"}],
              "gamma": [{"start": 0, "end": 3, "severity": "major", "category": "Accuracy/Mistranslation"}]}
    judge_all(campaign, lambda item, stored: {"score": 50, "spans": errors[stored.output.system.name]})
    family_of(campaign).compute(campaign)
    assert api.post(f"/api/campaigns/{campaign.slug}/stability/", {"resamples": 100}).status_code == 202
    body = api.get(f"/api/campaigns/{campaign.slug}/stability/").json()
    assert_matches_the_system_table(body, campaign)
    assert [r["observed_score"] for r in body["results"]] == pytest.approx([0.0, -1.0, -5.0])
    assert [r["rank_probabilities"][i] for i, r in enumerate(body["results"])] == [1.0, 1.0, 1.0]


def test_a_preset_that_ranks_nothing_ends_empty_not_failed(api, researcher):
    """A pilot (WMT24: fewer than 100 items per system, nothing ranked) is too little data, not a failure: the run
    ends with status "empty" and its reason, and the page says so instead of "The last run failed"."""
    campaign = owned(span_campaign(tutorial=0, perturbation_rate=0.0, lines=span_lines(documents=2)), researcher)
    judge_all(campaign, lambda item, stored: {"score": QUALITY[stored.output.system.name]})
    family_of(campaign).compute(campaign)
    response = api.post(f"/api/campaigns/{campaign.slug}/stability/", {"resamples": 100, "workers": "all"})
    assert response.status_code == 202, response.content
    body = api.get(f"/api/campaigns/{campaign.slug}/stability/", {"workers": "all"}).json()
    assert body["status"] == "empty" and "no ranking to resample" in body["detail"] and body["results"] == []
    header = CampaignResults.objects.get(campaign=campaign)
    assert stability_data(campaign, "all", "z", header.last_judgment_id).systems == ()
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/results/{campaign.slug}/").content.decode()
    assert "Nothing to rank" in page and "last run failed" not in page


def test_the_page_shows_the_section_and_offers_the_csv(esa, researcher):
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/results/{esa.slug}/").content.decode()
    assert 'id="stability"' in page and "Not computed for these results yet" in page
    assert client.post(f"/results/{esa.slug}/stability/", {"resamples": "100"}).status_code == 302
    page = client.get(f"/results/{esa.slug}/").content.decode()
    assert "Ranking stability computed." in page and 'id="stability-table-reliable"' in page
    assert "by the mean ESA score of the items" in page and "Rank probabilities" in page
    assert '<th class="num">ESA</th><th class="num">Mean rank</th>' in page
    rows = read_csv(client.get(f"/results/{esa.slug}/stability.csv"))
    assert rows[0][:3] == ["workers", "score", "system"] and len(rows) == 1 + 2 * 3
