"""The annotator JSON API: `GET|POST /api/hit/<token>/` (docs/api.md, "Annotators").

Plain Django views rather than DRF: this is the hot path, and the token in the URL is the
only credential (no cookies are involved, so there is nothing for CSRF to protect). A JSON response needs
no Content-Security-Policy; config.middleware.AnnotatorFastPath skips the rest of the stack it does not use.
"""
import time
from functools import wraps

from csp.decorators import csp_exempt
from django.http import JsonResponse
from django.utils.http import http_date
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from ..services import judging

GONE = "you were idle too long and this HIT went to another worker; start again from the campaign link"
BLOCKED = "there are no further HITs for you in this campaign; your work so far is recorded"
MAX_BODY = 64 * 1024


#: What django.views.decorators.cache.never_cache sends, set directly: its header parsing and merging cost
#: about 5 % of a judgment's CPU, for headers that are always the same here.
NEVER_CACHE = "max-age=0, no-cache, no-store, must-revalidate, private"


def never_cache(view):
    """never_cache's headers (Expires now, Cache-Control above), written without parsing any."""

    @wraps(view)
    def wrapped(request, *args, **kwargs):
        response = view(request, *args, **kwargs)
        response.headers["Expires"] = http_date(time.time())
        response.headers["Cache-Control"] = NEVER_CACHE
        return response

    return wrapped


def _error(status: int, reason: str, **extra) -> JsonResponse:
    return JsonResponse({"error": reason, **extra}, status=status)


def _halted(exc: judging.CampaignHalted) -> JsonResponse:
    """A paused campaign: 423 Locked, come back later (the HIT stays the worker's); closed: 410 Gone, for good.
    Either way the body says which (`paused` or `closed`: true), why (`detail`) and how far the HIT got."""
    flag = "closed" if exc.closed else "paused"
    return _error(410 if exc.closed else 423, str(exc), **{flag: True, "detail": str(exc)}, **exc.state)


def _gone(exc: judging.AssignmentGone) -> JsonResponse:
    """410: the HIT went to another worker, or the worker was kept out of the campaign (`blocked`: true)."""
    return _error(410, BLOCKED, blocked=True) if exc.blocked else _error(410, GONE)


@csrf_exempt
@csp_exempt()
@never_cache
@require_http_methods(["GET", "POST"])
def hit_state(request, token: str):
    if request.method == "GET":
        snapshot = judging.load(token)
        if snapshot is None:
            return _error(404, "unknown HIT")
        try:
            return JsonResponse(judging.serve(snapshot))
        except judging.CampaignHalted as exc:
            return _halted(exc)
        except judging.AssignmentGone as exc:
            return _gone(exc)
    if len(request.body) > MAX_BODY * judging.MAX_BATCH:
        return _error(400, "the body is too large")
    try:
        body = judging.parse_body(request.body)
        if len(request.body) > MAX_BODY * len(judging.answers_of(body)):  # 64 KiB per answer
            return _error(400, "the body is too large")
        answer = judging.submit(token, body)
    except judging.JudgmentError as exc:
        return _error(400, str(exc))
    except judging.Conflict as exc:
        extra = {"stored": exc.stored} if exc.stored is not None else {}
        return _error(409, str(exc), state=exc.state, **extra)
    except judging.CampaignHalted as exc:
        return _halted(exc)
    except judging.AssignmentGone as exc:
        return _gone(exc)
    if answer is None:
        return _error(404, "unknown HIT")
    return JsonResponse(answer.state, status=answer.status)
