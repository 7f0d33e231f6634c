"""The ranking family end to end on a simulated crowd (docs/methods.md §8): careful judges whose ranks
follow a known system order with noise, and random rankers. The gold filter must flag the random rankers,
and every score must recover the true order (Spearman's rho >= 0.9)."""
import random

import numpy as np
import pytest
from scipy import stats as sps

from annotation.services.campaign_import import import_campaign
from evaluation.analyses import compute_results
from evaluation.families.ranking.analysis import SCORE_NAMES
from evaluation.services.results_read import stored_rows
from tests.ranking_simulation import campaign_lines, complete_ranking_hit

SYSTEMS = ["sysA", "sysB", "sysC", "sysD", "sysE", "sysF"]
QUALITY = {"sysA": 80, "sysB": 70, "sysC": 60, "sysD": 50, "sysE": 40, "sysF": 30}


@pytest.fixture
def ranked_campaign(db, client, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = True
    result = import_campaign(campaign_lines(40, SYSTEMS), name="rank sim", protocol="ranking", redundancy=3,
                             seed=7, hit_size=10, options={"screen_size": 4, "gold": "best", "gold_rate": 0.3,
                                                           "bootstrap_runs": 20, "min_gold": 3})
    campaign = result.campaign
    rng = random.Random(1)
    careful = [f"careful{i}" for i in range(6)]
    sloppy = [f"random{i}" for i in range(2)]
    for _ in range(4):
        for worker in careful + sloppy:
            complete_ranking_hit(client, campaign.slug, worker, QUALITY, worker in careful, rng)
    compute_results(campaign)
    return campaign


def test_gold_filter_flags_the_random_rankers(ranked_campaign):
    gold = {row["worker"]: row for row in stored_rows(ranked_campaign, "gold")}
    assert {w for w, row in gold.items() if not row["trusted"]} == {"random0", "random1"}
    assert {w for w, row in gold.items() if row["status"] == "failed"} == {"random0", "random1"}
    assert {w for w, row in gold.items() if not row["counted"]} == {"random0", "random1"}
    assert all(gold[f"careful{i}"]["gold_accuracy"] >= 0.7 for i in range(6))


@pytest.mark.parametrize("score", SCORE_NAMES)
def test_every_score_recovers_the_true_order(ranked_campaign, client, admin_user, score):
    client.force_login(admin_user)
    body = client.get(f"/api/campaigns/{ranked_campaign.slug}/systems/", {"score": score}).json()
    assert body["score_name"] == score
    rows = body["results"]
    assert {r["system"] for r in rows} == set(SYSTEMS)
    for row in rows:
        assert {"system", "score", "score_name", "n", "rank", "rank_range", "cluster"} <= set(row)
        assert row["rank_range"][0] <= row["rank"] <= row["rank_range"][1] or score == "trueskill"
    rho = sps.spearmanr([r["score"] for r in rows], [QUALITY[r["system"]] for r in rows]).statistic
    assert rho >= 0.9


def test_unknown_score_is_a_400(ranked_campaign, client, admin_user):
    client.force_login(admin_user)
    response = client.get(f"/api/campaigns/{ranked_campaign.slug}/systems/", {"score": "elo"})
    assert response.status_code == 400


def test_trueskill_bootstrap_sets_rank_ranges_and_clusters(ranked_campaign):
    rows = stored_rows(ranked_campaign, "systems", "trueskill")
    header = ranked_campaign.results
    header.refresh_from_db()
    assert header.summary["trueskill"] == {**header.summary["trueskill"], "runs": 20, "status": "bootstrap"}
    ranks = [r["rank"] for r in rows]
    assert sorted(ranks) == list(range(1, len(SYSTEMS) + 1))
    assert all(r["rank_range"][0] <= r["rank_range"][1] for r in rows)
    assert rows[0]["system"] == "sysA" and rows[-1]["system"] == "sysF"
    assert np.all(np.diff([r["cluster"] for r in rows]) >= 0)


def test_results_page_and_tables(ranked_campaign, client, admin_user):
    client.force_login(admin_user)
    page = client.get(f"/results/{ranked_campaign.slug}/")
    assert page.status_code == 200
    text = page.content.decode()
    for section in ("System scores", "Head to head", "Workers and gold units", "Agreement", "Combined judges"):
        assert section in text
    for name in ("systems", "head_to_head", "gold", "agreement", "combined", "workers"):
        response = client.get(f"/api/campaigns/{ranked_campaign.slug}/tables/{name}/", {"format": "json"})
        assert response.status_code == 200, name
        assert response.json()["rows"], name
    agreement = client.get(f"/api/campaigns/{ranked_campaign.slug}/agreement/").json()["results"]
    assert {(a["pairing"], a["kind"]) for a in agreement} == {("wmt08", "inter"), ("wmt08", "intra"),
                                                              ("wmt13", "inter"), ("wmt13", "intra")}
    inter = next(a for a in agreement if a["pairing"] == "wmt08" and a["kind"] == "inter")
    assert inter["comparisons"] > 0 and 0 < inter["p_agree"] < 1
    assert "Bradley–Terry leaderboard" in text
    check_bradley_terry(ranked_campaign, client)


def test_reference_ranking_gives_spearman_equal_to_scipy(ranked_campaign, client, admin_user):
    client.force_login(admin_user)
    url = f"/api/campaigns/{ranked_campaign.slug}/reference-ranking/"
    experts = {"sysA": 1, "sysB": 3, "sysC": 2, "sysD": 4, "sysE": 5, "sysF": 6}
    response = client.post(url, {"kind": "rank", "values": experts}, content_type="application/json")
    assert response.status_code == 200 and response.json()["values"] == experts
    rows = {r["score_name"]: r for r in client.get(f"/api/campaigns/{ranked_campaign.slug}/spearman/").json()
            ["results"]}
    systems = client.get(f"/api/campaigns/{ranked_campaign.slug}/systems/", {"score": "geq_others"}).json()["results"]
    expected = sps.spearmanr([r["score"] for r in systems], [-experts[r["system"]] for r in systems])
    assert rows["geq_others"]["rho"] == pytest.approx(expected.statistic)
    assert rows["geq_others"]["p_value"] == pytest.approx(expected.pvalue)
    assert "Against a reference ranking" in client.get(f"/results/{ranked_campaign.slug}/").content.decode()


@pytest.mark.parametrize("body", [
    {"kind": "rank", "values": {"sysA": 1, "nope": 2, "sysB": 3}},
    {"kind": "elo", "values": {"sysA": 1, "sysB": 2, "sysC": 3}},
    {"kind": "score", "values": {"sysA": "x", "sysB": 2, "sysC": 3}},
    {"kind": "score", "values": {"sysA": 1}},
    {"kind": "score", "values": {"sysA": 1e300, "sysB": 2, "sysC": 3}},
    ["sysA"],
])
def test_bad_reference_rankings_are_refused(ranked_campaign, client, admin_user, body):
    client.force_login(admin_user)
    url = f"/api/campaigns/{ranked_campaign.slug}/reference-ranking/"
    assert client.post(url, body, content_type="application/json").status_code == 400
    assert "reference_ranking" not in type(ranked_campaign).objects.get(pk=ranked_campaign.pk).options


def test_reference_ranking_from_the_admin(ranked_campaign, client, admin_user):
    client.force_login(admin_user)
    change = client.get(f"/admin/evaluation/campaignstatistics/{ranked_campaign.pk}/change/")
    assert "Reference ranking" in change.content.decode()
    url = f"/admin/evaluation/campaignstatistics/{ranked_campaign.pk}/reference-ranking/"
    assert client.get(url).status_code == 200
    refused = client.post(url, {"kind": "score", "values": "sysA\t1\nnope\t2\nsysB 3"})
    assert refused.status_code == 200 and "not a system of this campaign: nope" in refused.content.decode()
    saved = client.post(url, {"kind": "score", "values": "sysA\t80\nsysB\t70\nsysC 60\nsysD 50"})
    assert saved.status_code == 302
    options = type(ranked_campaign).objects.get(pk=ranked_campaign.pk).options
    assert options["reference_kind"] == "score" and options["reference_ranking"]["sysC"] == 60
    assert [r["score_name"] for r in stored_rows(ranked_campaign, "spearman")]
    assert client.post(url, {"kind": "score", "values": "", "remove": "1"}).status_code == 302
    assert "reference_ranking" not in type(ranked_campaign).objects.get(pk=ranked_campaign.pk).options


def test_untrusted_workers_are_blocked_on_the_fly(ranked_campaign, client):
    """Paul & Sumita 2011 §4: a worker past `min_gold` gold screens with too few right gets no new HIT."""
    from annotation.models import Assignment

    refused = client.get(f"/c/{ranked_campaign.slug}/start/", {"worker_id": "random0"})
    assert refused.status_code == 200 and "not a good match" in refused.content.decode()
    done = Assignment.objects.filter(campaign=ranked_campaign, annotator__external_id="random0")
    assert done.count() < 4  # stopped before the four rounds the simulation tried
    assert all(code in refused.content.decode() for code in done.values_list("completion_code", flat=True))
    fresh = client.get(f"/c/{ranked_campaign.slug}/start/", {"worker_id": "newcomer"})
    assert "not a good match" not in fresh.content.decode()  # on probation: no gold screens yet
    careful = client.get(f"/c/{ranked_campaign.slug}/start/", {"worker_id": "careful0"})
    assert "not a good match" not in careful.content.decode()


def test_workers_on_probation_count_unless_the_strict_filter_is_chosen(db, client, settings):
    """Too few gold screens to judge anyone: by default everyone counts (nobody failed); with Paul & Sumita's
    strict reading (gold_filter untrusted) nobody does, and the page says why."""
    settings.CELERY_TASK_ALWAYS_EAGER = True
    from django.contrib.auth import get_user_model

    from annotation.models import Campaign

    campaign = import_campaign(campaign_lines(20, SYSTEMS[:4]), name="probation", protocol="ranking", seed=3,
                               hit_size=10, options={"screen_size": 4, "gold": "best", "gold_rate": 0.1,
                                                     "bootstrap_runs": 0}).campaign
    rng = random.Random(3)
    for worker in ("a", "b"):
        complete_ranking_hit(client, campaign.slug, worker, QUALITY, True, rng)
    compute_results(campaign)
    gold = stored_rows(campaign, "gold")
    assert {row["status"] for row in gold} == {"probation"} and all(row["counted"] for row in gold)
    assert [r["system"] for r in stored_rows(campaign, "systems")] == ["sysA", "sysB", "sysC", "sysD"]
    Campaign.objects.filter(pk=campaign.pk).update(options={**campaign.options, "gold_filter": "untrusted"})
    campaign.refresh_from_db()
    compute_results(campaign)
    assert stored_rows(campaign, "systems") == []
    client.force_login(get_user_model().objects.create_superuser("boss", "b@x.y", "pw"))
    assert "None of the" in client.get(f"/results/{campaign.slug}/").content.decode()


def check_bradley_terry(ranked_campaign, client):
    """The Bradley–Terry part on a ranking campaign (docs/methods.md §8.8): the counted outcomes (gold filter
    applied) are its battles, and the API gives the stats core's fit on them, in the true order. (Called from
    test_results_page_and_tables, so that the suite simulates no further campaign.)"""
    from evaluation.families.common.bradley_terry import analyse
    from evaluation.families.ranking.bootstrap import ranking_battles
    from evaluation.stats import bradley_terry as bt

    body = client.get(f"/api/campaigns/{ranked_campaign.slug}/bradley_terry/").json()
    battles = ranking_battles(ranked_campaign, ranked_campaign.results.last_judgment_id)
    fitted = bt.fit(bt.pair_counts(battles.a, battles.b, battles.outcome, len(SYSTEMS)))
    assert body["status"] == "ready" and body["battles"] == battles.size and body["bootstrap"] == "done"
    assert {r["system"]: r["score"] for r in body["results"]} == pytest.approx(
        dict(zip(battles.names, fitted.score, strict=True)), abs=1e-7)
    assert [r["system"] for r in body["results"]] == SYSTEMS
    assert analyse(battles, "davidson")[1][0]["score"] == pytest.approx(body["results"][0]["score"], abs=1e-9)
