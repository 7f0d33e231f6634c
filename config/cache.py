"""Django's Redis cache, reusing its Redis client objects.

Django's `RedisCacheClient.get_client` builds a new `redis.Redis` for every cache call, and
redis-py fills a table of about 170 response callbacks in each: about half the client-side
CPU of a `cache.get`. A client is thread-safe and only wraps the shared connection pool,
so one per pool does.
"""
from django.core.cache.backends.redis import RedisCache, RedisCacheClient


class _ReusingClient(RedisCacheClient):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}

    def get_client(self, key=None, *, write=False):
        pool = self._get_connection_pool(write)
        client = self._clients.get(pool)
        if client is None:
            client = self._clients[pool] = self._client(connection_pool=pool)
        return client


class ReusingRedisCache(RedisCache):
    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = _ReusingClient
