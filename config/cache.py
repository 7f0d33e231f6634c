"""Django's Redis cache, reusing its Redis client objects and failing fast on a Redis that does not answer.

Django's `RedisCacheClient.get_client` builds a new `redis.Redis` for every cache call, and
redis-py fills a table of about 170 response callbacks in each: about half the client-side
CPU of a `cache.get`. A client is thread-safe and only wraps the shared connection pool,
so one per pool does.

Each operation gives up after the socket timeouts of OPTIONS (config/settings.py), and after a failure this
process skips the server for a while (config/redis_guard.py): callers see redis' ConnectionError at once.
"""
import functools

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from . import redis_guard

OPERATIONS = ("add", "get", "set", "touch", "delete", "get_many", "has_key", "incr", "set_many", "delete_many",
              "clear")


class _ReusingClient(RedisCacheClient):
    def __init__(self, servers, *args, **kwargs):
        super().__init__(servers, *args, **kwargs)
        self._clients = {}
        self._guard_key = redis_guard.server(servers)

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(pool)
        if client is None:
            client = self._clients[pool] = self._client(connection_pool=pool)
        return client


def _guarded(operation):
    @functools.wraps(operation)
    def call(self, *args, **kwargs):
        if redis_guard.skipping(self._guard_key):
            raise RedisConnectionError(f"Redis at {self._guard_key} did not answer a moment ago; not waiting again")
        try:
            return operation(self, *args, **kwargs)
        except (RedisConnectionError, RedisTimeoutError):
            redis_guard.failed(self._guard_key)
            raise
    return call


for _name in OPERATIONS:
    setattr(_ReusingClient, _name, _guarded(getattr(RedisCacheClient, _name)))


class ReusingRedisCache(RedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = _ReusingClient
