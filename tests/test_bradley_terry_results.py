"""The Bradley–Terry part (docs/methods.md §8.8) at family level: imported arena battles and a two-system pairwise
campaign (the pairwise family's battles), the API's values against the stats core on the same battles and against
choix on a fixed set, the bootstrap's Celery subtasks, a pilot's "not enough data" state, the downloads and who may
read them. The ranking family's battles are checked in tests/test_ranking_results.py."""
import json

import choix
import numpy as np
import pytest
import yaml
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import HitItem
from annotation.services.judgment_import import import_judgments
from evaluation.analyses import compute_results
from evaluation.families.common import bradley_terry as part
from evaluation.models import ResultTable
from evaluation.stats import bradley_terry as bt
from tests.conftest import post_answer, start

pytestmark = pytest.mark.django_db
MODELS = ["=cmd|' /C calc'!A0", "alpha-7b", "beta-13b", "gamma-70b"]
STRENGTH = np.array([0.0, -0.6, 0.2, 0.9])


def arena_battles(n: int, ties: bool, seed: int = 5) -> list[dict]:
    """Battles among MODELS with known strengths (a plain BT draw), a sixth of them ties when `ties`."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, n)
    b = (a + rng.integers(1, 4, n)) % 4
    a_wins = rng.random(n) < 1 / (1 + np.exp(STRENGTH[b] - STRENGTH[a]))
    tie = (rng.random(n) < 1 / 6) if ties else np.zeros(n, bool)
    winner = np.where(tie, np.where(rng.random(n) < 0.3, "tie (bothbad)", "tie"),
                      np.where(a_wins, "model_a", "model_b"))
    return [{"model_a": MODELS[x], "model_b": MODELS[y], "winner": str(w), "judge": f"user{k % 7}",
             "tstamp": 1.7e9 + k} for k, (x, y, w) in enumerate(zip(a, b, winner, strict=True))]


def arena_campaign(researcher, records, **options):
    lines = [json.dumps(r) + "\n" for r in records]
    campaign = import_judgments(lines, fmt="arena", name="Arena", owner=researcher).campaign
    if options:
        campaign.options = {**campaign.options, **options}
        campaign.save(update_fields=["options"])
    compute_results(campaign)
    return campaign


def core_fit(records, model="davidson"):
    """The stats core on the same battles, names sorted as the pairwise family sorts them."""
    names = sorted(MODELS)
    a = np.array([names.index(r["model_a"]) for r in records])
    b = np.array([names.index(r["model_b"]) for r in records])
    pc = bt.pair_counts(a, b, bt.encode_outcomes([r["winner"] for r in records]), len(names))
    return names, pc, bt.fit(pc, model)


def test_arena_leaderboard_equals_the_stats_core_and_its_bootstrap(researcher, api, settings):
    settings.BRADLEY_TERRY_RUNS_PER_TASK = 1  # twenty subtasks of one run each, merged by the last one in
    records = arena_battles(600, ties=True)
    campaign = arena_campaign(researcher, records)
    body = api.get(f"/api/campaigns/{campaign.slug}/bradley_terry/").json()
    assert body["status"] == "ready" and body["tie_model"] == "davidson" and body["battles"] == 600
    assert body["bootstrap"] == "done" and body["runs"] == 20 and "400/ln 10" in body["convention"]
    names, pc, fitted = core_fit(records)
    assert body["tie_parameter"] == pytest.approx(fitted.tie_param, abs=1e-9)
    scores = {r["system"]: r for r in body["results"]}
    for i, name in enumerate(names):
        assert scores[name]["score"] == pytest.approx(fitted.score[i], abs=1e-7)
        assert scores[name]["low"] <= scores[name]["score"] <= scores[name]["high"]
        assert scores[name]["rank_range"][0] <= scores[name]["rank"] <= scores[name]["rank_range"][1]
    assert [r["system"] for r in body["results"]][0] == "gamma-70b"
    # The subtasks' runs, merged, are the core's bootstrap over all 20 runs at once (the split changes nothing).
    board = bt.leaderboard(fitted, bt.bootstrap_betas(pc, range(20), int(campaign.seed or 0), start=fitted))
    for i, name in enumerate(names):
        assert (scores[name]["low"], scores[name]["high"]) == pytest.approx((board.low[i], board.high[i]), abs=1e-6)
        assert scores[name]["rank_range"] == [board.rank_low[i], board.rank_high[i]]
    assert not ResultTable.objects.filter(campaign=campaign, name=part.RUNS_TABLE).exists()  # shares merged, gone
    # Win-rate matrix: every ordered pair that met, a tie half a win.
    matrix = {(m["system"], m["opponent"]): m for m in body["win_rates"]}
    assert len(matrix) == 12
    i, j = names.index("alpha-7b"), names.index("gamma-70b")
    lo, hi = min(i, j), max(i, j)
    k = np.flatnonzero((pc.i == lo) & (pc.j == hi))[0]
    wins_alpha = (pc.wins_i if i == lo else pc.wins_j)[k] + pc.ties[k] / 2
    assert matrix[("alpha-7b", "gamma-70b")]["win_rate"] == pytest.approx(wins_alpha / matrix[("alpha-7b",
                                                                                               "gamma-70b")]["battles"])


def test_rao_kupper_is_named_and_follows_the_campaign_option(researcher, api):
    records = arena_battles(400, ties=True, seed=8)
    campaign = arena_campaign(researcher, records, bradley_terry_ties="rao-kupper", bradley_terry_runs=0)
    body = api.get(f"/api/campaigns/{campaign.slug}/bradley_terry/").json()
    names, _, fitted = core_fit(records, "rao-kupper")
    assert body["tie_model"] == "rao-kupper" and body["tie_model_label"] == "Rao & Kupper (1967)"
    assert body["bootstrap"] == "none" and all(r["low"] is None for r in body["results"])
    expected = dict(zip(names, fitted.score, strict=True))
    assert {r["system"]: r["score"] for r in body["results"]} == pytest.approx(expected, abs=1e-7)


def test_without_ties_the_leaderboard_equals_choix(researcher, api):
    records = arena_battles(500, ties=False, seed=11)
    campaign = arena_campaign(researcher, records, bradley_terry_runs=0)
    body = api.get(f"/api/campaigns/{campaign.slug}/bradley_terry/").json()
    names = sorted(MODELS)
    data = [(names.index(r["model_a"]), names.index(r["model_b"])) if r["winner"] == "model_a"
            else (names.index(r["model_b"]), names.index(r["model_a"])) for r in records]
    reference = choix.opt_pairwise(len(names), data, alpha=0.0, tol=1e-12)
    beta = {r["system"]: r["beta"] for r in body["results"]}
    assert body["tie_parameter"] is None
    assert np.abs(np.array([beta[n] for n in names]) - (reference - reference.mean())).max() < 1e-6


def test_a_pilot_is_not_enough_data_not_a_failure(researcher, api, client):
    records = [{"model_a": "alpha-7b", "model_b": "beta-13b", "winner": "model_a", "judge": "u1", "tstamp": 1.0},
               {"model_a": "beta-13b", "model_b": "alpha-7b", "winner": "model_b", "judge": "u2", "tstamp": 2.0}]
    campaign = arena_campaign(researcher, records)
    body = api.get(f"/api/campaigns/{campaign.slug}/bradley_terry/").json()
    assert body["status"] == "not_enough_data" and body["results"] == [] and body["win_rates"] == []
    assert "beta-13b" in body["reason"] and "Ford 1957" in body["reason"]
    client.force_login(researcher)
    page = client.get(f"/results/{campaign.slug}/").content.decode()
    assert 'id="bt-not-enough"' in page and "Not enough data yet." in page
    columns = api.get(f"/api/campaigns/{campaign.slug}/tables/bradley_terry/").content.decode().splitlines()
    assert columns == [",".join(part.COLUMNS)]


def test_downloads_are_neutralised_and_the_page_shows_the_models(researcher, api, client):
    campaign = arena_campaign(researcher, arena_battles(300, ties=True, seed=3))
    csv = api.get(f"/api/campaigns/{campaign.slug}/tables/bradley_terry/").content.decode()
    assert len(csv.splitlines()) == 5 and "\n'=cmd" in csv.replace("\r\n", "\n")
    matrix = api.get(f"/api/campaigns/{campaign.slug}/tables/bradley_terry_matrix/").content.decode()
    assert len(matrix.splitlines()) == 13
    latex = api.get(f"/api/campaigns/{campaign.slug}/tables/bradley_terry/", {"format": "latex"}).content.decode()
    assert "\\toprule" in latex and "gamma-70b" in latex and "Davidson (1970)" in latex
    listed = {t["name"] for t in api.get(f"/api/campaigns/{campaign.slug}/tables/").json()["tables"]}
    assert {"bradley_terry", "bradley_terry_matrix"} <= listed
    client.force_login(researcher)
    page = client.get(f"/results/{campaign.slug}/").content.decode()
    assert 'id="bt-table"' in page and 'id="bt-matrix"' in page and "Davidson (1970)" in page
    assert "gamma-70b" in page and "&#x27; /C calc&#x27;" in page  # escaped, never raw


def test_another_researchers_token_gets_404(researcher):
    campaign = arena_campaign(researcher, arena_battles(60, ties=False, seed=2), bradley_terry_runs=0)
    other = get_user_model().objects.create_user("other", password="pw-other", is_staff=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=other).key}")
    for path in ("bradley_terry/", "tables/bradley_terry/", "tables/bradley_terry_matrix/"):
        assert client.get(f"/api/campaigns/{campaign.slug}/{path}").status_code == 404, path
    assert APIClient().get(f"/api/campaigns/{campaign.slug}/bradley_terry/").status_code in (401, 403)


def test_a_superseded_share_is_dropped(researcher):
    campaign = arena_campaign(researcher, arena_battles(60, ties=False, seed=2), bradley_terry_runs=0)
    stale = campaign.results.last_judgment_id - 1
    assert part.bradley_terry_runs.delay(campaign.pk, stale, 0, 2, [0, 1]).get()["status"] == "superseded"
    assert not ResultTable.objects.filter(campaign=campaign, name=part.RUNS_TABLE).exists()


def test_a_two_system_campaign_ranks_its_systems_by_the_sides_judged(make_campaign, api):
    """The platform's own pairwise campaign: each judgment a battle between the system shown left and right, spam
    items left out; with two systems and no ties the score gap is 400 log10(wins A / wins B) (hand-computed)."""
    campaign = make_campaign(protocol="pairwise-adequacy", systems=("sys-A", "sys-B"), n_segments=12,
                             options={"systems": ["sys-A", "sys-B"], "unit": "sentence"})
    client = Client()
    token = start(client, campaign, "w1")
    wins = {"sys-A": 0, "sys-B": 0}
    while (item := client.get(f"/api/hit/{token}/").json().get("item")) is not None:
        stored = HitItem.objects.get(pk=item["id"])
        favourite = "sys-A" if sum(wins.values()) % 3 else "sys-B"
        side = "A" if (stored.payload["left"] == 0) == (favourite == "sys-A") else "B"
        if stored.item_type == "spam":  # a careful rater: never the side made nonsense
            side = "B" if stored.payload["spam_side"] == "A" else "A"
        else:
            wins[favourite] += 1
        assert post_answer(client, token, {"item": item["id"], "choice": side}).status_code == 201
    compute_results(campaign)
    body = api.get(f"/api/campaigns/{campaign.slug}/bradley_terry/").json()
    assert body["status"] == "ready", (body["reason"], body["battles"], wins)
    assert body["battles"] == sum(wins.values()) >= 6
    score = {r["system"]: r["score"] for r in body["results"]}
    assert score["sys-A"] - score["sys-B"] == pytest.approx(400 * np.log10(wins["sys-A"] / wins["sys-B"]), abs=1e-6)
    assert score["sys-A"] + score["sys-B"] == pytest.approx(2000, abs=1e-6)


def test_the_schema_names_the_endpoint(client):
    schema = yaml.safe_load(client.get("/api/schema/").content)
    operation = schema["paths"]["/api/campaigns/{slug}/{endpoint}/"]["get"]
    enum = next(p for p in operation["parameters"] if p["name"] == "endpoint")["schema"]["enum"]
    assert "bradley_terry" in enum
