"""The Redis cache backend that reuses its clients (config/cache.py), on the real Redis of CELERY_BROKER_URL."""
import os
import uuid

import pytest

from config.cache import ReusingRedisCache

REDIS_URL = os.environ.get("CELERY_BROKER_URL", "")
pytestmark = pytest.mark.skipif(not REDIS_URL.startswith("redis"), reason="needs CELERY_BROKER_URL=redis://...")


@pytest.fixture
def cache():
    backend = ReusingRedisCache(REDIS_URL, {"KEY_PREFIX": f"cache-test-{uuid.uuid4().hex[:8]}"})
    yield backend
    backend.delete_many(["flag", "value"])


def test_one_client_serves_every_call(cache):
    first = cache._cache.get_client(write=True)
    assert cache._cache.get_client(write=True) is first and cache._cache.get_client() is first


def test_values_round_trip_and_add_is_atomic(cache):
    assert cache.get("value") is None
    cache.set("value", 12.5, 30)
    assert cache.get("value") == 12.5
    assert cache.add("flag", 1.0, 30) is True and cache.add("flag", 2.0, 30) is False
    assert cache.get("flag") == 1.0
