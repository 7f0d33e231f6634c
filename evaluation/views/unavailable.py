"""The answer to a researcher action that needs the task queue while it cannot be reached (docs/api.md): 503 with
a Retry-After of the web's skip window (config/redis_guard.py), never a 500 or a request held by a hung broker."""
from rest_framework import status
from rest_framework.response import Response

from config import redis_guard


def queue_unavailable(detail: str) -> Response:
    return Response({"detail": detail}, status=status.HTTP_503_SERVICE_UNAVAILABLE,
                    headers={"Retry-After": redis_guard.retry_after()})
