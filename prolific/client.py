"""Calls to Prolific's REST API (docs/api.md "Prolific"): `Authorization: Token <token>`, JSON bodies, a timeout on
every request, and retries.

- 429: wait as its Retry-After says (capped at PROLIFIC_MAX_WAIT_SECONDS), then again: the request was not done.
- 5xx, a timeout or a lost connection: wait with exponential backoff (PROLIFIC_BACKOFF_SECONDS × 2^(attempt-1)),
  then again. A request that is not idempotent may have been done before the failure, so `already_done` (when
  given) is asked first, and its answer ends the call instead of a repeat.
- any other 4xx: `ProlificError` at once (401 and 403: the token; 400: the body), nothing repeated.
Each attempt is a `ProlificCall` row (method, path, status, attempt, seconds), tied to its action when it has one.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from urllib.parse import urljoin

import requests
from django.conf import settings

from .models import ProlificAction, ProlificCall


class ProlificError(Exception):
    """Prolific refused the request (a 4xx other than 429): `status` and its error body."""

    def __init__(self, status: int, body, path: str):
        self.status, self.body, self.path = status, body, path
        super().__init__(f"Prolific answered {status} to {path}: {describe(body)}")


class ProlificUnavailable(Exception):
    """No answer after every attempt (5xx, timeouts, 429s): the action stays pending and is tried again later."""


def describe(body) -> str:
    """Prolific's error body in one line: {"error": {"title", "detail", "additional_information"}} or any JSON."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
        detail = error.get("detail")
        if isinstance(detail, dict):
            detail = "; ".join(f"{k}: {v}" for k, v in detail.items())
        return " ".join(str(part) for part in (error.get("title"), detail) if part)
    return str(body)[:300]


class Client:
    """One researcher's client. `sleep` is time.sleep (a test may count the waits)."""

    def __init__(self, token: str, *, base_url: str | None = None, sleep: Callable[[float], None] = time.sleep):
        self.base_url = (base_url or settings.PROLIFIC_API_BASE_URL).rstrip("/") + "/"
        self.sleep = sleep
        self.session = requests.Session()
        self.session.headers.update({"Authorization": f"Token {token}", "Accept": "application/json"})

    def call(self, method: str, path: str, body: dict | None = None, *, action: ProlificAction | None = None,
             idempotent: bool = True, already_done: Callable[[], dict | None] | None = None) -> dict:
        """The JSON answer of `method path` (path relative to the API's base, e.g. "studies/")."""
        url = urljoin(self.base_url, path.lstrip("/"))
        attempts = max(1, settings.PROLIFIC_ATTEMPTS)
        for attempt in range(1, attempts + 1):
            started = time.monotonic()
            status, error, answer, wait = None, "", None, None
            try:
                response = self.session.request(method, url, json=body, timeout=settings.PROLIFIC_TIMEOUT_SECONDS)
                status = response.status_code
                answer = _json(response)
                if status == 429:
                    wait = _retry_after(response.headers.get("Retry-After"), attempt)
            except requests.RequestException as exc:
                error = f"{exc.__class__.__name__}"
            ProlificCall.objects.create(action=action, method=method, path=path, status=status, attempt=attempt,
                                        seconds=round(time.monotonic() - started, 4), error=error)
            if status is not None and status < 400:
                return answer if isinstance(answer, dict) else {"results": answer}
            if status is not None and status != 429 and status < 500:
                raise ProlificError(status, answer, path)
            if attempt == attempts:
                break
            self.sleep(wait if wait is not None else settings.PROLIFIC_BACKOFF_SECONDS * 2 ** (attempt - 1))
            if wait is None and not idempotent and already_done is not None:
                done = already_done()  # a 5xx or a timeout may come after the work was done: look before repeating
                if done is not None:
                    return done
        raise ProlificUnavailable(f"no answer from Prolific to {method} {path} after {attempts} attempts")


def _json(response):
    try:
        return response.json() if response.content else {}
    except ValueError:
        return {"text": response.text[:300]}


def _retry_after(value: str | None, attempt: int) -> float:
    """Seconds to wait after a 429: its Retry-After (seconds), or the backoff; never above the cap."""
    try:
        wait = float(value)
    except (TypeError, ValueError):
        wait = settings.PROLIFIC_BACKOFF_SECONDS * 2 ** (attempt - 1)
    return max(0.0, min(wait, settings.PROLIFIC_MAX_WAIT_SECONDS))
