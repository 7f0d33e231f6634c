"""Answers the researcher API's views share, the campaign's (annotation) and the results' (evaluation) alike.

`queue_unavailable`: a researcher action that needs the task queue while it cannot be reached (docs/api.md) gets
503 with a Retry-After of the web's skip window (config/redis_guard.py), never a 500 or a request held by a hung
broker. `bad_request`: 400 with the reason in `detail`.
"""
from rest_framework import status
from rest_framework.response import Response

from config import redis_guard


def queue_unavailable(detail: str) -> Response:
    return Response({"detail": detail}, status=status.HTTP_503_SERVICE_UNAVAILABLE,
                    headers={"Retry-After": redis_guard.retry_after()})


def bad_request(detail: str) -> Response:
    return Response({"detail": detail}, status=status.HTTP_400_BAD_REQUEST)
