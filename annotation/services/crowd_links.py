"""Crowd entry links (docs/api.md §8.1): the worker id and the other market parameters a start link carries,
signed links, the client address, and what a browser key looks like. Re-exported by services/assignment."""
from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
from urllib.parse import urlencode

from django.conf import settings

from ..models import MTURK_SUBMIT_TO, Campaign

WORKER_ID_PATTERN = re.compile(r"^[\w.@:+\-]{1,255}$")
#: URL parameters that carry a worker id, and which market each one means.
WORKER_ID_PARAMETERS = (("worker_id", "crowd"), ("PROLIFIC_PID", "prolific"), ("workerId", "mturk"))
#: Other start-link parameters kept with the HIT for the completion URL: MTurk's ExternalQuestion adds
#: assignmentId, hitId and turkSubmitTo; Prolific can add STUDY_ID and SESSION_ID.
ENTRY_PARAMETERS = (("assignmentId", "assignment_id"), ("hitId", "hit_id"), ("STUDY_ID", "study_id"),
                    ("SESSION_ID", "session_id"))
#: What MTurk puts in place of the assignment id while a worker only previews the HIT.
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"


#: A campaign's `entry_limits`: "crowd" (every limit below) or "lab" (no per-address limit, no browser binding).
ENTRY_LIMITS = ("crowd", "lab")


def is_lab(campaign: Campaign) -> bool:
    return campaign.entry_limits == "lab"


def active_entry_limits(campaign: Campaign) -> dict:
    """The crowd entry limits in force for this campaign (docs/api.md §8.1), as the admin page and the API show
    them: a lab campaign has no per-address limit and no browser binding, since its workers share one network
    address and may change machines; the per-campaign rate limit stays (it protects the server, not the HITs)."""
    lab = is_lab(campaign)
    return {
        "mode": "lab" if lab else "crowd",
        "entry_rate_per_address": None if lab else settings.CROWD_ENTRY_RATE_PER_IP,
        "max_open_hits_per_address": None if lab else settings.CROWD_MAX_OPEN_HITS_PER_IP,
        "browser_binding": settings.CROWD_BIND_BROWSER and not lab,
        "entry_rate_per_campaign": settings.CROWD_ENTRY_RATE_PER_CAMPAIGN,
    }


def entry_limits_text(limits: dict) -> list[str]:
    """The active limits in words, one line each (the admin campaign page)."""
    def rate(value):
        return f"at most {value} (entries per second /s, minute /m, hour /h, day /d)" if value else "no limit"
    return [
        f"Mode: {limits['mode']}" + (" (for a lab or class behind one network address)" if limits["mode"] == "lab"
                                     else " (switch to lab for a lab or class behind one network address)"),
        f"Entry rate per network address: {rate(limits['entry_rate_per_address'])}",
        "Open HITs per network address: " + (f"at most {limits['max_open_hits_per_address']}"
                                              if limits["max_open_hits_per_address"] else "no limit"),
        "Worker id bound to its browser: " + ("yes (another browser gets 409 until the HIT's idle timeout)"
                                             if limits["browser_binding"] else "no (any browser may go on)"),
        f"Entry rate for the whole campaign: {rate(limits['entry_rate_per_campaign'])}",
    ]


class InvalidWorkerId(ValueError):
    pass


#: What a browser key (the crowd entry cookie) looks like: secrets.token_urlsafe(32).
BROWSER_KEY_PATTERN = re.compile(r"^[A-Za-z0-9_-]{32,64}$")


def entry_signature(campaign: Campaign, worker_id: str) -> str:
    """The `signature` of a signed entry link: hex HMAC-SHA256 of "<slug>:<worker id>" keyed with the
    campaign's entry secret (docs/api.md §8.1)."""
    message = f"{campaign.slug}:{worker_id}".encode()
    return hmac.new(campaign.entry_secret.encode(), message, hashlib.sha256).hexdigest()


def signature_matches(campaign: Campaign, worker_id: str, signature: str | None) -> bool:
    """Whether `signature` (hex, any case) signs `worker_id` for this campaign; compared in constant time."""
    if not signature:
        return False
    given = signature.strip().lower().encode("utf-8", "replace")
    return hmac.compare_digest(entry_signature(campaign, worker_id).encode(), given)


def signed_entry_path(campaign: Campaign, worker_id: str, parameter: str = "worker_id") -> str:
    """The crowd entry path with the worker id and its signature."""
    query = urlencode({parameter: worker_id, "signature": entry_signature(campaign, worker_id)})
    return f"/c/{campaign.slug}/start/?{query}"


def client_ip(meta, trusted_proxies: int = 0) -> str | None:
    """The client's address: REMOTE_ADDR, or behind `trusted_proxies` proxies that each append to
    X-Forwarded-For, the address the outermost of them saw (the `trusted_proxies`-th from the right; the
    first hop when the header has no more entries). Entries further left are the client's to write and are
    never believed. None when no valid address is found."""
    candidates = []
    if trusted_proxies > 0:
        hops = [hop.strip() for hop in meta.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
        if hops:
            candidates.append(hops[max(0, len(hops) - trusted_proxies)])
    candidates.append(meta.get("REMOTE_ADDR", ""))
    for value in candidates:
        try:
            return str(ipaddress.ip_address(value))
        except ValueError:
            continue
    return None


def worker_from_query(params) -> tuple[str, str] | None:
    """The (worker id, market) a crowd market put into the URL, or None."""
    for key, market in WORKER_ID_PARAMETERS:
        value = params.get(key)
        if value is not None:
            value = value.strip()
            if not WORKER_ID_PATTERN.match(value):
                raise InvalidWorkerId("a worker id is 1-255 letters, digits or . @ : + - _")
            return value, market
    return None


def entry_from_query(params, worker_id: str) -> dict:
    """What the start link carried besides the worker id, for the completion URL (Assignment.entry).

    Values that are not plain ids are dropped, MTurk's preview placeholder too, and `turkSubmitTo` is kept only
    when it is one of MTurk's own hosts (the link is the worker's to edit)."""
    entry = {"worker_id": worker_id}
    for key, name in ENTRY_PARAMETERS:
        value = (params.get(key) or "").strip()
        if WORKER_ID_PATTERN.match(value) and value != MTURK_PREVIEW:
            entry[name] = value
    submit_to = (params.get("turkSubmitTo") or "").strip().rstrip("/")
    if submit_to in MTURK_SUBMIT_TO:
        entry["turk_submit_to"] = submit_to
    return entry
