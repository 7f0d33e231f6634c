"""End to end: simulated workers complete HITs through the annotator API, a real Celery worker
process computes through the Redis broker, and the researcher API reports careless workers
unreliable, diligent ones reliable, and the systems in their true order.

Needs CELERY_BROKER_URL (Redis); CI sets it. Locally without Redis the test is skipped, and
in CI (CI=true) a missing broker is a failure, not a skip.
"""
import os
import random
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection
from django.test import Client

from config.celery import app as celery_app
from evaluation.models import CampaignResults

from .simulation import Behaviour, complete_hit

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[1]
QUALITY = {"sys-A": 78, "sys-B": 64, "sys-C": 50, "sys-D": 36}


def database_url() -> str:
    s = connection.settings_dict
    if connection.vendor == "postgresql":
        return f"postgres://{s['USER']}:{s['PASSWORD']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"
    return f"sqlite:///{s['NAME']}"


@contextmanager
def running_worker(name: str, log_path: Path, purpose: str = "the end-to-end test"):
    """A Celery worker process on this run's queue and database, with tasks sent to it from this process;
    skipped without a Redis broker, a failure in CI. Yields the process; its output goes to `log_path`."""
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith("redis"):
        if os.environ.get("CI"):
            pytest.fail(f"CI must provide CELERY_BROKER_URL (Redis) for {purpose}")
        pytest.skip("needs a Redis broker (CELERY_BROKER_URL)")
    env = {**os.environ, "DATABASE_URL": database_url(), "DJANGO_SETTINGS_MODULE": "config.settings_test",
           "TEST_CELERY_EAGER": "0"}
    log = log_path.open("w+")
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-P", "solo", "-l", "info", "--without-gossip",
         "--without-mingle", "--without-heartbeat", "-Q", settings.CELERY_TASK_DEFAULT_QUEUE, "-n",
         f"{name}-{os.getpid()}@%h"],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 60
        while "ready." not in log_path.read_text():
            if worker.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the Celery worker did not start:\n" + log_path.read_text())
            time.sleep(0.2)
        with tasks_through_the_broker():
            yield worker
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        log.close()


@pytest.fixture
def celery_worker(transactional_db):
    with running_worker("test", ROOT / ".pytest-celery-worker.log") as worker:
        yield worker


@contextmanager
def tasks_through_the_broker():
    """Send tasks to the broker from this process (the test settings run them in-process). With the CELERY
    namespace the app reads the prefixed name, so that is the key to set (`task_always_eager` alone does not)."""
    celery_app.conf.CELERY_TASK_ALWAYS_EAGER = False
    assert not celery_app.conf.task_always_eager
    try:
        yield
    finally:
        celery_app.conf.CELERY_TASK_ALWAYS_EAGER = True


def wait_for(predicate, timeout=90.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.3)
    raise AssertionError("timed out waiting for the Celery worker")


def test_statistics_through_a_real_worker(celery_worker, settings, make_campaign, api):
    settings.RESULTS_AUTO_RECOMPUTE = True
    settings.RESULTS_DEBOUNCE_SECONDS = 2
    campaign = make_campaign(n_segments=70, systems=tuple(QUALITY), redundancy=5)  # 4 HITs × 5 workers
    rng = random.Random(2026)
    diligent = [f"diligent-{i}" for i in range(12)]
    careless = [f"random-{i}" for i in range(5)] + ["constant-0", "constant-1"]
    behaviours = {w: Behaviour("diligent", bias=rng.uniform(-12, 12), scale=rng.uniform(0.6, 1.2)) for w in diligent}
    behaviours.update({w: Behaviour("random") for w in careless if w.startswith("random")})
    behaviours.update({"constant-0": Behaviour("constant", constant=50), "constant-1": Behaviour("constant",
                                                                                                constant=100)})
    order = list(behaviours)
    rng.shuffle(order)
    client = Client()
    started = time.monotonic()
    for worker in order:
        assert complete_hit(client, campaign.slug, worker, behaviours[worker], QUALITY, rng)
    total = 100 * len(order)

    # Debounced recompute on its own: at most about one run per debounce interval while judgments
    # keep arriving, and one more after the burst — not one per judgment (1,900).
    header = wait_for(lambda: CampaignResults.objects.filter(campaign=campaign, judgments=total).first())
    elapsed = time.monotonic() - started
    assert header.runs <= elapsed / settings.RESULTS_DEBOUNCE_SECONDS + 2, (header.runs, elapsed)
    assert header.runs < total / 5

    assert "succeeded" in (ROOT / ".pytest-celery-worker.log").read_text()  # the worker computed, not this process

    # And on request: 202 with the task id, then fresher results.
    before = header.computed_at
    response = api.post(f"/api/campaigns/{campaign.slug}/compute/")
    assert response.status_code == 202 and response.json()["task"]
    wait_for(lambda: CampaignResults.objects.filter(campaign=campaign, computed_at__gt=before).exists())

    workers = {w["worker"]: w for w in api.get(f"/api/campaigns/{campaign.slug}/workers/").json()["results"]}
    assert set(workers) == set(order)
    careless_reliable = [w for w in careless if workers[w]["reliable"]]
    diligent_unreliable = [w for w in diligent if not workers[w]["reliable"]]
    # Allowed error: a random clicker passes p < 0.05 on 10 pairs with probability 0.05; with 5 of them,
    # one false pass is plausible. Diligent workers (bad references 35 points lower) essentially never fail.
    assert len(careless_reliable) <= 1, careless_reliable
    assert len(diligent_unreliable) <= 1, diligent_unreliable
    assert workers["constant-0"]["p_value"] is None and workers["constant-0"]["constant"] is True

    systems = api.get(f"/api/campaigns/{campaign.slug}/systems/", {"workers": "reliable"}).json()
    ranking = [s["system"] for s in sorted(systems["results"], key=lambda s: s["rank"])]
    assert ranking == sorted(QUALITY, key=QUALITY.get, reverse=True)
    assert systems["stale"] is False
    significance = api.get(f"/api/campaigns/{campaign.slug}/significance/").json()
    assert significance["systems"] == ranking
    assert significance["stars"][0][-1] == "***"  # best vs worst: 42 points apart


def test_ranking_statistics_and_trueskill_bootstrap_through_a_real_worker(celery_worker, settings, api, researcher):
    """A ranking campaign judged through the annotator API; the results, TrueSkill's and Bradley–Terry's bootstrap
    subtasks run on the real worker (docs/methods.md §8.3, §8.8), and every score recovers the true order."""
    from annotation.services.campaign_import import import_campaign
    from tests.ranking_simulation import campaign_lines, complete_ranking_hit

    settings.RESULTS_AUTO_RECOMPUTE = False
    quality = {"sysA": 80, "sysB": 65, "sysC": 50, "sysD": 35, "sysE": 20}
    campaign = import_campaign(campaign_lines(30, list(quality)), name="rank e2e", protocol="ranking",
                               redundancy=2, seed=3, hit_size=10,
                               options={"screen_size": 3, "gold": "best", "gold_rate": 0.3, "bootstrap_runs": 20,
                                        "min_gold": 2}, owner=researcher).campaign
    client, rng = Client(), random.Random(5)
    for _ in range(3):  # 6 HITs × 2 judges: rounds of one HIT each, so that the random ranker gets work too
        for worker in [f"careful{i}" for i in range(4)] + ["random0"]:
            complete_ranking_hit(client, campaign.slug, worker, quality, not worker.startswith("random"), rng)
    with tasks_through_the_broker():
        assert api.post(f"/api/campaigns/{campaign.slug}/compute/").status_code == 202

        def bootstrapped():
            header = CampaignResults.objects.filter(campaign=campaign).first()
            return header is not None and header.summary.get("trueskill", {}).get("status") == "bootstrap"
        wait_for(bootstrapped, timeout=120)
        wait_for(lambda: api.get(f"/api/campaigns/{campaign.slug}/bradley_terry/").json().get("bootstrap") == "done",
                 timeout=120)
    log = (ROOT / ".pytest-celery-worker.log").read_text()
    assert "trueskill_runs" in log and "succeeded" in log
    assert "bradley_terry_runs" in log
    bradley_terry = api.get(f"/api/campaigns/{campaign.slug}/bradley_terry/").json()
    assert bradley_terry["runs"] == 20 and [r["system"] for r in bradley_terry["results"]] == sorted(
        quality, key=quality.get, reverse=True)
    for score in ("expected_wins", "trueskill"):
        rows = api.get(f"/api/campaigns/{campaign.slug}/systems/", {"score": score}).json()["results"]
        assert [r["system"] for r in rows] == sorted(quality, key=quality.get, reverse=True), score
    gold = {r["worker"]: r for r in api.get(f"/api/campaigns/{campaign.slug}/gold/").json()["results"]}
    assert not gold["random0"]["trusted"] and all(gold[f"careful{i}"]["trusted"] for i in range(4))


def test_error_span_statistics_through_a_real_worker(celery_worker, settings, api, researcher):
    """An ESA campaign judged through the annotator API (careful judges mark the perturbed copies, a careless one
    scores at random); the error-spans family computes on the real worker (docs/methods.md §11) and recovers
    the systems' order and the careless judge."""
    from tests.test_error_span_protocols import span_campaign, span_lines
    from tests.test_error_span_results import run_crowd

    settings.RESULTS_AUTO_RECOMPUTE = False
    campaign = span_campaign(perturbation_rate=0.25, redundancy=4, min_items=1,
                             lines=span_lines(documents=6, per_doc=6))
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    run_crowd(campaign, careful=3, careless=1, seed=6)
    with tasks_through_the_broker():
        assert api.post(f"/api/campaigns/{campaign.slug}/compute/").status_code == 202
        wait_for(lambda: CampaignResults.objects.filter(campaign=campaign).exists(), timeout=120)
    rows = api.get(f"/api/campaigns/{campaign.slug}/systems/").json()["results"]
    assert [r["system"] for r in rows] == ["alpha", "beta", "gamma"]
    assert all(r["score_name"] == "esa" for r in rows)
    workers = {r["worker"]: r for r in api.get(f"/api/campaigns/{campaign.slug}/perturbation/").json()["results"]}
    assert not workers["worker-3"]["reliable"] and all(workers[f"worker-{i}"]["reliable"] for i in range(3))
