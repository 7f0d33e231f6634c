"""Actions on Prolific done at most once (docs/api.md "Prolific"): each intended action is a `ProlificAction` row
under a key naming it, written before the call. A key found done is never called again; a pending one (an earlier
run failed, or died mid-call) is called again, with the client's `already_done` check before any non-idempotent
repeat. Prolific refusing (4xx) marks it failed with the reason, so the researcher sees why."""
from __future__ import annotations

from collections.abc import Callable

from django.db import transaction
from django.utils import timezone

from .client import ProlificError
from .models import ProlificAction, ProlificStudy


def perform(study: ProlificStudy, key: str, kind: str, request: dict,
            run: Callable[[ProlificAction], dict]) -> ProlificAction:
    """Do `run(action)` once for `key`, unless done already; the action, with Prolific's answer in `result`.
    Raises ProlificError (refused: the action is failed) or ProlificUnavailable (it stays pending)."""
    with transaction.atomic():
        action, _ = ProlificAction.objects.select_for_update().get_or_create(
            key=key, defaults={"study": study, "kind": kind, "request": request})
        if action.state == ProlificAction.State.DONE:
            return action
        action.attempts += 1
        action.request = request
        action.save(update_fields=["attempts", "request"])
    try:
        result = run(action)
    except ProlificError as exc:
        action.state, action.error = ProlificAction.State.FAILED, str(exc)[:2000]
        action.save(update_fields=["state", "error"])
        raise
    except Exception as exc:
        action.error = str(exc)[:2000]
        action.save(update_fields=["error"])
        raise
    action.state, action.result, action.error, action.done_at = (ProlificAction.State.DONE, result, "",
                                                                 timezone.now())
    action.save(update_fields=["state", "result", "error", "done_at"])
    return action


def is_done(key: str) -> bool:
    return ProlificAction.objects.filter(key=key, state=ProlificAction.State.DONE).exists()
