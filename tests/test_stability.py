"""Ranking stability for Direct Assessment (docs/methods.md §12.4): the family's input, the Celery chord (in-process
here), storing and superseding, the API (`stability/`), the page's section and button, the CSV download.

Campaigns are wmt-da files written by tests/test_results_pages.py's `da_lines`; tasks run in-process (eager)."""
import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.services.judgment_import import import_judgments
from evaluation import stability_tasks
from evaluation.analyses import compute_results
from evaluation.families.common import stability as service
from evaluation.families.direct_assessment.stability import stability_data
from evaluation.models import CampaignResults, ResultTable, SystemResult
from evaluation.stats import stability as core

from .test_results_pages import da_campaign, da_lines, pairwise_campaign, read_csv, svgs

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.test_results_pages")]
QUALITY = {"sys-A": 72, "sys-B": 64, "sys-C": 62, "sys-D": 45}


@pytest.fixture
def da(researcher):
    """Four systems (C and B close), five careful workers and a random clicker over 24 segments."""
    return da_campaign("Stability", careful=5, clickers=1, segments=24, systems=tuple(QUALITY), quality=QUALITY,
                       seed=11, owner=researcher)


@pytest.fixture(autouse=True)
def forget_loaded_inputs():
    """Each test starts with no input remembered by this process (campaign ids recur between tests)."""
    stability_tasks._loaded.clear()
    yield
    stability_tasks._loaded.clear()


def stored_tables(campaign) -> int:
    return ResultTable.objects.filter(campaign=campaign, name__startswith="stability").count()


# The family's input ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("workers", ["reliable", "all"])
def test_the_observed_scores_are_the_stored_ranking(da, workers):
    """Every count 1 gives back the stored ranking's mean z and mean raw (docs/methods.md §5.2), system by system."""
    header = CampaignResults.objects.get(campaign=da)
    stored = {s.system: s for s in SystemResult.objects.filter(campaign=da, workers=workers)}
    for score, column in (("z", "mean_z"), ("raw", "mean_raw")):
        data = stability_data(da, workers, score, header.last_judgment_id)
        counts = core.resample_counts(data, 0, 0, 0)
        assert set(data.systems) == set(stored)
        for name, mean in zip(data.systems, counts.observed_mean, strict=True):
            assert mean == pytest.approx(getattr(stored[name], column), abs=1e-9), (name, score)
        order = [data.systems[i] for i in counts.observed_order]
        if score == "z":
            assert order == sorted(stored, key=lambda s: stored[s].rank)


def test_reliable_filter_resamples_only_reliable_workers(da):
    header = CampaignResults.objects.get(campaign=da)
    reliable = stability_data(da, "reliable", "z", header.last_judgment_id)
    everyone = stability_data(da, "all", "z", header.last_judgment_id)
    assert reliable.n_workers == da.worker_results.filter(reliable=True).count() == 5
    assert everyone.n_workers == 6 and reliable.n_segments == everyone.n_segments == 24


def test_judgments_newer_than_the_results_are_left_out(da):
    header = CampaignResults.objects.get(campaign=da)
    full = stability_data(da, "all", "raw", header.last_judgment_id)
    cut = stability_data(da, "all", "raw", header.last_judgment_id - 40)
    assert cut.translation_counts.sum() < full.translation_counts.sum()


# Runs through the chord (in-process) ----------------------------------------------------------------------

def test_the_chord_splits_the_resamples_and_gives_the_one_process_answer(da, settings, monkeypatch):
    settings.STABILITY_RESAMPLES_PER_TASK = 60
    calls = []
    share = stability_tasks.stability_share.run

    def counted(campaign_id, run, start, stop):
        calls.append((start, stop))
        return share(campaign_id, run, start, stop)

    monkeypatch.setattr(stability_tasks.stability_share, "run", counted)
    runs = stability_tasks.start(da, {"workers": "reliable", "resamples": "200", "seed": "7"})
    assert runs == [{"workers": "reliable", "score": "z", "status": "done"}]
    assert calls == [(0, 60), (60, 120), (120, 180), (180, 200)]

    header = CampaignResults.objects.get(campaign=da)
    expected = core.bootstrap(stability_data(da, "reliable", "z", header.last_judgment_id), 200, 7)
    summary, rows = service.stored(da, service.StabilityRequest("reliable", "z", None, None))
    assert summary["status"] == "done" and summary["resamples"] == 200 and summary["seed"] == 7
    assert summary["stable_ranking_probability"] == pytest.approx(expected.stable_ranking_probability)
    assert summary["same_order"] == pytest.approx(expected.same_order)
    for row in rows:
        code = expected.systems.index(row["system"])
        assert [row[f"p_rank_{k + 1}"] for k in range(4)] == pytest.approx(expected.rank_probability[code].tolist())
        assert (row["rank_low"], row["rank_high"]) == (expected.rank_low[code], expected.rank_high[code])


def test_a_run_for_older_results_or_an_older_request_is_dropped(da):
    header = CampaignResults.objects.get(campaign=da)
    request = service.StabilityRequest("all", "z", 100, 0)
    data = stability_data(da, "all", "z", header.last_judgment_id)
    counts = core.resample_counts(data, 0, 0, 100)
    older = service.new_run(request, header)
    service.mark_running(da, older)
    newer = service.new_run(request, header)
    service.mark_running(da, newer)
    assert service.store(da.pk, older, counts, 0.1) is False  # a newer run of the variant took its place
    assert service.store(da.pk, newer, counts, 0.1) is True
    compute_results(da)  # new results replace every table, stability's too
    assert stored_tables(da) == 0
    assert service.store(da.pk, newer, counts, 0.1) is False
    assert stability_tasks.stability_share.run(da.pk, newer, 0, 100) is None  # shares of stale runs do nothing


def test_a_failing_run_is_marked_failed(da, monkeypatch, api):
    def broken(*args, **kwargs):
        raise RuntimeError("out of cheese")

    monkeypatch.setattr(core, "resample_counts", broken)
    with pytest.raises(RuntimeError):
        stability_tasks.start(da, {"workers": "all", "resamples": "100"})
    body = api.get(f"/api/campaigns/{da.slug}/stability/", {"workers": "all"}).json()
    assert body["status"] == "failed" and "out of cheese" in body["error"] and body["results"] == []


def test_stability_follows_a_results_run_when_enabled(da, settings, django_capture_on_commit_callbacks):
    settings.STABILITY_AFTER_RESULTS = False
    with django_capture_on_commit_callbacks(execute=True):
        compute_results(da)
    assert stored_tables(da) == 0
    settings.STABILITY_AFTER_RESULTS = True
    settings.STABILITY_RESAMPLES_PER_TASK = 500
    with django_capture_on_commit_callbacks(execute=True):
        compute_results(da)
    for workers in ("reliable", "all"):
        summary, rows = service.stored(da, service.StabilityRequest(workers, "z", None, None))
        assert summary["status"] == "done" and summary["resamples"] == 1000 and len(rows) == 4
    assert summary["results_run"] == CampaignResults.objects.get(campaign=da).runs


# The API ------------------------------------------------------------------------------------------------

def test_post_then_get(da, api):
    response = api.post(f"/api/campaigns/{da.slug}/stability/", {"resamples": 200, "seed": 3}, format="json")
    assert response.status_code == 202, response.content
    assert [(r["workers"], r["status"]) for r in response.json()["runs"]] == [("reliable", "done"), ("all", "done")]

    body = api.get(f"/api/campaigns/{da.slug}/stability/").json()
    assert body["workers"] == "reliable" and body["status"] == "done" and body["older_results"] is False
    assert body["stale"] is False and body["computed_at"] and body["judgments_covered"] > 0  # the results' freshness
    assert body["resamples"] == 200 and body["seed"] == 3 and 0 <= body["stable_ranking_probability"] <= 1
    assert body["test"] == "two-sided z test on weighted means" and body["alpha"] == 0.05
    names = [r["system"] for r in body["results"]]
    assert names == [s.system for s in SystemResult.objects.filter(campaign=da, workers="reliable").order_by("rank")]
    assert body["separation"]["systems"] == names
    for row in body["results"]:
        assert sum(row["rank_probabilities"]) == pytest.approx(1.0)
        assert 1 <= row["rank_interval"][0] <= row["rank_interval"][1] <= 4
    top = body["results"][0]
    assert top["system"] == "sys-A" and top["rank_probabilities"][0] > 0.9  # far ahead of the rest
    assert body["separation"]["better"][0][-1] > 0.9  # sys-A separated from sys-D in nearly every resample

    assert api.get(f"/api/campaigns/{da.slug}/stability/", {"workers": "all"}).json()["status"] == "done"
    other = api.get(f"/api/campaigns/{da.slug}/stability/", {"resamples": 300}).json()
    assert other["status"] == "none" and other["results"] == [] and "200 resamples" in other["detail"]
    assert api.get(f"/api/campaigns/{da.slug}/stability/", {"score": "raw"}).json()["status"] == "none"


def test_get_before_any_run(da, api):
    body = api.get(f"/api/campaigns/{da.slug}/stability/").json()
    assert body["status"] == "none" and body["results"] == [] and "POST" in body["detail"]


@pytest.mark.parametrize("params", [{"resamples": "abc"}, {"resamples": "50"}, {"resamples": "20000"},
                                    {"resamples": "1e3"}, {"seed": "-1"}, {"seed": "x"}, {"workers": "careful"},
                                    {"score": "bleu"}])
def test_bad_options_are_400_and_change_nothing(da, api, params):
    for method in (api.get, api.post):
        response = method(f"/api/campaigns/{da.slug}/stability/", params)
        assert response.status_code == 400, (method, params, response.content)
        assert response.json()["detail"]
    assert stored_tables(da) == 0


def test_post_refuses_campaigns_it_cannot_resample(api, researcher):
    pairwise = pairwise_campaign(owner=researcher)
    response = api.post(f"/api/campaigns/{pairwise.slug}/stability/")
    assert response.status_code == 400 and "no ranking stability" in response.json()["detail"]
    assert api.get(f"/api/campaigns/{pairwise.slug}/stability/").status_code == 400
    fresh = import_judgments(da_lines(careful=2, clickers=0, segments=4), fmt="wmt-da", name="Not computed",
                             owner=researcher).campaign
    response = api.post(f"/api/campaigns/{fresh.slug}/stability/")
    assert response.status_code == 400 and "compute the results first" in response.json()["detail"]
    response = api.post(f"/api/campaigns/{fresh.slug}/stability/", [1, 2], format="json")
    assert response.status_code == 400


def test_strangers_get_nothing(da, api):
    url = f"/api/campaigns/{da.slug}/stability/"
    assert APIClient().get(url).status_code == 403  # unauthenticated: 403, as everywhere in the API (docs/api.md)
    assert APIClient().post(url).status_code == 403
    other = get_user_model().objects.create_user("other", password="pw", is_staff=True)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=other).key}")
    assert client.get(url).status_code == 404
    assert client.post(url, {"resamples": 100}).status_code == 404
    assert stored_tables(da) == 0


# The page -----------------------------------------------------------------------------------------------

def test_the_page_runs_shows_and_offers_the_figures(da, researcher, settings):
    settings.STABILITY_RESAMPLES_PER_TASK = 100
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/results/{da.slug}/").content.decode()
    assert 'id="stability"' in page and "Not computed for these results yet" in page
    charts_before = len(svgs(page))

    response = client.post(f"/results/{da.slug}/stability/", {"resamples": "200", "seed": "5"})
    assert response.status_code == 302 and response["Location"].endswith(f"/results/{da.slug}/#stability")
    page = client.get(f"/results/{da.slug}/").content.decode()
    assert len(svgs(page)) == charts_before + 2 and "Ranking stability computed." in page
    chart = next(s for s in svgs(page) if "Rank probabilities" in s)
    assert 'role="img"' in chart and "stable-ranking probability" in chart
    summary, _ = service.stored(da, service.StabilityRequest("reliable", "z", None, None))
    assert f"{100 * summary['stable_ranking_probability']:.1f} %" in page
    assert 'id="stability-table-reliable"' in page

    rows = read_csv(client.get(f"/results/{da.slug}/stability.csv"))
    assert rows[0][:4] == ["workers", "score", "system", "observed_rank"] and len(rows) == 1 + 2 * 4
    column = rows[0].index("p_rank_1")
    assert all(0 <= float(r[column]) <= 1 for r in rows[1:])


def test_the_button_needs_a_researcher_and_a_post(da):
    url = f"/results/{da.slug}/stability/"
    assert Client().post(url).status_code == 302  # to the login page
    staff = get_user_model().objects.create_user("outsider", password="pw", is_staff=True)
    client = Client()
    client.force_login(staff)
    assert client.post(url).status_code == 404
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(da.owner)
    assert strict.post(url).status_code == 403  # no CSRF token
    assert stored_tables(da) == 0


def test_the_page_reports_bad_options(da, researcher):
    client = Client()
    client.force_login(researcher)
    response = client.post(f"/results/{da.slug}/stability/", {"resamples": "5"}, follow=True)
    assert "resamples must be a whole number from 100 to 10,000" in response.content.decode()
    assert stored_tables(da) == 0


# A real worker ------------------------------------------------------------------------------------------------

@pytest.mark.celery
@pytest.mark.django_db(transaction=True)
def test_the_chord_on_a_real_worker(researcher, api, settings, tmp_path):
    """POST queues the shares and the merge through the broker; a real worker runs them and stores the figures the
    one-process bootstrap gives (each resample seeded by its own number)."""
    from .test_e2e_celery import running_worker, wait_for

    settings.STABILITY_RESAMPLES_PER_TASK = 50
    campaign = da_campaign("Stability on a worker", careful=4, clickers=1, segments=16, systems=tuple(QUALITY),
                           quality=QUALITY, seed=3, owner=researcher)
    with running_worker("stability", tmp_path / "worker.log", "the stability chord test"):
        response = api.post(f"/api/campaigns/{campaign.slug}/stability/", {"workers": "all", "resamples": "200",
                                                                           "seed": "4"})
        assert response.status_code == 202, response.content
        (run,) = response.json()["runs"]
        assert run["status"] == "running" and run["task"]
        wait_for(lambda: api.get(f"/api/campaigns/{campaign.slug}/stability/", {"workers": "all"}).json()
                 ["status"] == "done", timeout=120)
    log = (tmp_path / "worker.log").read_text()
    assert log.count("stability_share") >= 4 and "stability_merge" in log
    header = CampaignResults.objects.get(campaign=campaign)
    expected = core.bootstrap(stability_data(campaign, "all", "z", header.last_judgment_id), 200, 4)
    body = api.get(f"/api/campaigns/{campaign.slug}/stability/", {"workers": "all"}).json()
    assert body["stable_ranking_probability"] == pytest.approx(expected.stable_ranking_probability)
    for row in body["results"]:
        assert row["rank_probabilities"] == pytest.approx(
            expected.rank_probability[expected.systems.index(row["system"])].tolist())


@pytest.mark.django_db(transaction=True)
def test_stability_follows_the_compute_endpoint_in_process(researcher, api, settings):
    """Without a broker the results task runs in the request, and ranking stability runs inside it once the
    results are committed (inside an eager task: no waiting on a result there)."""
    settings.STABILITY_AFTER_RESULTS = True
    campaign = import_judgments(da_lines(careful=3, clickers=1, segments=8), fmt="wmt-da", name="Compute endpoint",
                                owner=researcher).campaign
    assert api.post(f"/api/campaigns/{campaign.slug}/compute/").status_code == 202
    for workers in ("reliable", "all"):
        body = api.get(f"/api/campaigns/{campaign.slug}/stability/", {"workers": workers}).json()
        assert body["status"] == "done" and body["resamples"] == 1000 and "error" not in body, body


# A pilot: three workers part-way through their HITs ---------------------------------------------------------------

def judge_part_of_a_hit(campaign, worker: str, items: int, rng) -> None:
    """`worker` enters the campaign and answers its first `items` items through the annotator API (a pilot, stopped
    part-way: too few quality-control pairs for anyone to pass the reliability test)."""
    from annotation.models import HitItem

    from .conftest import post_answer, start
    from .simulation import Behaviour, score_for, true_quality

    client = Client()
    token = start(client, campaign, worker)
    state = client.get(f"/api/hit/{token}/").json()
    stored = {i.id: i for i in HitItem.objects.filter(hit__assignments__token=token).select_related("output__system")}
    for _ in range(items):
        item = stored[state["item"]["id"]]
        response = post_answer(client, token, {"item": item.id, "score": score_for(
            Behaviour("diligent"), true_quality(item, PILOT_QUALITY), rng)})
        assert response.status_code == 201, response.content
        state = response.json()


PILOT_QUALITY = {"sys-A": 80.0, "sys-B": 60.0, "sys-C": 40.0}


def test_a_pilot_of_three_workers_gets_stability_not_a_failed_run(make_campaign, settings, api, researcher,
                                                                    django_capture_on_commit_callbacks):
    """The DA pilot (three workers, part-judged) once crashed every bootstrap after its results ("ValueError:
    attempt to get argmax of an empty sequence", shown on the results page as a failed run): no worker is reliable
    yet, so the reliable filter has no system to rank. It now says so (status "empty"); all workers are ranked."""
    import random

    settings.STABILITY_AFTER_RESULTS = True
    settings.STABILITY_RESAMPLES_PER_TASK = 500
    campaign = make_campaign(n_segments=30, systems=tuple(PILOT_QUALITY), redundancy=3)
    rng = random.Random(4)
    for worker in ("pilot-1", "pilot-2", "pilot-3"):
        judge_part_of_a_hit(campaign, worker, 24, rng)
    with django_capture_on_commit_callbacks(execute=True):
        compute_results(campaign)
    assert not campaign.worker_results.filter(reliable=True).exists()

    reliable = api.get(f"/api/campaigns/{campaign.slug}/stability/", {"workers": "reliable"}).json()
    assert reliable["status"] == "empty" and reliable["results"] == [], reliable
    assert "no system" in reliable["detail"] and "workers=reliable" in reliable["detail"]
    everyone = api.get(f"/api/campaigns/{campaign.slug}/stability/", {"workers": "all"}).json()
    assert everyone["status"] == "done" and {r["system"] for r in everyone["results"]} == set(PILOT_QUALITY)
    assert all(1 <= r["rank_interval"][0] <= r["rank_interval"][1] <= 3 for r in everyone["results"])

    client = Client()
    client.force_login(researcher)
    page = client.get(f"/results/{campaign.slug}/").content.decode()
    assert "The last run failed" not in page and "no system" in page


def test_stability_after_results_is_off_in_process_by_default(da, settings, django_capture_on_commit_callbacks):
    """Unset, STABILITY_AFTER_RESULTS follows RESULTS_AUTO_RECOMPUTE only where a broker's workers run the bootstrap:
    in-process it would run 1,000 resamples per filter in the web processes after every debounced results run,
    beside the annotators (the results page's button still runs it)."""
    from .test_e2e_celery import tasks_through_the_broker

    settings.RESULTS_AUTO_RECOMPUTE = True
    del settings.STABILITY_AFTER_RESULTS  # unset: the default
    with django_capture_on_commit_callbacks(execute=True):
        compute_results(da)
    assert stored_tables(da) == 0
    with tasks_through_the_broker():
        assert stability_tasks._after_results_enabled()
    settings.RESULTS_AUTO_RECOMPUTE = False
    with tasks_through_the_broker():
        assert not stability_tasks._after_results_enabled()
