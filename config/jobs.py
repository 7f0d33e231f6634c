"""The one job mechanism of both apps (results, stability, adaptive looks, gates, imports), below both.

- `Lease`: one run at a time per key, and a killed holder frees it within seconds. On a Redis cache it is
  redis-py's `Lock` (taken with the holder's token, renewed with `reacquire` by a thread while the holder lives,
  released only by its owner: each one atomic script); on another cache (in-process mode's local memory) the same
  calls over Django's cache. `cache.get(key)` reads the holder's token either way.
- `Flag`: debounce. Whoever sets a subject's "queued" flag queues the task, which clears it as it starts: a burst
  queues one run, and what comes during a run queues exactly one more. The flag's timeout bounds how long a flag
  whose task was lost (a broker restarted without its data) holds back new ones.
- `dispatch`: a task to the workers through the broker; without a broker (tasks in-process) in a thread of this
  process, after the delay and off the request, or at once in the caller when a setting says so (the tests).
- `catch_up_after_connect`: each time a worker (re)connects to the broker (config/celery.py), the registered
  catch-ups queue what was lost with a broker's queue or a killed worker. A PostgreSQL restart leaves the
  worker's kept connection dead, so stale connections are closed first and a failure is tried once more on a new
  connection, then again later off the consumer's thread, the wait doubling up to CATCH_UP_RETRY_MAX_SECONDS.
"""
import logging
import pickle
import threading
import uuid

from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from django.db import close_old_connections, connection, connections
from redis.exceptions import LockNotOwnedError

log = logging.getLogger(__name__)


class _CacheLock:
    """The calls `Lease` makes of redis-py's `Lock`, over any Django cache (for a cache other than Redis)."""

    def __init__(self, key: str, timeout: float):
        self.key, self.timeout, self.token = key, timeout, None

    def acquire(self, blocking: bool, token) -> bool:
        self.token = token
        return cache.add(self.key, token, timeout=self.timeout)

    def reacquire(self) -> None:
        if cache.get(self.key) != self.token:
            raise LockNotOwnedError(f"{self.key} is no longer ours")
        cache.touch(self.key, self.timeout)

    def release(self) -> None:
        if cache.get(self.key) == self.token:
            cache.delete(self.key)


class Lease:
    """A cache key held by one holder at a time until `seconds` after its last renewal; a thread renews it every
    `beat` seconds while the holder lives. `with Lease(...) as held:` (see `acquire`), released on exit."""

    def __init__(self, key: str, seconds: float, beat: float, token: str | None = None):
        self.key, self.beat, self.token = key, beat, token or uuid.uuid4().hex
        self.held, self._stop = False, threading.Event()
        backend = caches["default"]
        if isinstance(backend, RedisCache):
            name = backend.make_and_validate_key(key)
            self._lock = backend._cache.get_client(name, write=True).lock(
                name, timeout=seconds, thread_local=False, raise_on_release_error=False)
            self._token = pickle.dumps(self.token)  # Django's Redis cache reads values as pickles
        else:
            self._lock, self._token = _CacheLock(key, seconds), self.token

    def acquire(self) -> bool | None:
        """True if taken, False if another holder has it, None if the cache cannot be reached."""
        try:
            self.held = bool(self._lock.acquire(blocking=False, token=self._token))
        except Exception:
            log.warning("no shared cache for the lease of %s", self.key)
            return None
        if self.held:
            threading.Thread(target=self._renew, name=f"lease-{self.key}", daemon=True).start()
        return self.held

    def _renew(self) -> None:
        while not self._stop.wait(self.beat):
            try:
                self._lock.reacquire()
            except LockNotOwnedError:
                return  # lost the lease (e.g. a long pause): never renew another holder's
            except Exception:  # the cache is down: the lease lapses, which is the safe side
                log.warning("could not renew %s", self.key)

    def release(self) -> None:
        self._stop.set()
        if self.held:
            self.held = False
            try:
                self._lock.release()
            except Exception:  # the cache is down: the lease lapses by itself
                log.warning("could not release %s", self.key)

    def __enter__(self) -> bool | None:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


class Flag:
    """A subject's "queued" flag, `<prefix>:<subject>:queued` in the shared cache (see the module's doc)."""

    def __init__(self, prefix: str):
        self.prefix = prefix

    def key(self, subject) -> str:
        return f"{self.prefix}:{subject}:queued"

    def claim(self, subject, timeout: float, value=1) -> bool:
        """Set the flag unless it is set; True if this call set it (and must queue the task)."""
        return cache.add(self.key(subject), value, timeout=timeout)

    def clear(self, subject) -> None:
        cache.delete(self.key(subject))

    def queue(self, subject, task, args: tuple, *, timeout: float, value=1, **options) -> bool:
        """Claim the flag and `dispatch` the task; True if this call queued it, False if one was queued."""
        if not self.claim(subject, timeout, value):
            return False
        try:
            dispatch(task, args, **options)
        except Exception:
            self.clear(subject)  # no task behind the flag: let the next caller try again
            raise
        return True


def in_process(task) -> bool:
    """Whether tasks run in this process (no broker: the newcomer's set-up, and the tests)."""
    return bool(task.app.conf.task_always_eager)


def dispatch(task, args: tuple, *, delay: float = 0.0, inline_setting: str | None = None, **options) -> None:
    """Queue `task(*args)` to start in `delay` seconds: through the broker (with `options` for `apply_async`), or
    in-process in a thread, or in the caller when the setting `inline_setting` is on."""
    if not in_process(task):
        task.apply_async(args, countdown=delay, **options)
    elif inline_setting and getattr(settings, inline_setting, False):
        task.apply(args=args)
    else:
        timer = threading.Timer(delay, _apply_here, args=(task, args))
        timer.daemon = True
        timer.start()


def _apply_here(task, args: tuple) -> None:
    try:
        task.apply(args=args)
    except Exception:  # a background thread has no caller to tell
        log.exception("%s%r failed in-process", task.name, args)
    finally:
        connection.close()


#: name -> function() -> int: what a worker runs as it (re)connects; each queues what it finds lost, how many.
CATCH_UPS: dict = {}


def catch_up(function):
    """Register `function` (a decorator) among the catch-ups."""
    CATCH_UPS[f"{function.__module__}.{function.__qualname__}"] = function
    return function


#: When a worker's catch-up fails twice (the database is still restarting), it tries again after this many
#: seconds, doubling up to CATCH_UP_RETRY_MAX_SECONDS, until it succeeds.
CATCH_UP_RETRY_SECONDS = 15.0
CATCH_UP_RETRY_MAX_SECONDS = 300.0
_retry = {"timer": None}
_retry_lock = threading.Lock()


def catch_up_after_connect(wait: float = CATCH_UP_RETRY_SECONDS) -> int | None:
    """Run every catch-up for a worker that has just (re)connected to the broker; how many tasks they queued, None
    if the database could not be reached (then all run again in `wait` seconds, off the consumer's thread)."""
    for attempt in (1, 2):
        close_old_connections()  # with CONN_HEALTH_CHECKS the next query pings and reconnects
        try:
            queued = sum(function() for function in list(CATCH_UPS.values()))
        except Exception:
            log.warning("catching up on stale results failed (attempt %d)", attempt, exc_info=True)
            _close_connections()
            continue
        _retry_in(None)
        log.info("catch-up: queued %d stale campaign(s)", queued)
        return queued
    _retry_in(wait)
    log.error("catching up on stale results failed; trying again in %.0f s", wait)
    return None


def _retry_in(wait: float | None) -> None:
    """Cancel the pending retry (unless it is the caller), and with `wait` start the next one that much later."""
    with _retry_lock:
        timer = _retry["timer"]
        if timer is not None and timer is not threading.current_thread():
            timer.cancel()
        _retry["timer"] = None if wait is None else threading.Timer(wait, _retry_now, args=(wait,))
        if wait is not None:
            _retry["timer"].daemon = True
            _retry["timer"].start()


def _retry_now(wait: float) -> None:
    try:
        catch_up_after_connect(min(2 * wait, CATCH_UP_RETRY_MAX_SECONDS))
    finally:
        _close_connections()  # this thread's own


def _close_connections() -> None:
    try:
        connections.close_all()
    except Exception:  # a dead connection may fail to close: it is dropped either way
        log.debug("closing database connections failed", exc_info=True)
