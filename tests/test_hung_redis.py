"""A hung Redis (issue 22, defect 7): one that accepts connections and never answers, as a Redis stopped with
SIGSTOP does. Annotators go on (the judgment is stored, crowd entry is not rate-limited), each request within a
second; researchers' actions that need the task queue answer 503 with Retry-After within a few seconds.

The hung Redis is a TCP server of this test's own, on a free port; Django's cache, the Celery broker and the
result store point at it for the test (config/settings.py's timeouts and retry policies are the ones tested), then
back. Needs the Redis cache of the settings (CELERY_BROKER_URL=redis://...); CI has it.
"""
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from contextlib import contextmanager

import pytest
from django.conf import settings as django_settings
from django.test import Client

from annotation.models import ImportJob, Judgment
from config import redis_guard
from config.celery import app as celery_app

from .conftest import campaign_lines, start
from .test_e2e_celery import tasks_through_the_broker
from .test_power import pilot_campaign

pytestmark = pytest.mark.django_db(transaction=True)
#: Each annotator request must answer within this, although every Redis call it makes would hang.
ANNOTATOR_SECONDS = 1.0
#: A researcher's action that needs the broker: socket timeouts and one bounded retry, then 503.
RESEARCHER_SECONDS = 4.0


class HungRedis:
    """Accepts every connection and never answers nor closes it."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0), backlog=128)
        self.url = f"redis://127.0.0.1:{self.server.getsockname()[1]}/0"
        self.held: list[socket.socket] = []
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self):
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:  # closed
                return
            self.held.append(connection)

    def close(self):
        self.server.shutdown(socket.SHUT_RDWR)
        self.server.close()
        self.thread.join(timeout=5)
        for connection in self.held:
            connection.close()


def _forget_celery_connections():
    """Drop the app's broker pools and result store, so that the next task is sent with the current settings."""
    celery_app._after_fork()
    celery_app._backend_cache = None
    celery_app._local.__dict__.pop("backend", None)


@contextmanager
def redis_at(url: str, settings, monkeypatch):
    """Django's cache, the Celery broker and the result store on the Redis at `url`, then back."""
    if not django_settings.CACHES["default"]["BACKEND"].endswith("ReusingRedisCache"):
        if os.environ.get("CI"):
            pytest.fail("CI must provide Redis (CELERY_BROKER_URL=redis://...) for the hung Redis tests")
        pytest.skip("needs the Redis cache: CELERY_BROKER_URL=redis://...")
    settings.CACHES = {"default": {**django_settings.CACHES["default"], "LOCATION": url}}
    for name in ("CELERY_BROKER_URL", "CELERY_RESULT_BACKEND"):  # Celery reads these before its settings
        monkeypatch.setenv(name, url)
    _forget_celery_connections()
    redis_guard.reset()
    try:
        with tasks_through_the_broker():
            yield
    finally:
        monkeypatch.undo()
        _forget_celery_connections()
        redis_guard.reset()


@pytest.fixture
def hung_redis(settings, monkeypatch):
    server = HungRedis()
    try:
        with redis_at(server.url, settings, monkeypatch):
            yield server
    finally:
        server.close()


def timed(call, *args, **kwargs):
    began = time.monotonic()
    answer = call(*args, **kwargs)
    return answer, time.monotonic() - began


def test_judgments_are_stored_within_a_second_while_redis_hangs(make_campaign, settings, hung_redis):
    settings.RESULTS_AUTO_RECOMPUTE = True  # every judgment's commit asks the cache and the broker for a run
    campaign = make_campaign()
    client = Client()
    token = start(client, campaign, "w-1")
    state = client.get(f"/api/hit/{token}/").json()
    took = []
    for _ in range(3):
        response, seconds = timed(client.post, f"/api/hit/{token}/", json.dumps({"item": state["item"]["id"],
                                  "score": 60}), content_type="application/json")
        assert response.status_code == 201, response.content
        took.append(seconds)
        state = response.json()
    assert max(took) < ANNOTATOR_SECONDS, took
    assert Judgment.objects.filter(assignment__token=token).count() == 3
    # The first judgment waited for one timeout; the next ones did not wait for the hung Redis again.
    assert took[1] < django_settings.REDIS_TIMEOUT_SECONDS and took[2] < django_settings.REDIS_TIMEOUT_SECONDS, took


def test_crowd_entry_within_a_second_while_redis_hangs(campaign, settings, hung_redis):
    settings.CROWD_ENTRY_RATE_PER_IP, settings.CROWD_ENTRY_RATE_PER_CAMPAIGN = "30/m", "600/m"  # counted in Redis
    for worker in ("w-1", "w-2"):
        response, seconds = timed(Client().get, f"/c/{campaign.slug}/start/", {"worker_id": worker})
        assert response.status_code == 302, response.content  # the rate limits fail open
        assert seconds < ANNOTATOR_SECONDS, (worker, seconds)


def test_compute_answers_503_with_retry_after_while_redis_hangs(campaign, api, hung_redis):
    for attempt in range(2):
        response, seconds = timed(api.post, f"/api/campaigns/{campaign.slug}/compute/")
        assert response.status_code == 503, response.content
        assert int(response["Retry-After"]) >= 1 and "task queue is unavailable" in response.json()["detail"]
        assert seconds < RESEARCHER_SECONDS, (attempt, seconds)


def test_a_background_import_answers_503_while_redis_hangs(api, settings, tmp_path, hung_redis):
    settings.IMPORT_INLINE_MAX_BYTES, settings.IMPORT_UPLOAD_DIR = 1000, str(tmp_path / "imports")
    upload = io.BytesIO(("\n".join(campaign_lines(20)) + "\n").encode())
    upload.name = "campaign.jsonl"
    response, seconds = timed(api.post, "/api/campaigns/", {"file": upload, "name": "Big", "protocol": "adequacy"},
                                format="multipart")
    assert response.status_code == 503, response.content
    assert int(response["Retry-After"]) >= 1 and seconds < RESEARCHER_SECONDS, seconds
    assert ImportJob.objects.get().status == ImportJob.Status.FAILED  # recorded, not left waiting for a worker


def test_the_power_planner_answers_without_the_cache_while_redis_hangs(researcher, api, request):
    pilot = pilot_campaign(researcher)  # results computed before Redis hangs
    request.getfixturevalue("hung_redis")
    for attempt in range(2):
        response, seconds = timed(api.get, f"/api/campaigns/{pilot.slug}/power/", {"delta": 4, "scale": "raw"})
        assert response.status_code == 200, response.content
        assert response.json()["plan"] and seconds < RESEARCHER_SECONDS, (attempt, seconds)


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def test_a_redis_stopped_with_sigstop_then_resumed(campaign, api, settings, monkeypatch, tmp_path):
    """The real thing: a redis-server of this test's own, stopped (SIGSTOP) and resumed (SIGCONT). While it is
    stopped, a judgment is stored within a second and compute/ answers 503; once it answers again and the skip
    window has passed, compute/ queues the run."""
    if not shutil.which("redis-server"):
        pytest.skip("needs redis-server")
    settings.RESULTS_AUTO_RECOMPUTE, settings.REDIS_FAIL_FAST_SECONDS = True, 1.0
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                               "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while not _listening(port) and time.monotonic() < deadline:
            time.sleep(0.1)
        with redis_at(f"redis://127.0.0.1:{port}/0", settings, monkeypatch):
            client = Client()
            token = start(client, campaign, "w-1")
            item = client.get(f"/api/hit/{token}/").json()["item"]["id"]
            assert api.post(f"/api/campaigns/{campaign.slug}/compute/").status_code == 202  # Redis answers
            server.send_signal(signal.SIGSTOP)
            response, seconds = timed(client.post, f"/api/hit/{token}/", json.dumps({"item": item, "score": 70}),
                                      content_type="application/json")
            assert response.status_code == 201 and seconds < ANNOTATOR_SECONDS, seconds
            assert api.post(f"/api/campaigns/{campaign.slug}/compute/").status_code == 503
            server.send_signal(signal.SIGCONT)
            time.sleep(settings.REDIS_FAIL_FAST_SECONDS + 0.2)
            response, seconds = timed(api.post, f"/api/campaigns/{campaign.slug}/compute/")
            assert response.status_code == 202 and seconds < ANNOTATOR_SECONDS, (response.content, seconds)
        assert Judgment.objects.filter(assignment__token=token).count() == 1
    finally:
        server.send_signal(signal.SIGCONT)
        server.terminate()
        server.wait(timeout=10)
