"""Issue 22: statistics that catch up after every fault, on the real services (PostgreSQL, Redis, a Celery worker
process), and ranking stability that does not hold up results runs.

A PostgreSQL restart is simulated without touching the shared server: the worker connects under an
application_name of its own and the test terminates those backends (pg_terminate_backend), or it connects through
a TCP proxy of the test's that is cut (connections dropped and refused) and restored. The broker restart uses a
Redis server of the test's own (tests/test_faults.py).
"""
import os
import re
import socket
import subprocess
import sys
import threading
import time
import uuid

import pytest
from django.core.cache import cache
from django.db import connection

from evaluation import stability_tasks
from evaluation.analyses import compute_results
from evaluation.models import CampaignResults
from evaluation.tasks import QUEUED_MARGIN_SECONDS, _queued_key, _running_key, claim_queued_run

from .test_e2e_celery import database_url, tasks_through_the_broker, wait_for
from .test_faults import (
    DEBOUNCE,
    ROOT,
    Worker,
    _campaign_with_judgments,
    _free_port,
    _needs_services,
    _results_for,
    own_persistent_redis,
)

pytestmark = [pytest.mark.celery, pytest.mark.django_db(transaction=True)]
__all__ = ["own_persistent_redis"]  # the fixture, imported for pytest


def _needs_postgresql():
    if connection.vendor != "postgresql":
        if os.environ.get("CI"):
            pytest.fail("CI must run the fault tests on PostgreSQL (DATABASE_URL)")
        pytest.skip("needs PostgreSQL: DATABASE_URL")


def _backends(application_name: str) -> list[int]:
    """The PostgreSQL backends of the processes that connected under `application_name` (the worker's)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> "
                       "pg_backend_pid() AND application_name = %s", [application_name])
        return [row[0] for row in cursor.fetchall()]


def _terminate_backends(application_name: str) -> int:
    """What a PostgreSQL restart does to the worker: every connection it keeps is closed under it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = "
                       "current_database() AND pid <> pg_backend_pid() AND application_name = %s",
                       [application_name])
        return cursor.fetchone()[0]


def _queue_a_debounced_run(broker: str, campaign, worker: Worker) -> None:
    """What a web process does after judgments: set the "queued" flag (in the broker's Redis) and queue a run due in
    two minutes, which `worker` receives and holds for then."""
    queue = subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); from evaluation.tasks import schedule_recompute; "
         f"assert schedule_recompute({campaign.pk})"],
        cwd=ROOT, env={**os.environ, "CELERY_BROKER_URL": broker, "TEST_CELERY_EAGER": "0",
                       "DATABASE_URL": database_url(), "RESULTS_DEBOUNCE_SECONDS": "120",
                       "DJANGO_SETTINGS_MODULE": "config.settings_test"},
        capture_output=True, timeout=60)
    assert queue.returncode == 0, queue.stderr
    wait_for(lambda: "] received" in worker.log.read_text(), timeout=30)


class DatabaseProxy:
    """A TCP proxy from the worker to PostgreSQL that the test cuts (every connection dropped, new ones refused: a
    PostgreSQL restart as the worker sees it) and restores."""

    def __init__(self):
        settings = connection.settings_dict
        self.target = (settings["HOST"] or "127.0.0.1", int(settings["PORT"] or 5432))
        self.port, self._server, self._sockets, self._lock = _free_port(), None, [], threading.Lock()

    def url(self) -> str:
        s = connection.settings_dict
        return f"postgres://{s['USER']}:{s['PASSWORD']}@127.0.0.1:{self.port}/{s['NAME']}"

    def open(self):
        server = socket.socket()
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", self.port))
        server.listen()
        self._server = server
        threading.Thread(target=self._accept, args=(server,), daemon=True).start()

    def _accept(self, server):
        while True:
            try:
                client, _ = server.accept()
                upstream = socket.create_connection(self.target)
            except OSError:
                return
            with self._lock:
                self._sockets += [client, upstream]
            for source, sink in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pump(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        with self._lock:
            sockets, self._sockets = [self._server, *self._sockets], []
        for s in sockets:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()


def test_catch_up_tries_again_while_the_database_is_unreachable(own_persistent_redis, make_campaign, tmp_path):
    """PostgreSQL is still down when the broker comes back: both tries of the worker's catch-up fail, and it tries
    again later (off the consumer's thread) until the database answers, instead of waiting for the next reconnect."""
    _needs_postgresql()
    broker, restart = own_persistent_redis
    proxy = DatabaseProxy()
    proxy.open()
    worker = Worker(broker, tmp_path, DATABASE_URL=proxy.url())
    worker.start()
    try:
        campaign = _campaign_with_judgments(make_campaign)
        _queue_a_debounced_run(broker, campaign, worker)
        proxy.cut()
        restart(after=3)
        wait_for(lambda: "trying again in" in worker.log.read_text(), timeout=30)
        proxy.open()
        back = time.monotonic()
        results = wait_for(lambda: _results_for(campaign, 200), timeout=60)
        took = time.monotonic() - back
        log = worker.log.read_text()
        assert worker.alive(), log
        assert results.judgments == 200 and "failed (attempt 2)" in log and "catch-up: queued 1" in log, log
        assert took < 15 + DEBOUNCE + 10, took  # the first retry is due 15 s after the failure
    finally:
        worker.stop()
        proxy.cut()


@pytest.mark.parametrize("health_checks", ["1", "0"])
def test_catch_up_survives_a_database_restart_before_a_broker_restart(own_persistent_redis, make_campaign,
                                                                       tmp_path, health_checks):
    """Issue 22, defect 5: PostgreSQL restarts (the worker's kept connection dies), judgments queue a debounced
    run, and the broker restarts (keeping its data) before the run is due. The worker's catch-up on reconnecting
    used the dead connection ("server closed the connection unexpectedly"), so nothing was queued, the restored
    "queued" flag kept new judgments from queueing, and the lost run waited an hour for the visibility timeout.
    Now the catch-up checks its connections first (CONN_HEALTH_CHECKS) or, without health checks, tries again on a
    new connection, and the results are computed within seconds."""
    _needs_postgresql()
    broker, restart = own_persistent_redis
    name = f"fault-worker-{uuid.uuid4().hex[:8]}"
    worker = Worker(broker, tmp_path, DATABASE_URL=f"{database_url()}?application_name={name}",
                    CONN_HEALTH_CHECKS=health_checks, CONN_MAX_AGE="600")
    worker.start()
    try:
        campaign = _campaign_with_judgments(make_campaign)  # after the worker's first catch-up: nothing queued
        wait_for(lambda: _backends(name), timeout=30)  # the worker keeps the connection of its first catch-up
        assert _terminate_backends(name) >= 1
        _queue_a_debounced_run(broker, campaign, worker)
        restart(after=3)
        restarted = time.monotonic()
        results = wait_for(lambda: _results_for(campaign, 200), timeout=45)
        took = time.monotonic() - restarted
        log = worker.log.read_text()
        assert worker.alive(), log
        assert results.judgments == 200 and "catch-up: queued 1" in log, log
        # With health checks the dead connection is found before use; without, the first try fails and the second
        # (on a new connection) succeeds.
        assert ("failed (attempt 1)" in log) == (health_checks == "0") and "failed (attempt 2)" not in log, log
        assert took < DEBOUNCE + 20, took
    finally:
        worker.stop()


def test_a_requested_compute_is_redone_after_the_worker_is_killed_mid_run(make_campaign, api, tmp_path):
    """Issue 22, defect 6: a compute asked for on fresh results (a Recompute after an option change) was lost
    when the worker died mid-run: the catch-up only looked for new judgments, and the broker gave the message
    back after its visibility timeout (an hour). The request is now recorded as what makes the results stale
    until a run covers it, so the restarted worker's catch-up redoes it."""
    _needs_services()
    campaign = _campaign_with_judgments(make_campaign)
    compute_results(campaign)
    before = CampaignResults.objects.get(campaign=campaign)
    worker = Worker(os.environ["CELERY_BROKER_URL"], tmp_path)
    worker.start(FAULT_SLEEP="30")
    try:
        with tasks_through_the_broker():
            assert api.post(f"/api/campaigns/{campaign.slug}/compute/").status_code == 202
            wait_for(lambda: cache.get(_running_key(campaign.pk)), timeout=30)  # mid-run
            worker.kill()
            restarted = time.monotonic()
            worker.start(FAULT_SLEEP="0")
            redone = wait_for(lambda: CampaignResults.objects.filter(campaign=campaign, runs__gt=before.runs).first(),
                              timeout=60)
            took = time.monotonic() - restarted
        assert redone.runs == before.runs + 1 and redone.computed_at > before.computed_at
        assert redone.requested_at is None  # covered by the run that redid it
        assert took < DEBOUNCE + 6 + 15, took
        assert "catch-up: queued 1" in worker.log.read_text()
    finally:
        worker.stop()


def test_a_queued_flag_lapses_soon_after_its_run_was_due(make_campaign, settings):
    """A "queued" flag whose run was lost (and no worker reconnects to catch up) stops holding back new judgments'
    runs soon after that run was due, not after twenty debounce intervals."""
    _needs_services()
    settings.RESULTS_DEBOUNCE_SECONDS = 10
    campaign = make_campaign()
    key = _queued_key(campaign.pk)
    assert claim_queued_run(campaign.pk, time.time() + 10)
    try:
        ttl = cache._cache.get_client(key).ttl(cache.make_and_validate_key(key))
        assert 10 < ttl <= 10 + QUEUED_MARGIN_SECONDS <= 70, ttl
    finally:
        cache.delete(key)


def test_stability_shares_wait_behind_results_runs(make_campaign, api, settings, tmp_path):
    """The ranking stability bootstrap after a results run must not hold up results runs and gates: its shares go
    at the lowest priority, so a results run queued after them is taken first by the same worker."""
    _needs_services()
    settings.STABILITY_RESAMPLES_PER_TASK = 100
    campaign = _campaign_with_judgments(make_campaign)
    compute_results(campaign)
    worker = Worker(os.environ["CELERY_BROKER_URL"], tmp_path)
    try:
        with tasks_through_the_broker():
            runs = stability_tasks.start(campaign, {"workers": "all", "resamples": "500"})  # 5 shares, no worker yet
            assert [r["status"] for r in runs] == ["running"]
            assert api.post(f"/api/campaigns/{campaign.slug}/compute/").status_code == 202  # queued after them
            worker.start()
            wait_for(lambda: re.search(r"stability_merge\[.*\] succeeded", worker.log.read_text()), timeout=120)
        log = worker.log.read_text()
        first_share = log.index("evaluation.stability_tasks.stability_share[")
        assert log.index("evaluation.tasks.compute_campaign_results[") < first_share, log
    finally:
        worker.stop()
