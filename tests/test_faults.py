"""Faults survived without a person stepping in, on the real services (PostgreSQL and Redis in CI):
the broker restarting under a worker that holds a delayed run, and a worker killed in the middle of a run.

Each test starts its own Celery worker process (and, for the restart, its own Redis server on a free
port, so that the suite's Redis is never stopped). Needs redis-server and CELERY_BROKER_URL; CI has both.
"""
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import Client

from evaluation.models import CampaignResults
from evaluation.tasks import _running_key, compute_campaign_results

from .simulation import Behaviour, complete_hit
from .test_e2e_celery import database_url, tasks_through_the_broker, wait_for

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]
ROOT = Path(__file__).resolve().parents[1]
QUALITY = {"sys-A": 80.0, "sys-B": 50.0}
DEBOUNCE = 2


def _needs_services():
    if not os.environ.get("CELERY_BROKER_URL", "").startswith("redis") or not shutil.which("redis-server"):
        if os.environ.get("CI"):
            pytest.fail("CI must provide Redis (CELERY_BROKER_URL and redis-server) for the fault tests")
        pytest.skip("needs Redis: CELERY_BROKER_URL and redis-server")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Worker:
    """A Celery worker process of this test run (its queue, its database), started and stopped at will."""

    def __init__(self, broker: str, tmp_path: Path, **env):
        self.broker, self.tmp_path, self.extra = broker, tmp_path, env
        self.process, self.starts = None, 0

    def start(self, **env):
        self.starts += 1
        log = self.tmp_path / f"worker-{self.starts}.log"
        environment = {**os.environ, "DATABASE_URL": database_url(), "DJANGO_SETTINGS_MODULE": "config.settings_test",
                       "TEST_CELERY_EAGER": "0", "CELERY_BROKER_URL": self.broker,
                       "RESULTS_DEBOUNCE_SECONDS": str(DEBOUNCE), **self.extra, **env}
        self.log = log
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "tests.fault_worker", "worker", "-P", "solo", "-l", "info",
             "--without-gossip", "--without-mingle", "-Q", settings.CELERY_TASK_DEFAULT_QUEUE,
             "-n", f"fault-{os.getpid()}-{self.starts}@%h"],
            cwd=ROOT, env=environment, stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
        wait_for(lambda: "ready." in log.read_text() or self.process.poll() is not None, timeout=60)
        assert self.process.poll() is None, log.read_text()

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def kill(self):
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self):
        if self.alive():
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()


def _campaign_with_judgments(make_campaign) -> object:
    campaign = make_campaign(n_segments=35, systems=tuple(QUALITY), redundancy=2)
    client = Client()
    for name in ("w-1", "w-2"):
        assert complete_hit(client, campaign.slug, name, Behaviour("diligent"), QUALITY, random.Random(1))
    return campaign


def _results_for(campaign, judgments: int):
    return CampaignResults.objects.filter(campaign=campaign, judgments=judgments).first()


@pytest.fixture
def own_redis(tmp_path):
    """A Redis server of the test's own that loses its data when restarted."""
    yield from _redis_server(tmp_path, persistent=False)


@pytest.fixture
def own_persistent_redis(tmp_path):
    """A Redis server of the test's own that keeps its data over a restart (append-only file), as docker-compose's:
    queued flags and a worker's unacknowledged messages come back with it."""
    yield from _redis_server(tmp_path, persistent=True)


def _redis_server(tmp_path, persistent: bool):
    _needs_services()
    port = _free_port()
    command = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", str(tmp_path),
               "--appendonly", "yes" if persistent else "no"]
    server = {"process": subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)}

    def ping():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def restart(after: float):
        server["process"].terminate()
        server["process"].wait(timeout=10)
        time.sleep(after)
        server["process"] = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for(ping, timeout=10)

    wait_for(ping, timeout=10)
    yield f"redis://127.0.0.1:{port}/0", restart
    server["process"].terminate()
    server["process"].wait(timeout=10)


def test_the_worker_survives_a_broker_restart_and_catches_up(own_redis, make_campaign, tmp_path):
    broker, restart = own_redis
    worker = Worker(broker, tmp_path)
    worker.start()
    try:
        campaign = _campaign_with_judgments(make_campaign)  # judgments after the worker started: nothing caught up
        queue = subprocess.run(  # a delayed run, held by the worker when the broker goes away
            [sys.executable, "-c", "import django; django.setup(); from evaluation.tasks import "
             f"compute_campaign_results as t; t.apply_async(({campaign.pk},), countdown=30)"],
            cwd=ROOT, env={**os.environ, "CELERY_BROKER_URL": broker, "TEST_CELERY_EAGER": "0",
                           "DATABASE_URL": database_url(), "DJANGO_SETTINGS_MODULE": "config.settings_test"},
            capture_output=True, timeout=60)
        assert queue.returncode == 0, queue.stderr
        wait_for(lambda: "] received" in worker.log.read_text(), timeout=30)
        restart(after=3)  # the broker comes back empty: the queued run is lost with it
        results = wait_for(lambda: _results_for(campaign, 200), timeout=60)
        assert worker.alive(), worker.log.read_text()
        assert "Unrecoverable error" not in worker.log.read_text()
        assert results.judgments == 200
    finally:
        worker.stop()


def test_a_killed_run_is_made_up_within_a_debounce_interval_of_the_restart(make_campaign, tmp_path):
    _needs_services()
    worker = Worker(os.environ["CELERY_BROKER_URL"], tmp_path)
    worker.start(FAULT_SLEEP="30")
    try:
        with tasks_through_the_broker():
            campaign = _campaign_with_judgments(make_campaign)
            compute_campaign_results.apply_async((campaign.pk,))
            wait_for(lambda: cache.get(_running_key(campaign.pk)), timeout=30)  # the run holds the lock: mid-run
            worker.kill()
            assert not _results_for(campaign, 200)
            restarted = time.monotonic()
            worker.start(FAULT_SLEEP="0")
            wait_for(lambda: _results_for(campaign, 200), timeout=60)
            took = time.monotonic() - restarted
        # The run lock lapsed with its killed holder (a lease of a few seconds, not minutes), and the worker's
        # catch-up queued the lost run as it connected: one debounce interval, a lease at most, and the run.
        assert took < DEBOUNCE + 6 + 15, took
        assert "catch-up: queued 1" in worker.log.read_text()
    finally:
        worker.stop()
