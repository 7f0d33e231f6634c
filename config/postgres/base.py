"""Django's PostgreSQL backend, with a health check that asks the socket before it asks the server.

With CONN_HEALTH_CHECKS (config/settings.py) Django checks a kept connection at its first use in each request
by sending `SELECT 1`: a third round trip on the annotator path's one-read, one-write POST, about 0.1 ms of the
web process's CPU and as much of PostgreSQL's (benchmarks/README.md, "Session 10, second round").

An idle connection in autocommit mode has nothing to read. When PostgreSQL ends it (a restart, a fast shutdown,
`pg_terminate_backend`, a proxy's idle timeout), the server sends its FATAL message and closes the socket, so the
socket turns readable. Here the check polls the socket without waiting: nothing to read means usable, with no
round trip; anything to read (the end of the connection, or a rare asynchronous message such as a NOTIFY) falls
back to Django's `SELECT 1`, which tells them apart. A dead peer that sends nothing at all (a cable cut) is not
seen by either check until TCP gives up, so nothing is lost against `SELECT 1`.
"""
from __future__ import annotations

import select

from django.db.backends.postgresql import base


def _readable(fileno: int) -> bool:
    """Whether the socket has something to read now (no waiting)."""
    if not hasattr(select, "poll"):  # Windows: its select() takes sockets
        return bool(select.select([fileno], [], [], 0)[0])
    poller = select.poll()
    poller.register(fileno, select.POLLIN | select.POLLPRI)
    return bool(poller.poll(0))


class DatabaseWrapper(base.DatabaseWrapper):
    def is_usable(self) -> bool:
        raw = self.connection
        if raw is None or raw.closed:
            return False
        if raw.get_transaction_status() != 0:  # not idle (TRANSACTION_STATUS_IDLE): let the server answer
            return super().is_usable()
        try:
            waiting = _readable(raw.fileno())
        except (OSError, ValueError):
            return False
        return super().is_usable() if waiting else True
