"""Fail fast on a Redis that does not answer, so that a hung Redis cannot hold the web's requests.

Every Redis call gives up after REDIS_TIMEOUT_SECONDS (the cache's and Celery's socket timeouts, config/settings.py).
A web process that saw a call to a Redis server fail then skips that server for REDIS_FAIL_FAST_SECONDS: cache
calls raise redis' ConnectionError and publishing a task raises kombu's OperationalError at once, which their
callers already take for "Redis is down" (annotators: logged and ignored; researchers: 503 with Retry-After). A
burst of requests during an outage then costs one timeout per process and window, not one per request.
Celery workers never skip (config/celery.py turns this off there): nobody waits on them, and their catch-up must
reach Redis as soon as it answers again.
"""
import math
import threading
import time
from urllib.parse import urlsplit

from django.conf import settings

#: Off in Celery workers.
enabled = True
_lock = threading.Lock()
_skip_until: dict[str, float] = {}


def server(location) -> str:
    """The address(es) a Redis URL names, without credentials: a list or a comma-separated string of URLs (as
    Django's cache takes) gives them all. The cache and the broker on one Redis share it, and so share a skip."""
    urls = location if isinstance(location, (list, tuple)) else str(location or "").split(",")
    return ",".join(sorted(urlsplit(url.strip()).netloc.rpartition("@")[2] for url in urls))


def skipping(key: str) -> bool:
    """Whether calls to `key` should fail at once: it failed less than REDIS_FAIL_FAST_SECONDS ago."""
    return enabled and time.monotonic() < _skip_until.get(key, 0.0)


def failed(key: str) -> None:
    """Note that a call to `key` failed (timed out or was refused): skip it for a while."""
    if enabled:
        with _lock:
            _skip_until[key] = time.monotonic() + settings.REDIS_FAIL_FAST_SECONDS


def reset() -> None:
    """Forget every failure (tests; a process that knows Redis is back)."""
    with _lock:
        _skip_until.clear()


def retry_after() -> str:
    """The Retry-After a 503 for an unreachable Redis suggests: a skip window, at least a second."""
    return str(max(1, math.ceil(settings.REDIS_FAIL_FAST_SECONDS)))
