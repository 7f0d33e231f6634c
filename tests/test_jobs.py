"""The one job mechanism (config/jobs.py) on the real cache: leases on Redis (redis-py's Lock) and on local memory,
a lease freed by a killed holder, the debounce flag, in-process dispatch, and the worker's catch-up retries."""
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from celery import shared_task
from django.conf import settings as django_settings
from django.core.cache import cache

from config import jobs

ROOT = Path(__file__).resolve().parents[1]
LOCAL = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
RAN: list = []


@shared_task(name="tests.test_jobs.record")
def record(value):
    """A task of the tests' own: notes that it ran, and fails on "fail"."""
    if value == "fail":
        raise ValueError("this run fails")
    RAN.append(value)
    return value


@pytest.fixture(params=["configured", "local memory"])
def any_cache(request, settings):
    """The settings' cache (Redis where CELERY_BROKER_URL is), then the in-process mode's local memory."""
    if request.param == "local memory":
        settings.CACHES = LOCAL
    return request.param


def _key() -> str:
    return f"test-jobs:{uuid.uuid4().hex}"


def _wait_for(condition, timeout: float):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_lease_has_one_holder_and_lives_while_renewed(any_cache):
    key = _key()
    with jobs.Lease(key, 1.0, 0.25, token="first") as held:
        assert held is True and cache.get(key) == "first"
        time.sleep(1.6)  # longer than the lease: the renewals keep it
        assert jobs.Lease(key, 1.0, 0.25).acquire() is False and cache.get(key) == "first"
    assert cache.get(key) is None
    second = jobs.Lease(key, 1.0, 0.25)
    assert second.acquire() is True
    second.release()


def test_a_lease_lost_to_another_holder_is_neither_renewed_nor_released(any_cache):
    key = _key()
    first = jobs.Lease(key, 1.0, 0.25, token="first")
    assert first.acquire()
    cache.delete(key)  # a long pause: the first holder's lease lapsed
    second = jobs.Lease(key, 5.0, 1.0, token="second")
    assert second.acquire()
    time.sleep(0.6)  # the first holder's renewals come and find the key not theirs
    first.release()
    assert cache.get(key) == "second"
    second.release()
    assert cache.get(key) is None


def test_a_killed_holder_frees_its_lease_within_the_lease():
    """A worker killed outright (SIGKILL) renews nothing more: another process takes the key within the lease."""
    if not django_settings.CACHES["default"]["BACKEND"].endswith("RedisCache"):
        pytest.skip("needs the Redis cache (CELERY_BROKER_URL=redis://...): local memory is one process's")
    key = _key()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import django, time; django.setup(); from config import jobs; "
         f"assert jobs.Lease({key!r}, 2.0, 0.5, token='killed').acquire(); print('held', flush=True); "
         "time.sleep(60)"],
        cwd=ROOT, env={**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings_test"}, stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"held"
        time.sleep(2.5)  # beyond the lease: its holder renews it
        assert cache.get(key) == "killed"
        holder.kill()
        holder.wait(timeout=10)
        killed = time.monotonic()
        _wait_for(lambda: jobs.Lease(key, 2.0, 0.5).acquire(), timeout=5)
        assert time.monotonic() - killed < 2.5
    finally:
        holder.kill()
        cache.delete(key)


def test_a_burst_queues_one_task_and_a_failed_queueing_clears_the_flag(any_cache, settings):
    settings.JOBS_TEST_INLINE = True
    flag, subject = jobs.Flag("test-jobs"), uuid.uuid4().hex
    RAN.clear()
    outcomes = [flag.queue(subject, record, (n,), timeout=60, inline_setting="JOBS_TEST_INLINE") for n in range(20)]
    assert outcomes == [True] + [False] * 19 and RAN == [0]
    flag.clear(subject)  # the task starts: what comes next queues one more
    assert flag.queue(subject, record, (20,), timeout=60, inline_setting="JOBS_TEST_INLINE") and RAN == [0, 20]
    flag.clear(subject)
    with pytest.raises(ValueError):
        flag.queue(subject, record, ("fail",), timeout=60, inline_setting="JOBS_TEST_INLINE")
    assert cache.get(flag.key(subject)) is None  # nothing behind the flag: the next caller queues


def test_in_process_a_task_runs_in_a_thread_after_its_delay():
    RAN.clear()
    began = time.monotonic()
    jobs.dispatch(record, ("later",), delay=0.5)
    assert RAN == []  # not in the caller
    _wait_for(lambda: RAN == ["later"], timeout=5)
    assert time.monotonic() - began >= 0.5


def test_a_failed_catch_up_tries_again_later_until_it_succeeds(monkeypatch, caplog, django_db_blocker):
    """The catch-up first checks the process's database connection (close_old_connections), which a connection left
    open by an earlier test of this process makes a database access: allowed here, as a worker's is."""
    with django_db_blocker.unblock():
        calls = []

        def flaky() -> int:
            calls.append(time.monotonic())
            if len(calls) <= 4:  # both tries on connecting, and both of the first retry
                raise ConnectionError("the database is restarting")
            return 2

        monkeypatch.setattr(jobs, "CATCH_UPS", {})
        jobs.catch_up(flaky)
        caplog.set_level("INFO", logger="config.jobs")
        assert jobs.catch_up_after_connect(wait=0.2) is None and len(calls) == 2
        _wait_for(lambda: len(calls) == 5, timeout=5)  # the first retry after 0.2 s, the second 0.4 s after it
        assert calls[2] - calls[1] >= 0.2 and calls[4] - calls[3] >= 0.4
        _wait_for(lambda: "catch-up: queued 2 stale campaign(s)" in caplog.text, timeout=5)
        assert "failed (attempt 2)" in caplog.text and "trying again in" in caplog.text
        time.sleep(1.0)
        assert len(calls) == 5  # no retry after the success


def _imports(path: str) -> set[str]:
    """The modules a file imports (relative ones with their dots), inside functions too."""
    import ast

    names = set()
    for node in ast.walk(ast.parse((ROOT / path).read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add("." * node.level + (node.module or ""))
    return names


def test_the_job_mechanism_sits_below_both_apps():
    """Issue 24: config.celery imported evaluation.tasks (which imports config.celery), and the import service
    imported annotation.tasks (which imports it): two cycles. The mechanism is below both apps now."""
    below = _imports("config/celery.py") | _imports("config/jobs.py")
    assert not {name for name in below if name.startswith(("evaluation", "annotation"))}
    assert not {name for name in _imports("annotation/services/import_jobs.py") if name.endswith("tasks")}
