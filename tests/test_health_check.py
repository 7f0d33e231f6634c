"""The kept connection's health check (config/postgres/base.py): no round trip while the connection is idle and
alive; a connection PostgreSQL ended is found unusable and replaced. PostgreSQL only."""
import time

import psycopg2
import pytest
from django.conf import settings
from django.db import connection

pytestmark = [
    pytest.mark.skipif(not settings.DATABASES["default"]["ENGINE"].startswith("config.postgres"),
                       reason="the check is PostgreSQL's"),
    pytest.mark.django_db(transaction=True),
]


def _other():
    params = connection.get_connection_params()
    return psycopg2.connect(**params)


def _last_query(pid: int) -> str:
    with _other() as other, other.cursor() as cursor:
        cursor.execute("SELECT query FROM pg_stat_activity WHERE pid = %s", [pid])
        return cursor.fetchone()[0]


def test_an_alive_idle_connection_is_usable_without_a_round_trip():
    with connection.cursor() as cursor:
        cursor.execute("SELECT 'marker-r22'")
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    assert _last_query(pid) == "SELECT pg_backend_pid()"
    assert connection.is_usable()
    assert _last_query(pid) == "SELECT pg_backend_pid()"  # Django's check would have sent SELECT 1


def test_a_terminated_connection_is_unusable_and_replaced_at_the_next_request_start():
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with _other() as other, other.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])
    deadline = time.monotonic() + 5
    while connection.is_usable() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not connection.is_usable()
    connection.health_check_enabled, connection.health_check_done = True, False
    connection.close_if_health_check_failed()  # what Django does at a request's first query
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        assert cursor.fetchone()[0] != pid
